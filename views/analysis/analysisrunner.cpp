// SPDX-License-Identifier: MIT
#include "views/analysis/analysisrunner.h"

#include "model/analysis/phasebudget.h"
#include "model/trace/traceclassifier.h"

#include "model/analysis/analysisreport.h"

#include "views/common/eventcolors.h"
#include "views/common/timeformat.h"
#include "views/document/traceopener.h"

#include <QCoreApplication>

#include <algorithm>
#include <tuple>

using namespace gapscope::model;

struct AnalysisRunner::State {
    std::shared_ptr<const Trace> trace;
    std::unique_ptr<GapAnalyzer> analyzer;
    std::vector<uint8_t> slotEverUsed; // per slot: > 0 ns in some step of some rank
    std::unique_ptr<AnalysisReport> report; // as `gapscope-cli analyze` gives it (all steps)
    // The report's host attribution gaps by (rank, start): (rank, start, end, gap index).
    std::vector<std::tuple<uint32_t, TimeNs, TimeNs, uint32_t>> hostGaps;
    const HostAttribution::Gap* hostGapAt(uint32_t rank, TimeNs t) const;
};

const HostAttribution::Gap* AnalysisRunner::State::hostGapAt(uint32_t rank, TimeNs t) const
{
    // The gap of `rank` holding time t (a range selection may clip a gap's start).
    auto it = std::upper_bound(hostGaps.begin(), hostGaps.end(), std::make_tuple(rank, t, INT64_MAX, UINT32_MAX));
    if (it == hostGaps.begin())
        return nullptr;
    --it;
    if (std::get<0>(*it) != rank || t >= std::get<2>(*it))
        return nullptr;
    return &report->hostAttribution().gaps()[std::get<3>(*it)];
}

namespace {

GapAnalyzer::Selection selectionOf(const WaterfallRequest& r)
{
    GapAnalyzer::Selection s;
    s.kind = r.kind;
    s.rank = r.rank;
    s.firstStep = r.firstStep;
    s.lastStep = r.lastStep;
    s.t0 = r.t0;
    s.t1 = r.t1;
    return s;
}

bool sameLayout(const SlotLayout& a, const SlotLayout& b)
{
    if (a.classes.size() != b.classes.size())
        return false;
    for (size_t i = 0; i < a.classes.size(); ++i) {
        if (a.classes[i].name != b.classes[i].name)
            return false;
    }
    return true;
}

} // namespace

QString WaterfallRequest::describe() const
{
    QString who // not const: returned as is at the end
        = rank == GapAnalyzer::kCriticalRank ? QStringLiteral("critical rank") : QStringLiteral("rank %1").arg(rank);
    switch (kind) {
    case Kind::Median:
        return who + QStringLiteral(" · median step");
    case Kind::Step:
        return who + QStringLiteral(" · step %1").arg(firstStep);
    case Kind::Steps:
        if (lastStep == GapAnalyzer::kAllSteps)
            return who + QStringLiteral(" · mean of all steps");
        return who + QStringLiteral(" · mean of steps %1-%2").arg(firstStep).arg(lastStep);
    case Kind::Range:
        return who + QStringLiteral(" · selected range (%1)").arg(timeformat::duration(double(t1 - t0)));
    }
    return who;
}

AnalysisRunner::AnalysisRunner(QObject* parent)
    : QObject(parent)
{
}

AnalysisRunner::~AnalysisRunner()
{
    m_buildJobs.cancel();
    m_queryJobs.cancel();
    m_memberJobs.cancel();
    TraceOpener::releaseLater(std::move(m_state));
}

const GapAnalyzer* AnalysisRunner::analyzer() const
{
    return m_state ? m_state->analyzer.get() : nullptr;
}

