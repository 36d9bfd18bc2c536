// SPDX-License-Identifier: MIT
#include "model/analysis/diffreport.h"
#include "model/base/markup.h"
#include "model/base/textcolumns.h"
#include "model/trace/kernelname.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace gapscope::model {

namespace {

const char* const kNoHostEvents = "no launch/host gap of either trace lies inside a recorded host event (the traces "
                                  "hold no CPU operators, NVTX ranges or runtime calls on the launching threads)";
const char* const kNoCommonSteps = "no steps in common";
constexpr size_t kHostTopText = 6;

using text::fixed;
using text::pad;

std::string percent(double a, double b)
{
    if (a <= 0)
        return "";
    return ", " + fixed(100.0 * (b - a) / a, 1, true) + " %";
}

json::Value barsJson(const std::vector<TraceDiff::BarDelta>& bars)
{
    json::Value out = json::Value::array();
    for (const auto& bar : bars) {
        json::Value o = json::Value::object();
        o.set("name", bar.name);
        o.set("kind", toString(bar.kind));
        o.set("a_ms", bar.aNs / 1e6);
        o.set("b_ms", bar.bNs / 1e6);
        o.set("delta_ms", bar.deltaNs() / 1e6);
        o.set("in_a", bar.inA);
        o.set("in_b", bar.inB);
        out.push(std::move(o));
    }
    return out;
}

json::Value rankSideJson(const TraceDiff::RankSide& s)
{
    if (!s.present)
        return json::Value();
    json::Value o = json::Value::object();
    o.set("steps", s.steps);
    o.set("step_ms", s.stepNs / 1e6);
    o.set("median_step_ms", s.medianStepNs / 1e6);
    o.set("wait_ms", s.waitNs / 1e6);
    o.set("late_count", s.lateCount);
    o.set("matched", s.matched);
    o.set("mean_late_ms", s.meanLateMs);
    o.set("straggler", s.straggler);
    return o;
}

json::Value stringsJson(const std::vector<std::string>& v)
{
    json::Value out = json::Value::array();
    for (const auto& s : v)
        out.push(s);
    return out;
}

} // namespace

DiffReport::DiffReport(const TraceDiff& diff, Options options)
    : m_diff(diff)
    , m_options(std::move(options))
    , m_coverageA(m_options.aCoverage ? coverageOf(diff.a(), *m_options.aCoverage) : coverageOf(diff.a()))
    , m_coverageB(m_options.bCoverage ? coverageOf(diff.b(), *m_options.bCoverage) : coverageOf(diff.b()))
{
}

json::Value DiffReport::sideJson(const GapAnalyzer& an, const std::string& label) const
{
    json::Value o = json::Value::object();
    o.set("label", label);
    o.set("ranks", an.ranks().size());
    o.set("budget", an.budget().present ? json::Value(an.budget().description) : json::Value());
    return o;
}

json::Value DiffReport::stepsJson() const
{
    const TraceDiff::Steps& s = m_diff.steps();
    const TraceDiff::Waterfall& med = m_diff.median();
    const TraceDiff::Waterfall& mean = m_diff.mean();
    auto side = [&](bool a) {
        json::Value o = json::Value::object();
        o.set("count", a ? s.a : s.b);
        const auto& steps = a ? med.aSteps : med.bSteps;
        o.set("median_ms", med.valid ? json::Value((a ? med.aMeasuredNs : med.bMeasuredNs) / 1e6) : json::Value());
        o.set("mean_ms", mean.valid ? json::Value((a ? mean.aMeasuredNs : mean.bMeasuredNs) / 1e6) : json::Value());
        o.set("median_step", steps.empty() ? json::Value() : json::Value(steps[0].second));
        o.set("median_rank", steps.empty() ? json::Value() : json::Value(steps[0].first));
        return o;
    };
    json::Value o = json::Value::object();
    o.set("a", side(true));
    o.set("b", side(false));
    o.set("common", s.common);
    o.set("first", s.common ? json::Value(s.first) : json::Value());
    o.set("last", s.common ? json::Value(s.last) : json::Value());
    o.set("delta_median_ms", med.valid ? json::Value(med.deltaNs() / 1e6) : json::Value());
    o.set("delta_mean_ms", mean.valid ? json::Value(mean.deltaNs() / 1e6) : json::Value());
    return o;
}

