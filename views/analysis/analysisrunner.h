// SPDX-License-Identifier: MIT
#pragma once

// AnalysisRunner: the viewer's side of the gap analysis. It owns a GapAnalyzer for the open trace
// (built off the GUI thread: O(events)), answers waterfall requests (one step, the median step,
// selected steps or a time range; a rank or the critical rank) and, when a bar is clicked, the
// bar's members (its kernels and idle gaps, each gap with the host event behind it) as a
// TimelineHighlight plus a list for the table.
//
// Budget edits are cheap: the analyzer's measured slots are kept and the bars are rebuilt with
// buildWaterfall() against the new budget; the analyzer itself is rebuilt (in the background) only
// when the edit changes the slot layout (a component's budget appearing or vanishing).
// Work runs on the global thread pool; each kind of job has a JobTracker, so results that arrive
// after a newer request are dropped. The *Now() variants do the same synchronously (headless
// export, tests).
//
// Threading: the object lives on the GUI thread and emits its signals there.

#include "model/analysis/analysisreport.h"
#include "model/analysis/coverage.h"
#include "model/analysis/findings.h"
#include "model/analysis/gapanalyzer.h"
#include "model/analysis/hostattribution.h"
#include "model/budget/budget.h"
#include "views/analysis/waterfalldata.h"
#include "views/common/jobtracker.h"
#include "views/timeline/timelinehighlight.h"

#include <QObject>

#include <memory>
#include <optional>

struct WaterfallRequest {
    using Kind = gapscope::model::GapAnalyzer::Selection::Kind;
    Kind kind = Kind::Median;
    int rank = gapscope::model::GapAnalyzer::kCriticalRank;
    uint32_t firstStep = 0;
    uint32_t lastStep = gapscope::model::GapAnalyzer::kAllSteps;
    gapscope::model::TimeNs t0 = 0, t1 = 0;
    QString describe() const;
};

// One member of a bar, for the table next to the timeline.
struct BarMember {
    uint32_t rank = 0;
    gapscope::model::EventRef event; // invalid for an idle gap
    gapscope::model::TimeNs start = 0;
    gapscope::model::TimeNs end = 0;
    // Launch/host gaps and sync stalls (HostAttribution): the host event with the most time in the
    // gap, and for a sync stall the blocking call (invalid: none, or not attributed).
    gapscope::model::EventRef host;
    gapscope::model::EventRef syncCall;
};

class AnalysisRunner : public QObject {
    Q_OBJECT
public:
    explicit AnalysisRunner(QObject* parent = nullptr);
    ~AnalysisRunner() override;

    // The trace to analyse; its kind of step is GapAnalyzer::defaultKind (decode where there are some).
    void setTrace(std::shared_ptr<const gapscope::model::Trace> trace);
    // The kind of step the analysis looks at (Unknown: every kind); the others are shown but left out.
    void setStepKind(gapscope::model::StepKind kind);
    gapscope::model::StepKind stepKind() const { return m_kind; }
    // nullopt: no budget (the waterfall shows measured bars only). The inputs of a decode budget; the
    // steps analysed are compared with the budget of their kind (model/analysis/phasebudget.h: prefill
    // steps with the prefill budget of their prompt tokens), made again when the kind changes.
    void setBudget(
        const std::optional<gapscope::model::BudgetInputs>& inputs, bool achievable, const QString& description);
    // The budget the analysed steps are compared with (not present: none, or `why` not).
    const gapscope::model::StepBudget& stepBudget() const { return m_budget; }
    void setRequest(const WaterfallRequest& request);
    const WaterfallRequest& request() const { return m_request; }
    // Asks for the members of bar `bar` of the current waterfall (emits membersReady).
    void requestMembers(int bar);
    // A window read is about to replace the trace: the analyzer's build in the background stops until
    // resume() or the next setTrace() (on a machine of few cores it would hold the read up). The
    // waterfall shown stays; busy() stays true when a build was stopped.
    void hold();
    // Restarts the build that hold() stopped (the read failed: the trace stays).
    void resume();