std::shared_ptr<const AnalysisRunner::State> AnalysisRunner::makeState(
    const std::shared_ptr<const Trace>& trace, StepKind kind, const StepBudget& budget, const CancelToken& cancel)
{
    auto st = std::make_shared<State>();
    st->trace = trace;
    GapAnalyzer::Options options;
    options.cancel = cancel;
    options.kind = kind;
    st->analyzer = std::make_unique<GapAnalyzer>(*trace, traceClassifierOrDefault(*trace), budget, options);
    if (st->analyzer->cancelled())
        return nullptr; // superseded while it was built
    // A slot empty in the sum over every step of every rank is empty in each step (slots are >= 0).
    st->slotEverUsed.assign(st->analyzer->layout().slotCount(), 0);
    for (uint32_t rank : st->analyzer->ranks()) {
        GapAnalyzer::Selection all;
        all.rank = int(rank);
        const GapAnalyzer::Breakdown b = st->analyzer->analyze(all);
        for (size_t s = 0; s < b.slotNs.size() && s < st->slotEverUsed.size(); ++s)
            st->slotEverUsed[s] |= b.slotNs[s] != 0;
        if (cancel.cancelled())
            return nullptr;
    }
    AnalysisReport::Options reportOptions;
    reportOptions.hostGaps = true; // the Host table and the bar members list each gap
    st->report = std::make_unique<AnalysisReport>(*st->analyzer, reportOptions);
    const auto& gaps = st->report->hostAttribution().gaps();
    for (uint32_t i = 0; i < gaps.size(); ++i)
        st->hostGaps.emplace_back(gaps[i].gap.rank, gaps[i].gap.start, gaps[i].gap.end, i);
    std::sort(st->hostGaps.begin(), st->hostGaps.end());
    return st;
}

std::shared_ptr<const AnalysisRunner::State> AnalysisRunner::buildState() const
{
    return makeState(m_trace, m_kind, m_budget, CancelToken());
}

void AnalysisRunner::setTrace(std::shared_ptr<const Trace> trace)
{
    m_held = false;
    m_trace = std::move(trace);
    m_kind = m_trace ? GapAnalyzer::defaultKind(*m_trace) : StepKind::Unknown;
    updateStepBudget();
    TraceOpener::releaseLater(std::move(m_state));
    m_state.reset();
    m_breakdown = {};
    m_bars.clear();
    m_waterfall = {};
    m_request = {};
    rebuild();
}

void AnalysisRunner::setBudget(
    const std::optional<BudgetInputs>& inputs, bool achievable, const QString& description)
{
    m_budgetInputs = inputs;
    m_achievable = achievable;
    m_budgetDescription = description;
    updateStepBudget();
    if (!m_trace)
        return;
    if (m_state && sameLayout(makeSlotLayout(m_state->analyzer->classifier(), m_budget), m_state->analyzer->layout())) {
        rebuildBars(); // same slots: only the budget side of the bars changes
        return;
    }
    rebuild();
}

// The budget of the kind of step analysed (phasebudget.h): prefill steps against the prefill budget.
void AnalysisRunner::updateStepBudget()
{
    m_budget = StepBudget {};
    if (!m_budgetInputs)
        return;
    static const Trace empty;
    auto b = budgetForSteps(m_trace ? *m_trace : empty, m_kind, *m_budgetInputs, m_achievable,
        m_budgetDescription.toStdString());
    if (b)
        m_budget = std::move(*b);
    else
        m_budget.why = b.error();
}

void AnalysisRunner::setStepKind(StepKind kind)
{
    if (kind == m_kind)
        return;
    m_kind = kind;
    updateStepBudget();
    if (!m_trace)
        return;
    TraceOpener::releaseLater(std::move(m_state));
    m_state.reset();
    rebuild();
}

void AnalysisRunner::setRequest(const WaterfallRequest& request)
{
    m_request = request;
    recompute();
}

