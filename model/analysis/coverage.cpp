// SPDX-License-Identifier: MIT
#include "model/analysis/coverage.h"

#include "model/trace/captureoverhead.h"
#include "model/trace/owntime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

namespace gapscope::model {

namespace {

std::string number(double v, int decimals = 1)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

CoverageVerdict grade(double v, double okAtLeast, double warnAtLeast)
{
    return v >= okAtLeast ? CoverageVerdict::Ok : v >= warnAtLeast ? CoverageVerdict::Warn : CoverageVerdict::Bad;
}

CoverageVerdict gradeBelow(double v, double okBelow, double warnBelow)
{
    return v < okBelow ? CoverageVerdict::Ok : v < warnBelow ? CoverageVerdict::Warn : CoverageVerdict::Bad;
}

// The kernel slots of a step record: the classes, the collective wait (collective kernels' time),
// unclassified kernels and whole graph replays.
TimeNs kernelSlots(const SlotLayout& l, const GapAnalyzer::StepRecord& rec, TimeNs* unclassified)
{
    if (rec.slotNs.size() < l.slotCount())
        return 0;
    TimeNs sum = rec.slotNs[l.waitSlot()] + rec.slotNs[l.unclassifiedSlot()];
    for (size_t c = 0; c < l.classes.size(); ++c)
        sum += rec.slotNs[c];
    if (l.wholeGraphs)
        sum += rec.slotNs[l.wholeGraphSlot()];
    if (unclassified)
        *unclassified += rec.slotNs[l.unclassifiedSlot()];
    return sum;
}

// Runs of consecutive incomplete steps with the same reason: "steps 20-39: <why>".
std::string incompleteRuns(const std::vector<GapAnalyzer::Incomplete>& steps, size_t shown)
{
    std::string out;
    size_t runs = 0;
    for (size_t i = 0; i < steps.size();) {
        size_t j = i;
        while (j + 1 < steps.size() && steps[j + 1].index == steps[j].index + 1 && steps[j + 1].why == steps[i].why)
            ++j;
        if (runs < shown) {
            out += (out.empty() ? "" : "; ") + std::string(i == j ? "step " : "steps ") + std::to_string(steps[i].index)
                + (i == j ? "" : "-" + std::to_string(steps[j].index)) + ": " + steps[i].why;
        }
        ++runs;
        i = j + 1;
    }
    if (runs > shown)
        out += "; " + std::to_string(runs - shown) + " more runs";
    return out;
}

} // namespace

const char* toString(CoverageVerdict v)
{
    switch (v) {
    case CoverageVerdict::Ok:
        return "ok";
    case CoverageVerdict::Warn:
        return "warn";
    case CoverageVerdict::Bad:
        break;
    }
    return "bad";
}

void CoverageInputs::add(const GapAnalyzer& an, uint32_t firstStep, uint32_t lastStep, TimeNs ownedFrom, TimeNs ownedTo)
{
    measured = true;
    const Trace& t = an.trace();
    for (uint32_t r : an.ranks())
        for (LaneId id : t.lanesOf(r, LaneKind::GpuStream)) {
            const LaneEvents& ev = t.lane(id).events;
            OwnTime stream;
            for (size_t i = 0; i < ev.size(); ++i) {
                const TimeNs own = stream.duration(ev.start(i), ev.end(i));
                if (t.kindOf(id, i) == EventKind::Kernel && ev.start(i) >= ownedFrom && ev.start(i) < ownedTo)
                    kernelOwnNs += own;
            }
        }
    std::map<std::pair<uint64_t, uint64_t>, size_t> group; // this share's keys: (communicator, sequence)
    an.forEachCollective([&](const GapAnalyzer::CollectiveRecord& c) {
        const bool inStep = c.step != CollectiveMatcher::kNoStep;
        if (!c.keyed || (inStep ? c.step < firstStep || c.step > lastStep : c.start < ownedFrom || c.start >= ownedTo))
            return;
        auto [it, added] = group.try_emplace({ c.comm, c.seq }, collectiveEnds.size());
        if (added)
            collectiveEnds.emplace_back();
        collectiveEnds[it->second].emplace_back(c.rank, c.start + c.duration);
    });
}

std::vector<CoverageItem> coverageOf(const GapAnalyzer& an)
{
    CoverageInputs in;
    if (an.hasEvents())
        in.add(an, 0, GapAnalyzer::kAllSteps, std::numeric_limits<TimeNs>::min(), std::numeric_limits<TimeNs>::max());
    return coverageOf(an, in);
}

std::vector<CoverageItem> coverageOf(const GapAnalyzer& an, const CoverageInputs& in)
{
    std::vector<CoverageItem> out;
    const Trace& t = an.trace();
    const SlotLayout& l = an.layout();

    // Kernel time inside the steps, and the unclassified share of it.
    TimeNs inSteps = 0, unclassified = 0;
    std::map<uint32_t, uint32_t> stepCount; // index -> ranks that have it
    for (uint32_t r : an.ranks())
        for (const auto& rec : an.steps(r)) {
            inSteps += kernelSlots(l, rec, &unclassified);
            ++stepCount[rec.index];
        }
    if (in.measured && in.kernelOwnNs > 0) {
        const double pct = std::min(100.0, 100.0 * double(inSteps) / double(in.kernelOwnNs));
        CoverageItem c { "kernel time in steps", pct, "%", grade(pct, 80, 10), "" };
        c.meaning = pct >= 99.95 ? "every kernel's time is inside a step: the bars account for all of it"
                                 : number(100 - pct)
                + " % of the kernel time is outside every step (before the first, "
                  "after the last, or where a rank's capture did not overlap the others'): in no bar";
        out.push_back(std::move(c));
    }

    // Ranks present against the job's size.
    uint32_t world = 0;
    for (const RankInfo& r : t.header().ranks)
        world = std::max(world, r.worldSize);
    const uint32_t present = uint32_t(an.ranks().size());
    {
        CoverageItem c { "ranks", double(present), "ranks", CoverageVerdict::Ok, "" };
        if (world > present) {
            c.verdict = CoverageVerdict::Warn;
            c.meaning = std::to_string(present) + " of the job's " + std::to_string(world)
                + " ranks are in the trace: waits for and stragglers among the others cannot be seen";
        } else {
            c.meaning = world ? "every rank of the job (" + std::to_string(world) + ") is in the trace"
                              : "the trace does not say the job's size; " + std::to_string(present) + " ranks analysed";
        }
        out.push_back(std::move(c));
    }

    // Steps complete on every rank.
    if (!stepCount.empty()) {
        const auto& inc = an.incompleteSteps();
        const double pct
            = 100.0 * double(stepCount.size() - std::min(stepCount.size(), inc.size())) / double(stepCount.size());
        CoverageItem c { "complete steps", pct, "%", grade(pct, 100, 50), "" };
        c.meaning = inc.empty()
            ? "every step is complete on every rank analysed (" + std::to_string(stepCount.size()) + ")"
            : std::to_string(inc.size()) + " of " + std::to_string(stepCount.size())
                + " steps left out of the summaries: " + incompleteRuns(inc, 3);
        out.push_back(std::move(c));
    }

    // Clock alignment: how far each rank's collective ends lie from the others'.
    if (in.measured && present > 1) {
        std::map<uint32_t, std::vector<double>> residual;
        size_t used = 0;
        for (const auto& ends : in.collectiveEnds) {
            if (ends.size() < 2)
                continue;
            std::vector<TimeNs> e;
            e.reserve(ends.size());
            for (const auto& re : ends)
                e.push_back(re.second);
            std::nth_element(e.begin(), e.begin() + long(e.size() / 2), e.end());
            const TimeNs mid = e[e.size() / 2];
            for (const auto& [r, end] : ends)
                residual[r].push_back(std::abs(double(end - mid)));
            ++used;
        }
        if (used >= 3) {
            double worst = 0;
            uint32_t worstRank = 0;
            for (auto& [r, v] : residual) {
                std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
                if (v[v.size() / 2] >= worst) {
                    worst = v[v.size() / 2];
                    worstRank = r;
                }
            }
            const double us = worst / 1e3;
            CoverageItem c { "clock alignment residual", us, "us", gradeBelow(us, 50, 1000), "" };
            c.meaning = "rank " + std::to_string(worstRank) + "'s collectives end " + number(us)
                + " us (median) from the others' over " + std::to_string(used) + " collectives"
                + (c.verdict == CoverageVerdict::Ok ? ": the ranks' clocks agree"
                                                    : ": waits and stragglers are uncertain by about that much");
            out.push_back(std::move(c));
        }
    }

    // The capture's own cost.
    {
        double worst = -1;
        uint32_t worstRank = 0;
        for (uint32_t r : an.ranks())
            if (const OverheadEvidence* e = captureOverhead(t.header(), r)) {
                const double pct = captureOverheadPct(*e);
                if (std::isfinite(pct) && pct > worst) {
                    worst = pct;
                    worstRank = r;
                }
            }
        if (worst >= 0) {
            CoverageItem c { "capture overhead", worst, "%", gradeBelow(worst, 5, 25), "" };
            c.meaning = "recording made rank " + std::to_string(worstRank) + "'s steps " + number(worst)
                + " % slower (the tool's own cost is inside the bars)";
            out.push_back(std::move(c));
        }
    }

    // Loss and anomaly counters.
    uint64_t lost = 0, anomalies = 0;
    std::string lostNames;
    for (const Counter& k : t.header().counters) {
        if (k.severity == "data_loss") {
            lost += k.value;
            if (k.value && lostNames.size() < 120)
                lostNames += (lostNames.empty() ? "" : ", ") + k.name;
        } else if ((k.severity == "error" || k.severity == "warning") && k.value) {
            anomalies += k.value;
        }
    }
    out.push_back({ "data lost", double(lost), "events", lost ? CoverageVerdict::Bad : CoverageVerdict::Ok,
        lost ? std::to_string(lost) + " events were lost (" + lostNames + "): the bars miss their time"
             : "no event was lost" });
    out.push_back({ "anomalies", double(anomalies), "counters", anomalies ? CoverageVerdict::Warn : CoverageVerdict::Ok,
        anomalies ? std::to_string(anomalies) + " events were skipped or odd (info --json lists the counters)"
                  : "no skipped or odd events" });

    if (inSteps > 0) {
        const double pct = 100.0 * double(unclassified) / double(inSteps);
        CoverageItem c { "unclassified kernel time", pct, "%", pct < 10 ? CoverageVerdict::Ok : CoverageVerdict::Warn,
            "" };
        c.meaning = pct < 0.05 ? "every kernel in the steps has a class and a budget component"
                               : number(pct)
                + " % of the kernel time in steps matches no classifier rule: measured, "
                  "but set against no budget";
        out.push_back(std::move(c));
    }
    return out;
}

json::Value coverageJson(const std::vector<CoverageItem>& items)
{
    json::Value a = json::Value::array();
    for (const auto& c : items) {
        json::Value o = json::Value::object();
        o.set("name", c.name);
        o.set("value", c.value);
        o.set("unit", c.unit);
        o.set("verdict", toString(c.verdict));
        o.set("meaning", c.meaning);
        a.push(std::move(o));
    }
    return a;
}

std::string coverageText(const std::vector<CoverageItem>& items)
{
    std::string out = "coverage:\n";
    for (const auto& c : items) {
        char line[160];
        std::snprintf(line, sizeof line, "  %-5s %-25s %10s %-8s ", toString(c.verdict), c.name.c_str(),
            number(c.value, c.unit == "%" || c.unit == "us" ? 1 : 0).c_str(), c.unit.c_str());
        out += line + c.meaning + "\n";
    }
    return out;
}

bool anyBad(const std::vector<CoverageItem>& items)
{
    for (const auto& c : items)
        if (c.verdict == CoverageVerdict::Bad)
            return true;
    return false;
}

} // namespace gapscope::model
