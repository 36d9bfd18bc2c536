// SPDX-License-Identifier: MIT
#pragma once

// Comparison: two open traces, A (the one in the window) and B (File > Compare with…), each analysed
// with the same classifier and budget, and the model::TraceDiff of the two (the same comparison as
// `gapscope-cli diff`: bars, kernels, ranks). make() does the work (both analyses, O(events)); call it
// off the GUI thread for large traces. Immutable afterwards, shared read-only (shared_ptr).

#include "model/analysis/gapanalyzer.h"
#include "model/analysis/tracediff.h"
#include "views/document/tracedocument.h"

#include <memory>

struct Comparison {
    std::shared_ptr<const TraceDocument> a, b;
    std::unique_ptr<gapscope::model::GapAnalyzer> analyzerA, analyzerB;
    std::unique_ptr<gapscope::model::TraceDiff> diff;

    static std::shared_ptr<const Comparison> make(std::shared_ptr<const TraceDocument> a,
        std::shared_ptr<const TraceDocument> b, const gapscope::model::KernelClassifier& classifier,
        const gapscope::model::StepBudget& budget);
};
