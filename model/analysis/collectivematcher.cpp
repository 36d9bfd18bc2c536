// SPDX-License-Identifier: MIT
#include "model/analysis/collectivematcher.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>

namespace gapscope::model {

CollectiveMatcher::CollectiveMatcher(size_t rankSlots)
    : m_ranks(rankSlots)
{
}

void CollectiveMatcher::add(uint32_t rankSlot, uint32_t stepIndex, std::vector<Occurrence> occurrences)
{
    m_ranks[rankSlot].push_back(StepEntry { stepIndex, std::move(occurrences) });
}

CollectiveMatcher::StepEntry* CollectiveMatcher::find(uint32_t rankSlot, uint32_t stepIndex)
{
    auto& v = m_ranks[rankSlot];
    auto it
        = std::lower_bound(v.begin(), v.end(), stepIndex, [](const StepEntry& e, uint32_t s) { return e.step < s; });
    return it != v.end() && it->step == stepIndex ? &*it : nullptr;
}

const CollectiveMatcher::StepEntry* CollectiveMatcher::find(uint32_t rankSlot, uint32_t stepIndex) const
{
    return const_cast<CollectiveMatcher*>(this)->find(rankSlot, stepIndex);
}

void CollectiveMatcher::match()
{
    std::map<uint32_t, std::vector<std::pair<uint32_t, StepEntry*>>> byStep;
    bool keyed = false;
    for (uint32_t r = 0; r < m_ranks.size(); ++r) {
        auto& v = m_ranks[r];
        std::stable_sort(v.begin(), v.end(), [](const StepEntry& a, const StepEntry& b) { return a.step < b.step; });
        for (auto& e : v) {
            byStep[e.step].emplace_back(r, &e);
            for (const auto& o : e.occ)
                keyed = keyed || o.keyed;
        }
    }
    m_late.clear();
    if (keyed) {
        matchKeyed();
        return;
    }
    for (auto& [step, ranks] : byStep)
        if (step != kNoStep)
            matchStep(step, ranks);
}

CollectiveMatcher::StepLate& CollectiveMatcher::lateOf(uint32_t stepIndex)
{
    auto it = std::lower_bound(
        m_late.begin(), m_late.end(), stepIndex, [](const StepLate& e, uint32_t s) { return e.step < s; });
    if (it == m_late.end() || it->step != stepIndex)
        it = m_late.insert(it, StepLate { stepIndex, {} });
    return *it;
}

// Groups the keyed occurrences of all ranks by (comm, seq): each rank's references sorted by key
// (usually they already are: one communicator numbers its collectives in time order), then merged
// across ranks, so equal keys come together.
void CollectiveMatcher::matchKeyed()
{
    std::vector<std::vector<Ref>> perRank(m_ranks.size());
    for (uint32_t r = 0; r < m_ranks.size(); ++r) {
        auto& refs = perRank[r];
        size_t n = 0;
        for (const auto& e : m_ranks[r])
            n += e.occ.size();
        refs.reserve(n);
        for (auto& e : m_ranks[r])
            for (size_t k = 0; k < e.occ.size(); ++k)
                if (e.occ[k].keyed)
                    refs.push_back(Ref { e.occ[k].comm, e.occ[k].seq, r, e.step, &e, k });
        auto byKey = [](const Ref& a, const Ref& b) { return a.comm != b.comm ? a.comm < b.comm : a.seq < b.seq; };
        if (!std::is_sorted(refs.begin(), refs.end(), byKey))
            std::stable_sort(refs.begin(), refs.end(), byKey);
    }
    std::vector<size_t> pos(perRank.size(), 0);
    std::vector<Ref> group;
    std::vector<TimeNs> durations;
    for (;;) {
        const Ref* least = nullptr;
        for (size_t r = 0; r < perRank.size(); ++r)
            if (pos[r] < perRank[r].size()) {
                const Ref& c = perRank[r][pos[r]];
                if (!least || c.comm < least->comm || (c.comm == least->comm && c.seq < least->seq))
                    least = &c;
            }
        if (!least)
            break;
        const uint64_t comm = least->comm, seq = least->seq;
        group.clear();
        for (size_t r = 0; r < perRank.size(); ++r)
            while (pos[r] < perRank[r].size() && perRank[r][pos[r]].comm == comm && perRank[r][pos[r]].seq == seq)
                group.push_back(perRank[r][pos[r]++]);
        matchGroup(group, durations);
    }
}

void CollectiveMatcher::matchGroup(const std::vector<Ref>& group, std::vector<TimeNs>& durations)
{
    if (group.size() < 2) {
        for (const Ref& g : group)
            ++g.entry->unmatched;
        return;
    }
    TimeNs latest = std::numeric_limits<TimeNs>::min();
    size_t last = 0;
    uint32_t step = kNoStep;
    __int128 startSum = 0;
    durations.clear();
    for (size_t i = 0; i < group.size(); ++i) {
        const Occurrence& o = group[i].entry->occ[group[i].k];
        startSum += o.start;
        durations.push_back(o.duration);
        step = std::min(step, group[i].step);
        if (o.start > latest) {
            latest = o.start;
            last = i;
        }
    }
    for (const Ref& g : group) {
        Occurrence& o = g.entry->occ[g.k];
        o.wait = std::min(o.duration, std::max<TimeNs>(0, latest - o.start));
        ++g.entry->matched;
    }
    std::nth_element(durations.begin(), durations.begin() + long(durations.size() / 2), durations.end());
    const TimeNs median = durations[durations.size() / 2];
    const size_t n = group.size();
    const double lateness = double(__int128(latest) * __int128(n - 1) - (startSum - latest)) / double(n - 1);
    const double threshold = std::max<double>(double(kMinLatenessNs), kLatenessFraction * double(median));
    if (lateness > threshold && step != kNoStep)
        lateOf(step).late.push_back(
            Late { group[last].slot, TimeNs(std::llround(lateness)), group[last].entry->occ[group[last].k].name });
}

void CollectiveMatcher::matchStep(uint32_t stepIndex, std::vector<std::pair<uint32_t, StepEntry*>>& ranks)
{
    size_t minCount = std::numeric_limits<size_t>::max(), maxCount = 0;
    for (auto& [r, e] : ranks) {
        minCount = std::min(minCount, e->occ.size());
        maxCount = std::max(maxCount, e->occ.size());
    }
    for (auto& [r, e] : ranks)
        e->unmatched = e->occ.size() - minCount;
    StepLate late { stepIndex, {} };
    std::vector<TimeNs> durations;
    for (size_t k = 0; k < maxCount; ++k) {
        TimeNs latest = std::numeric_limits<TimeNs>::min();
        size_t participants = 0, lastSlot = 0;
        __int128 startSum = 0;
        durations.clear();
        for (size_t i = 0; i < ranks.size(); ++i) {
            const auto& occ = ranks[i].second->occ;
            if (k >= occ.size())
                continue;
            ++participants;
            startSum += occ[k].start;
            durations.push_back(occ[k].duration);
            if (occ[k].start > latest) {
                latest = occ[k].start;
                lastSlot = i;
            }
        }
        if (participants < 2)
            continue;
        for (auto& [r, e] : ranks) {
            if (k >= e->occ.size())
                continue;
            Occurrence& o = e->occ[k];
            o.wait = std::min(o.duration, std::max<TimeNs>(0, latest - o.start));
            ++e->matched;
        }
        std::nth_element(durations.begin(), durations.begin() + durations.size() / 2, durations.end());
        TimeNs median = durations[durations.size() / 2];
        // lateness = latest - mean(others) = (latest * (n - 1) - (sum - latest)) / (n - 1)
        __int128 others = startSum - latest;
        double lateness = double(__int128(latest) * __int128(participants - 1) - others) / double(participants - 1);
        double threshold = std::max<double>(double(kMinLatenessNs), kLatenessFraction * double(median));
        if (lateness > threshold) {
            auto& [slot, entry] = ranks[lastSlot];
            late.late.push_back(Late { slot, TimeNs(std::llround(lateness)), entry->occ[k].name });
        }
    }
    m_late.push_back(std::move(late));
}

const std::vector<CollectiveMatcher::Occurrence>& CollectiveMatcher::occurrences(
    uint32_t rankSlot, uint32_t stepIndex) const
{
    static const std::vector<Occurrence> kEmpty;
    const StepEntry* e = find(rankSlot, stepIndex);
    return e ? e->occ : kEmpty;
}

const std::vector<CollectiveMatcher::Late>& CollectiveMatcher::late(uint32_t stepIndex) const
{
    static const std::vector<Late> kEmpty;
    auto it = std::lower_bound(
        m_late.begin(), m_late.end(), stepIndex, [](const StepLate& e, uint32_t s) { return e.step < s; });
    return it != m_late.end() && it->step == stepIndex ? it->late : kEmpty;
}

std::vector<CollectiveMatcher::RankStats> CollectiveMatcher::stats(
    uint32_t firstStep, uint32_t lastStep, const std::vector<uint32_t>& skip) const
{
    auto skipped = [&](uint32_t step) { return std::binary_search(skip.begin(), skip.end(), step); };
    std::vector<RankStats> out(m_ranks.size());
    std::vector<std::vector<TimeNs>> lateness(m_ranks.size());
    for (size_t r = 0; r < m_ranks.size(); ++r)
        for (const auto& e : m_ranks[r])
            if (e.step >= firstStep && e.step <= lastStep && e.step != kNoStep && !skipped(e.step)) {
                out[r].matched += e.matched;
                out[r].unmatched += e.unmatched;
            }
    for (const auto& s : m_late) {
        if (s.step < firstStep || s.step > lastStep || skipped(s.step))
            continue;
        for (const auto& l : s.late) {
            RankStats& st = out[l.rankSlot];
            ++st.lateCount;
            st.lateSum += l.lateness;
            st.lateMax = std::max(st.lateMax, l.lateness);
            if (st.lateSteps.empty() || st.lateSteps.back() != s.step)
                st.lateSteps.push_back(s.step); // m_late is sorted by step
            lateness[l.rankSlot].push_back(l.lateness);
        }
    }
    for (size_t r = 0; r < out.size(); ++r) {
        auto& v = lateness[r];
        if (v.empty())
            continue;
        std::nth_element(v.begin(), v.begin() + long((v.size() - 1) / 2), v.end());
        out[r].lateMedian = v[(v.size() - 1) / 2];
    }
    return out;
}

void CollectiveMatcher::absorb(CollectiveMatcher&& other, uint32_t firstStep, uint32_t lastStep)
{
    if (other.m_ranks.size() != m_ranks.size())
        return;
    auto byStep = [](const auto& a, const auto& b) { return a.step < b.step; };
    auto wanted = [&](uint32_t step) { return step >= firstStep && step <= lastStep && step != kNoStep; };
    for (size_t r = 0; r < m_ranks.size(); ++r) {
        auto& into = m_ranks[r];
        const size_t mid = into.size();
        for (StepEntry& e : other.m_ranks[r])
            if (wanted(e.step)) {
                std::vector<Occurrence>().swap(e.occ);
                into.push_back(std::move(e));
            }
        std::inplace_merge(into.begin(), into.begin() + std::ptrdiff_t(mid), into.end(), byStep);
    }
    const size_t mid = m_late.size();
    for (StepLate& l : other.m_late)
        if (wanted(l.step))
            m_late.push_back(std::move(l));
    std::inplace_merge(m_late.begin(), m_late.begin() + std::ptrdiff_t(mid), m_late.end(), byStep);
    other.m_ranks.assign(other.m_ranks.size(), {});
    other.m_late.clear();
}

} // namespace gapscope::model
