// SPDX-License-Identifier: MIT
// GapAnalyzer queries: selections (step, median, steps, time range; one rank or the critical rank),
// bar members for the viewer, stragglers, the critical rank, the largest gaps.
#include "model/analysis/gapanalyzer.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <memory>
#include <set>

namespace gapscope::model {

namespace {
bool inRange(uint32_t i, uint32_t first, uint32_t last)
{
    return i >= first && i <= last;
}
} // namespace

const GapAnalyzer::RankData* GapAnalyzer::rankData(uint32_t rank) const
{
    auto it = std::lower_bound(m_ranks.begin(), m_ranks.end(), rank);
    return it != m_ranks.end() && *it == rank ? &m_rankData[size_t(it - m_ranks.begin())] : nullptr;
}

const std::vector<GapAnalyzer::StepRecord>& GapAnalyzer::steps(uint32_t rank) const
{
    static const std::vector<StepRecord> kNone;
    const RankData* r = rankData(rank);
    return r ? r->records : kNone;
}

const GapAnalyzer::StepRecord* GapAnalyzer::step(uint32_t rank, uint32_t stepIndex) const
{
    for (const auto& rec : steps(rank))
        if (rec.index == stepIndex)
            return &rec;
    return nullptr;
}

bool GapAnalyzer::hasApiLanes(uint32_t rank) const
{
    const RankData* r = rankData(rank);
    return r && r->apiLanes;
}

int GapAnalyzer::nameClass(StringId name) const
{
    return classOf(name);
}

void GapAnalyzer::forEachCollective(const std::function<void(const CollectiveRecord&)>& fn) const
{
    for (const RankData& r : m_rankData) {
        auto emit = [&](uint32_t step) {
            for (const CollectiveMatcher::Occurrence& o : m_matcher.occurrences(r.slot, step)) {
                const size_t li = size_t(o.tag >> 32); // the sweep's key: (GPU lane of the rank, event)
                if (li >= r.gpuLanes.size())
                    continue;
                CollectiveRecord c;
                c.rank = r.rank;
                c.step = step;
                c.event = EventRef { r.gpuLanes[li], uint32_t(o.tag) };
                c.name = o.name;
                c.start = o.start;
                c.duration = o.duration;
                c.wait = o.wait;
                c.keyed = o.keyed;
                c.comm = o.comm;
                c.seq = o.seq;
                fn(c);
            }
        };
        for (const Window& w : r.windows)
            emit(w.index);
        emit(CollectiveMatcher::kNoStep);
    }
}

std::string GapAnalyzer::collectiveOp(StringId name) const
{
    std::string n(m_trace.str(name));
    std::string lower;
    for (char c : n)
        if (c != '_')
            lower += char(std::tolower(static_cast<unsigned char>(c)));
    static const std::pair<const char*, const char*> kOps[] = { { "allreduce", "AllReduce" },
        { "crossdevicereduce", "AllReduce" }, { "allgather", "AllGather" }, { "reducescatter", "ReduceScatter" },
        { "alltoall", "AllToAll" }, { "sendrecv", "SendRecv" }, { "broadcast", "Broadcast" } };
    for (const auto& [key, op] : kOps)
        if (lower.find(key) != std::string::npos)
            return op;
    return "collective";
}

int GapAnalyzer::criticalRank(uint32_t stepIndex) const
{
    auto it = std::lower_bound(
        m_critical.begin(), m_critical.end(), std::make_pair(stepIndex, std::numeric_limits<int>::min()));
    return it != m_critical.end() && it->first == stepIndex ? it->second : -1;
}

GapAnalyzer::Critical GapAnalyzer::critical(uint32_t firstStep, uint32_t lastStep) const
{
    std::map<int, uint32_t> count;
    Critical c;
    for (const auto& [step, rank] : m_critical)
        if (inRange(step, firstStep, lastStep) && !isIncomplete(step)) {
            ++count[rank];
            ++c.total;
        }
    for (const auto& [rank, n] : count)
        if (n > c.steps) { // map order: ties go to the lowest rank
            c.rank = rank;
            c.steps = n;
        }
    return c;
}

std::vector<std::pair<const GapAnalyzer::RankData*, size_t>> GapAnalyzer::selectSteps(const Selection& sel) const
{
    std::vector<std::pair<const RankData*, size_t>> out;
    uint32_t first = sel.firstStep, last = sel.kind == Selection::Kind::Step ? sel.firstStep : sel.lastStep;
    auto take = [&](const RankData& r, size_t w) {
        const Window& win = r.windows[w];
        if (sel.kind != Selection::Kind::Step && isIncomplete(win.index))
            return; // partly outside some rank's capture: shown on its own, never summed
        bool wanted
            = sel.kind == Selection::Kind::Range ? win.w1 > sel.t0 && win.w0 < sel.t1 : inRange(win.index, first, last);
        if (wanted)
            out.emplace_back(&r, w);
    };
    if (sel.rank != kCriticalRank) {
        if (const RankData* r = rankData(uint32_t(sel.rank)))
            for (size_t w = 0; w < r->windows.size(); ++w)
                take(*r, w);
    } else {
        for (const auto& [step, rank] : m_critical) {
            const RankData* r = rankData(uint32_t(rank));
            for (size_t w = 0; r && w < r->windows.size(); ++w)
                if (r->windows[w].index == step)
                    take(*r, w);
        }
    }
    if (sel.kind == Selection::Kind::Median && !out.empty()) {
        std::vector<std::pair<const RankData*, size_t>> sorted = out;
        std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
            return a.first->records[a.second].measured() < b.first->records[b.second].measured();
        });
        out.assign(1, sorted[(sorted.size() - 1) / 2]); // the lower median: a real step, so bars add up
    }
    return out;
}

