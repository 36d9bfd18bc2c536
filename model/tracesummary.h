// SPDX-License-Identifier: MIT
#pragma once

// Summary tables of a trace for gapscope-cli info/summary and the viewer's tables: counts and
// kernel time per rank, per-step rows (window, kernels, GPU busy time) and per-kernel-name rows.
//
// A step's window is [start_i, start_{i+1}) on its rank, the last step ending at its recorded end
// (CONTRACTS.md). Busy time sums GPU event durations inside the window (clipped to it; overlap of
// concurrent streams is not removed). Pure functions of the trace; thread-safe.

#include "model/json.h"
#include "model/trace.h"

#include <array>
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
    std::array<uint64_t, 7> byKind {}; // by EventKind
    uint64_t kernels = 0;
    TimeNs kernelTime = 0;
    std::vector<RankStats> ranks;
    pb::StepSource stepSource = pb::STEP_UNKNOWN;
};
TraceStats traceStats(const Trace& trace);

struct StepRow {
    uint32_t rank = 0;
    uint32_t index = 0;
    TimeNs start = 0;
    TimeNs window = 0; // [start_i, start_i+1), or the recorded duration for the last step
    TimeNs gpuSpan = 0; // recorded end - start
    uint64_t kernels = 0;
    TimeNs busy = 0; // GPU event time inside the window
};
std::vector<StepRow> stepTable(const Trace& trace);

struct KernelRow {
    StringId name = 0;
    uint64_t count = 0;
    TimeNs total = 0;
    TimeNs min = 0;
    TimeNs max = 0;
    TimeNs median = 0;
};
// Kernel names by total time (descending; ties by name), over every rank.
std::vector<KernelRow> kernelTable(const Trace& trace);

// "12.345 ms", "850 ns", "3.20 s"
std::string formatDuration(TimeNs ns);

// The capture's record of its own cost for `rank` (the median step before arming vs while
// capturing), or null when the trace has none (imports, synth, captures that saw too few steps).
const pb::OverheadEvidence* captureOverhead(const Trace& trace, uint32_t rank);
// (while capturing - before) / before, in %.
double captureOverheadPct(const pb::OverheadEvidence& evidence);
// {steps_before, before_ms, steps_during, during_ms, pct, arm_latency_ms}: `capture_overhead` in
// `info --json` and `analyze --json`.
json::Value captureOverheadJson(const pb::OverheadEvidence& evidence);

} // namespace gapscope::model
