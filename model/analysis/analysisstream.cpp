// SPDX-License-Identifier: MIT
#include "model/analysis/analysisstream.h"

#include "model/io/tracewindow.h"

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

// Reads batch `b` of the file and analyses it as analyzeStreaming does; calls `use` with its analyzer
// (which holds the window until it returns).
template <typename Use>
Status analyzeBatch(const format::TraceReader& reader, const TraceOverview& overview, const StepBatch& b,
    ReadOptions& read, std::optional<Trace>& spare, const KernelClassifier& classifier, const StepBudget& budget,
    GapAnalyzer::Options options, std::vector<std::vector<WindowSweep::Gap>>& gapBuffers, Use&& use)
{
    read.recycle = spare ? &*spare : nullptr;
    auto window = readBatch(reader, overview, withMargin(overview, b), read);
    if (!window)
        return window.status();
    options.firstStep = b.firstStep;
    options.lastStep = b.lastStep;
    options.margin = kMargin;
    options.ownedFrom = b.ownedFrom;
    options.ownedTo = b.ownedTo;
    options.keepStepGaps = &gapBuffers; // the host attribution reads them
    {
        GapAnalyzer batch(*window, classifier, budget, options);
        use(*window, batch);
    }
    spare = std::move(*window);
    return Status::ok();
}

GapAnalyzer::Selection hostSelection(uint32_t first, uint32_t last)
{
    GapAnalyzer::Selection selection;
    selection.kind = GapAnalyzer::Selection::Kind::Steps;
    selection.rank = GapAnalyzer::kCriticalRank;
    selection.firstStep = first;
    selection.lastStep = last;
    return selection;
}

ReadOptions windowRead(const StreamOptions& options)
{
    ReadOptions read = options.read;
    read.kernelConfigs = options.kernelConfigs; // the analysis never looks at them
    read.laneSummaries = false; // nor at the lanes' summary pyramids
    return read;
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
    aopt.kind = options.kind;
    out.analyzer = std::make_unique<GapAnalyzer>(*out.skeleton, classifier, budget, aopt, GapAnalyzer::Batched {});
    out.host = std::make_unique<HostAttribution>(*out.analyzer, GapAnalyzer::Batched {});
    KernelTableBuilder kernels;
    std::vector<std::vector<WindowSweep::Gap>> gapBuffers; // reused batch to batch
    ReadOptions read = windowRead(options);
    std::optional<Trace> spare; // the last batch's window: the next one reads into its memory
    for (const StepBatch& b : stepBatches(overview, options.maxEvents)) {
        // Steps of the batch the host attribution covers (the analyzer takes them all).
        const uint32_t first = std::max(b.firstStep, options.firstStep), last = std::min(b.lastStep, options.lastStep);
        Status hook = Status::ok();
        Status s = analyzeBatch(reader, overview, b, read, spare, classifier, budget, aopt, gapBuffers,
            [&](const Trace& window, GapAnalyzer& batch) {
                out.largestBatchEvents = std::max<uint64_t>(out.largestBatchEvents, window.eventCount());
                if (options.onBatch)
                    hook = options.onBatch(window, b, batch);
                out.coverage.add(batch, b.firstStep, b.lastStep, b.ownedFrom, b.ownedTo);
                if (options.kernelTable)
                    kernels.add(window, b.ownedFrom, b.ownedTo);
                if (first <= last) {
                    const HostAttribution host(batch, hostSelection(first, last), false);
                    out.host->absorb(host);
                    if (options.keepBatchHosts) {
                        auto kept = std::make_unique<HostAttribution>(*out.analyzer, GapAnalyzer::Batched {});
                        kept->absorb(host);
                        out.batchHosts.push_back({ b, first, last, std::move(kept) });
                    }
                }
                out.analyzer->absorb(std::move(batch));
            });
        if (!s)
            return s;
        if (!hook)
            return hook;
        ++out.batches;
    }
    out.analyzer->finish();
    if (options.kernelTable)
        out.kernels = kernels.finish(KernelOrder::Total, [&out](StringId id) { return out.skeleton->str(id); });
    return out;
}

Expected<std::unique_ptr<HostAttribution>> hostOverSteps(const format::TraceReader& reader,
    const TraceOverview& overview, const StreamedAnalysis& streamed, const KernelClassifier& classifier,
    const StepBudget& budget, const StreamOptions& options, uint32_t first, uint32_t last)
{
    auto out = std::make_unique<HostAttribution>(*streamed.analyzer, GapAnalyzer::Batched {});
    GapAnalyzer::Options aopt;
    aopt.threads = options.threads;
    aopt.kind = options.kind;
    std::vector<std::vector<WindowSweep::Gap>> gapBuffers;
    ReadOptions read = windowRead(options);
    std::optional<Trace> spare;
    for (const StreamedAnalysis::BatchHost& bh : streamed.batchHosts) {
        const uint32_t from = std::max(bh.firstStep, first), to = std::min(bh.lastStep, last);
        if (from > to)
            continue; // outside the range
        if (from == bh.firstStep && to == bh.lastStep) {
            out->absorb(*bh.host); // inside it
            continue;
        }
        Status s = analyzeBatch(reader, overview, bh.batch, read, spare, classifier, budget, aopt, gapBuffers,
            [&](const Trace&, GapAnalyzer& batch) { out->absorb(HostAttribution(batch, hostSelection(from, to), false)); });
        if (!s)
            return s;
    }
    return out;
}

} // namespace gapscope::model