json::Value DiffReport::kernelsJson() const
{
    json::Value out = json::Value::array();
    for (const auto& k : m_diff.kernels()) {
        const bool inA = k.match != TraceDiff::Match::New, inB = k.match != TraceDiff::Match::Vanished;
        json::Value o = json::Value::object();
        o.set("name", k.name);
        o.set("match", toString(k.match));
        o.set("a_count", k.aCount);
        o.set("b_count", k.bCount);
        o.set("a_total_ns", k.aTotal);
        o.set("b_total_ns", k.bTotal);
        o.set("a_median_ns", inA && k.mediansKnown ? json::Value(k.aMedian) : json::Value());
        o.set("b_median_ns", inB && k.mediansKnown ? json::Value(k.bMedian) : json::Value());
        o.set("a_own_ns", k.aOwn);
        o.set("b_own_ns", k.bOwn);
        o.set("delta_total_ns", k.deltaTotal());
        o.set("delta_own_ns", k.bOwn - k.aOwn);
        if (k.match == TraceDiff::Match::Normalised) {
            o.set("a_names", stringsJson(k.aNames));
            o.set("b_names", stringsJson(k.bNames));
        }
        out.push(std::move(o));
    }
    return out;
}

json::Value DiffReport::ranksJson() const
{
    json::Value out = json::Value::array();
    for (const auto& r : m_diff.ranks()) {
        json::Value o = json::Value::object();
        o.set("a_rank", r.a.present ? json::Value(r.a.rank) : json::Value());
        o.set("b_rank", r.b.present ? json::Value(r.b.rank) : json::Value());
        o.set("a", rankSideJson(r.a));
        o.set("b", rankSideJson(r.b));
        const bool both = r.a.present && r.b.present && m_diff.steps().common;
        o.set("delta_step_ms", both ? json::Value((r.b.stepNs - r.a.stepNs) / 1e6) : json::Value());
        o.set("delta_wait_ms", both ? json::Value((r.b.waitNs - r.a.waitNs) / 1e6) : json::Value());
        out.push(std::move(o));
    }
    return out;
}

json::Value DiffReport::toJson() const
{
    json::Value doc = json::Value::object();
    doc.set("a", sideJson(m_diff.a(), m_options.aLabel));
    doc.set("b", sideJson(m_diff.b(), m_options.bLabel));
    doc.set("steps", stepsJson());
    doc.set("bars", barsJson(m_diff.median().bars));
    doc.set("mean_bars", barsJson(m_diff.mean().bars));
    doc.set("kernels", kernelsJson());
    doc.set("kernels_normalised", m_diff.normalisedMatches());
    doc.set("ranks", ranksJson());
    doc.set("host_attribution", hostJson());
    json::Value problems = json::Value::array();
    for (const auto& p : m_diff.problems())
        problems.push(p.message());
    doc.set("problems", std::move(problems));
    json::Value notes = stringsJson(m_diff.notes());
    for (const auto& n : m_diff.a().notes())
        notes.push("A: " + n);
    for (const auto& n : m_diff.b().notes())
        notes.push("B: " + n);
    doc.set("notes", std::move(notes));
    json::Value coverage = json::Value::object();
    coverage.set("a", coverageJson(m_coverageA));
    coverage.set("b", coverageJson(m_coverageB));
    doc.set("coverage", std::move(coverage));
    if (m_options.verdicts) {
        doc.set("verdicts", verdictsJson());
        doc.set("gate", gateJson());
    }
    return doc;
}