void AnalysisRunner::rebuild()
{
    // Coalesce: a new trace and its budget usually arrive in the same turn of the event loop, and a
    // GapAnalyzer build costs O(events); start one build for all of them.
    m_queryJobs.cancel();
    m_memberJobs.cancel();
    if (m_async && m_trace) {
        m_buildJobs.cancel();
        if (!m_building) {
            m_building = true;
            emit busyChanged(true);
        }
        if (!m_rebuildPending) {
            m_rebuildPending = true;
            QMetaObject::invokeMethod(
                this,
                [this] {
                    m_rebuildPending = false;
                    startBuild();
                },
                Qt::QueuedConnection);
        }
        return;
    }
    startBuild();
}

void AnalysisRunner::startBuild()
{
    m_queryJobs.cancel();
    m_memberJobs.cancel();
    if (!m_trace || !m_async) {
        m_buildJobs.cancel();
        if (!m_async)
            TraceOpener::releaseLater(std::move(m_state)); // runNow() rebuilds it
        m_state.reset();
        if (m_building) {
            m_building = false;
            emit busyChanged(false);
        }
        return;
    }
    if (m_held)
        return; // resume() or the next trace starts it
    m_buildJobs.run(
        this,
        [trace = m_trace, budget = m_budget, kind = m_kind](
            const JobTracker::Ticket& ticket) { return makeState(trace, kind, budget, ticket.cancelToken()); },
        [](AnalysisRunner& self, std::shared_ptr<const State> result) {
            if (!result)
                return; // cancelled
            self.m_state = std::move(result);
            self.m_building = false;
            emit self.busyChanged(false);
            emit self.analyzerReady();
            self.recompute();
        },
        [](std::shared_ptr<const State> result) { TraceOpener::releaseLater(std::move(result)); });
}

void AnalysisRunner::hold()
{
    m_held = true;
    m_buildJobs.cancel();
}

void AnalysisRunner::resume()
{
    if (!m_held)
        return;
    m_held = false;
    if (m_building && !m_rebuildPending)
        startBuild();
}

void AnalysisRunner::recompute()
{
    if (!m_state || !m_async)
        return;
    auto st = m_state;
    m_queryJobs.run(
        this, [st, sel = selectionOf(m_request)](const JobTracker::Ticket&) { return st->analyzer->analyze(sel); },
        [st](AnalysisRunner& self, GapAnalyzer::Breakdown b) {
            if (self.m_state == st)
                self.applyBreakdown(std::move(b));
        });
}

bool AnalysisRunner::runNow()
{
    if (!m_trace)
        return false;
    m_buildJobs.cancel();
    m_queryJobs.cancel();
    const bool fresh = !m_state;
    if (fresh)
        m_state = buildState();
    m_building = false;
    if (fresh)
        emit analyzerReady(); // findings, notes and the Host table, as after a background build
    applyBreakdown(m_state->analyzer->analyze(selectionOf(m_request)));
    return m_breakdown.valid;
}

void AnalysisRunner::applyBreakdown(GapAnalyzer::Breakdown b)
{
    m_breakdown = std::move(b);
    rebuildBars();
}

