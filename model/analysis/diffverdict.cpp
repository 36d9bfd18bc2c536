// SPDX-License-Identifier: MIT
#include "model/analysis/diffverdict.h"

#include "model/base/taskpool.h"
#include "model/trace/owntime.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

namespace gapscope::model {

namespace {

// The complete steps of one side inside the compared range.
std::vector<uint32_t> stepsOf(const GapAnalyzer& an, uint32_t first, uint32_t last)
{
    std::vector<uint32_t> out;
    for (uint32_t s : TraceDiff::completeSteps(an))
        if (s >= first && s <= last)
            out.push_back(s);
    return out;
}

// Per step, the critical path's bars by name and the measured step.
struct BarSamples {
    std::vector<std::string> order; // as the first step's waterfall lists them
    std::map<std::string, std::vector<double>> byName;
    std::vector<double> measured;
    std::vector<double> idle; // the gap bars of idle time added up, per step
    std::set<std::string> idleBars;
};

bool isIdleBar(BarId id)
{
    for (size_t k = 0; k < kIdleKinds; ++k)
        if (id == idleBar(IdleKind(k)))
            return true;
    return false;
}

BarSamples barSamples(const GapAnalyzer& an, const std::vector<uint32_t>& steps)
{
    BarSamples out;
    for (uint32_t step : steps) {
        GapAnalyzer::Selection s;
        s.kind = GapAnalyzer::Selection::Kind::Step;
        s.rank = GapAnalyzer::kCriticalRank;
        s.firstStep = step;
        const GapAnalyzer::Breakdown b = an.analyze(s);
        if (!b.valid)
            continue;
        const size_t k = out.measured.size();
        out.measured.push_back(double(b.measuredNs));
        out.idle.push_back(0.0);
        for (const Bar& bar : b.bars) {
            if (bar.kind == BarKind::Budget)
                continue; // the same in every step: nothing to judge
            auto [it, added] = out.byName.try_emplace(bar.name);
            if (added)
                out.order.push_back(bar.name);
            it->second.resize(k, 0.0); // a bar a step lacked counts 0 there
            it->second.push_back(double(bar.ns));
            if (isIdleBar(bar.id)) {
                out.idle.back() += double(bar.ns);
                out.idleBars.insert(bar.name);
            }
        }
    }
    for (auto& [name, v] : out.byName)
        v.resize(out.measured.size(), 0.0);
    return out;
}

// Per kernel name (of this side's trace), its own time in each step, summed over the ranks and divided
// by how many ranks have the step.
std::unordered_map<StringId, std::vector<double>> kernelSamples(
    const GapAnalyzer& an, const std::vector<uint32_t>& steps)
{
    std::unordered_map<StringId, std::vector<double>> out;
    const Trace& t = an.trace();
    std::map<uint32_t, size_t> position;
    for (size_t i = 0; i < steps.size(); ++i)
        position[steps[i]] = i;
    std::vector<double> ranksOf(steps.size(), 0.0);
    for (uint32_t r : an.ranks()) {
        // The rank's windows of the judged steps, by start.
        std::vector<std::pair<TimeNs, TimeNs>> windows;
        std::vector<size_t> at;
        for (const auto& rec : an.steps(r)) {
            auto p = position.find(rec.index);
            if (p == position.end())
                continue;
            windows.emplace_back(rec.start, rec.end);
            at.push_back(p->second);
            ranksOf[p->second] += 1;
        }
        std::vector<size_t> byStart(windows.size());
        for (size_t i = 0; i < byStart.size(); ++i)
            byStart[i] = i;
        std::sort(
            byStart.begin(), byStart.end(), [&](size_t x, size_t y) { return windows[x].first < windows[y].first; });
        std::vector<TimeNs> starts;
        starts.reserve(byStart.size());
        for (size_t i : byStart)
            starts.push_back(windows[i].first);
        for (LaneId id : t.lanesOf(r, LaneKind::GpuStream)) {
            const LaneEvents& ev = t.lane(id).events;
            OwnTime stream;
            for (size_t i = 0; i < ev.size(); ++i) {
                const TimeNs own = stream.duration(ev.start(i), ev.end(i));
                if (t.kindOf(id, i) != EventKind::Kernel)
                    continue;
                auto it = std::upper_bound(starts.begin(), starts.end(), ev.start(i));
                if (it == starts.begin())
                    continue;
                const size_t w = byStart[size_t(it - starts.begin()) - 1];
                if (ev.start(i) >= windows[w].second)
                    continue;
                auto& v = out[ev.name(i)];
                if (v.empty())
                    v.assign(steps.size(), 0.0);
                v[at[w]] += double(own);
            }
        }
    }
    for (auto& [name, v] : out)
        for (size_t i = 0; i < v.size(); ++i)
            v[i] = ranksOf[i] > 0 ? v[i] / ranksOf[i] : 0.0;
    return out;
}

// The median (the mean of the two middle values of an even count); reorders `v`.
double medianOf(std::vector<double>& v)
{
    if (v.empty())
        return 0;
    const size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + long(mid), v.end());
    const double hi = v[mid];
    if (v.size() % 2)
        return hi;
    return (hi + *std::max_element(v.begin(), v.begin() + long(mid))) / 2;
}

uint64_t splitmix(uint64_t& s)
{
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t hashOfName(const std::string& s)
{
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s)
        h = (h ^ c) * 1099511628211ull;
    return h;
}

} // namespace

