// SPDX-License-Identifier: MIT
#include "model/analysis/findings.h"

#include "model/trace/kernelname.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace gapscope::model {

std::string formatMs(double ms)
{
    char buf[64];
    double a = std::fabs(ms);
    int decimals = a >= 10 ? 1 : (a >= 0.1 ? 2 : 3);
    std::snprintf(buf, sizeof buf, "%.*f", decimals, ms);
    return buf;
}

std::string formatDuration(double ms)
{
    if (std::fabs(ms) >= 0.1)
        return formatMs(ms) + " ms";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f us", ms * 1000);
    return buf;
}

namespace {

Finding finding(std::string text, std::string kind, double ms)
{
    Finding f;
    f.text = std::move(text);
    f.kind = std::move(kind);
    f.ms = ms;
    return f;
}

std::string percent(double part, double whole)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%%", whole > 0 ? 100.0 * part / whole : 0.0);
    return buf;
}

std::string explain(BarId bar, bool apiRecorded)
{
    if (bar == BarId::LaunchHostGaps && !apiRecorded)
        return "GPU idle inside steps (launch times were not recorded, so sync stalls are included)";
    return barInfo(bar).meaning;
}

void gapFindings(const GapAnalyzer& a, const GapAnalyzer::Breakdown& b, std::vector<Finding>& out)
{
    const double steps = std::max(1.0, double(b.steps.size()));
    const double stepMs = double(b.measuredNs) / steps / 1e6;
    bool apiRecorded = true;
    for (const auto& [rank, step] : b.steps)
        apiRecorded = apiRecorded && a.hasApiLanes(rank);
    std::map<int, double> budgetMs; // per class slot
    for (const auto& bar : b.bars)
        if (bar.id == BarId::ClassBudget)
            budgetMs[bar.slot] = double(bar.ns) / steps / 1e6;
    std::vector<Finding> gaps;
    for (const auto& bar : b.bars) {
        if (bar.kind == BarKind::Budget)
            continue;
        double ms = double(bar.ns) / steps / 1e6;
        if (ms <= 0 || ms < 0.005 * stepMs)
            continue;
        Finding f;
        f.ms = ms;
        f.bar = bar.id;
        f.barSlot = bar.slot;
        f.barName = bar.name;
        if (bar.id == BarId::ClassInefficiency) {
            const std::string& cls = a.layout().classes[size_t(bar.slot)].name;
            double budget = budgetMs[bar.slot];
            f.kind = "inefficiency";
            f.text = cls + " kernels: " + formatMs(ms + budget) + " ms per step against a budget of " + formatMs(budget)
                + " ms (+" + formatMs(ms) + " ms, " + percent(ms, stepMs) + " of the step)";
        } else {
            f.kind = bar.kind == BarKind::Measured ? "measured" : "gap";
            std::string why = explain(bar.id, apiRecorded);
            if (bar.id == BarId::UnclassifiedKernels) {
                auto names = a.unclassifiedKernels();
                for (size_t i = 0; i < names.size() && i < 3; ++i)
                    why += std::string(i ? ", " : "; most time: ") + shortKernelName(a.trace().str(names[i].name));
            }
            f.text = bar.name + ": " + formatMs(ms) + " ms of the " + formatMs(stepMs) + " ms step ("
                + percent(ms, stepMs) + ")" + (why.empty() ? "" : ": " + why);
        }
        gaps.push_back(std::move(f));
    }
    std::stable_sort(gaps.begin(), gaps.end(), [](const Finding& x, const Finding& y) { return x.ms > y.ms; });
    out.insert(out.end(), gaps.begin(), gaps.end());
}

} // namespace

bool isNotableStraggler(const GapAnalyzer::Straggler& s, double steps, double stepNs)
{
    // Natural jitter makes every rank last now and then: only a rank last often and by enough counts.
    return s.lateCount && double(s.lateCount) >= 0.1 * double(s.matched)
        && double(s.lateSum) / std::max(1.0, steps) >= 0.01 * stepNs;
}

