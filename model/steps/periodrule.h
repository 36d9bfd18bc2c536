// SPDX-License-Identifier: MIT
#pragma once

// PeriodRule: one step per period of the kernel-name sequence, for loops whose iterations are not
// forwards (training steps: forward, backward, optimizer). The period comes from the kernel that
// recurs least often at a regular spacing (3 in 4 of its spacings equal); the phase is the kernel after
// which the GPU waited longest (iterations are separated by host work). Refused (and said why) when
// the period is shorter than 8 kernels, covers less than half the sequence, or is the scale of a layer
// (shorter than two layer blocks, when the forward rule found one).
//
// Pure function; thread-safe.

#include "model/steps/stepsequence.h"

#include <string>
#include <vector>

namespace gapscope::model {

struct PeriodSplit {
    std::vector<size_t> starts; // unit indices where iterations start
    size_t period = 0;
    std::string note;
};

class PeriodRule {
public:
    static PeriodSplit split(const StepSequence& seq, size_t layerPeriod);
};

} // namespace gapscope::model
