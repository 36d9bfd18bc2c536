// SPDX-License-Identifier: MIT
#include "model/analysis/analysisreport.h"
#include "model/base/textcolumns.h"
#include "model/trace/tracesummary.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace gapscope::model {

namespace {

using Kind = GapAnalyzer::Selection::Kind;

double ms(TimeNs ns, double divide = 1)
{
    return double(ns) / divide / 1e6;
}

using text::fixed;
using text::pad;

} // namespace

AnalysisReport::AnalysisReport(const GapAnalyzer& analyzer, const Options& options)
    : m_analyzer(analyzer)
    , m_options(options)
{
    uint32_t first = options.firstStep, last = options.lastStep;
    if (options.range) { // the steps the range touches, for stragglers and the critical rank
        first = GapAnalyzer::kAllSteps;
        last = 0;
        for (uint32_t r : analyzer.ranks())
            for (const auto& rec : analyzer.steps(r))
                if (rec.end > options.t0 && rec.start < options.t1) {
                    first = std::min(first, rec.index);
                    last = std::max(last, rec.index);
                }
    }
    m_critical = analyzer.critical(first, last);
    m_criticalMean = analyzer.analyze(selection(GapAnalyzer::kCriticalRank, options.range ? Kind::Range : Kind::Steps));
    m_criticalMedian = analyzer.analyze(selection(GapAnalyzer::kCriticalRank, Kind::Median));
    m_stragglers = analyzer.stragglers(first, last);
    // Gaps inside steps: the step gap has its own bar.
    m_gaps = analyzer.largestGaps(GapAnalyzer::kCriticalRank, first, last, options.largestGaps, false);
    m_findings = makeFindings(analyzer, m_criticalMean, m_stragglers, m_gaps);
    m_coverage = options.coverage ? coverageOf(analyzer, *options.coverage) : coverageOf(analyzer);
    if (options.host) {
        m_hostView = options.host;
        return;
    }
    m_host = std::make_unique<HostAttribution>(
        analyzer, selection(GapAnalyzer::kCriticalRank, options.range ? Kind::Range : Kind::Steps), options.hostGaps);
    m_hostView = m_host.get();
}

GapAnalyzer::Selection AnalysisReport::selection(int rank, Kind kind) const
{
    GapAnalyzer::Selection s;
    s.kind = kind;
    s.rank = rank;
    s.firstStep = m_options.firstStep;
    s.lastStep = m_options.lastStep;
    s.t0 = m_options.t0;
    s.t1 = m_options.t1;
    if (m_options.range && kind == Kind::Median) { // the median of the steps the range touches
        s.firstStep = 0;
        s.lastStep = GapAnalyzer::kAllSteps;
        s.kind = Kind::Median;
    }
    return s;
}

json::Value AnalysisReport::barsJson(const GapAnalyzer::Breakdown& b, double divide) const
{
    json::Value bars = json::Value::array();
    for (const auto& bar : b.bars) {
        json::Value o = json::Value::object();
        o.set("name", bar.name);
        o.set("kind", toString(bar.kind));
        o.set("ms", ms(bar.ns, divide));
        if (divide == 1)
            o.set("ns", bar.ns);
        bars.push(std::move(o));
    }
    return bars;
}

json::Value AnalysisReport::breakdownJson(const GapAnalyzer::Breakdown& b, bool mean) const
{
    json::Value o = json::Value::object();
    if (!b.valid)
        return json::Value();
    double n = mean ? std::max<double>(1, double(b.steps.size())) : 1;
    if (mean) {
        o.set("steps", b.steps.size());
    } else if (!b.steps.empty()) {
        o.set("rank", b.steps[0].first);
        o.set("index", b.steps[0].second);
    }
    o.set("measured_ms", ms(b.measuredNs, n));
    if (!mean)
        o.set("measured_ns", b.measuredNs);
    o.set("bars", barsJson(b, n));
    return o;
}

