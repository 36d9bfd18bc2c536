// SPDX-License-Identifier: MIT
#pragma once

// WindowSweep: the exact decomposition of one GPU window of one rank into busy slots and idle
// categories. Plain interval data in, integer nanoseconds out; it knows nothing of traces, so it is
// tested on hand-built intervals.
//
// Algorithm (streaming, one pass, O(n log k) for n pieces and at most k active at once):
//   - pieces are the GPU events of the window, already clipped to it and fed in order of start (a
//     collective kernel comes as two pieces: its wait part and its wire part);
//   - a sweep over start and end instants keeps the set of active pieces; a busy stretch of length
//     L with one active piece gives it L; with k > 1 active pieces each gets L/k, counted in units of
//     1/720720 ns (720720 = lcm(1..16), so up to 16 concurrent pieces split without loss; beyond,
//     the remainder units go to the first pieces); at the end those shares are rounded to whole ns by
//     largest remainder, so the slots add up exactly to the busy time. With at most one piece active
//     at a time (one stream, the common case) nothing is rounded and no active set is kept;
//   - an idle stretch with no active piece is one maximal gap [a, b). The gap after the last piece
//     (until the window end) is the step gap; in any other gap, a host sync [s0, s1) that overlaps
//     it (s0 < b, s1 > a) makes [max(a, s0), b) a sync stall when the work that ends the gap was
//     launched at or after max(a, s0) (or its launch is unknown); [a, s0) before it, and every other
//     gap, is a launch/host gap. Work queued before the sync began was held up by something else
//     (a host node or callback in a graph, a dependency), not by the sync; and a host that reached
//     the sync only after the GPU ran dry was late on its own until then. Before all that, a gap
//     whose ending work belongs to the same CUDA-graph launch as the work before it on its stream
//     (the caller's inGraph says so) is an in-graph gap: the replay was queued whole, so the host
//     neither launched nor held it up.
//   - only time inside the accounting clip [clip0, clip1) is counted (time-range analysis); the
//     categories are still decided on the whole window.
// Invariant: sum(busyNs) + sum(idleNs) == |[w0, w1) intersected with [clip0, clip1)|.
//
// Threading: an object holds scratch buffers; use one per thread.

#include "model/trace/trace.h"

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#if defined(__GNUC__) || defined(__clang__)
#define GAPSCOPE_SWEEP_INLINE [[gnu::always_inline]] inline
#else
#define GAPSCOPE_SWEEP_INLINE inline
#endif

namespace gapscope::model {

enum class IdleKind : uint8_t { LaunchHost = 0, SyncStall = 1, StepGap = 2, InGraph = 3 };
constexpr size_t kIdleKinds = 4;

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
    static constexpr uint32_t kNoTag = 0xFFFFFFFFu;
    static constexpr TimeNs kUnknownLaunch = INT64_MAX;
    struct Gap {
        TimeNs start;
        TimeNs end;
        IdleKind kind;
        uint32_t next; // tag of the piece that ends the gap (kNoTag for the step gap)
    };
    struct Input {
        TimeNs w0 = 0, w1 = 0; // the window
        TimeNs clip0 = 0, clip1 = 0; // accounting clip (set both to the window to count all)
        const Piece* pieces = nullptr; // for run(): sorted by start, inside [w0, w1]
        size_t pieceCount = 0;
        const TimeInterval* syncs = nullptr; // sorted, disjoint host-sync intervals of the rank
        size_t syncCount = 0;
        size_t slotCount = 0; // busy slots; every piece.slot < slotCount
        // Optional: host launch time (API start) of the piece with a tag, kUnknownLaunch when not
        // recorded. Asked only for gaps that start while a sync is in flight.
        TimeNs (*launchTime)(const void* ctx, uint32_t tag) = nullptr;
        const void* launchCtx = nullptr;
        // Optional: whether the piece with a tag continues the graph launch of the work before it
        // on its stream (an in-graph gap ends there). Asked for every gap but the step gap.
        bool (*inGraph)(const void* ctx, uint32_t tag) = nullptr;
        const void* inGraphCtx = nullptr;
        // Idle gaps to report: none, the `kTopGaps` longest, or all.
        enum class Gaps { None, Longest, All } gaps = Gaps::None;
        // With Gaps::Longest: also every gap, appended here in time order (clipped as the others).
        std::vector<Gap>* allGaps = nullptr;
    };
    static constexpr size_t kTopGaps = 3;
    struct Result {
        std::vector<TimeNs> busyNs; // per slot
        std::array<TimeNs, kIdleKinds> idleNs {};
        TimeNs lastEventEnd = 0; // end of the last piece (w0 when none)
        std::vector<Gap> gaps; // clipped idle gaps (Gaps::All: in time order; Longest: longest first)
        TimeNs total() const;
    };