const char* DiffVerdicts::toString(Outcome o)
{
    switch (o) {
    case Outcome::Regression:
        return "regression";
    case Outcome::Improvement:
        return "improvement";
    case Outcome::NoChange:
        return "no change";
    case Outcome::Inconclusive:
        break;
    }
    return "inconclusive";
}

DiffVerdicts::Interval DiffVerdicts::bootstrap(
    const std::vector<double>& a, const std::vector<double>& b, unsigned resamples, double confidence, uint64_t seed)
{
    Interval out;
    std::vector<double> ta = a, tb = b;
    out.delta = medianOf(tb) - medianOf(ta);
    out.low = out.high = out.delta;
    if (a.empty() || b.empty() || resamples == 0)
        return out;
    std::vector<double> deltas(resamples);
    uint64_t state = seed;
    for (unsigned r = 0; r < resamples; ++r) {
        for (double& x : ta)
            x = a[size_t(splitmix(state) % a.size())];
        for (double& x : tb)
            x = b[size_t(splitmix(state) % b.size())];
        deltas[r] = medianOf(tb) - medianOf(ta);
    }
    std::sort(deltas.begin(), deltas.end());
    const double tail = (1 - confidence) / 2;
    const size_t lo = size_t(std::floor(tail * double(resamples)));
    const size_t hi = std::min<size_t>(resamples - 1, size_t(std::ceil((1 - tail) * double(resamples))) - 1);
    out.low = deltas[std::min(lo, size_t(resamples - 1))];
    out.high = deltas[hi];
    return out;
}

DiffVerdicts::Verdict DiffVerdicts::judge(std::string name, bool kernel, const std::vector<double>& a,
    const std::vector<double>& b, uint64_t seed, double stepNs) const
{
    Verdict v;
    v.name = std::move(name);
    v.kernel = kernel;
    v.aSteps = a.size();
    v.bSteps = b.size();
    std::vector<double> ta = a, tb = b;
    v.aMedianNs = medianOf(ta);
    v.bMedianNs = medianOf(tb);
    const bool enough = a.size() >= kMinSteps && b.size() >= kMinSteps;
    const Interval i = bootstrap(a, b, enough ? m_options.resamples : 0, m_options.confidence, seed);
    v.deltaNs = i.delta;
    v.ciLowNs = enough ? i.low : std::nan("");
    v.ciHighNs = enough ? i.high : std::nan("");
    v.thresholdNs = m_options.absoluteNs > 0
        ? m_options.absoluteNs
        : std::max({ m_options.floorNs, m_options.relative * std::abs(v.aMedianNs), m_options.stepFloor * stepNs });
    v.outcome = Outcome::Inconclusive; // too few steps, or an interval across the threshold
    if (enough && i.low > v.thresholdNs)
        v.outcome = Outcome::Regression;
    else if (enough && i.high < -v.thresholdNs)
        v.outcome = Outcome::Improvement;
    else if (enough && i.low >= -v.thresholdNs && i.high <= v.thresholdNs)
        v.outcome = Outcome::NoChange;
    return v;
}

