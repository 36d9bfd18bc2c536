// SPDX-License-Identifier: MIT
#pragma once

// WindowSweep: the exact decomposition of one GPU window of one rank into busy slots and idle
// categories. Plain interval data in, integer nanoseconds out; it knows nothing of traces, so it is
// tested on hand-built intervals.
//
// Algorithm (one pass, O(n log k) for n pieces and at most k active at once):
//   - pieces are the GPU events of the window, already clipped to it and sorted by start (a
//     collective kernel comes as two pieces: its wait part and its wire part);
//   - a sweep over start and end instants keeps the set of active pieces; a busy stretch of length
//     L with k active pieces gives each L/k, counted in units of 1/720720 ns (720720 = lcm(1..16),
//     so up to 16 concurrent pieces split without loss; beyond, the remainder units go to the
//     first pieces); at the end each slot is rounded to whole ns by largest remainder, so the slots
//     add up exactly to the busy time. With at most one piece active at a time there is no rounding;
//   - an idle stretch with no active piece is one maximal gap [a, b). The gap after the last piece
//     (until the window end) is the step gap; any other gap is a sync stall when a host sync is in
//     flight at its first instant (s0 <= a < s1), else a launch/host gap.
//   - only time inside the accounting clip [clip0, clip1) is counted (time-range analysis); the
//     categories are still decided on the whole window.
// Invariant: sum(busyNs) + sum(idleNs) == |[w0, w1) intersected with [clip0, clip1)|.
//
// Threading: an object holds scratch buffers; use one per thread.

#include "model/trace.h"

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace gapscope::model {

enum class IdleKind : uint8_t { LaunchHost = 0, SyncStall = 1, StepGap = 2 };
constexpr size_t kIdleKinds = 3;

struct TimeInterval {
    TimeNs start = 0;
    TimeNs end = 0;
};

class WindowSweep {
public:
    static constexpr int64_t kUnitsPerNs = 720720;

    struct Piece {
        TimeNs start;
        TimeNs end;
        uint32_t slot;
        uint32_t tag; // caller's reference (not used by the sweep)
    };
    struct Gap {
        TimeNs start;
        TimeNs end;
        IdleKind kind;
    };
    struct Input {
        TimeNs w0 = 0, w1 = 0;         // the window
        TimeNs clip0 = 0, clip1 = 0;   // accounting clip (set both to the window to count all)
        const Piece* pieces = nullptr; // sorted by start, inside [w0, w1]
        size_t pieceCount = 0;
        const TimeInterval* syncs = nullptr; // sorted, disjoint host-sync intervals of the rank
        size_t syncCount = 0;
        size_t slotCount = 0; // busy slots; every piece.slot < slotCount
        bool collectGaps = false;
    };
    struct Result {
        std::vector<TimeNs> busyNs; // per slot
        std::array<TimeNs, kIdleKinds> idleNs {};
        TimeNs lastEventEnd = 0; // end of the last piece (w0 when none)
        std::vector<Gap> gaps;   // clipped idle gaps, when collectGaps
        TimeNs total() const;
    };

    void run(const Input& in, Result& out);

private:
    void busy(TimeNs a, TimeNs b);
    void idle(TimeNs a, TimeNs b, bool tail);
    void flushUntil(TimeNs x);

    const Input* m_in = nullptr;
    Result* m_out = nullptr;
    std::vector<int64_t> m_units;
    std::vector<std::pair<TimeNs, uint32_t>> m_active; // min-heap on end
    TimeNs m_t = 0;
    TimeNs m_busyTotal = 0;
    size_t m_syncCursor = 0;
};

} // namespace gapscope::model
