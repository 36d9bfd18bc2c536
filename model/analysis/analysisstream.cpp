// SPDX-License-Identifier: MIT
#include "model/analysis/analysisstream.h"

#include "model/tracewindow.h"

#include <algorithm>
#include <optional>

namespace gapscope::model {

namespace {

// Steps on each side of a batch analysed with it so that collectives match and waits spill across its
// edges as in the whole trace (ranks a step apart at a batch boundary still meet).
constexpr uint32_t kMargin = 1;

// The batch with its window widened to hold the margin's steps on every rank.
StepBatch withMargin(const TraceOverview& overview, StepBatch b)
{
    for (uint32_t r : overview.ranks()) {
        const std::vector<Step>& steps = overview.steps(r);
        for (size_t i = 0; i < steps.size(); ++i) {
            const uint32_t k = steps[i].index;
            if ((k < b.firstStep && k + kMargin >= b.firstStep) || (k > b.lastStep && k - kMargin <= b.lastStep)) {
                b.window.start = std::min(b.window.start, steps[i].start);
                b.window.end = std::max(b.window.end, stepWindowEnd(steps, i));
            }
        }
    }
    return b;
}

} // namespace

Expected<StreamedAnalysis> analyzeStreaming(const format::TraceReader& reader, const TraceOverview& overview,
    std::unique_ptr<Trace> skeleton, const KernelClassifier& classifier, const StepBudget& budget,
    const StreamOptions& options)
{
    StreamedAnalysis out;
    out.skeleton = std::move(skeleton);
    GapAnalyzer::Options aopt;
    aopt.threads = options.threads;
    out.analyzer = std::make_unique<GapAnalyzer>(*out.skeleton, classifier, budget, aopt, GapAnalyzer::Batched {});
    out.host = std::make_unique<HostAttribution>(*out.analyzer, GapAnalyzer::Batched {});
    GapAnalyzer::Selection selection;
    selection.kind = GapAnalyzer::Selection::Kind::Steps;
    selection.rank = GapAnalyzer::kCriticalRank;
    std::vector<std::vector<WindowSweep::Gap>> gapBuffers; // reused batch to batch
    ReadOptions read = options.read;
    read.kernelConfigs = false; // the analysis never looks at them
    read.laneSummaries = false; // nor at the lanes' summary pyramids
    std::optional<Trace> spare; // the last batch's window: the next one reads into its memory
    for (const StepBatch& b : stepBatches(overview, options.maxEvents)) {
        // Steps of the batch the host attribution covers (the analyzer takes them all).
        selection.firstStep = std::max(b.firstStep, options.firstStep);
        selection.lastStep = std::min(b.lastStep, options.lastStep);
        read.recycle = spare ? &*spare : nullptr;
        auto window = readBatch(reader, overview, withMargin(overview, b), read);
        if (!window)
            return window.status();
        out.largestBatchEvents = std::max<uint64_t>(out.largestBatchEvents, window->eventCount());
        GapAnalyzer::Options bopt = aopt;
        bopt.firstStep = b.firstStep;
        bopt.lastStep = b.lastStep;
        bopt.margin = kMargin;
        bopt.ownedFrom = b.ownedFrom;
        bopt.ownedTo = b.ownedTo;
        bopt.keepStepGaps = &gapBuffers; // the host attribution below reads them
        {
            GapAnalyzer batch(*window, classifier, budget, bopt);
            if (selection.firstStep <= selection.lastStep)
                out.host->absorb(HostAttribution(batch, selection, false));
            out.analyzer->absorb(std::move(batch));
        }
        ++out.batches;
        spare = std::move(*window);
    }
    out.analyzer->finish();
    return out;
}

} // namespace gapscope::model