GapAnalyzer::Breakdown GapAnalyzer::analyze(const Selection& sel) const
{
    Breakdown b;
    b.rank = sel.rank;
    b.slotNs.assign(m_layout.slotCount(), 0);
    auto picked = selectSteps(sel);
    std::unique_ptr<Scratch> scratch;
    for (const auto& [r, w] : picked) {
        const StepRecord& rec = r->records[w];
        b.steps.emplace_back(r->rank, rec.index);
        if (sel.kind != Selection::Kind::Range) {
            for (size_t i = 0; i < b.slotNs.size(); ++i)
                b.slotNs[i] += rec.slotNs[i];
            b.measuredNs += rec.measured();
            b.budgetSteps += 1;
            continue;
        }
        if (!scratch)
            scratch = std::make_unique<Scratch>();
        sweepWindow(
            *r, w, SweepMode { sel.t0, sel.t1, WindowSweep::Input::Gaps::None, true, nullptr, nullptr }, *scratch);
        const auto& res = scratch->result;
        for (size_t i = 0; i < res.busyNs.size(); ++i)
            b.slotNs[i] += res.busyNs[i];
        for (size_t k = 0; k < kIdleKinds; ++k)
            b.slotNs[m_layout.busySlots() + k] += res.idleNs[k];
        TimeNs covered = std::min(rec.end, sel.t1) - std::max(rec.start, sel.t0);
        b.measuredNs += covered;
        b.budgetSteps += rec.measured() > 0 ? double(covered) / double(rec.measured()) : 0;
    }
    b.valid = !picked.empty();
    b.bars = buildWaterfall(m_layout, m_budget, b.slotNs, b.budgetSteps);
    if (sel.members) {
        b.members.assign(b.bars.size(), {});
        for (const auto& [r, w] : picked)
            addMembers(*r, w, sel, b);
    }
    return b;
}

void GapAnalyzer::addMembers(const RankData& r, size_t w, const Selection& sel, Breakdown& out) const
{
    Scratch s;
    s.forcePieces = true;
    TimeNs clip0 = sel.kind == Selection::Kind::Range ? sel.t0 : r.windows[w].w0;
    TimeNs clip1 = sel.kind == Selection::Kind::Range ? sel.t1 : r.windows[w].w1;
    sweepWindow(r, w, SweepMode { clip0, clip1, WindowSweep::Input::Gaps::All, true, nullptr, nullptr }, s);
    clip0 = std::max(clip0, r.windows[w].w0);
    clip1 = std::min(clip1, r.windows[w].w1);
    std::vector<std::vector<EventRef>> bySlot(m_layout.slotCount());
    for (const auto& p : s.pieces) {
        bool inside = p.end > clip0 && p.start < clip1;
        auto& v = bySlot[p.slot];
        const EventRef& ref = s.refs[p.tag];
        if (inside && (v.empty() || v.back().lane != ref.lane || v.back().index != ref.index))
            v.push_back(ref);
    }
    for (size_t i = 0; i < out.bars.size(); ++i) {
        int slot = out.bars[i].slot;
        if (slot < 0)
            continue;
        if (size_t(slot) < m_layout.busySlots()) {
            auto& dst = out.members[i].events;
            dst.insert(dst.end(), bySlot[size_t(slot)].begin(), bySlot[size_t(slot)].end());
        } else {
            IdleKind kind = IdleKind(size_t(slot) - m_layout.busySlots());
            for (const auto& g : s.result.gaps)
                if (g.kind == kind)
                    out.members[i].idle.push_back(TimeInterval { g.start, g.end });
        }
    }
}

std::vector<GapAnalyzer::StepGaps> GapAnalyzer::stepGaps(const Selection& sel) const
{
    std::vector<StepGaps> out;
    forEachStepGaps(sel, [&out](const StepGapsView& v) {
        StepGaps sg;
        sg.rank = v.rank;
        sg.step = v.step;
        sg.w0 = v.w0;
        sg.w1 = v.w1;
        sg.first = v.first;
        sg.last = v.last;
        sg.gaps.reserve(v.size());
        for (size_t i = 0; i < v.size(); ++i)
            sg.gaps.push_back(v.gap(i));
        out.push_back(std::move(sg));
    });
    return out;
}