// A light-mode capture's step times by how the step was recorded (steps of the selection, incomplete
// ones too): every step, the detailed ones, the ones of whole graph replays; median ms each, and the
// median idle time per step over all of them.
AnalysisReport::LightMode AnalysisReport::lightMode(uint32_t rank) const
{
    LightMode out;
    const SlotLayout& l = m_analyzer.layout();
    if (!l.wholeGraphs)
        return out;
    std::vector<TimeNs> all, detailed, whole, idle;
    for (const auto& rec : m_analyzer.steps(rank)) {
        const bool wanted = m_options.range ? rec.end > m_options.t0 && rec.start < m_options.t1
                                            : rec.index >= m_options.firstStep && rec.index <= m_options.lastStep;
        if (!wanted || rec.slotNs.size() < l.slotCount())
            continue;
        all.push_back(rec.measured());
        (rec.slotNs[l.wholeGraphSlot()] > 0 ? whole : detailed).push_back(rec.measured());
        TimeNs idleNs = 0;
        for (size_t k = 0; k < kIdleKinds; ++k)
            idleNs += rec.slotNs[l.idleSlot(IdleKind(k))];
        idle.push_back(idleNs);
    }
    auto median = [](std::vector<TimeNs>& v) {
        if (v.empty())
            return 0.0;
        std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
        return double(v[v.size() / 2]) / 1e6;
    };
    out.present = !whole.empty();
    out.steps = uint32_t(all.size());
    out.detailed = uint32_t(detailed.size());
    out.whole = uint32_t(whole.size());
    out.stepMs = median(all);
    out.detailedMs = median(detailed);
    out.wholeMs = median(whole);
    out.idleMs = median(idle);
    return out;
}

json::Value AnalysisReport::rankJson(uint32_t rank) const
{
    const TimeNs origin = m_analyzer.trace().startTime();
    json::Value r = json::Value::object();
    r.set("rank", rank);
    r.set("api_recorded", m_analyzer.hasApiLanes(rank));
    json::Value steps = json::Value::array();
    if (m_options.perStep)
        for (const auto& rec : m_analyzer.steps(rank)) {
            bool wanted = m_options.range ? rec.end > m_options.t0 && rec.start < m_options.t1
                                          : rec.index >= m_options.firstStep && rec.index <= m_options.lastStep;
            if (!wanted)
                continue;
            GapAnalyzer::Selection s;
            s.kind = Kind::Step;
            s.rank = int(rank);
            s.firstStep = rec.index;
            auto b = m_analyzer.analyze(s);
            json::Value o = json::Value::object();
            o.set("index", rec.index);
            o.set("start_ms", ms(rec.start - origin));
            o.set("start_ns", static_cast<int64_t>(rec.start)); // the trace's clock (captures: CLOCK_REALTIME)
            o.set("measured_ms", ms(b.measuredNs));
            o.set("measured_ns", b.measuredNs);
            if (m_analyzer.isIncomplete(rec.index))
                o.set("incomplete", true); // partly outside some rank's capture: in no summary
            o.set("bars", barsJson(b, 1));
            steps.push(std::move(o));
        }
    r.set("steps", std::move(steps));
    if (const OverheadEvidence* o = captureOverhead(m_analyzer.trace(), rank))
        r.set("capture_overhead", captureOverheadJson(*o));
    if (const LightMode lm = lightMode(rank); lm.present) {
        json::Value o = json::Value::object();
        o.set("steps", lm.steps);
        o.set("steps_detailed", lm.detailed);
        o.set("steps_whole_graph", lm.whole);
        o.set("step_ms_median", lm.stepMs);
        o.set("step_ms_median_detailed", lm.detailedMs);
        o.set("step_ms_median_whole_graph", lm.wholeMs);
        o.set("idle_ms_median", lm.idleMs);
        r.set("light_mode", std::move(o));
    }
    r.set("median", breakdownJson(m_analyzer.analyze(selection(int(rank), Kind::Median)), false));
    r.set("mean", breakdownJson(m_analyzer.analyze(selection(int(rank), Kind::Steps)), true));
    if (m_options.range) {
        auto b = m_analyzer.analyze(selection(int(rank), Kind::Range));
        json::Value o = json::Value::object();
        o.set("measured_ms", ms(b.measuredNs));
        o.set("measured_ns", b.measuredNs);
        o.set("budget_steps", b.budgetSteps);
        o.set("bars", barsJson(b, 1));
        r.set("range", std::move(o));
    }
    return r;
}