std::string DiffReport::waterfallText(const TraceDiff::Waterfall& w, const std::string& title) const
{
    std::ostringstream out;
    out << title << "\n";
    if (!w.valid) {
        out << "  (not compared)\n";
        return out.str();
    }
    out << "  " << pad("bar", 34) << pad("A", 11, true) << pad("B", 11, true) << pad("delta", 11, true) << "\n";
    for (const auto& bar : w.bars)
        out << "  " << pad(bar.name, 34) << pad(bar.inA ? fixed(bar.aNs / 1e6) : "-", 11, true)
            << pad(bar.inB ? fixed(bar.bNs / 1e6) : "-", 11, true) << pad(fixed(bar.deltaNs() / 1e6, 3, true), 11, true)
            << "\n";
    out << "  " << pad("= measured", 34) << pad(fixed(w.aMeasuredNs / 1e6), 11, true)
        << pad(fixed(w.bMeasuredNs / 1e6), 11, true) << pad(fixed(w.deltaNs() / 1e6, 3, true), 11, true) << "\n";
    return out.str();
}

std::string DiffReport::kernelsText() const
{
    std::ostringstream out;
    const auto& ks = m_diff.kernels();
    out << "kernels: " << ks.size() << " names";
    if (m_diff.normalisedMatches())
        out << ", " << m_diff.normalisedMatches()
            << " paired only after normalising template arguments and parameter lists (marked ~)";
    out << "; largest change of total time first (ms over the whole trace, medians in us):\n  "
        << pad("count A", 9, true) << pad("count B", 9, true) << pad("total A", 11, true) << pad("total B", 11, true)
        << pad("delta", 11, true) << pad("own delta", 11, true) << pad("median A", 10, true)
        << pad("median B", 10, true) << "  name\n";
    auto median = [](bool known, TimeNs ns) { return known ? fixed(double(ns) / 1e3, 2) : std::string("-"); };
    for (size_t i = 0; i < ks.size() && i < m_options.textKernels; ++i) {
        const auto& k = ks[i];
        const bool inA = k.match != TraceDiff::Match::New, inB = k.match != TraceDiff::Match::Vanished;
        const char* mark = k.match == TraceDiff::Match::Normalised ? "~ "
            : k.match == TraceDiff::Match::New                     ? "+ "
            : k.match == TraceDiff::Match::Vanished                ? "- "
                                                                   : "  ";
        out << "  " << pad(std::to_string(k.aCount), 9, true) << pad(std::to_string(k.bCount), 9, true)
            << pad(fixed(double(k.aTotal) / 1e6), 11, true) << pad(fixed(double(k.bTotal) / 1e6), 11, true)
            << pad(fixed(double(k.deltaTotal()) / 1e6, 3, true), 11, true)
            << pad(fixed(double(k.bOwn - k.aOwn) / 1e6, 3, true), 11, true)
            << pad(median(inA && k.mediansKnown, k.aMedian), 10, true)
            << pad(median(inB && k.mediansKnown, k.bMedian), 10, true) << "  " << mark << shortKernelName(k.name)
            << "\n";
    }
    if (ks.size() > m_options.textKernels)
        out << "  ... " << ks.size() - m_options.textKernels << " more (--json lists every name)\n";
    out << "  (+ new in B, - vanished from B, ~ paired after normalising)\n";
    return out.str();
}

