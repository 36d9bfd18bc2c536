// SPDX-License-Identifier: MIT
#pragma once

// LaunchFlows: the launch -> GPU event flows the timeline draws as arrows for the hovered (else the
// selected) event. A GPU event gives one flow, from the CPU API call with its correlation id
// (Trace::launchOf); a CPU API call gives one flow per GPU event it launched (Trace::launchedBy: a
// kernel launch one, a CUDA graph launch each node's kernel), at most `limit` of them, earliest
// first. Other events give none.
//
// Threading: pure; any thread that may read the trace.

#include "model/trace/trace.h"

#include <vector>

class LaunchFlows {
public:
    struct Flow {
        gapscope::model::EventRef launch; // on a CPU API lane
        gapscope::model::EventRef gpu; // on a GPU stream lane
    };
    static std::vector<Flow> of(const gapscope::model::Trace& trace, gapscope::model::EventRef ev, size_t limit = 256);
};