EventRef GapAnalyzer::StepGapsView::next(size_t i) const
{
    const uint32_t tag = m_gaps[i].next;
    if (tag == WindowSweep::kNoTag)
        return {};
    return m_lane != kNoLane ? EventRef { m_lane, tag } : (*m_refs)[tag];
}

GapAnalyzer::IdleGap GapAnalyzer::StepGapsView::gap(size_t i) const
{
    return m_analyzer->idleGap(rank, step, m_gaps[i], next(i));
}

void GapAnalyzer::forEachStepGaps(const Selection& sel, const std::function<void(const StepGapsView&)>& fn) const
{
    Scratch s;
    s.trackEnds = true; // the window's first and last events
    StepGapsView v;
    v.m_analyzer = this;
    for (const auto& [r, w] : selectSteps(sel)) {
        const Window& win = r->windows[w];
        const bool range = sel.kind == Selection::Kind::Range;
        v.rank = r->rank;
        v.step = win.index;
        v.w0 = win.w0;
        v.w1 = win.w1;
        if (!range && !r->kept.empty() && r->kept[w].from != RankData::kNotKept) { // keepStepGaps
            const RankData::Kept& k = r->kept[w];
            v.first = k.first;
            v.last = k.last;
            v.m_gaps = r->keptGaps.data() + k.from;
            v.m_count = k.to - k.from;
            v.m_lane = k.lane;
            v.m_refs = nullptr;
            fn(v);
            continue;
        }
        sweepWindow(*r, w,
            SweepMode { range ? sel.t0 : win.w0, range ? sel.t1 : win.w1, WindowSweep::Input::Gaps::All, true, nullptr,
                nullptr },
            s);
        v.first = s.first;
        v.last = s.last;
        v.m_gaps = s.result.gaps.data();
        v.m_count = s.result.gaps.size();
        v.m_lane = s.singleLane;
        v.m_refs = &s.refs;
        fn(v);
    }
}

std::vector<GapAnalyzer::NameTime> GapAnalyzer::unclassifiedKernels() const
{
    std::map<StringId, NameTime> byName;
    for (const auto& r : m_rankData)
        for (const auto& n : r.unclassified) {
            NameTime& t = byName[n.name];
            t.name = n.name;
            t.ns += n.ns;
            t.count += n.count;
        }
    std::vector<NameTime> out;
    out.reserve(byName.size());
    for (const auto& [name, t] : byName)
        out.push_back(t);
    std::stable_sort(out.begin(), out.end(), [](const NameTime& a, const NameTime& b) { return a.ns > b.ns; });
    return out;
}

std::vector<GapAnalyzer::Straggler> GapAnalyzer::stragglers(uint32_t firstStep, uint32_t lastStep) const
{
    auto stats = m_matcher.stats(firstStep, lastStep, m_incompleteIndex);
    std::vector<Straggler> out(m_ranks.size());
    std::vector<std::set<std::string>> ops(m_ranks.size());
    std::set<uint32_t> stepIndices;
    for (const auto& r : m_rankData)
        for (const auto& w : r.windows)
            if (inRange(w.index, firstStep, lastStep) && !isIncomplete(w.index))
                stepIndices.insert(w.index);
    for (uint32_t step : stepIndices)
        for (const auto& l : m_matcher.late(step))
            if (ops[l.rankSlot].size() < 2)
                ops[l.rankSlot].insert(collectiveOp(l.name));
    for (size_t i = 0; i < out.size(); ++i) {
        const auto& st = stats[i];
        out[i] = Straggler { m_ranks[i], st.matched, st.unmatched, st.lateCount, st.lateSum, st.lateMax,
            ops[i].size() == 1 ? *ops[i].begin() : std::string("collective"), st.lateMedian, st.lateSteps };
    }
    return out;
}

std::vector<GapAnalyzer::IdleGap> GapAnalyzer::largestGaps(
    int rank, uint32_t firstStep, uint32_t lastStep, size_t n, bool stepGaps) const
{
    std::vector<IdleGap> all;
    for (const auto& r : m_rankData) {
        if (rank != kCriticalRank && r.rank != uint32_t(rank))
            continue;
        for (size_t w = 0; w < r.windows.size(); ++w) {
            if (!inRange(r.windows[w].index, firstStep, lastStep) || isIncomplete(r.windows[w].index))
                continue;
            for (size_t g = 0; g < kTopGaps; ++g) {
                const IdleGap& gap = r.gaps[w * kTopGaps + g];
                if (gap.duration() > 0 && (stepGaps || gap.kind != IdleKind::StepGap))
                    all.push_back(gap);
            }
        }
    }
    auto longer = [](const IdleGap& a, const IdleGap& b) {
        return a.duration() != b.duration() ? a.duration() > b.duration()
                                            : (a.start != b.start ? a.start < b.start : a.rank < b.rank);
    };
    size_t keep = std::min(n, all.size());
    std::partial_sort(all.begin(), all.begin() + std::ptrdiff_t(keep), all.end(), longer);
    all.resize(keep);
    return all;
}

} // namespace gapscope::model