std::string DiffReport::ranksText() const
{
    std::ostringstream out;
    out << "per rank, mean over the compared steps (ms per step):\n  " << pad("rank A/B", 10) << pad("step A", 10, true)
        << pad("step B", 10, true) << pad("delta", 10, true) << pad("wait A", 10, true) << pad("wait B", 10, true)
        << pad("delta", 10, true) << pad("late A", 11, true) << pad("late B", 11, true) << "\n";
    auto rankName = [](const TraceDiff::RankSide& s) { return s.present ? std::to_string(s.rank) : std::string("-"); };
    auto value = [](const TraceDiff::RankSide& s, double ns) { return s.present ? fixed(ns / 1e6) : std::string("-"); };
    auto late = [](const TraceDiff::RankSide& s) {
        if (!s.present)
            return std::string("-");
        return std::to_string(s.lateCount) + "/" + std::to_string(s.matched) + (s.straggler ? "!" : "");
    };
    for (const auto& r : m_diff.ranks()) {
        const bool both = r.a.present && r.b.present;
        out << "  " << pad(rankName(r.a) + "/" + rankName(r.b), 10) << pad(value(r.a, r.a.stepNs), 10, true)
            << pad(value(r.b, r.b.stepNs), 10, true)
            << pad(both ? fixed((r.b.stepNs - r.a.stepNs) / 1e6, 3, true) : "-", 10, true)
            << pad(value(r.a, r.a.waitNs), 10, true) << pad(value(r.b, r.b.waitNs), 10, true)
            << pad(both ? fixed((r.b.waitNs - r.a.waitNs) / 1e6, 3, true) : "-", 10, true) << pad(late(r.a), 11, true)
            << pad(late(r.b), 11, true) << "\n";
    }
    out << "  (late = collectives it arrived last at / took part in; ! = a straggler worth naming)\n";
    return out.str();
}

json::Value DiffReport::hostJson() const
{
    const TraceDiff::Host& h = m_diff.host();
    const auto ms = [](TimeNs ns) { return double(ns) / 1e6; };
    json::Value host = json::Value::object();
    host.set("available", h.available);
    host.set("a", m_diff.hostA() ? hostGapsJson(m_diff.a().trace(), *m_diff.hostA()) : json::Value());
    host.set("b", m_diff.hostB() ? hostGapsJson(m_diff.b().trace(), *m_diff.hostB()) : json::Value());
    json::Value ranks = json::Value::array();
    for (const auto& r : h.ranks) {
        json::Value o = json::Value::object();
        o.set("a_rank", r.inA ? json::Value(r.aRank) : json::Value());
        o.set("b_rank", r.inB ? json::Value(r.bRank) : json::Value());
        o.set("a_gap_ms", ms(r.aGapNs));
        o.set("b_gap_ms", ms(r.bGapNs));
        o.set("a_explained_ms", ms(r.aExplainedNs));
        o.set("b_explained_ms", ms(r.bExplainedNs));
        o.set("delta_gap_ms", ms(r.bGapNs - r.aGapNs));
        json::Value top = json::Value::array();
        for (size_t i = 0; i < r.rows.size() && i < kHostJsonTop; ++i) {
            const auto& e = r.rows[i];
            json::Value t = json::Value::object();
            t.set("name", e.name);
            t.set("kind", e.kind);
            t.set("a_ms", ms(e.aNs));
            t.set("b_ms", ms(e.bNs));
            t.set("delta_ms", ms(e.deltaNs()));
            t.set("a_count", (unsigned long long)e.aCount);
            t.set("b_count", (unsigned long long)e.bCount);
            top.push(std::move(t));
        }
        o.set("top", std::move(top));
        ranks.push(std::move(o));
    }
    host.set("ranks", std::move(ranks));
    if (!h.available)
        host.set("why", m_diff.hostA() ? kNoHostEvents : kNoCommonSteps);
    return host;
}

