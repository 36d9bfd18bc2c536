// SPDX-License-Identifier: MIT
#pragma once

// The windows of a file too large to hold whole: what the viewer reads around the part of the trace on
// screen (its TraceOverview draws the rest). windowFor() picks the stretch to read for a view: the view
// itself, widened on both sides while the overview counts at most `maxEvents` in it, so panning a
// little needs no new read; readWindow() reads it (the chunks that overlap it, the file's lane and
// string ids) with the overview's steps that lie inside it, so the analysis of a window covers whole
// steps. The events of a window are every event of the file that overlaps it (and others of the same
// chunks).
//
// Threading: pure functions; readWindow() may run on any thread (the reader is shared read-only).

#include "model/io/overview.h"
#include "model/io/tracefile.h"
#include "model/trace/tracesummary.h"

#include <optional>
#include <vector>

namespace gapscope::model {

struct TimeWindow {
    TimeNs start = 0, end = 0; // [start, end)
    bool contains(TimeNs t0, TimeNs t1) const { return start <= t0 && t1 <= end && start < end; }
};

// The window to read for a view of [t0, t1): widened by up to `widen` times the view's width on each
// side (clamped to the trace) while at most maxEvents lie in it; none when the view alone holds more.
std::optional<TimeWindow> windowFor(
    const TraceOverview& overview, TimeNs t0, TimeNs t1, uint64_t maxEvents, double widen = 1.0);
// The first window of a file: from its start, as far as maxEvents reach.
TimeWindow firstWindow(const TraceOverview& overview, uint64_t maxEvents);

Expected<Trace> readWindow(const format::TraceReader& reader, const TraceOverview& overview, TimeWindow window,
    const ReadOptions& options = {});

// The file without its events: its strings, lanes, sections and warnings, the overview's steps and
// time span (what an analysis built window by window names things and measures time from).
Expected<Trace> readSkeleton(
    const format::TraceReader& reader, const TraceOverview& overview, const ReadOptions& options = {});

// A file read in turn as windows of whole steps, for work whose memory must not grow with the file
// (gapscope-cli summary on a large file). Batch k holds the steps with index in [firstStep, lastStep]
// on every rank, and owns the events that start in [ownedFrom, ownedTo): the batches' owned stretches
// are disjoint and cover all time (the first from the beginning, the last to the end), so counting
// each event in the batch that owns it counts it once. Its window covers its steps (each to the next
// step's start on its rank, as stepTable measures it) and its owned stretch; the window's trace holds
// every event that overlaps it.
struct StepBatch {
    uint32_t firstStep = 0, lastStep = 0; // step indices
    TimeNs ownedFrom = 0, ownedTo = 0;
    TimeWindow window;
};
// The batches of `overview`, each of about maxEvents events at most (by the file's average per step; at
// least one step). None when the file has no steps.
std::vector<StepBatch> stepBatches(const TraceOverview& overview, uint64_t maxEvents);
// The window of a batch with every step of the file (not only those inside the window), so that a
// step's window ends where the next step starts even when that one lies in the next batch.
Expected<Trace> readBatch(const format::TraceReader& reader, const TraceOverview& overview, const StepBatch& batch,
    const ReadOptions& options = {});
// The window of a step of `rank`: from its start to the next step's start on that rank, else its end.
TimeNs stepWindowEnd(const std::vector<Step>& rankSteps, size_t i);

// stepTable and kernelTable (tracesummary.h) of a file, read batch by batch (stepBatches): the same rows
// as from the whole trace, in memory of about maxEvents events plus 4 bytes per kernel (the medians).
struct SummaryTables {
    std::vector<StepRow> steps;
    std::vector<KernelRow> kernels;
    size_t batches = 0;
    uint64_t largestBatchEvents = 0; // events of the largest window read
};
Expected<SummaryTables> summaryTables(const format::TraceReader& reader, const TraceOverview& overview,
    KernelOrder order, uint64_t maxEvents, const ReadOptions& options = {});

} // namespace gapscope::model
