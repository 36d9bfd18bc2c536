// SPDX-License-Identifier: MIT
#pragma once

// ForwardRule: one step per model forward in a sequence of eager kernels that no annotation cuts,
// found at the scale of the whole forward, never at the scale of a layer.
//
// A decoder forward is the embedding lookup, the same layer block L times, then the final norm, the LM
// head and the sampling. The rule finds the layer block first and groups it, then cuts between its runs:
//  1. The layer symbol: the kernel whose occurrences are spaced most regularly (at least 60% of the
//     spacings equal, a spacing of at least kMinLayerUnits units) and that occurs most often. Its
//     spacing is the layer period.
//  2. Layer runs: maximal chains of that kernel at exactly the layer period (2 or more layers). Runs
//     much shorter than the median run are not forwards (a stray repetition) and count as glue.
//  3. Between two runs lies the glue (the tail of one forward and the head of the next). The anchor is
//     the symbol that occurs exactly once in (nearly) every glue and after which the GPU waited longest
//     (the host's end-of-step work: sampling, stop check, next launch); every occurrence of it in a
//     glue, the head or the tail starts a forward. A glue holding a forward of another shape (the
//     prefill of the next generate() call, whose layers run other kernels) holds the anchor twice
//     and so becomes a step of its own. Without an anchor, each glue is cut at its longest GPU idle gap.
//  4. The work before the first anchor in the head is a forward cut by the start of the recording and
//     is left out; a last forward shorter than half the median one is left out the same way.
//
// Input: a StepSequence of one rank (or part of one); graph launches there are never layer symbols.
// Pure function; thread-safe.

#include "model/steps/stepsequence.h"

#include <string>
#include <vector>

namespace gapscope::model {

struct ForwardSplit {
    std::vector<size_t> starts; // unit index where each forward starts, ascending
    size_t end = 0; // one past the last unit of the last forward
    uint64_t layerSymbol = 0; // the layer block's symbol, and its period in units
    size_t layerPeriod = 0;
    size_t layersPerForward = 0; // median run length
    uint64_t anchor = 0; // the symbol that starts each forward (0: glues were cut at their idle gaps)
    std::vector<uint64_t> anchorCandidates; // symbols that occur once per forward, most telling first
    std::string note; // what was found, or why nothing was
};

class ForwardRule {
public:
    static constexpr size_t kMinLayerUnits = 6;
    static ForwardSplit split(const StepSequence& seq);
};

} // namespace gapscope::model
