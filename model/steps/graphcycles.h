// SPDX-License-Identifier: MIT
#pragma once

// GraphCycles: where the steps of a graph-replayed process start. A graph that replays a whole
// forward (SGLang, vLLM full graphs, torch.compile's CUDA graphs) is one step per launch. Piecewise
// graphs (vLLM's default for prefill and mixed batches: one graph per stretch between attention
// layers, attention eager in between) replay a forward as a cycle of launches; the cycle starts at the
// graph that recurs once per cycle at a regular spacing, the one the GPU waited longest before.
// A launch replays a whole forward when its own kernel sequence holds a repeated layer block
// (ForwardRule's layer symbol, repeated at least twice in a row).
//
// Pure functions; thread-safe.

#include "model/steps/stepsequence.h"

#include <vector>

namespace gapscope::model {

class GraphCycles {
public:
    // Unit indices (among `launches`, the graph units of `seq`) where steps start.
    static std::vector<size_t> starts(const StepSequence& seq, const std::vector<size_t>& launches);
    static bool replaysForward(const StepSequence& seq, size_t unit);
};

} // namespace gapscope::model