std::vector<Finding> makeFindings(const GapAnalyzer& a, const GapAnalyzer::Breakdown& b,
    const std::vector<GapAnalyzer::Straggler>& stragglers, const std::vector<GapAnalyzer::IdleGap>& largestGaps)
{
    std::vector<Finding> out;
    if (!b.valid)
        return out;
    const double steps = std::max(1.0, double(b.steps.size()));
    if (a.budget().present) {
        double budget = 0;
        for (const auto& bar : b.bars)
            if (bar.kind == BarKind::Budget)
                budget += double(bar.ns);
        budget /= steps * 1e6;
        double measured = double(b.measuredNs) / steps / 1e6;
        char ratio[32];
        std::snprintf(ratio, sizeof ratio, "%.1fx", budget > 0 ? measured / budget : 0.0);
        out.push_back(finding("measured " + formatMs(measured) + " ms per step against a budget of " + formatMs(budget)
                + " ms (" + ratio + ")",
            "budget", measured - budget));
    }
    gapFindings(a, b, out);
    const double stepNs = double(b.measuredNs) / steps;
    const double stepCount = double(
        a.critical(b.steps.empty() ? 0 : b.steps.front().second, b.steps.empty() ? 0 : b.steps.back().second).total);
    std::vector<GapAnalyzer::Straggler> late;
    for (const auto& s : stragglers)
        if (isNotableStraggler(s, stepCount, stepNs))
            late.push_back(s);
    std::stable_sort(late.begin(), late.end(), [](const auto& x, const auto& y) { return x.lateSum > y.lateSum; });
    for (const auto& s : late) {
        std::string what = s.op == "collective" ? "collectives" : s.op + "s";
        out.push_back(finding("rank " + std::to_string(s.rank) + " arrives " + formatDuration(s.meanLateMs())
                + " late at " + percent(double(s.lateCount), double(s.matched)) + " of " + what + " ("
                + std::to_string(s.lateCount) + " of " + std::to_string(s.matched) + "; worst "
                + formatDuration(double(s.lateMax) / 1e6) + ")",
            "straggler", s.meanLateMs()));
        out.back().rank = int(s.rank);
    }
    // The critical path shows no wait (its rank is the one waited for): name the ranks that wait.
    if (!b.steps.empty()) {
        GapAnalyzer::Selection sel;
        sel.firstStep = b.steps.front().second;
        sel.lastStep = b.steps.back().second;
        std::string waits;
        double worst = 0;
        for (uint32_t rank : a.ranks()) {
            sel.rank = int(rank);
            auto r = a.analyze(sel);
            double w = r.valid
                ? double(r.slotNs[a.layout().waitSlot()]) / std::max<double>(1, double(r.steps.size())) / 1e6
                : 0;
            if (w >= 0.01 * stepNs / 1e6) {
                waits += (waits.empty() ? "" : ", ") + std::string("rank ") + std::to_string(rank) + " "
                    + formatDuration(w);
                worst = std::max(worst, w);
            }
        }
        if (!waits.empty()) {
            out.push_back(finding("collective wait per step: " + waits
                    + (late.empty() ? std::string() : " (waiting for rank " + std::to_string(late.front().rank) + ")"),
                "wait", worst));
            out.back().bar = BarId::CollectiveWait;
            out.back().barSlot = int(a.layout().waitSlot());
            out.back().barName = barInfo(BarId::CollectiveWait).name;
            out.back().rank = late.empty() ? -1 : int(late.front().rank);
        }
    }
    for (const auto& g : largestGaps) {
        std::string text = "largest gap: " + formatDuration(double(g.duration()) / 1e6) + " " + idleKindName(g.kind)
            + " on rank " + std::to_string(g.rank) + " in step " + std::to_string(g.step);
        if (g.hasNext)
            text += g.nextKind == EventKind::Kernel ? ", before " + shortKernelName(a.trace().str(g.nextName))
                                                    : std::string(", before a memory copy or set");
        out.push_back(finding(text, "largest_gap", double(g.duration()) / 1e6));
        out.back().rank = int(g.rank);
        out.back().step = int64_t(g.step);
        out.back().t0 = g.start;
        out.back().t1 = g.end;
    }
    // Steps partly outside some rank's capture are in none of the figures above: say which.
    for (const auto& i : a.incompleteSteps()) {
        if (i.summarised)
            continue;
        Finding f;
        f.text = i.why;
        f.kind = "incomplete_step";
        out.push_back(std::move(f));
    }
    return out;
}

} // namespace gapscope::model