void AnalysisRunner::rebuildBars()
{
    if (!m_state)
        return;
    m_bars = buildWaterfall(m_state->analyzer->layout(), m_budget, m_breakdown.slotNs, m_breakdown.budgetSteps);
    const double divisor = m_breakdown.budgetSteps > 0 ? m_breakdown.budgetSteps : 1;
    WaterfallData d;
    QString title = m_request.describe();
    if (m_request.kind == WaterfallRequest::Kind::Median && m_breakdown.steps.size() == 1)
        title += QStringLiteral(" (step %1, rank %2)").arg(m_breakdown.steps[0].second).arg(m_breakdown.steps[0].first);
    d.title = title;
    d.measuredMs = double(m_breakdown.measuredNs) / 1e6 / divisor;
    for (const Bar& bar : m_bars) {
        WaterfallBar w;
        w.name = QString::fromStdString(bar.name);
        w.kind = bar.kind == BarKind::Budget ? WaterfallBar::Kind::Budget
            : bar.kind == BarKind::Gap       ? WaterfallBar::Kind::Gap
                                             : WaterfallBar::Kind::Measured;
        w.ms = double(bar.ns) / 1e6 / divisor;
        w.id = bar.id;
        w.slot = bar.slot;
        if (isClassBar(bar.id))
            w.className = QString::fromStdString(m_state->analyzer->layout().classes[size_t(bar.slot)].name);
        // A budget bar is the same in every step; a measured or gap bar of an unused slot is 0 in every
        // step once its budget is 0 too.
        const bool slotUnused = bar.slot < 0
            || (size_t(bar.slot) < m_state->slotEverUsed.size() && !m_state->slotEverUsed[size_t(bar.slot)]);
        w.zeroInEveryStep = bar.ns == 0 && (bar.kind == BarKind::Budget || slotUnused);
        if (bar.kind == BarKind::Gap && bar.slot >= 0 && size_t(bar.slot) < m_breakdown.slotNs.size())
            w.detail = tr("measured %1 per step")
                           .arg(timeformat::ms(double(m_breakdown.slotNs[size_t(bar.slot)]) / 1e6 / divisor));
        d.bars.push_back(std::move(w));
    }
    m_waterfall = std::move(d);
    emit waterfallReady(m_waterfall);
}

void AnalysisRunner::membersOf(const State& state, const GapAnalyzer::Breakdown& b, int slot,
    TimelineHighlight& highlight, std::vector<BarMember>& list)
{
    const Trace& trace = *state.trace;
    highlight.events.assign(trace.laneCount(), {});
    // Idle intervals carry no rank: find the analysed window (rank, step) that holds each one.
    struct Win {
        TimeNs start, end;
        uint32_t rank;
    };
    std::vector<Win> windows;
    for (const auto& [rank, index] : b.steps) {
        if (const auto* rec = state.analyzer->step(rank, index))
            windows.push_back({ rec->start, rec->end, rank });
    }
    std::sort(windows.begin(), windows.end(), [](const Win& x, const Win& y) { return x.start < y.start; });
    for (size_t i = 0; i < b.bars.size() && i < b.members.size(); ++i) {
        if (b.bars[i].slot != slot)
            continue;
        for (const EventRef& ev : b.members[i].events) {
            if (ev.lane >= trace.laneCount())
                continue;
            highlight.events[ev.lane].push_back(ev.index);
            const LaneEvents& le = trace.lane(ev.lane).events;
            list.push_back({ trace.lane(ev.lane).info.rank, ev, le.start(ev.index), le.end(ev.index), {}, {} });
        }
        for (const TimeInterval& iv : b.members[i].idle) {
            auto it = std::upper_bound(
                windows.begin(), windows.end(), iv.start, [](TimeNs t, const Win& w) { return t < w.start; });
            if (it == windows.begin())
                continue;
            const uint32_t rank = std::prev(it)->rank;
            if (highlight.spans.size() <= rank)
                highlight.spans.resize(rank + 1);
            highlight.spans[rank].push_back({ iv.start, iv.end });
            BarMember m { rank, {}, iv.start, iv.end, {}, {} };
            if (const HostAttribution::Gap* g = state.hostGapAt(rank, iv.start)) {
                m.host = g->host;
                m.syncCall = g->syncCall;
            }
            list.push_back(m);
        }
        break; // budget and gap bars of one slot share their members
    }
    highlight.normalize();
    std::sort(list.begin(), list.end(), [](const BarMember& x, const BarMember& y) { return x.start < y.start; });
}

QColor AnalysisRunner::barColor(size_t bar) const
{
    const Bar& b = m_bars[bar];
    const QString cls = isClassBar(b.id)
        ? QString::fromStdString(m_state->analyzer->layout().classes[size_t(b.slot)].name)
        : QString();
    return EventColors::barColor(b.id, cls);
}