std::string DiffReport::hostText() const
{
    const TraceDiff::Host& h = m_diff.host();
    std::ostringstream out;
    if (!h.available) {
        out << "host attribution of launch/host gaps: not available ("
            << (m_diff.hostA() ? kNoHostEvents : kNoCommonSteps) << ")\n";
        return out.str();
    }
    out << "what the host was doing in the launch/host gaps (innermost host event on the launching thread; "
           "total over the compared steps, ms), largest change first:\n";
    for (const auto& r : h.ranks) {
        out << "  rank " << (r.inA ? std::to_string(r.aRank) : std::string("-")) << "/"
            << (r.inB ? std::to_string(r.bRank) : std::string("-")) << ": gaps " << fixed(double(r.aGapNs) / 1e6)
            << " -> " << fixed(double(r.bGapNs) / 1e6) << " (" << fixed(double(r.bGapNs - r.aGapNs) / 1e6, 3, true)
            << "), inside host events " << fixed(double(r.aExplainedNs) / 1e6) << " -> "
            << fixed(double(r.bExplainedNs) / 1e6) << "\n";
        for (size_t i = 0; i < r.rows.size() && i < kHostTopText; ++i) {
            const auto& e = r.rows[i];
            out << "    " << pad(fixed(double(e.aNs) / 1e6), 10, true) << pad(fixed(double(e.bNs) / 1e6), 10, true)
                << pad(fixed(double(e.deltaNs()) / 1e6, 3, true), 10, true) << "  " << pad(e.kind, 16) << e.name
                << "\n";
        }
        const TimeNs ua = r.aGapNs - r.aExplainedNs, ub = r.bGapNs - r.bExplainedNs;
        if (ua > 0 || ub > 0)
            out << "    " << pad(fixed(double(ua) / 1e6), 10, true) << pad(fixed(double(ub) / 1e6), 10, true)
                << pad(fixed(double(ub - ua) / 1e6, 3, true), 10, true) << "  unattributed host time\n";
    }
    return out.str();
}

std::string DiffReport::toText() const
{
    std::ostringstream out;
    const auto& d = m_diff;
    auto sideLine = [&](const char* which, const GapAnalyzer& an, const std::string& label, uint32_t steps) {
        out << which << ": " << label << " (" << an.ranks().size() << " ranks, " << steps
            << " complete steps; budget: " << (an.budget().present ? an.budget().description : std::string("none"))
            << ")\n";
    };
    sideLine("A", d.a(), m_options.aLabel, d.steps().a);
    sideLine("B", d.b(), m_options.bLabel, d.steps().b);
    const auto& med = d.median();
    const auto& mean = d.mean();
    if (d.steps().common) {
        out << "steps compared: " << d.steps().first << " to " << d.steps().last << " (" << d.steps().common
            << " in common)\n";
        if (med.valid)
            out << "step time: median " << fixed(med.aMeasuredNs / 1e6) << " -> " << fixed(med.bMeasuredNs / 1e6)
                << " ms (" << fixed(med.deltaNs() / 1e6, 3, true) << " ms" << percent(med.aMeasuredNs, med.bMeasuredNs)
                << "), mean " << fixed(mean.aMeasuredNs / 1e6) << " -> " << fixed(mean.bMeasuredNs / 1e6) << " ms ("
                << fixed(mean.deltaNs() / 1e6, 3, true) << " ms" << percent(mean.aMeasuredNs, mean.bMeasuredNs)
                << ")\n";
    }
    std::string medTitle = "waterfall of the median step";
    if (med.valid)
        medTitle += " (A: step " + std::to_string(med.aSteps[0].second) + " on rank "
            + std::to_string(med.aSteps[0].first) + ", B: step " + std::to_string(med.bSteps[0].second) + " on rank "
            + std::to_string(med.bSteps[0].first) + ")";
    out << "\n" << waterfallText(med, medTitle + ", critical path, ms, largest change first:");
    out << "\n"
        << waterfallText(mean,
               "waterfall of the mean step over " + std::to_string(d.steps().common)
                   + " steps, critical path, ms per step, largest change first:");
    out << "\n" << kernelsText() << "\n" << ranksText();
    out << "\n" << hostText();
    if (!d.problems().empty()) {
        out << "\nnot compared:\n";
        for (const auto& p : d.problems())
            out << "  - " << p.message() << "\n";
    }
    std::vector<std::string> notes = d.notes();
    for (const auto& n : d.a().notes())
        notes.push_back("A: " + n);
    for (const auto& n : d.b().notes())
        notes.push_back("B: " + n);
    if (!notes.empty()) {
        out << "\nnotes:\n";
        for (const auto& n : notes)
            out << "  - " << n << "\n";
    }
    out << "\nA's " << coverageText(m_coverageA) << "B's " << coverageText(m_coverageB);
    if (m_options.verdicts)
        out << "\n" << verdictsText();
    return out.str();
}