    // Off: nothing runs in the background; runNow() does the work (headless export, tests).
    void setAsync(bool on) { m_async = on; }
    // Synchronous: builds the analyzer if needed and computes the waterfall (and members of `bar`).
    bool runNow();
    bool membersNow(int bar, TimelineHighlight& highlight, std::vector<BarMember>& list);

    bool ready() const { return m_state != nullptr; }
    bool busy() const { return m_building; }
    const gapscope::model::GapAnalyzer* analyzer() const;
    // The trace analysed (a live session's latest snapshot), for other readers on worker threads.
    std::shared_ptr<const gapscope::model::Trace> trace() const { return m_trace; }
    const WaterfallData& waterfall() const { return m_waterfall; }
    const gapscope::model::GapAnalyzer::Breakdown& breakdown() const { return m_breakdown; }
    const std::vector<gapscope::model::Bar>& bars() const { return m_bars; }
    double budgetTotalMs() const { return m_budget.present ? m_budget.totalMs() : -1; }
    // The analysis' findings over all steps, the same as `gapscope-cli analyze` (AnalysisReport),
    // built with the analyzer (empty until analyzerReady).
    const std::vector<gapscope::model::Finding>& findings() const;
    // The report behind findings() and coverage() (null until the analysis is ready).
    const gapscope::model::AnalysisReport* report() const;
    // What that answer stands on (model/analysis/coverage.h), as `analyze` gives it.
    const std::vector<gapscope::model::CoverageItem>& coverage() const;
    // What the host did in the launch/host gaps and sync stalls of every rank over all steps, the same
    // as `gapscope-cli analyze` (host_gaps, host_syncs); null until analyzerReady.
    const gapscope::model::HostAttribution* hostAttribution() const;
    // The lit-up gaps of HostAttribution gap indices: spans on the GPU lanes, and on the CPU lanes the
    // host events the gaps were attributed to (only those named `name`, unless it is 0).
    TimelineHighlight hostHighlight(
        const std::vector<uint32_t>& gaps, const QString& label, gapscope::model::StringId name = 0) const;
    // Every launch/host gap of `rank` in the analysed steps (a Host table row of a rank whose gaps
    // were not kept: HostAttribution::Rank::gapsKept).
    TimelineHighlight rankGapHighlight(uint32_t rank, const QString& label) const;

signals:
    void busyChanged(bool busy);
    void analyzerReady();
    void waterfallReady(const WaterfallData& data);
    void membersReady(int bar, const TimelineHighlight& highlight, const std::vector<BarMember>& list);
    void failed(const QString& message);

private:
    struct State;
    std::shared_ptr<const State> buildState() const;
    // Null when `cancel` was cancelled before it was done.
    static std::shared_ptr<const State> makeState(const std::shared_ptr<const gapscope::model::Trace>& trace,
        gapscope::model::StepKind kind, const gapscope::model::StepBudget& budget,
        const gapscope::model::CancelToken& cancel);
    void rebuild();
    void startBuild();
    void recompute();
    void applyBreakdown(gapscope::model::GapAnalyzer::Breakdown b);
    void rebuildBars();
    QColor barColor(size_t bar) const; // of m_bars[bar]
    static void membersOf(const State& state, const gapscope::model::GapAnalyzer::Breakdown& b, int slot,
        TimelineHighlight& highlight, std::vector<BarMember>& list);

    std::shared_ptr<const gapscope::model::Trace> m_trace;
    std::shared_ptr<const State> m_state;
    void updateStepBudget();
    gapscope::model::StepBudget m_budget;
    std::optional<gapscope::model::BudgetInputs> m_budgetInputs;
    bool m_achievable = false;
    QString m_budgetDescription;
    WaterfallRequest m_request;
    gapscope::model::StepKind m_kind = gapscope::model::StepKind::Unknown;
    gapscope::model::GapAnalyzer::Breakdown m_breakdown;
    std::vector<gapscope::model::Bar> m_bars;
    WaterfallData m_waterfall;
    JobTracker m_buildJobs, m_queryJobs, m_memberJobs;
    bool m_building = false;
    bool m_async = true;
    bool m_rebuildPending = false;
    bool m_held = false;
};