void AnalysisRunner::requestMembers(int bar)
{
    if (!m_state || bar < 0 || bar >= int(m_bars.size()))
        return;
    const int slot = m_bars[size_t(bar)].slot;
    const QString name = QString::fromStdString(m_bars[size_t(bar)].name);
    const QColor color = barColor(size_t(bar));
    GapAnalyzer::Selection sel = selectionOf(m_request);
    sel.members = true;
    m_memberJobs.run(
        this,
        [st = m_state, sel, slot, name, color](const JobTracker::Ticket&) {
            std::pair<TimelineHighlight, std::vector<BarMember>> r;
            r.first.label = name;
            r.first.color = color;
            if (slot >= 0)
                membersOf(*st, st->analyzer->analyze(sel), slot, r.first, r.second);
            return r;
        },
        [bar](AnalysisRunner& self, const std::pair<TimelineHighlight, std::vector<BarMember>>& r) {
            emit self.membersReady(bar, r.first, r.second);
        });
}

bool AnalysisRunner::membersNow(int bar, TimelineHighlight& highlight, std::vector<BarMember>& list)
{
    if (!m_state || bar < 0 || bar >= int(m_bars.size()))
        return false;
    GapAnalyzer::Selection sel = selectionOf(m_request);
    sel.members = true;
    highlight = {};
    list.clear();
    highlight.label = QString::fromStdString(m_bars[size_t(bar)].name);
    highlight.color = barColor(size_t(bar));
    if (m_bars[size_t(bar)].slot >= 0)
        membersOf(*m_state, m_state->analyzer->analyze(sel), m_bars[size_t(bar)].slot, highlight, list);
    return true;
}

const AnalysisReport* AnalysisRunner::report() const
{
    return m_state ? m_state->report.get() : nullptr;
}

const std::vector<gapscope::model::CoverageItem>& AnalysisRunner::coverage() const
{
    static const std::vector<gapscope::model::CoverageItem> none;
    return m_state ? m_state->report->coverage() : none;
}

const std::vector<Finding>& AnalysisRunner::findings() const
{
    static const std::vector<Finding> none;
    return m_state ? m_state->report->findings() : none;
}

const HostAttribution* AnalysisRunner::hostAttribution() const
{
    return m_state ? &m_state->report->hostAttribution() : nullptr;
}

TimelineHighlight AnalysisRunner::rankGapHighlight(uint32_t rank, const QString& label) const
{
    TimelineHighlight h;
    h.label = label;
    h.color = EventColors::componentColor(label);
    if (!m_state)
        return h;
    GapAnalyzer::Selection sel;
    sel.rank = int(rank);
    h.spans.resize(rank + 1);
    for (const GapAnalyzer::StepGaps& step : m_state->analyzer->stepGaps(sel))
        for (const GapAnalyzer::IdleGap& g : step.gaps)
            if (g.kind == IdleKind::LaunchHost && g.end > g.start)
                h.spans[rank].push_back({ g.start, g.end });
    h.normalize();
    return h;
}

TimelineHighlight AnalysisRunner::hostHighlight(
    const std::vector<uint32_t>& gaps, const QString& label, StringId name) const
{
    TimelineHighlight h;
    h.label = label;
    h.color = EventColors::componentColor(label);
    const HostAttribution* host = hostAttribution();
    if (!host || !m_trace)
        return h;
    h.events.assign(m_trace->laneCount(), {});
    for (uint32_t gi : gaps) {
        if (gi >= host->gaps().size())
            continue;
        const HostAttribution::Gap& g = host->gaps()[gi];
        if (h.spans.size() <= g.gap.rank)
            h.spans.resize(g.gap.rank + 1);
        h.spans[g.gap.rank].push_back({ g.gap.start, g.gap.end });
        for (uint32_t p = g.firstPiece; p < g.firstPiece + g.pieceCount; ++p)
            if (const EventRef e = host->pieces()[p].host;
                e.valid() && (name == 0 || m_trace->lane(e.lane).events.name(e.index) == name))
                h.events[e.lane].push_back(e.index);
    }
    h.normalize();
    return h;
}