    // The whole window at once: begin(), add() for each of in.pieces, finish().
    void run(const Input& in, Result& out);

    // Streaming: pieces are added in order of start (ignores in.pieces). `in` and `out` must stay
    // alive until finish().
    void begin(const Input& in, Result& out);
    GAPSCOPE_SWEEP_INLINE void add(const Piece& p)
    {
        if (m_activeCount == 1 && p.start >= m_singleEnd) { // the running piece is over
            busySingle(m_t, m_singleEnd, m_singleSlot);
            m_t = m_singleEnd;
            m_activeCount = 0;
        }
        if (m_activeCount != 0 || p.start < m_t) {
            addGeneral(p);
            return;
        }
        if (m_t < p.start) // the common case: nothing running, one stream
            idle(m_t, p.start, false, p.tag);
        m_t = p.start;
        if (p.end > p.start) {
            m_singleEnd = p.end;
            m_singleSlot = p.slot;
            m_activeCount = 1;
        }
        if (p.end > m_out->lastEventEnd)
            m_out->lastEventEnd = p.end;
    }
    void finish();
    // Whether two pieces were ever active at once in the last window.
    bool overlapped() const { return m_overlapped; }

private:
    GAPSCOPE_SWEEP_INLINE void busySingle(TimeNs a, TimeNs b, uint32_t slot)
    {
        a = a < m_in->clip0 ? m_in->clip0 : a;
        b = b > m_in->clip1 ? m_in->clip1 : b;
        if (b > a)
            m_out->busyNs[slot] += b - a;
    }
    void addGeneral(const Piece& p);
    void keepGap(const Gap& g);
    void busy(TimeNs a, TimeNs b);
    GAPSCOPE_SWEEP_INLINE void idle(TimeNs a, TimeNs b, bool tail, uint32_t next)
    {
        if (tail)
            return account(a, b, IdleKind::StepGap, kNoTag);
        if (m_in->inGraph && next != kNoTag && m_in->inGraph(m_in->inGraphCtx, next))
            return account(a, b, IdleKind::InGraph, next);
        while (m_syncCursor < m_in->syncCount && m_in->syncs[m_syncCursor].end <= a)
            ++m_syncCursor;
        if (m_syncCursor < m_in->syncCount && m_in->syncs[m_syncCursor].start < b) { // a sync overlaps the gap
            const TimeNs s0 = m_in->syncs[m_syncCursor].start > a ? m_in->syncs[m_syncCursor].start : a;
            // Work queued before the sync began was held up by something else, not by the sync.
            if (!m_in->launchTime || next == kNoTag || m_in->launchTime(m_in->launchCtx, next) >= s0) {
                if (s0 > a) // the GPU ran dry before the host reached the sync
                    account(a, s0, IdleKind::LaunchHost, next);
                return account(s0, b, IdleKind::SyncStall, next);
            }
        }
        account(a, b, IdleKind::LaunchHost, next);
    }
    GAPSCOPE_SWEEP_INLINE void account(TimeNs a, TimeNs b, IdleKind kind, uint32_t next)
    {
        const bool tail = kind == IdleKind::StepGap;
        a = a < m_in->clip0 ? m_in->clip0 : a;
        b = b > m_in->clip1 ? m_in->clip1 : b;
        if (b <= a)
            return;
        m_out->idleNs[size_t(kind)] += b - a;
        if (m_in->allGaps)
            m_in->allGaps->push_back(Gap { a, b, kind, tail ? kNoTag : next });
        if (m_in->gaps == Input::Gaps::Longest && m_out->gaps.size() == kTopGaps
            && m_out->gaps.back().end - m_out->gaps.back().start >= b - a)
            return; // shorter than the kept ones: the common case
        if (m_in->gaps != Input::Gaps::None)
            keepGap(Gap { a, b, kind, tail ? kNoTag : next });
    }
    void flushUntil(TimeNs x);
    void toHeap();

    const Input* m_in = nullptr;
    Result* m_out = nullptr;
    // Active pieces: none, one (m_single*), or several (m_active, a min-heap on end).
    size_t m_activeCount = 0;
    TimeNs m_singleEnd = 0;
    uint32_t m_singleSlot = 0;
    std::vector<std::pair<TimeNs, uint32_t>> m_active;
    std::vector<int64_t> m_units; // shares of stretches with k > 1 active pieces
    TimeNs m_sharedTotal = 0; // ns of those stretches
    TimeNs m_t = 0;
    size_t m_syncCursor = 0;
    bool m_overlapped = false;
};

} // namespace gapscope::model