// --- verdicts (diff --gate) --------------------------------------------------------------------------

namespace {

// "+0.123 ms (95% CI +0.100 to +0.150 ms)"
std::string deltaText(const DiffVerdicts::Verdict& v, double confidence)
{
    if (std::isnan(v.ciLowNs))
        return fixed(v.deltaNs / 1e6, 4, true) + " ms (too few steps for an interval)";
    return fixed(v.deltaNs / 1e6, 4, true) + " ms (" + std::to_string(int(std::lround(confidence * 100))) + "% CI "
        + fixed(v.ciLowNs / 1e6, 4, true) + " to " + fixed(v.ciHighNs / 1e6, 4, true) + " ms)";
}

std::string verdictLine(const DiffVerdicts::Verdict& v, double confidence)
{
    return std::string(DiffVerdicts::toString(v.outcome)) + ": " + fixed(v.aMedianNs / 1e6, 4) + " -> "
        + fixed(v.bMedianNs / 1e6, 4) + " ms, " + deltaText(v, confidence) + ", threshold +-"
        + fixed(v.thresholdNs / 1e6, 4) + " ms, " + std::to_string(v.aSteps) + " / " + std::to_string(v.bSteps)
        + " steps";
}

} // namespace

int DiffReport::gateExit() const
{
    if (!m_diff.problems().empty() || !m_diff.steps().common
        || (m_options.verdicts && !m_options.verdicts->enoughSteps()) || anyBad(m_coverageA) || anyBad(m_coverageB))
        return 2;
    return m_options.verdicts && m_options.verdicts->regression() ? 1 : 0;
}

json::Value DiffReport::verdictsJson() const
{
    json::Value out = json::Value::array();
    for (const auto& v : m_options.verdicts->verdicts()) {
        json::Value o = json::Value::object();
        o.set("name", v.name);
        o.set("kind", v.kernel ? "kernel" : "bar");
        o.set("a_median_ms", v.aMedianNs / 1e6);
        o.set("b_median_ms", v.bMedianNs / 1e6);
        o.set("delta_ms", v.deltaNs / 1e6);
        o.set("ci_low_ms", v.ciLowNs / 1e6);
        o.set("ci_high_ms", v.ciHighNs / 1e6);
        o.set("threshold_ms", v.thresholdNs / 1e6);
        o.set("a_steps", v.aSteps);
        o.set("b_steps", v.bSteps);
        o.set("verdict", DiffVerdicts::toString(v.outcome));
        out.push(std::move(o));
    }
    return out;
}

json::Value DiffReport::gateJson() const
{
    const DiffVerdicts& dv = *m_options.verdicts;
    json::Value g = json::Value::object();
    const int exit = gateExit();
    g.set("result", exit == 2 ? "not compared" : exit == 1 ? "regression" : "pass");
    g.set("exit", exit);
    g.set("threshold", m_options.threshold);
    g.set("confidence", dv.options().confidence);
    g.set("resamples", dv.options().resamples);
    json::Value regressions = json::Value::array(), waived = json::Value::array();
    for (const auto& v : dv.verdicts()) {
        if (dv.gating(v))
            regressions.push(v.name);
        else if (dv.waived(v))
            waived.push(v.name);
    }
    g.set("regressions", std::move(regressions));
    g.set("waived", std::move(waived)); // bars that regressed while the step got faster: reported, not failed
    g.set("notes", stringsJson(dv.notes()));
    return g;
}

