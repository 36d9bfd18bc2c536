// SPDX-License-Identifier: MIT
#include "model/analysis/tracediff.h"
#include "model/analysis/findings.h"
#include "model/base/taskpool.h"
#include "model/trace/kernelname.h"
#include "model/trace/tracesummary.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

namespace gapscope::model {

namespace {

using Kind = GapAnalyzer::Selection::Kind;

// Step indices complete in the trace (some rank has them and none lacks them).
std::string describeSteps(const std::set<uint32_t>& s)
{
    if (s.empty())
        return "none";
    return std::to_string(*s.begin()) + " to " + std::to_string(*s.rbegin());
}

GapAnalyzer::Selection select(Kind kind, int rank, uint32_t first, uint32_t last)
{
    GapAnalyzer::Selection s;
    s.kind = kind;
    s.rank = rank;
    s.firstStep = first;
    s.lastStep = last;
    return s;
}

double perStep(const GapAnalyzer::Breakdown& b)
{
    return std::max<double>(1, double(b.steps.size()));
}

TraceDiff::Waterfall pairBars(const GapAnalyzer::Breakdown& a, const GapAnalyzer::Breakdown& b)
{
    TraceDiff::Waterfall w;
    if (!a.valid || !b.valid)
        return w;
    w.valid = true;
    w.aSteps = a.steps;
    w.bSteps = b.steps;
    const double na = perStep(a), nb = perStep(b);
    w.aMeasuredNs = double(a.measuredNs) / na;
    w.bMeasuredNs = double(b.measuredNs) / nb;
    std::map<std::string, size_t> byName;
    for (const Bar& bar : a.bars) {
        byName[bar.name] = w.bars.size();
        w.bars.push_back({ bar.name, bar.kind, double(bar.ns) / na, 0, true, false });
    }
    for (const Bar& bar : b.bars) {
        auto it = byName.find(bar.name);
        if (it == byName.end()) {
            w.bars.push_back({ bar.name, bar.kind, 0, double(bar.ns) / nb, false, true });
            continue;
        }
        w.bars[it->second].bNs = double(bar.ns) / nb;
        w.bars[it->second].inB = true;
    }
    std::stable_sort(w.bars.begin(), w.bars.end(),
        [](const auto& x, const auto& y) { return std::fabs(x.deltaNs()) > std::fabs(y.deltaNs()); });
    return w;
}

TraceDiff::KernelDelta fromRows(const Trace& ta, const KernelRow* a, const Trace& tb, const KernelRow* b)
{
    TraceDiff::KernelDelta k;
    k.match = a && b ? TraceDiff::Match::Exact : a ? TraceDiff::Match::Vanished : TraceDiff::Match::New;
    k.name = std::string(a ? ta.str(a->name) : tb.str(b->name));
    if (a) {
        k.aCount = a->count;
        k.aTotal = a->total;
        k.aOwn = a->ownTotal;
        k.aMedian = a->median;
    }
    if (b) {
        k.bCount = b->count;
        k.bTotal = b->total;
        k.bOwn = b->ownTotal;
        k.bMedian = b->median;
    }
    return k;
}

} // namespace

const char* toString(TraceDiff::Match match)
{
    switch (match) {
    case TraceDiff::Match::Exact:
        return "exact";
    case TraceDiff::Match::Normalised:
        return "normalised";
    case TraceDiff::Match::Vanished:
        return "vanished";
    case TraceDiff::Match::New:
        return "new";
    }
    return "";
}

TraceDiff::TraceDiff(const GapAnalyzer& a, const GapAnalyzer& b)
    : TraceDiff(a, b, Side(), Side())
{
}

TraceDiff::TraceDiff(const GapAnalyzer& a, const GapAnalyzer& b, Side sideA, Side sideB)
    : m_a(a)
    , m_b(b)
    , m_sideA(std::move(sideA))
    , m_sideB(std::move(sideB))
{
    compareSteps();
    compareWaterfalls();
    compareKernels();
    compareRanks();
    compareHost();
}

void TraceDiff::compareSteps()
{
    const std::set<uint32_t> sa = completeSteps(m_a), sb = completeSteps(m_b);
    std::vector<uint32_t> common;
    std::set_intersection(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(common));
    m_steps.a = uint32_t(sa.size());
    m_steps.b = uint32_t(sb.size());
    m_steps.common = uint32_t(common.size());
    if (common.empty()) {
        m_problems.push_back(Status::error("no steps in common: A has steps " + describeSteps(sa) + ", B has steps "
            + describeSteps(sb) + "; the waterfalls and the per-rank step times are not compared"));
        return;
    }
    m_steps.first = common.front();
    m_steps.last = common.back();
    const uint32_t span = m_steps.last - m_steps.first + 1;
    if (span != m_steps.common)
        m_notes.push_back("steps " + std::to_string(m_steps.first) + " to " + std::to_string(m_steps.last)
            + " compared; " + std::to_string(span - m_steps.common)
            + " of them are complete in only one trace (counted on that side)");
    if (sa.size() != common.size() || sb.size() != common.size())
        m_notes.push_back("A has " + std::to_string(sa.size()) + " complete steps (" + describeSteps(sa) + "), B has "
            + std::to_string(sb.size()) + " (" + describeSteps(sb) + "): steps " + std::to_string(m_steps.first)
            + " to " + std::to_string(m_steps.last) + " compared");
}

void TraceDiff::compareWaterfalls()
{
    if (!m_steps.common)
        return;
    const int crit = GapAnalyzer::kCriticalRank;
    m_median = pairBars(m_a.analyze(select(Kind::Median, crit, m_steps.first, m_steps.last)),
        m_b.analyze(select(Kind::Median, crit, m_steps.first, m_steps.last)));
    m_mean = pairBars(m_a.analyze(select(Kind::Steps, crit, m_steps.first, m_steps.last)),
        m_b.analyze(select(Kind::Steps, crit, m_steps.first, m_steps.last)));
}

void TraceDiff::compareKernels()
{
    const Trace& ta = m_a.trace();
    const Trace& tb = m_b.trace();
    std::vector<KernelRow> tables[2]; // one pass over each trace's events, both at once
    const Side* sides[2] = { &m_sideA, &m_sideB };
    TaskPool::shared().parallelFor(
        2,
        [&](size_t i) {
            tables[i] = sides[i]->kernels ? *sides[i]->kernels : kernelTable(i ? tb : ta);
        },
        2);
    const std::vector<KernelRow>&ra = tables[0], &rb = tables[1];
    std::map<std::string_view, const KernelRow*> byNameB;
    for (const KernelRow& r : rb)
        byNameB.emplace(tb.str(r.name), &r);
    std::set<std::string_view> pairedB;
    std::vector<const KernelRow*> leftA;
    for (const KernelRow& r : ra) {
        auto it = byNameB.find(ta.str(r.name));
        if (it == byNameB.end()) {
            leftA.push_back(&r);
            continue;
        }
        m_kernels.push_back(fromRows(ta, &r, tb, it->second));
        pairedB.insert(it->first);
    }
    // The names left over on both sides, by short form.
    std::map<std::string, std::pair<std::vector<const KernelRow*>, std::vector<const KernelRow*>>> byShort;
    for (const KernelRow* r : leftA)
        byShort[shortKernelName(ta.str(r->name))].first.push_back(r);
    for (const KernelRow& r : rb)
        if (!pairedB.count(tb.str(r.name)))
            byShort[shortKernelName(tb.str(r.name))].second.push_back(&r);
    for (const auto& [shortName, sides] : byShort) {
        const auto& [as, bs] = sides;
        if (as.empty() || bs.empty()) {
            for (const KernelRow* r : as)
                m_kernels.push_back(fromRows(ta, r, tb, nullptr));
            for (const KernelRow* r : bs)
                m_kernels.push_back(fromRows(ta, nullptr, tb, r));
            continue;
        }
        KernelDelta k = fromRows(ta, as.front(), tb, bs.front());
        k.name = shortName;
        k.match = Match::Normalised;
        k.mediansKnown = as.size() == 1 && bs.size() == 1;
        k.aCount = k.bCount = 0;
        k.aTotal = k.bTotal = k.aOwn = k.bOwn = 0;
        for (const KernelRow* r : as) {
            k.aNames.emplace_back(ta.str(r->name));
            k.aCount += r->count;
            k.aTotal += r->total;
            k.aOwn += r->ownTotal;
        }
        for (const KernelRow* r : bs) {
            k.bNames.emplace_back(tb.str(r->name));
            k.bCount += r->count;
            k.bTotal += r->total;
            k.bOwn += r->ownTotal;
        }
        if (!k.mediansKnown)
            k.aMedian = k.bMedian = 0;
        m_kernels.push_back(std::move(k));
        ++m_normalised;
    }
    std::sort(m_kernels.begin(), m_kernels.end(), [](const KernelDelta& x, const KernelDelta& y) {
        const TimeNs dx = std::abs(x.deltaTotal()), dy = std::abs(y.deltaTotal());
        return dx != dy ? dx > dy : x.name < y.name;
    });
}

std::set<uint32_t> TraceDiff::completeSteps(const GapAnalyzer& an)
{
    std::set<uint32_t> out;
    for (uint32_t r : an.ranks())
        for (const auto& rec : an.steps(r))
            if (!an.isIncomplete(rec.index))
                out.insert(rec.index);
    return out;
}

TraceDiff::RankSide TraceDiff::rankSide(const GapAnalyzer& an, uint32_t rank, const Lateness& late) const
{
    RankSide s;
    s.present = true;
    s.rank = rank;
    if (!m_steps.common)
        return s;
    const auto mean = an.analyze(select(Kind::Steps, int(rank), m_steps.first, m_steps.last));
    if (mean.valid) {
        s.steps = uint32_t(mean.steps.size());
        s.stepNs = double(mean.measuredNs) / perStep(mean);
        s.waitNs = double(mean.slotNs[an.layout().waitSlot()]) / perStep(mean);
    }
    const auto median = an.analyze(select(Kind::Median, int(rank), m_steps.first, m_steps.last));
    if (median.valid)
        s.medianStepNs = double(median.measuredNs);
    for (const auto& st : late.stragglers)
        if (st.rank == rank) {
            s.lateCount = st.lateCount;
            s.matched = st.matched;
            s.meanLateMs = st.meanLateMs();
            s.straggler = isNotableStraggler(st, late.steps, late.stepNs);
        }
    return s;
}

TraceDiff::Lateness TraceDiff::lateness(const GapAnalyzer& an, const Waterfall& mean, bool a) const
{
    Lateness l;
    if (!m_steps.common)
        return l;
    l.stragglers = an.stragglers(m_steps.first, m_steps.last);
    l.steps = double(an.critical(m_steps.first, m_steps.last).total);
    l.stepNs = mean.valid ? (a ? mean.aMeasuredNs : mean.bMeasuredNs) : 0;
    return l;
}

void TraceDiff::compareRanks()
{
    const std::vector<uint32_t>& ra = m_a.ranks();
    const std::vector<uint32_t>& rb = m_b.ranks();
    auto list = [](const std::vector<uint32_t>& v) {
        std::string s;
        for (uint32_t r : v)
            s += (s.empty() ? "" : ", ") + std::to_string(r);
        return s.empty() ? std::string("none") : s;
    };
    const Lateness la = lateness(m_a, m_mean, true), lb = lateness(m_b, m_mean, false);
    if (ra == rb || ra.size() != rb.size()) {
        std::vector<uint32_t> all;
        std::set_union(ra.begin(), ra.end(), rb.begin(), rb.end(), std::back_inserter(all));
        for (uint32_t r : all) {
            RankDelta d;
            if (std::binary_search(ra.begin(), ra.end(), r))
                d.a = rankSide(m_a, r, la);
            if (std::binary_search(rb.begin(), rb.end(), r))
                d.b = rankSide(m_b, r, lb);
            m_ranks.push_back(d);
        }
        if (ra.size() != rb.size())
            m_problems.push_back(Status::error("rank counts differ: A has " + std::to_string(ra.size()) + " ranks ("
                + list(ra) + "), B has " + std::to_string(rb.size()) + " (" + list(rb)
                + "); only the ranks both have are compared"));
        return;
    }
    for (size_t i = 0; i < ra.size(); ++i)
        m_ranks.push_back({ rankSide(m_a, ra[i], la), rankSide(m_b, rb[i], lb) });
    m_notes.push_back("ranks paired by position: A has ranks " + list(ra) + ", B has " + list(rb));
}

void TraceDiff::compareHost()
{
    if (!m_steps.common)
        return;
    const auto sel = select(Kind::Steps, GapAnalyzer::kCriticalRank, m_steps.first, m_steps.last);
    auto hostOf = [&](const GapAnalyzer& an, const Side& side, const char* which) -> std::unique_ptr<HostAttribution> {
        if (!side.host)
            return std::make_unique<HostAttribution>(an, sel, false);
        auto h = side.host(m_steps.first, m_steps.last);
        if (h)
            return std::move(h).value();
        m_problems.push_back(Status::error(std::string("host attribution of ") + which + ": " + h.error()));
        return nullptr;
    };
    m_hostA = hostOf(m_a, m_sideA, "A");
    m_hostB = hostOf(m_b, m_sideB, "B");
    if (!m_hostA || !m_hostB) {
        m_hostA.reset();
        m_hostB.reset();
        return;
    }
    for (const RankDelta& d : m_ranks) {
        HostRankDelta h;
        const HostAttribution::Rank* ha = d.a.present ? m_hostA->rank(d.a.rank) : nullptr;
        const HostAttribution::Rank* hb = d.b.present ? m_hostB->rank(d.b.rank) : nullptr;
        h.inA = ha != nullptr;
        h.inB = hb != nullptr;
        h.aRank = d.a.rank;
        h.bRank = d.b.rank;
        std::map<std::pair<std::string, std::string>, HostRowDelta> rows;
        auto add = [&rows](const Trace& t, const HostAttribution::Rank* r, bool a) {
            if (!r)
                return;
            for (const HostAttribution::Row& row : r->rows) {
                HostRowDelta& e = rows[{ std::string(t.str(row.name)), row.kind }];
                (a ? e.aNs : e.bNs) += row.ns;
                (a ? e.aCount : e.bCount) += row.count;
            }
        };
        add(m_a.trace(), ha, true);
        add(m_b.trace(), hb, false);
        if (ha) {
            h.aGapNs = ha->gapNs;
            h.aExplainedNs = ha->explainedNs;
        }
        if (hb) {
            h.bGapNs = hb->gapNs;
            h.bExplainedNs = hb->explainedNs;
        }
        m_host.available = m_host.available || h.aExplainedNs > 0 || h.bExplainedNs > 0;
        for (auto& [key, row] : rows) {
            row.name = key.first;
            row.kind = key.second;
            h.rows.push_back(std::move(row));
        }
        std::stable_sort(h.rows.begin(), h.rows.end(), [](const HostRowDelta& x, const HostRowDelta& y) {
            return std::llabs(x.deltaNs()) > std::llabs(y.deltaNs());
        });
        m_host.ranks.push_back(std::move(h));
    }
}

} // namespace gapscope::model
