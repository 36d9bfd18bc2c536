// SPDX-License-Identifier: MIT
#pragma once

// AnalysisReport: what `gapscope-cli analyze` prints, as JSON and as text, from a GapAnalyzer and a
// selection of steps (or a time range). Also usable by exports.
//
// JSON (all times in ms, with the exact integer ns beside them where they must add up):
//   selection {first_step, last_step} or {range_ms: [t0, t1]} (relative to the trace start)
//   budget {present, description, total_ms, components [{name, ms}], assumptions}
//   classifier {origin, classes [{name, components}]}
//   ranks [{rank, api_recorded, steps [{index, start_ms, start_ns, measured_ms, measured_ns,
//           bars [{name, kind, ms, ns}]}], median {index, ...}, mean {steps, measured_ms, bars}}]
//           (a time range adds `range` {measured_ms, bars, budget_steps}; a capture that recorded
//           its own cost adds `capture_overhead` {steps_before, before_ms, steps_during, during_ms,
//           pct, arm_latency_ms}: the median step before arming vs while capturing; a light-mode capture
//           adds `light_mode` {steps, steps_detailed, steps_whole_graph, step_ms_median,
//           step_ms_median_detailed, step_ms_median_whole_graph, idle_ms_median}: step times of every
//           step, while the bars come from the detailed ones)
//   critical {rank, rule, steps_critical, steps, per_step [{index, rank}], median, mean}
//   stragglers [{rank, late_count, mean_late_ms, max_late_ms, matched, unmatched, late_fraction, op}]
//   largest_gaps [{rank, step, start_ms, ms, kind, before}], unclassified_kernels [{name, ms, count}]
//   host_gaps [{rank, gap_ms, explained_ms, unattributed_ms, top [{name, kind, ms, count}]}]: the
//           launch/host gaps of the selection, each moment given to the innermost host event on the
//           launching thread (hostattribution.h), totals over the selected steps, top 10 by time
//   host_syncs [{rank, stall_ms, explained_ms, top [{call, around, around_kind, ms, count}]}]: the
//           sync stalls by the call the host was blocked in and the host event around it
//   findings [text...], notes [text...]
// The bars of each step add up exactly to measured_ns (and to measured_ms up to float rounding).
//
// Threading: computed in the constructor; const afterwards.

#include "model/analysis/coverage.h"
#include "model/analysis/findings.h"
#include "model/analysis/gapanalyzer.h"
#include "model/analysis/hostattribution.h"
#include "model/base/json.h"

#include <memory>
#include <string>
#include <vector>

namespace gapscope::model {

class AnalysisReport {
public:
    struct Options {
        uint32_t firstStep = 0;
        uint32_t lastStep = GapAnalyzer::kAllSteps;
        bool range = false;
        TimeNs t0 = 0, t1 = 0; // absolute trace time when `range`
        bool perStep = true; // list every step's bars in JSON
        size_t largestGaps = 3;
        bool hostGaps = false; // keep every gap's host attribution (the viewer's tables), not only the totals
        // The host attribution of these steps, computed beforehand (a batched analyzer's, analysisstream.h,
        // which cannot sweep its steps again); it must outlive the report. Null: computed here.
        const HostAttribution* host = nullptr;
        // What coverage needs from the events, gathered window by window (StreamedAnalysis::coverage) for a
        // batched analyzer; null: gathered here from the analyzer's events.
        const CoverageInputs* coverage = nullptr;
    };

    AnalysisReport(const GapAnalyzer& analyzer, const Options& options);

    json::Value toJson() const;
    std::string toText() const;
    const std::vector<Finding>& findings() const { return m_findings; }
    // How much of the trace the answer stands on (coverage.h): `coverage` in the JSON, the text's last part.
    const std::vector<CoverageItem>& coverage() const { return m_coverage; }
    const GapAnalyzer::Breakdown& criticalPath() const { return m_criticalMean; }
    // The host attribution behind host_gaps and host_syncs (every rank over the selection).
    const HostAttribution& hostAttribution() const { return *m_hostView; }

private:
    GapAnalyzer::Selection selection(int rank, GapAnalyzer::Selection::Kind kind) const;
    json::Value barsJson(const GapAnalyzer::Breakdown& b, double divide) const;
    json::Value breakdownJson(const GapAnalyzer::Breakdown& b, bool mean) const;
    json::Value rankJson(uint32_t rank) const;
    json::Value budgetJson() const;
    std::string waterfallText(const GapAnalyzer::Breakdown& b, const std::string& title) const;
    std::string overheadText() const; // per rank: the capture's own cost, when the trace recorded it
    struct LightMode {
        bool present = false; // the rank has steps of whole graph replays
        uint32_t steps = 0, detailed = 0, whole = 0;
        double stepMs = 0, detailedMs = 0, wholeMs = 0, idleMs = 0; // medians
    };
    LightMode lightMode(uint32_t rank) const;
    json::Value hostJson() const;
    json::Value hostSyncsJson() const;
    json::Value inGraphJson() const; // in-graph gaps by capture-time range (host_in_graph_gaps)
    std::string hostText() const;

    const GapAnalyzer& m_analyzer;
    Options m_options;
    GapAnalyzer::Critical m_critical;
    GapAnalyzer::Breakdown m_criticalMean; // critical path over the selection
    GapAnalyzer::Breakdown m_criticalMedian; // its median step
    std::vector<GapAnalyzer::Straggler> m_stragglers;
    std::vector<GapAnalyzer::IdleGap> m_gaps;
    std::vector<Finding> m_findings;
    std::vector<CoverageItem> m_coverage;
    std::unique_ptr<HostAttribution> m_host; // every rank over the selection, when computed here
    const HostAttribution* m_hostView = nullptr; // m_host or Options::host
};

} // namespace gapscope::model