json::Value AnalysisReport::budgetJson() const
{
    const StepBudget& b = m_analyzer.budget();
    json::Value o = json::Value::object();
    o.set("present", b.present);
    if (!b.present && b.why.empty())
        return o;
    o.set("phase", b.phase);
    if (b.phase == "prefill") {
        o.set("prompt_tokens", b.promptTokens);
        o.set("prompt_steps", b.promptSteps);
        o.set("prompt_tokens_from", b.promptTokensFrom);
    }
    if (!b.present) {
        o.set("why", b.why);
        return o;
    }
    o.set("description", b.description);
    o.set("total_ms", b.totalMs());
    json::Value comps = json::Value::array();
    for (const auto& [name, value] : b.componentMs) {
        json::Value c = json::Value::object();
        c.set("name", name);
        c.set("ms", value);
        comps.push(std::move(c));
    }
    o.set("components", std::move(comps));
    json::Value assumptions = json::Value::array();
    for (const auto& a : b.assumptions)
        assumptions.push(a);
    o.set("assumptions", std::move(assumptions));
    return o;
}

json::Value AnalysisReport::toJson() const
{
    const TimeNs origin = m_analyzer.trace().startTime();
    json::Value doc = json::Value::object();
    json::Value sel = json::Value::object();
    if (m_options.range) {
        json::Value r = json::Value::array();
        r.push(ms(m_options.t0 - origin));
        r.push(ms(m_options.t1 - origin));
        sel.set("range_ms", std::move(r));
    } else {
        sel.set("first_step", m_options.firstStep);
        sel.set("last_step",
            m_options.lastStep == GapAnalyzer::kAllSteps ? json::Value() : json::Value(m_options.lastStep));
    }
    doc.set("selection", std::move(sel));
    doc.set("budget", budgetJson());
    json::Value cls = json::Value::object();
    cls.set("origin", m_analyzer.classifier().origin());
    json::Value classes = json::Value::array();
    for (const auto& c : m_analyzer.layout().classes) {
        json::Value o = json::Value::object();
        o.set("name", c.name);
        json::Value comps = json::Value::array();
        for (const auto& comp : c.components)
            comps.push(comp);
        o.set("components", std::move(comps));
        classes.push(std::move(o));
    }
    cls.set("classes", std::move(classes));
    doc.set("classifier", std::move(cls));
    json::Value ranks = json::Value::array();
    for (uint32_t r : m_analyzer.ranks())
        ranks.push(rankJson(r));
    doc.set("ranks", std::move(ranks));

    json::Value crit = json::Value::object();
    crit.set("rank", m_critical.rank);
    crit.set("rule",
        "per step, the rank the others wait for: the least collective wait (then the longest step, "
        "then the lowest rank); overall, the rank critical in the most steps");
    crit.set("steps_critical", m_critical.steps);
    crit.set("steps", m_critical.total);
    json::Value perStep = json::Value::array();
    for (const auto& [rank, step] : m_criticalMean.steps) {
        json::Value o = json::Value::object();
        o.set("index", step);
        o.set("rank", rank);
        perStep.push(std::move(o));
    }
    crit.set("per_step", std::move(perStep));
    crit.set("median", breakdownJson(m_criticalMedian, false));
    crit.set("mean", breakdownJson(m_criticalMean, true));
    doc.set("critical", std::move(crit));

    json::Value st = json::Value::array();
    for (const auto& s : m_stragglers) {
        json::Value o = json::Value::object();
        o.set("rank", s.rank);
        o.set("late_count", s.lateCount);
        o.set("mean_late_ms", s.meanLateMs());
        o.set("max_late_ms", ms(s.lateMax));
        o.set("median_late_ms", ms(s.lateMedian));
        json::Value lateSteps = json::Value::array();
        for (uint32_t i : s.lateSteps)
            lateSteps.push(i);
        o.set("late_steps", std::move(lateSteps));
        o.set("matched", s.matched);
        o.set("unmatched", s.unmatched);
        o.set("late_fraction", s.matched ? double(s.lateCount) / double(s.matched) : 0.0);
        o.set("op", s.op);
        st.push(std::move(o));
    }
    doc.set("stragglers", std::move(st));
    json::Value incomplete = json::Value::array();
    for (const auto& i : m_analyzer.incompleteSteps()) {
        json::Value o = json::Value::object();
        o.set("index", i.index);
        o.set("why", i.why);
        incomplete.push(std::move(o));
    }
    doc.set("incomplete_steps", std::move(incomplete));
    json::Value gaps = json::Value::array();
    for (const auto& g : m_gaps) {
        json::Value o = json::Value::object();
        o.set("rank", g.rank);
        o.set("step", g.step);
        o.set("start_ms", ms(g.start - origin));
        o.set("ms", ms(g.duration()));
        o.set("kind", idleKindName(g.kind));
        o.set("before", g.hasNext ? std::string(m_analyzer.trace().str(g.nextName)) : "");
        gaps.push(std::move(o));
    }
    doc.set("largest_gaps", std::move(gaps));
    json::Value unclassified = json::Value::array();
    const auto names = m_analyzer.unclassifiedKernels();
    for (size_t i = 0; i < names.size() && i < 20; ++i) {
        json::Value o = json::Value::object();
        o.set("name", std::string(m_analyzer.trace().str(names[i].name)));
        o.set("ms", ms(names[i].ns));
        o.set("count", names[i].count);
        unclassified.push(std::move(o));
    }
    doc.set("unclassified_kernels", std::move(unclassified));
    doc.set("host_gaps", hostJson());
    doc.set("host_syncs", hostSyncsJson());
    doc.set("host_in_graph_gaps", inGraphJson());
    json::Value findings = json::Value::array();
    for (const auto& f : m_findings)
        findings.push(f.text);
    doc.set("findings", std::move(findings));
    json::Value notes = json::Value::array();
    for (const auto& n : m_analyzer.notes())
        notes.push(n);
    doc.set("notes", std::move(notes));
    doc.set("coverage", coverageJson(m_coverage));
    return doc;
}

