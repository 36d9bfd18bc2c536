// SPDX-License-Identifier: MIT
#pragma once

// The gap analysis of a .gapscope file too large to hold, read as windows of whole steps
// (tracewindow.h, stepBatches): each batch is analysed on its own (a GapAnalyzer over the batch's
// window, limited to the batch's steps), with the host attribution of its steps, and both are added
// to one batched analyzer (GapAnalyzer::Batched) and one attribution. AnalysisReport then gives what
// it gives for the whole trace. Memory: one window's events (about maxEvents) and the analysis of one
// batch, plus the per-step results of the file (a few hundred bytes per rank and step).
//
// The same figures as the whole trace's analysis: each batch is analysed with one more step on each
// side (its margin), so that a collective matches its counterparts on ranks a step apart at the
// batch's edge and a wait that runs into the next step is counted there; the margin's results are
// left to the batch that owns those steps. (Ranks more than a step apart at a batch's edge would
// match there as if their captures did not overlap.)
//
// Threading: reads and analyses on TaskPool::shared() (threads as GapAnalyzer::Options); one call at a time
// per result.

#include "model/analysis/coverage.h"
#include "model/analysis/gapanalyzer.h"
#include "model/analysis/hostattribution.h"
#include "model/format/tracereader.h"
#include "model/io/overview.h"
#include "model/io/tracefile.h"
#include "model/io/tracewindow.h"
#include "model/trace/tracesummary.h"

#include <functional>
#include <memory>
#include <vector>

namespace gapscope::model {

struct StreamedAnalysis {
    std::unique_ptr<Trace> skeleton; // the file without its events (readSkeleton)
    std::unique_ptr<GapAnalyzer> analyzer; // batched, over `skeleton`
    std::unique_ptr<HostAttribution> host; // every rank over steps [firstStep, lastStep]
    size_t batches = 0; // batches read
    uint64_t largestBatchEvents = 0; // events of the largest window read
    // StreamOptions::keepBatchHosts: each batch's host attribution, over its steps inside
    // [firstStep, lastStep] (hostOverSteps adds them up for another range).
    struct BatchHost {
        StepBatch batch;
        uint32_t firstStep = 0, lastStep = 0; // the steps it covers
        std::unique_ptr<HostAttribution> host; // batched, over `analyzer`
    };
    std::vector<BatchHost> batchHosts;
    // StreamOptions::kernelTable: kernelTable() of the whole file, from the same windows.
    std::vector<KernelRow> kernels;
    // What coverage needs from the events (coverage.h), each batch's share.
    CoverageInputs coverage;
};

struct StreamOptions {
    uint64_t maxEvents = 2'000'000; // events of a batch's window, about (at least one step)
    uint32_t firstStep = 0, lastStep = GapAnalyzer::kAllSteps; // the steps the host attribution covers
    unsigned threads = 0; // as GapAnalyzer::Options
    StepKind kind = StepKind::Unknown; // as GapAnalyzer::Options (the kinds stored with the file's steps)
    ReadOptions read; // how each window is read (threads, ...)
    bool keepBatchHosts = false; // keep each batch's host attribution (StreamedAnalysis::batchHosts)
    bool kernelTable = false; // count the kernels too (StreamedAnalysis::kernels)
    bool kernelConfigs = false; // read the kernels' launch configurations too (the analysis never looks at them)
    // Called for each batch with its window and its analyzer, before the analyzer is absorbed (its events
    // are still there): what `export --sqlite` writes batch by batch. An error stops the analysis.
    std::function<Status(const Trace& window, const StepBatch& batch, const GapAnalyzer& analyzer)> onBatch;
};

// `skeleton` from readSkeleton(reader, overview): the classifier and budget are picked from it (its
// stored sections), so the caller reads it first and hands it over.
Expected<StreamedAnalysis> analyzeStreaming(const format::TraceReader& reader, const TraceOverview& overview,
    std::unique_ptr<Trace> skeleton, const KernelClassifier& classifier, const StepBudget& budget,
    const StreamOptions& options);

// The host attribution of a streamed analysis (made with keepBatchHosts, the same classifier, budget and
// options) over steps [first, last], every rank over its own steps, as HostAttribution gives it for the
// whole trace: the attributions of the batches inside the range added up; a batch the range cuts is
// read and analysed again (at most the two at its ends). For `diff`, whose range is only known once
// both sides are analysed.
Expected<std::unique_ptr<HostAttribution>> hostOverSteps(const format::TraceReader& reader,
    const TraceOverview& overview, const StreamedAnalysis& streamed, const KernelClassifier& classifier,
    const StepBudget& budget, const StreamOptions& options, uint32_t first, uint32_t last);

} // namespace gapscope::model
