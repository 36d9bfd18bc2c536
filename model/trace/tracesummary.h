// SPDX-License-Identifier: MIT
#pragma once

// Summary tables of a trace for gapscope-cli info/summary (the viewer uses the capture-overhead
// helpers): counts and kernel time per rank, per-step rows (window, kernels, GPU busy time) and
// per-kernel-name rows (raw and own time).
//
// A step's window is [start_i, start_{i+1}) on its rank, the last step ending at its recorded end
// (model/analysis/README.md). Busy time is, per GPU stream, the union of its events' intervals clipped to the
// window, summed over the rank's streams: overlap on one stream (a kernel launched early by
// programmatic dependent launch, PDL, starts before the previous one ends) counts once, while
// overlap between concurrent streams is not removed (two streams busy at once count twice).
//
// A kernel's own time follows the analysis's one-stream rule (OwnTime, model/trace/owntime.h): work of one
// stream runs in order, so a kernel counts from max(start, latest end of every earlier event on its
// stream) to its end, clamped at 0; its raw time (duration) includes the wait of an early launch.
// Without overlap on a stream, own time equals raw time.
//
// Cost: O(events) per table; for the medians, kernelTable keeps 4 bytes per kernel (8 for the kernels
// of a name that ever overlaps earlier work). Pure functions of the trace; thread-safe.

#include "model/base/json.h"
#include "model/trace/captureoverhead.h"
#include "model/trace/trace.h"

#include <array>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace gapscope::model {

struct RankStats {
    uint32_t rank = 0;
    uint64_t events = 0;
    uint64_t kernels = 0;
    TimeNs kernelTime = 0;
    uint32_t steps = 0;
    uint32_t lanes = 0;
};

struct TraceStats {
    std::array<uint64_t, 8> byKind {}; // by EventKind
    std::array<uint64_t, kHostKinds> byHostKind {}; // host events by HostKind
    uint64_t cpuThreads = 0; // CPU thread lanes with host events
    uint64_t kernels = 0;
    TimeNs kernelTime = 0;
    std::vector<RankStats> ranks;
    StepSource stepSource = StepSource::Unknown;
    std::array<uint32_t, kStepKinds> stepKinds {}; // steps (aligned indices) by StepKind
};
TraceStats traceStats(const Trace& trace);
// Steps by StepKind, counting each aligned step index once (the kind of the first rank that has it).
std::array<uint32_t, kStepKinds> stepKindCounts(const Trace& trace);
// The same over each rank's steps, from wherever they come (a TraceOverview's stored steps).
std::array<uint32_t, kStepKinds> stepKindCounts(const std::vector<const std::vector<Step>*>& perRank);

struct StepRow {
    uint32_t rank = 0;
    uint32_t index = 0;
    TimeNs start = 0;
    TimeNs window = 0; // [start_i, start_i+1), or the recorded duration for the last step
    TimeNs gpuSpan = 0; // recorded end - start
    uint64_t kernels = 0;
    TimeNs busy = 0; // per-stream union of GPU event time inside the window, summed over streams
    StepKind kind = StepKind::Unknown; // from the step (Step::kind, label, batch, tokens)
    std::string label;
    uint32_t batch = 0;
    uint32_t tokens = 0;
};
std::vector<StepRow> stepTable(const Trace& trace);
// One row of stepTable: `step` of `rank`, its window [step.start, windowEnd), from the events `trace`
// holds there (all of the trace, or a window of its file that covers the step: tracewindow.h).
StepRow stepRow(const Trace& trace, uint32_t rank, const Step& step, TimeNs windowEnd);

struct KernelRow {
    StringId name = 0;
    uint64_t count = 0;
    TimeNs total = 0;
    TimeNs min = 0;
    TimeNs max = 0;
    TimeNs median = 0;
    TimeNs ownTotal = 0; // own time: without the part overlapped by earlier work of the stream
    TimeNs ownMedian = 0;
};
enum class KernelOrder { Total, Own };
// Kernel names by total (or own total) time, descending, ties by name, over every rank. Medians of
// durations past UINT32_MAX ns saturate there.
std::vector<KernelRow> kernelTable(const Trace& trace, KernelOrder order = KernelOrder::Total);

// kernelTable in parts: the kernels of several traces with the same string ids (windows of one file,
// tracewindow.h), each kernel counted by the part where it starts in [from, to). A part must hold
// every event of a stream that overlaps [from, to), so that own times come out as in one trace.
// add() counts the streams on the task pool, each task into a share of its own that it keeps from one
// add() to the next (durations are written once and never copied); finish() joins the shares and
// takes the medians there, without gathering a name's durations in one place (kthOfSpans).
class KernelTableBuilder {
public:
    void add(const Trace& trace, TimeNs from = std::numeric_limits<TimeNs>::min(),
        TimeNs to = std::numeric_limits<TimeNs>::max());
    // The rows, ordered as kernelTable orders them; `name` gives the string of a name id.
    std::vector<KernelRow> finish(KernelOrder order, const std::function<std::string_view(StringId)>& name);

private:
    // Durations of one kernel name in one share, for its medians, in blocks that stay where they are
    // written (a full block is followed by a larger one, never moved). Own times are kept only from
    // the first kernel whose own time differs from its raw one: before it (`ownFrom` raw durations)
    // they are equal, so traces without PDL keep one set per name.
    struct Durations {
        static constexpr uint64_t kAll = std::numeric_limits<uint64_t>::max();
        std::vector<std::vector<uint32_t>> raw, own;
        uint64_t ownFrom = kAll; // kAll: every own time equals its raw one
        void add(TimeNs d, TimeNs ownNs);
    };
    // What one task counts: rows and durations by name, kept across add() calls.
    struct Share {
        std::vector<uint32_t> rowOf; // by name id (ids are dense)
        std::vector<KernelRow> rows;
        std::vector<Durations> durations; // by row
        void addLane(const Trace& trace, const Lane& lane, TimeNs from, TimeNs to);
    };
    std::vector<Share> m_shares;
};

// The k-th smallest (0-based) of the values of several spans taken together, without copying them
// when there are many: a histogram of their high bits, then the values of the one bucket that holds
// it. Exact; O(values). k must be less than the number of values.
struct U32Span {
    const uint32_t* data = nullptr;
    size_t size = 0;
};
uint32_t kthOfSpans(const std::vector<U32Span>& spans, uint64_t k);

// "12.345 ms", "850 ns", "3.20 s"
std::string formatDuration(TimeNs ns);

// The capture's record of its own cost (captureOverhead, captureOverheadPct, captureOverheadJson,
// captureOverheadLine) is in model/trace/captureoverhead.h.
inline const OverheadEvidence* captureOverhead(const Trace& trace, uint32_t rank)
{
    return captureOverhead(trace.header(), rank);
}

} // namespace gapscope::model
