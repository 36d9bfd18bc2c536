// SPDX-License-Identifier: MIT
#pragma once

// StepKinds: the kind of steps that no engine annotation names, from evidence. A decode loop repeats
// the same forward: the steps whose core (the kernel names run more than once in the step: the
// layers'; the glue around a forward, which one step may hold more of than another, runs once) is alike
// (Jaccard index >= 0.75: the last forward of a generate() call repeats two more names than the others
// of a 4-layer model, 11 of 13 alike, where its prefill shares 8 of 15) to the most common core are `decode`, when at
// least two are; a step that runs another core and is followed by a decode step is the `prefill` that started the loop
// (the first forward of a generate() call: its GEMMs and attention run other kernels for many tokens); any other step
// stays `unknown`. Steps of the period rule (training iterations) and annotated steps keep their kind. In a light-mode
// capture a whole replay (no kernel names) counts as the core of the first step that recorded the kernels of the same
// graph and no other's; a graph with no such step stands as a name of its own.
//
// Pure function; thread-safe.

#include "model/trace/trace.h"

#include <vector>

namespace gapscope::model {

class StepKinds {
public:
    // `steps` of `rank` in start order; step i holds the kernels starting in [start_i, start_{i+1}).
    static void byEvidence(const Trace& trace, uint32_t rank, std::vector<Step>& steps);

    // Sets of symbols (each sorted, unique): the index of one with the most common content, and whether
    // two are alike (Jaccard index >= kAlike).
    static constexpr double kAlike = 0.75;
    static size_t modal(const std::vector<std::vector<uint64_t>>& sets);
    static bool alike(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b);
    // What a step's kernels say about the forward it ran: the names it runs more than once (the layers'
    // kernels; the work of the glue around a forward, which a step may or may not hold, runs once), or
    // every name when none repeats. Sorted, unique.
    static std::vector<uint64_t> core(std::vector<uint64_t> names);
};

} // namespace gapscope::model
