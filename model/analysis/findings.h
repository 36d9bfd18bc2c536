// SPDX-License-Identifier: MIT
#pragma once

// Findings: the analysis in plain words, largest first:
//   "launch/host gaps: 41.2 ms of the 96.5 ms step (43%): the GPU waited for the host to launch work"
//   "rank 1 arrives 0.80 ms late at 61% of AllReduces (612 of 1000; worst 2.10 ms)"
//   "largest gap: 2.10 ms launch/host gap on rank 0 in step 17, before fused_moe_kernel"
// Stragglers get a sentence when last at >= 10% of their collectives and late by >= 1% of the
// step in total; the largest gaps named are gaps inside steps (the step gap has its own bar); last,
// each step left out because it lies partly outside some rank's capture
//   "capture started 824 ms apart on ranks 0 and 1; step 0 left out".
// Built from the critical-path breakdown of the selected steps (mean per step), the stragglers and
// the largest idle gaps. Pure functions; thread-safe.

#include "model/analysis/gapanalyzer.h"

#include <string>
#include <vector>

namespace gapscope::model {

struct Finding {
    std::string text;
    std::string kind; // "gap", "inefficiency", "straggler", "largest_gap", "budget", "incomplete_step"
    double ms = 0; // the amount the sentence is about (per step for gap bars)
    // Where it points, for a viewer to jump to: the waterfall bar it is about (None if none; the
    // bar's slot and its display name), the rank (-1: none or the critical path), the step (-1: none)
    // and the time range (t1 > t0 when known).
    BarId bar = BarId::None;
    int barSlot = -1;
    std::string barName;
    int rank = -1;
    int64_t step = -1;
    TimeNs t0 = 0, t1 = 0;
};

std::vector<Finding> makeFindings(const GapAnalyzer& analyzer, const GapAnalyzer::Breakdown& criticalPath,
    const std::vector<GapAnalyzer::Straggler>& stragglers, const std::vector<GapAnalyzer::IdleGap>& largestGaps);

// A straggler worth naming: last at >= 10% of the collectives it took part in, and late by >= 1% of
// the step in total (`steps` steps looked at, `stepNs` the mean step).
bool isNotableStraggler(const GapAnalyzer::Straggler& straggler, double steps, double stepNs);

// "41.2", "0.80", "0.018": enough digits for the size of the value.
std::string formatMs(double ms);
// "41.2 ms", "0.80 ms", "12.5 us".
std::string formatDuration(double ms);

} // namespace gapscope::model
