// SPDX-License-Identifier: MIT
#pragma once

// Reading and writing .gapscope files as Traces (the format itself lives in model/format).
//
// readTraceFile decodes the chunks in parallel when the file has its index (each chunk's events go
// straight to their final place in the lane columns), or in order when the file was cut short or
// its index is damaged. Damaged chunks are skipped and named in the trace's warnings; the rest of
// the trace is kept. Steps come from the file or, when it has none, from the step detector.
//
// Threading: each call is independent; a call uses up to ReadOptions::threads threads.

#include "model/format/fileformat.h"
#include "model/trace/trace.h"

#include <functional>
#include <memory>
#include <string>

namespace gapscope::format {
class TraceReader;
}
namespace gapscope::pb {
class GraphNode;
}

namespace gapscope::model {

class TraceOverview;

struct ReadOptions {
    std::function<bool(double fraction)> progress; // return false to cancel
    // openTrace finds the steps after reading (StepFinder, model/steps) unless detectSteps is false; stepRule
    // is the rule's text (StepRule::parse): empty keeps a file's stored steps and finds the others' by "auto".
    bool detectSteps = true;
    std::string stepRule;
    unsigned threads = 0; // 0: min(2, hardware threads) -- decode is memory-bound beyond that
    format::FormatError* error = nullptr; // receives the kind of failure (tests, tools)
    // A window: only the chunks whose events may overlap [windowStart, windowEnd), by the file's index
    // (every lane and string of the file is kept, so lane and string ids are the file's; no steps are
    // detected). For a file too large to read whole (TraceOverview gives the rest).
    TimeNs windowStart = INT64_MIN, windowEnd = INT64_MAX;
    bool window() const { return windowStart != INT64_MIN || windowEnd != INT64_MAX; }
    // false: kernels' launch configurations (grid, block, registers, shared memory, graph node) need not
    // be kept (Trace::kernelConfig() may be null), which saves a lookup per kernel: for readers that
    // count and time kernels (summaries, the gap analysis) and show no kernel's details.
    bool kernelConfigs = true;
    // false: the lanes' summary pyramids (LaneSummary: what the viewer draws zoomed out, `validate`'s
    // totals) are not built and stay empty: for readers that walk the events themselves (summaries, the
    // gap analysis).
    bool laneSummaries = true;
    // A window's read may take the event columns of this trace, an earlier window of the same file that
    // is no longer needed (it is left without events): their memory is already the process's, so the
    // read neither faults it in nor zeroes it again. Windows read in turn pass the last one.
    Trace* recycle = nullptr;
    // Graph-node entries added to those of the chunks read: a window's, from the file's overview
    // (TraceOverview::graphNodes), since the chunk that holds a node's entry may lie outside the window.
    std::shared_ptr<const std::vector<pb::GraphNode>> graphNodes;
};

struct WriteOptions {
    int zstdLevel = 3;
    uint32_t eventsPerChunk = 65536;
    // Lanes left out of the file: lanes a reader derives again, such as the viewer's replay-range lanes
    // (model/analysis/kernelranges.h), which a saved trace must not carry twice when opened.
    std::function<bool(const LaneInfo&)> skipLane;
};

Expected<Trace> readTraceFile(const std::string& path, const ReadOptions& options = {});
// Reads a trace from bytes (fuzzing, tests); `name` is used in messages.
Expected<Trace> readTraceBuffer(std::string bytes, const std::string& name, const ReadOptions& options = {});
// Reads from an open reader (several windows of one file, readers kept by the viewer).
Expected<Trace> readTrace(const format::TraceReader& reader, const ReadOptions& options = {});

Status writeTraceFile(const Trace& trace, const std::string& path, const WriteOptions& options = {});

// Rewrites `path` with the given sections replaced (nullptr: keep the file's), through a temporary
// file in the same folder and a rename. The events are copied frame by frame, not decoded.
Status saveTraceSections(const std::string& path, const AnnotationSet* annotations,
    const BudgetSettings* budget, const ClassifierTable* classifier);

// The annotation section of a .gapscope file (the last sound one, as a full read takes it), read
// without its events; an empty set when it has none.
AnnotationSet readAnnotations(const format::TraceReader& reader);

// Stores the overview that TraceOverview built in a pass (passFrame()) in the file that lacked it, as
// its OVERVIEW frame (rewritten as saveTraceSections does), so that later opens read it at once.
Status saveOverview(const std::string& path, const TraceOverview& overview);

// The bytes of a section kept beside a trace that cannot hold it (the viewer's FILE.annotations and
// FILE.budget next to an imported trace): the section's message as stored in a .gapscope file.
// Decoding fails, naming `what`, on bytes that are not such a message.
std::string encodeSection(const AnnotationSet& annotations);
std::string encodeSection(const BudgetSettings& settings);
Expected<AnnotationSet> decodeAnnotations(const std::string& bytes, const std::string& what);
Expected<BudgetSettings> decodeBudgetSettings(const std::string& bytes, const std::string& what);

} // namespace gapscope::model