std::string DiffReport::verdictsText() const
{
    const DiffVerdicts& dv = *m_options.verdicts;
    std::ostringstream out;
    const int exit = gateExit();
    out << "verdict: "
        << (exit == 2          ? "not compared"
                   : exit == 1 ? "REGRESSION"
                               : "pass")
        << " (threshold " << m_options.threshold << ", " << int(std::lround(dv.options().confidence * 100))
        << "% intervals by bootstrap over the steps)\n";
    for (const auto& v : dv.verdicts())
        if (!v.kernel || v.outcome == DiffVerdicts::Outcome::Regression
            || v.outcome == DiffVerdicts::Outcome::Improvement)
            out << "  " << (v.kernel ? "kernel " : "") << v.name << ": " << verdictLine(v, dv.options().confidence)
                << (dv.waived(v) ? " (waived: the measured step got faster)" : "") << "\n";
    for (const auto& n : dv.notes())
        out << "  - " << n << "\n";
    return out.str();
}

std::string DiffReport::junit() const
{
    std::ostringstream x;
    const DiffVerdicts* dv = m_options.verdicts;
    const double confidence = dv ? dv->options().confidence : 0.95;
    std::vector<const DiffVerdicts::Verdict*> bars;
    if (dv)
        for (const auto& v : dv->verdicts())
            if (!v.kernel)
                bars.push_back(&v);
    const bool compared = gateExit() != 2;
    size_t failures = 0, skipped = 0;
    for (const auto* v : bars) {
        failures += dv->gating(*v);
        skipped += v->outcome == DiffVerdicts::Outcome::Inconclusive || dv->waived(*v);
    }
    const size_t tests = compared ? bars.size() : 1, errors = compared ? 0 : 1;
    if (!compared)
        failures = skipped = 0;
    const std::string suite = "gapscope diff " + m_options.aLabel + " -> " + m_options.bLabel;
    x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    x << "<testsuites name=\"gapscope diff\" tests=\"" << tests << "\" failures=\"" << failures << "\" errors=\""
      << errors << "\" time=\"0\">\n";
    x << "  <testsuite name=\"" << markupEscaped(suite) << "\" tests=\"" << tests << "\" failures=\"" << failures
      << "\" errors=\"" << errors << "\" skipped=\"" << skipped << "\" time=\"0\">\n";
    x << "    <properties>\n";
    x << "      <property name=\"a\" value=\"" << markupEscaped(m_options.aLabel) << "\"/>\n";
    x << "      <property name=\"b\" value=\"" << markupEscaped(m_options.bLabel) << "\"/>\n";
    x << "      <property name=\"threshold\" value=\"" << markupEscaped(m_options.threshold) << "\"/>\n";
    x << "      <property name=\"steps_compared\" value=\"" << m_diff.steps().first << "-" << m_diff.steps().last
      << "\"/>\n";
    x << "    </properties>\n";
    if (!compared) {
        std::string why;
        for (const auto& p : m_diff.problems())
            why += (why.empty() ? "" : "; ") + p.message();
        if (dv && !dv->enoughSteps())
            for (const auto& n : dv->notes())
                why += (why.empty() ? "" : "; ") + n;
        for (const auto& [side, items] : { std::make_pair("A", &m_coverageA), std::make_pair("B", &m_coverageB) })
            for (const auto& c : *items)
                if (c.verdict == CoverageVerdict::Bad)
                    why += (why.empty() ? "" : "; ") + std::string(side) + " coverage: " + c.name + ": " + c.meaning;
        x << "    <testcase classname=\"gapscope.diff\" name=\"compare\" time=\"0\">\n";
        x << "      <error type=\"not compared\" message=\"" << markupEscaped(why) << "\"/>\n";
        x << "    </testcase>\n";
    } else {
        for (const auto* v : bars) {
            x << "    <testcase classname=\"gapscope.diff.bars\" name=\"" << markupEscaped(v->name) << "\" time=\"0\">";
            const std::string line = markupEscaped(verdictLine(*v, confidence));
            if (dv->gating(*v))
                x << "\n      <failure type=\"regression\" message=\"" << line << "\"/>\n    ";
            else if (dv->waived(*v))
                x << "\n      <skipped message=\"" << line << " (waived: the measured step got faster)\"/>\n    ";
            else if (v->outcome == DiffVerdicts::Outcome::Inconclusive)
                x << "\n      <skipped message=\"" << line << "\"/>\n    ";
            else
                x << "\n      <system-out>" << line << "</system-out>\n    ";
            x << "</testcase>\n";
        }
    }
    x << "  </testsuite>\n</testsuites>\n";
    return x.str();
}

