// SPDX-License-Identifier: MIT
#pragma once

// StepKinds: the kind of steps that no engine annotation names, from evidence. A decode loop repeats
// the same forward: the steps that run the most common set of kernel names are
// `decode`, when at least two do; a step that runs another set and is followed by a decode step is the
// `prefill` that started the loop (the first forward of a generate() call: its GEMMs and attention
// run other kernels for many tokens); any other step stays `unknown`. Steps of the period rule
// (training iterations) and annotated steps keep their kind.
//
// Pure function; thread-safe.

#include "model/trace.h"

#include <vector>

namespace gapscope::model {

class StepKinds {
public:
    // `steps` of `rank` in start order; step i holds the kernels starting in [start_i, start_{i+1}).
    // One pass over the rank's kernels: a step's signature is the sum of a hash of each distinct kernel
    // name on each stream.
    static void byEvidence(const Trace& trace, uint32_t rank, std::vector<Step>& steps);
};

} // namespace gapscope::model
