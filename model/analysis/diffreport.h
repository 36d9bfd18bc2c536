// SPDX-License-Identifier: MIT
#pragma once

// DiffReport: what `gapscope-cli diff A B` prints, as JSON and as text, from a TraceDiff.
//
// JSON (these keys are a contract; keys may be added, never renamed):
//   a, b {label, ranks, budget}          what was compared
//   steps {a, b, common, first, last}    a/b: {count, median_ms, mean_ms, median_step, median_rank};
//                                        delta_median_ms, delta_mean_ms
//   bars [{name, kind, a_ms, b_ms, delta_ms, in_a, in_b}]   the median step, largest |delta| first
//   mean_bars [...]                      the same for the mean per step over the compared steps
//   kernels [{name, match, a_count, b_count, a_total_ns, b_total_ns, a_median_ns, b_median_ns,
//            a_own_ns, b_own_ns, delta_total_ns, delta_own_ns, [a_names, b_names]}]
//            largest |delta_total_ns| first; a median is null when unknown or absent on that side;
//            match: exact | normalised (a_names/b_names list the full names) | new | vanished;
//   kernels_normalised                   how many rows paired only after normalising
//   ranks [{a_rank, b_rank, a {...}, b {...}, delta_step_ms, delta_wait_ms}]  a/b: {steps, step_ms,
//          median_step_ms, wait_ms, late_count, matched, mean_late_ms, straggler}, null when absent
//   host_attribution {available, a, b, ranks, [why]}  what the host was doing in the launch/host
//          gaps over the compared steps: a/b are each side's `host_gaps` (as `analyze --json` writes
//          them); ranks [{a_rank, b_rank, a_gap_ms, b_gap_ms, a_explained_ms, b_explained_ms,
//          delta_gap_ms, top [{name, kind, a_ms, b_ms, delta_ms, a_count, b_count}]}] totals over
//          the compared steps, top 10 by |delta_ms|; why says what is missing when not available
//   problems [text] (what could not be compared), notes [text]
//   coverage {a, b}: each side's coverage items (coverage.h) [{name, value, unit, verdict, meaning}]
//   with verdicts (diff --gate, diffverdict.h): verdicts [{name, kind (bar|kernel), a_median_ms, b_median_ms,
//          delta_ms, ci_low_ms, ci_high_ms, threshold_ms, a_steps, b_steps, verdict}] (bar names as in `bars`;
//          "measured step" first), gate {result (pass|regression|not compared), exit (0|1|2), threshold,
//          confidence, resamples, regressions [names], waived [names: bars that regressed while the step
//          got faster, not failed], notes [text]}
// Times of bars and steps are ms per step (the median step: that one step).
//
// Threading: pure functions of the diff; thread-safe.

#include "model/analysis/coverage.h"
#include "model/analysis/diffverdict.h"
#include "model/analysis/tracediff.h"
#include "model/base/json.h"

#include <string>

namespace gapscope::model {

class DiffReport {
public:
    struct Options {
        std::string aLabel = "A", bLabel = "B"; // the files, as the user named them
        size_t textKernels = 25; // kernel rows in the text (JSON lists all)
        const DiffVerdicts* verdicts = nullptr; // diff --gate: the verdicts, in the JSON, the text and below
        std::string threshold = "2%"; // as the user gave it, for the reports
        // Each side's coverage inputs when its analyzer is batched (StreamedAnalysis::coverage); null: from
        // its events.
        const CoverageInputs* aCoverage = nullptr;
        const CoverageInputs* bCoverage = nullptr;
    };
    // What `diff --gate` exits with: 2 when something could not be compared (no steps in common, rank
    // counts differ, too few steps, a coverage item of either side bad), else 1 when a bar is a
    // regression, else 0.
    int gateExit() const;
    // The verdicts (Options::verdicts) as a JUnit XML report: one test case per bar and the measured step
    // (a regression fails, an inconclusive one is skipped), an error case when not compared.
    std::string junit() const;
    // The same as Markdown a CI job can post as it is: the verdict, the table of bars, kernels that moved.
    std::string markdown() const;

    DiffReport(const TraceDiff& diff, Options options);

    json::Value toJson() const;
    std::string toText() const;

private:
    json::Value sideJson(const GapAnalyzer& an, const std::string& label) const;
    json::Value stepsJson() const;
    json::Value kernelsJson() const;
    json::Value ranksJson() const;
    json::Value hostJson() const;
    std::string waterfallText(const TraceDiff::Waterfall& w, const std::string& title) const;
    std::string kernelsText() const;
    std::string ranksText() const;
    std::string hostText() const;
    json::Value verdictsJson() const;
    json::Value gateJson() const;
    std::string verdictsText() const;

    const TraceDiff& m_diff;
    Options m_options;
    std::vector<CoverageItem> m_coverageA, m_coverageB;
};

} // namespace gapscope::model