DiffVerdicts::DiffVerdicts(const TraceDiff& diff, Options options)
    : m_options(options)
{
    const TraceDiff::Steps& st = diff.steps();
    if (!st.common) {
        m_notes.push_back("no steps in common: nothing judged");
        return;
    }
    const std::vector<uint32_t> sa = stepsOf(diff.a(), st.first, st.last), sb = stepsOf(diff.b(), st.first, st.last);
    const BarSamples ba = barSamples(diff.a(), sa), bb = barSamples(diff.b(), sb);
    m_enoughSteps = ba.measured.size() >= kMinSteps && bb.measured.size() >= kMinSteps;
    if (!m_enoughSteps)
        m_notes.push_back("too few complete steps to judge: A has " + std::to_string(ba.measured.size()) + ", B has "
            + std::to_string(bb.measured.size()) + " (at least " + std::to_string(kMinSteps) + " each)");
    // The work: the measured step, the bars (A's order, then B's own), the kernels.
    struct Job {
        std::string name;
        bool kernel;
        std::vector<double> a, b;
    };
    std::vector<Job> jobs;
    jobs.push_back({ "measured step", false, ba.measured, bb.measured });
    jobs.push_back({ kIdleTotal, false, ba.idle, bb.idle });
    m_idleBars = ba.idleBars;
    m_idleBars.insert(bb.idleBars.begin(), bb.idleBars.end());
    std::vector<std::string> order = ba.order;
    for (const auto& n : bb.order)
        if (!ba.byName.count(n))
            order.push_back(n);
    for (const auto& n : order) {
        auto ia = ba.byName.find(n);
        auto ib = bb.byName.find(n);
        jobs.push_back({ n, false, ia != ba.byName.end() ? ia->second : std::vector<double>(ba.measured.size(), 0.0),
            ib != bb.byName.end() ? ib->second : std::vector<double>(bb.measured.size(), 0.0) });
    }
    m_kernelsCompared = diff.a().hasEvents() && diff.b().hasEvents();
    if (!m_kernelsCompared) {
        m_notes.push_back(
            "kernel names not judged: a side was read in windows of a large file (--read full judges them)");
    } else {
        const auto ka = kernelSamples(diff.a(), sa), kb = kernelSamples(diff.b(), sb);
        std::vector<const TraceDiff::KernelDelta*> rows;
        for (const auto& k : diff.kernels())
            rows.push_back(&k);
        std::stable_sort(rows.begin(), rows.end(),
            [](const auto* x, const auto* y) { return x->aOwn + x->bOwn > y->aOwn + y->bOwn; });
        if (rows.size() > m_options.kernels) {
            m_notes.push_back("kernel names judged: the " + std::to_string(m_options.kernels)
                + " with the most own time of " + std::to_string(rows.size()));
            rows.resize(m_options.kernels);
        }
        auto gather = [](const Trace& t, const std::unordered_map<StringId, std::vector<double>>& samples,
                          const std::vector<std::string>& names, size_t steps) {
            std::vector<double> sum(steps, 0.0);
            for (const auto& n : names) {
                const auto id = t.findString(n);
                if (!id)
                    continue;
                auto it = samples.find(*id);
                if (it == samples.end())
                    continue;
                for (size_t i = 0; i < steps; ++i)
                    sum[i] += it->second[i];
            }
            return sum;
        };
        for (const auto* k : rows) {
            using M = TraceDiff::Match;
            const std::vector<std::string> na = k->match == M::Normalised ? k->aNames
                : k->match == M::New                                      ? std::vector<std::string> {}
                                                                          : std::vector<std::string> { k->name };
            const std::vector<std::string> nb = k->match == M::Normalised ? k->bNames
                : k->match == M::Vanished                                 ? std::vector<std::string> {}
                                                                          : std::vector<std::string> { k->name };
            jobs.push_back({ k->name, true, gather(diff.a().trace(), ka, na, sa.size()),
                gather(diff.b().trace(), kb, nb, sb.size()) });
        }
    }
    std::vector<double> steps = ba.measured;
    const double stepNs = medianOf(steps); // A's median step: the floor of every bar's threshold
    m_verdicts.resize(jobs.size());
    TaskPool::shared().parallelFor(jobs.size(), [&](size_t i) {
        m_verdicts[i] = judge(
            jobs[i].name, jobs[i].kernel, jobs[i].a, jobs[i].b, m_options.seed ^ hashOfName(jobs[i].name), stepNs);
    });
}

bool DiffVerdicts::gating(const Verdict& v) const
{
    if (v.kernel || v.outcome != Outcome::Regression)
        return false;
    if (m_verdicts.size() < 2 || &v == &m_verdicts.front())
        return true; // the measured step
    if (m_verdicts.front().outcome == Outcome::Improvement)
        return false; // the step got faster: time moved between bars
    // A gap bar counts only when the idle time as a whole grew: idle time moving from one kind of gap to
    // another (launch/host gaps into sync stalls or the step gap) is how captures of one unchanged process
    // differ.
    return !m_idleBars.count(v.name) || m_verdicts[1].outcome == Outcome::Regression;
}

bool DiffVerdicts::waived(const Verdict& v) const
{
    return !v.kernel && v.outcome == Outcome::Regression && !gating(v);
}

bool DiffVerdicts::regression() const
{
    for (const Verdict& v : m_verdicts)
        if (gating(v))
            return true;
    return false;
}

} // namespace gapscope::model