std::string AnalysisReport::waterfallText(const GapAnalyzer::Breakdown& b, const std::string& title) const
{
    std::ostringstream out;
    out << title << "\n";
    if (!b.valid) {
        out << "  (no steps)\n";
        return out.str();
    }
    const double n = std::max<double>(1, double(b.steps.size()));
    double running = 0;
    bool budgetDone = false;
    for (const auto& bar : b.bars) {
        if (bar.kind != BarKind::Budget && !budgetDone && m_analyzer.budget().present) {
            out << "  " << pad("", 8) << pad("= budget", 34) << pad("", 11) << pad(fixed(running), 11, true) << "\n";
            budgetDone = true;
        }
        double v = ms(bar.ns, n);
        running += v;
        std::string value = bar.kind == BarKind::Gap && v > 0 ? "+" + fixed(v) : fixed(v);
        out << "  " << pad(toString(bar.kind), 8) << pad(bar.name, 34) << pad(value, 11, true)
            << pad(fixed(running), 11, true) << "\n";
    }
    out << "  " << pad("", 8) << pad("= measured", 34) << pad("", 11) << pad(fixed(ms(b.measuredNs, n)), 11, true)
        << "\n";
    return out.str();
}

std::string AnalysisReport::overheadText() const
{
    std::ostringstream out;
    bool any = false;
    for (uint32_t r : m_analyzer.ranks()) {
        const OverheadEvidence* o = captureOverhead(m_analyzer.trace(), r);
        if (!o)
            continue;
        if (!any)
            out << "\ncapture overhead (the process's host step time; the bars above include it):\n";
        any = true;
        const double pct = captureOverheadPct(*o);
        out << "  rank " << r << ": " << captureOverheadLine(*o, false);
        if (pct > 5)
            out << ": part of this rank's launch/host and sync gaps is the capture's own cost";
        out << "\n";
    }
    return out.str();
}

namespace {
constexpr size_t kHostTopText = 8;
} // namespace

json::Value AnalysisReport::hostJson() const
{
    return hostGapsJson(m_analyzer.trace(), *m_hostView);
}

json::Value AnalysisReport::inGraphJson() const
{
    json::Value out = json::Value::array();
    for (const auto& r : m_hostView->ranks()) {
        if (!r.inGraphNs)
            continue;
        json::Value o = json::Value::object();
        o.set("rank", r.rank);
        o.set("gap_ms", ms(r.inGraphNs));
        json::Value top = json::Value::array();
        for (size_t i = 0; i < r.inGraph.size() && i < kHostJsonTop; ++i) {
            json::Value e = json::Value::object();
            e.set("captured_in", r.inGraph[i].range);
            e.set("ms", ms(r.inGraph[i].ns));
            e.set("gaps", (unsigned long long)r.inGraph[i].count);
            top.push(std::move(e));
        }
        o.set("by_range", std::move(top));
        out.push(std::move(o));
    }
    return out;
}

