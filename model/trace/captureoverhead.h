// SPDX-License-Identifier: MIT
#pragma once

// A capture's record of its own cost, per rank (OverheadEvidence in the file header), read the one
// way that gapscope-cli capture, info, analyze and the viewer share:
//   - the reference: the process's baseline (median host step before its first capture, refreshed
//     only while no capture had left CUPTI attached) when the rank sent one, else this capture's
//     own steps before recording (files of older ranks: "before arming");
//   - the overhead: while capturing against the reference, in %;
//   - the lasting cost: "after the last capture" (this capture's steps before recording, in a
//     process captured before) against the baseline, in %.
// A figure resting on fewer than kOverheadMinSteps steps says so; one with no steps is missing.
// Pure functions; thread-safe.

#include "model/base/json.h"
#include "model/trace/tracemeta.h"

#include <cstdint>
#include <string>

namespace gapscope::model {

// A median from fewer steps than this is flagged ("fewer than 50 steps").
constexpr uint32_t kOverheadMinSteps = 50;

// The evidence of `rank` when it has a figure while capturing and a reference to hold it against,
// or null (imports, synth, captures that saw too few steps).
const OverheadEvidence* captureOverhead(const TraceHeader& header, uint32_t rank);
// The evidence of `rank` as recorded, whatever it holds (null: none recorded).
const OverheadEvidence* rankOverheadEvidence(const TraceHeader& header, uint32_t rank);

bool againstBaseline(const OverheadEvidence& evidence);
// The baseline's median when there is one, else the median before recording (0: neither).
double captureOverheadReferenceMs(const OverheadEvidence& evidence);
// (while capturing - reference) / reference, in %.
double captureOverheadPct(const OverheadEvidence& evidence);
// A process captured before, with a baseline and steps before recording: (after the last capture -
// baseline) / baseline in %, true. Otherwise false.
bool captureLastingPct(const OverheadEvidence& evidence, double* pct);

const char* toString(OverheadEvidence::CuptiAfterLast state); // "none", "detached", "still attached", ...

// `capture_overhead` in `info --json` and `analyze --json`: {steps_before, before_ms, steps_during,
// during_ms, pct, arm_latency_ms} as always, plus against ("baseline" | "before"), baseline_steps,
// baseline_ms, baseline_captures_before, captures_before, cupti_after_last, min_steps, and for a
// process captured before after_last_steps, after_last_ms, after_last_pct (null without a baseline).
json::Value captureOverheadJson(const OverheadEvidence& evidence);

// One line (no rank prefix): "step 2.170 ms before the first capture (baseline, 200 steps); 2.210 ms
// after the last capture (+1.8 %, 60 steps, 2 captures before, CUPTI detached); 2.310 ms while
// capturing (+6.5 %, 20 steps, fewer than 50); arm latency 4.1 ms". `timeWindow`: the capture was a
// time window (a process without step markers then has no figure at all, and the line says why).
std::string captureOverheadLine(const OverheadEvidence& evidence, bool timeWindow);

// What the user can do about a cost the last capture left behind: empty unless CUPTI stayed attached
// after it (the process keeps that cost until it exits); with the lasting figure where there is one.
std::string captureLastingNote(const OverheadEvidence& evidence);

} // namespace gapscope::model
