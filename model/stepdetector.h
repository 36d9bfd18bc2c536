// SPDX-License-Identifier: MIT
#pragma once

// StepDetector: finds decode steps in a trace that has no step boundaries of its own.
//
// Rules, tried in this order by Auto (or forced one by one):
//   Nvtx    host NVTX / user_annotation / ProfilerStep#N ranges whose name matches a pattern (default
//           "decode|step|forward"): one step per outermost matching range (a matching range inside
//           another, on any host thread, is part of it). The step is the GPU work the range launched,
//           wherever and whenever it ran (the host may enqueue several steps ahead): the GPU events
//           whose correlation id lies between the first and last CUDA API call made inside the range
//           (GPU events starting in its time span when the trace has no API calls). GPU-side copies of
//           ranges (LaneInfo::isGpuAnnotationLane) never make steps.
//   Graph   one step per cudaGraphLaunch (SGLang and vLLM replay one graph per decode step); its GPU
//           work shares the launch's correlation id.
//   Anchor  one step per kernel whose name matches a pattern (the first kernel of each step).
//   Period  the period of the kernel-name sequence on the rank's busiest stream (from the name that
//           recurs once per period most regularly); the phase is the kernel preceded by the longest
//           median idle gap (steps are separated by host work). It refuses (and says why) a period of
//           fewer than 8 kernels or one covering less than half the stream's kernels: then the rank
//           has no steps.
//
// A step's GPU window: start = the first GPU event of the step on any stream of the rank; end = the
// end of its last GPU event. Analysis uses [start_i, start_{i+1}) (CONTRACTS.md); the last step
// ends at its end. Steps are aligned across ranks by the collectives they hold: the k-th collective
// of a communicator is the same operation on every rank (CollectiveKeys), so steps of two ranks that
// hold the same collectives are one step, whatever their index on each rank or their time (ranks
// whose captures started seconds apart align; a step some rank did not capture is absent on it).
// Without collectives shared by two ranks, rank r's first step takes the index of the reference
// rank's (most steps) step that starts nearest to it.
//
// Pure function of the trace; thread-safe.

#include "model/trace.h"

#include <string>
#include <vector>

namespace gapscope::model {

struct StepRule {
    enum class Kind { Auto, Nvtx, Graph, Anchor, Period };
    Kind kind = Kind::Auto;
    std::string pattern; // regex (ECMAScript, case-insensitive, PatternMatcher) for Nvtx and Anchor; empty = default
    static bool parse(const std::string& text, StepRule& out); // "auto", "nvtx[:RE]", "graph", "anchor:RE", "period"
};

class StepDetector {
public:
    explicit StepDetector(StepRule rule = {});

    // Detects the steps of every rank and stores them in `trace`; returns the source used
    // (STEP_UNKNOWN when nothing was found, and then the trace is left unchanged).
    StepSource detect(Trace& trace) const;

    // Steps of one rank (indices 0..n-1, not yet aligned), with the source that produced them; why a
    // rule found ranges but made no steps of them goes to `notes` (detect() adds them to the trace's
    // warnings, prefixed "steps: ").
    std::vector<Step> detectRank(
        const Trace& trace, uint32_t rank, StepSource& source, std::vector<std::string>* notes = nullptr) const;

private:
    std::vector<Step> byNvtx(const Trace& trace, uint32_t rank, std::vector<std::string>& notes) const;
    std::vector<Step> byGraph(const Trace& trace, uint32_t rank) const;
    std::vector<Step> byAnchor(const Trace& trace, uint32_t rank, const std::string& pattern) const;
    std::vector<Step> byPeriod(const Trace& trace, uint32_t rank, std::vector<std::string>& notes) const;
    static void alignByTime(std::vector<std::pair<uint32_t, std::vector<Step>>>& perRank);
    static bool alignByCollectives(const Trace& trace, std::vector<std::pair<uint32_t, std::vector<Step>>>& perRank);
    StepRule m_rule;
};

} // namespace gapscope::model