json::Value AnalysisReport::hostSyncsJson() const
{
    const Trace& t = m_analyzer.trace();
    json::Value out = json::Value::array();
    for (const auto& r : m_hostView->ranks()) {
        json::Value o = json::Value::object();
        o.set("rank", r.rank);
        o.set("stall_ms", ms(r.syncNs));
        o.set("explained_ms", ms(r.syncExplainedNs));
        json::Value top = json::Value::array();
        for (size_t i = 0; i < r.syncs.size() && i < kHostJsonTop; ++i) {
            const auto& s = r.syncs[i];
            json::Value e = json::Value::object();
            e.set("call", s.call);
            e.set("around", std::string(t.str(s.around)));
            e.set("around_kind", s.aroundKind);
            e.set("ms", ms(s.ns));
            e.set("count", (unsigned long long)s.count);
            top.push(std::move(e));
        }
        o.set("top", std::move(top));
        out.push(std::move(o));
    }
    return out;
}

std::string AnalysisReport::hostText() const
{
    const Trace& t = m_analyzer.trace();
    std::ostringstream out;
    out << "\nwhat the host was doing in the launch/host gaps (innermost host event on the launching thread; "
           "total over the selected steps, ms):\n";
    for (const auto& r : m_hostView->ranks()) {
        const double pct = r.gapNs > 0 ? 100.0 * double(r.explainedNs) / double(r.gapNs) : 0;
        out << "  rank " << r.rank << ": " << fixed(ms(r.gapNs)) << " ms of gaps, " << fixed(ms(r.explainedNs))
            << " ms (" << fixed(pct, 1) << " %) inside host events\n";
        for (size_t i = 0; i < r.rows.size() && i < kHostTopText; ++i)
            out << "    " << pad(fixed(ms(r.rows[i].ns)), 10, true) << pad(std::to_string(r.rows[i].count), 8, true)
                << "  " << pad(r.rows[i].kind, 16) << t.str(r.rows[i].name) << "\n";
        if (r.gapNs > r.explainedNs) {
            out << "    " << pad(fixed(ms(r.gapNs - r.explainedNs)), 10, true) << pad("", 8)
                << "  unattributed host time:\n";
            const std::pair<TimeNs, const char*> why[]
                = { { r.queuedNs, "the next kernel was already launched (queued: the GPU waited on something else)" },
                      { r.otherThreadsNs, "the launching thread idle, another thread of the process busy:" },
                      { r.nothingNs, "nothing recorded on any thread of the process" },
                      { r.noLaunchNs, "the next kernel's launch not recorded" } };
            for (const auto& [ns, text] : why) {
                if (ns <= 0)
                    continue;
                out << "      " << pad(fixed(ms(ns)), 10, true) << pad("", 8) << "  " << text << "\n";
                if (&ns == &why[1].first)
                    for (size_t i = 0; i < r.otherThreads.size() && i < kHostTopText / 2; ++i)
                        out << "        " << pad(fixed(ms(r.otherThreads[i].ns)), 10, true)
                            << pad(std::to_string(r.otherThreads[i].count), 8, true) << "  "
                            << pad(r.otherThreads[i].kind, 16) << t.str(r.otherThreads[i].name) << "\n";
            }
        }
        if (r.syncNs > 0) {
            out << "    sync stalls: " << fixed(ms(r.syncNs)) << " ms, by the call the host waited in:\n";
            for (size_t i = 0; i < r.syncs.size() && i < kHostTopText; ++i) {
                const auto& s = r.syncs[i];
                out << "    " << pad(fixed(ms(s.ns)), 10, true) << pad(std::to_string(s.count), 8, true) << "  "
                    << s.call;
                if (s.around)
                    out << " in " << s.aroundKind << " " << t.str(s.around);
                out << "\n";
            }
        }
        if (r.inGraphNs > 0 && !t.graphNodes().empty()) { // a capture that knows where its graph nodes were built
            out << "    in-graph gaps: " << fixed(ms(r.inGraphNs))
                << " ms, by where the node after each gap was captured:\n";
            for (size_t i = 0; i < r.inGraph.size() && i < kHostTopText; ++i)
                out << "    " << pad(fixed(ms(r.inGraph[i].ns)), 10, true)
                    << pad(std::to_string(r.inGraph[i].count), 8, true) << "  " << r.inGraph[i].range << "\n";
        }
    }
    return out.str();
}

