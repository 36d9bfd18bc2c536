// SPDX-License-Identifier: MIT
#pragma once

// StepAligner: decides where every rank starts recording so that all of them start (and stop) on
// the same decode step, from the step boundaries each rank reports (local step counter, host time).
//
// Ranks of one host share CLOCK_REALTIME, and the ranks of a tensor-parallel job run each step at
// nearly the same time, but their local counters may differ (a rank armed a step later). For each
// rank the aligner finds the reference rank's boundary nearest in time to one of the rank's recent
// boundaries; a match closer than half a step period gives the counter offset
// (global = local + offset, the reference rank's local index being the global one). The plan starts
// `lead` steps after the newest boundary seen on any rank, where lead covers `leadNs` of time (the
// StartRecording message must reach every rank before that step begins).
//
// Threading: a plain value type (the agent's I/O thread).

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace gapscope::capture {

class StepAligner {
public:
    struct Boundary {
        uint64_t index;
        int64_t timeNs;
    };
    struct Plan {
        uint64_t globalStart = 0; // reference rank's local index where recording starts
        std::vector<int64_t> offset; // per slot: global = local + offset
        std::vector<uint64_t> startLocal; // per slot: local index where it starts recording
        int64_t periodNs = 0; // median step period of the reference rank
        int64_t maxSkewNs = 0; // largest time distance of matched boundaries
        uint32_t leadSteps = 0;
    };

    explicit StepAligner(size_t slots, size_t keep = 64);

    void add(size_t slot, uint64_t localIndex, int64_t timeNs);
    size_t boundaries(size_t slot) const { return m_b[slot].size(); }
    // Median of consecutive boundary distances (0 with fewer than two boundaries).
    int64_t medianPeriodNs(size_t slot) const;

    // A plan, once every active slot has at least `minBoundaries` boundaries and all of them match
    // the reference (the first active slot); nullopt otherwise (`why` says what is missing).
    // `active` empty: all slots take part. Inactive slots get offset 0 and start 0.
    std::optional<Plan> plan(int64_t leadNs, uint32_t minLeadSteps, size_t minBoundaries,
        const std::vector<bool>& active = {}, const char** why = nullptr) const;

    // Slots whose last boundary is older than `olderThanNs` (e.g. an idle rank blocks alignment).
    std::vector<size_t> stale(int64_t nowNs, int64_t olderThanNs) const;

private:
    std::vector<std::deque<Boundary>> m_b;
    size_t m_keep;
};

} // namespace gapscope::capture