std::string DiffReport::markdown() const
{
    std::ostringstream md;
    const DiffVerdicts* dv = m_options.verdicts;
    const int exit = gateExit();
    md << "### gapscope diff: " << (exit == 2 ? "not compared" : exit == 1 ? "**regression**" : "pass") << "\n\n";
    md << "`" << m_options.aLabel << "` -> `" << m_options.bLabel << "`";
    if (m_diff.steps().common)
        md << ", steps " << m_diff.steps().first << "-" << m_diff.steps().last << " (" << m_diff.steps().a << " / "
           << m_diff.steps().b << " complete)";
    md << "; threshold " << m_options.threshold;
    if (dv)
        md << ", " << int(std::lround(dv->options().confidence * 100)) << "% bootstrap intervals over the steps";
    md << ".\n\n";
    if (exit == 2) {
        for (const auto& p : m_diff.problems())
            md << "- " << p.message() << "\n";
        if (dv)
            for (const auto& n : dv->notes())
                md << "- " << n << "\n";
        for (const auto& [side, items] : { std::make_pair("A", &m_coverageA), std::make_pair("B", &m_coverageB) })
            for (const auto& c : *items)
                if (c.verdict == CoverageVerdict::Bad)
                    md << "- " << side << " coverage: " << c.name << ": " << c.meaning << "\n";
        return md.str();
    }
    if (!dv)
        return md.str();
    auto row = [&](const DiffVerdicts::Verdict& v) {
        const char* mark = dv->waived(v)                      ? "regression (waived: the step got faster)"
            : v.outcome == DiffVerdicts::Outcome::Regression  ? "regression :x:"
            : v.outcome == DiffVerdicts::Outcome::Improvement ? "improvement"
            : v.outcome == DiffVerdicts::Outcome::NoChange    ? "no change"
                                                              : "inconclusive";
        std::string name = v.name;
        for (char& c : name)
            if (c == '|')
                c = '/';
        md << "| " << (v.kernel ? "`" + shortKernelName(name) + "`" : name) << " | " << fixed(v.aMedianNs / 1e6, 4)
           << " | " << fixed(v.bMedianNs / 1e6, 4) << " | " << fixed(v.deltaNs / 1e6, 4, true) << " | "
           << (std::isnan(v.ciLowNs) ? std::string("-")
                                     : fixed(v.ciLowNs / 1e6, 4, true) + " .. " + fixed(v.ciHighNs / 1e6, 4, true))
           << " | " << mark << " |\n";
    };
    md << "| bar | A median ms | B median ms | change ms | " << int(std::lround(dv->options().confidence * 100))
       << "% interval | verdict |\n| --- | ---: | ---: | ---: | ---: | --- |\n";
    for (const auto& v : dv->verdicts())
        if (!v.kernel)
            row(v);
    bool kernels = false;
    for (const auto& v : dv->verdicts()) {
        if (!v.kernel
            || (v.outcome != DiffVerdicts::Outcome::Regression && v.outcome != DiffVerdicts::Outcome::Improvement))
            continue;
        if (!kernels)
            md << "\nKernels that moved past the threshold (own time per step):\n\n| kernel | A median ms | B median "
                  "ms | "
                  "change ms | interval | verdict |\n| --- | ---: | ---: | ---: | ---: | --- |\n";
        kernels = true;
        row(v);
    }
    for (const auto& n : dv->notes())
        md << "\n- " << n;
    md << "\n";
    return md.str();
}

} // namespace gapscope::model