std::string AnalysisReport::toText() const
{
    std::ostringstream out;
    const auto& a = m_analyzer;
    out << "ranks analysed: " << a.ranks().size() << "; selection: ";
    if (m_options.range)
        out << "time range " << fixed(ms(m_options.t0 - a.trace().startTime())) << " to "
            << fixed(ms(m_options.t1 - a.trace().startTime())) << " ms";
    else
        out << "steps " << m_options.firstStep << " to "
            << (m_options.lastStep == GapAnalyzer::kAllSteps ? std::string("the last")
                                                             : std::to_string(m_options.lastStep));
    out << " (" << m_critical.total << (m_critical.total == 1 ? " step)\n" : " steps)\n");
    out << "budget: "
        << (a.budget().present ? a.budget().phase + " budget: " + a.budget().description + ", "
                    + fixed(a.budget().totalMs()) + " ms per step"
                : !a.budget().why.empty() ? "none: " + a.budget().why
                                          : std::string("none (give --model and --hw to compare with the theory)"))
        << "\nclassifier: " << a.classifier().origin() << "\n";
    if (m_critical.rank >= 0)
        out << "critical rank: " << m_critical.rank << " (the rank the others wait for in " << m_critical.steps
            << " of " << m_critical.total << " steps)\n";
    out << "\n"
        << waterfallText(m_criticalMean,
               "waterfall of the critical path, mean over " + std::to_string(m_criticalMean.steps.size())
                   + " steps (ms per step):");
    if (m_criticalMedian.valid)
        out << "\n"
            << waterfallText(m_criticalMedian,
                   "waterfall of the median step (step " + std::to_string(m_criticalMedian.steps[0].second)
                       + " on rank " + std::to_string(m_criticalMedian.steps[0].first) + ", ms):");
    out << "\nper rank, mean over the selected steps (ms per step):\n  " << pad("rank", 6) << pad("measured", 11, true)
        << pad("budget", 11, true) << pad("kernels+", 11, true) << pad("coll.wait", 11, true)
        << pad("launch/host", 12, true) << pad("in-graph", 11, true) << pad("sync", 11, true)
        << pad("step gap", 11, true) << "\n";
    const SlotLayout& l = a.layout();
    for (uint32_t r : a.ranks()) {
        auto b = a.analyze(selection(int(r), m_options.range ? Kind::Range : Kind::Steps));
        double n = m_options.range ? 1 : std::max<double>(1, double(b.steps.size()));
        TimeNs budget = 0, kernels = 0;
        for (const auto& bar : b.bars)
            (bar.kind == BarKind::Budget ? budget : kernels)
                += bar.slot >= 0 && size_t(bar.slot) < l.classes.size() ? bar.ns : 0;
        kernels += b.slotNs[l.unclassifiedSlot()] + b.slotNs[l.memopsSlot()];
        out << "  " << pad(std::to_string(r), 6) << pad(fixed(ms(b.measuredNs, n)), 11, true)
            << pad(fixed(ms(budget, n)), 11, true) << pad(fixed(ms(kernels, n)), 11, true)
            << pad(fixed(ms(b.slotNs[l.waitSlot()], n)), 11, true)
            << pad(fixed(ms(b.slotNs[l.idleSlot(IdleKind::LaunchHost)], n)), 12, true)
            << pad(fixed(ms(b.slotNs[l.idleSlot(IdleKind::InGraph)], n)), 11, true)
            << pad(fixed(ms(b.slotNs[l.idleSlot(IdleKind::SyncStall)], n)), 11, true)
            << pad(fixed(ms(b.slotNs[l.idleSlot(IdleKind::StepGap)], n)), 11, true) << "\n";
    }
    out << "  (kernels+ = kernel time beyond the budget, unclassified kernels and memory ops included)\n";
    out << overheadText();
    for (uint32_t r : m_analyzer.ranks())
        if (const LightMode lm = lightMode(r); lm.present)
            out << "\nlight mode, rank " << r << ": " << lm.steps << " steps, " << lm.detailed
                << " detailed (the bars above), " << lm.whole << " as whole graph replays; median step "
                << formatDuration(lm.stepMs) << " (detailed " << formatDuration(lm.detailedMs) << ", whole replays "
                << formatDuration(lm.wholeMs) << "), median idle per step " << formatDuration(lm.idleMs) << "\n";
    out << hostText();
    if (!m_findings.empty()) {
        out << "\nfindings:\n";
        for (const auto& f : m_findings)
            out << "  - " << f.text << "\n";
    }
    if (!a.notes().empty()) {
        out << "\nnotes:\n";
        for (const auto& n : a.notes())
            out << "  - " << n << "\n";
    }
    out << "\n" << coverageText(m_coverage);
    return out.str();
}

} // namespace gapscope::model
