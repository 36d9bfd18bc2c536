// SPDX-License-Identifier: MIT
#include "model/steps/stepalign.h"

#include "model/trace/collectivekeys.h"
#include "model/trace/kernelclassifier.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

namespace gapscope::model {
namespace {

// The collective kernels of each rank (the built-in classifier's collectives class), by start.
std::vector<std::vector<CollectiveKeys::Item>> collectiveKernels(const Trace& trace, const std::vector<uint32_t>& ranks)
{
    const KernelClassifier& classifier = KernelClassifier::builtinDefault();
    const int coll = classifier.collectivesClass();
    if (coll < 0)
        return {};
    std::unordered_map<StringId, bool> isColl;
    std::vector<std::vector<CollectiveKeys::Item>> items(ranks.size());
    for (size_t r = 0; r < ranks.size(); ++r) {
        for (LaneId id : trace.lanesOf(ranks[r], LaneKind::GpuStream)) {
            const LaneEvents& ev = trace.lane(id).events;
            for (size_t i = 0; i < ev.size(); ++i) {
                auto [it, fresh] = isColl.try_emplace(ev.name(i), false);
                if (fresh)
                    it->second = classifier.classify(trace.str(ev.name(i))) == coll;
                if (it->second && trace.kindOf(id, i) == EventKind::Kernel)
                    items[r].push_back(CollectiveKeys::Item { ev.start(i), ev.end(i), ev.name(i) });
            }
        }
        std::stable_sort(items[r].begin(), items[r].end(),
            [](const CollectiveKeys::Item& a, const CollectiveKeys::Item& b) { return a.start < b.start; });
    }
    return items;
}

} // namespace

void StepAlign::align(const Trace& trace, PerRank& perRank)
{
    if (perRank.size() < 2 || !byCollectives(trace, perRank))
        byTime(perRank);
}

// Each rank's first step takes the index of the reference rank's (the one with most steps) step
// that starts nearest in time.
void StepAlign::byTime(PerRank& perRank)
{
    size_t ref = 0;
    for (size_t i = 1; i < perRank.size(); ++i)
        if (perRank[i].second.size() > perRank[ref].second.size())
            ref = i;
    const std::vector<Step> refSteps = perRank[ref].second;
    for (auto& [rank, steps] : perRank) {
        auto it = std::lower_bound(
            refSteps.begin(), refSteps.end(), steps.front().start, [](const Step& s, TimeNs t) { return s.start < t; });
        size_t k = size_t(it - refSteps.begin());
        if (k > 0
            && (k == refSteps.size() || steps.front().start - refSteps[k - 1].start < it->start - steps.front().start))
            --k;
        for (auto& s : steps)
            s.index += uint32_t(k);
    }
}

// Steps of different ranks are the same step when they hold the same collective operations
// (CollectiveKeys: communicator and sequence). Each step joins the aligned step that holds most of
// its collectives (unless that one already has a step of its rank); aligned steps are numbered by
// their earliest start. False (nothing changed) when no step holds a collective seen on two ranks.
bool StepAlign::byCollectives(const Trace& trace, PerRank& perRank)
{
    std::vector<uint32_t> ranks;
    for (const auto& [rank, steps] : perRank)
        ranks.push_back(rank);
    std::vector<std::vector<CollectiveKeys::Item>> items = collectiveKernels(trace, ranks);
    if (items.empty())
        return false;
    CollectiveKeys::assign(trace, ranks, items);
    struct Aligned {
        TimeNs start;
        std::vector<std::pair<size_t, size_t>> members; // (rank slot, step position)
    };
    std::vector<Aligned> aligned;
    std::map<std::pair<uint64_t, uint64_t>, size_t> owner; // collective key -> aligned step
    std::map<std::pair<uint64_t, uint64_t>, size_t> seen; // key -> ranks holding it
    for (const auto& v : items)
        for (const auto& it : v)
            ++seen[{ it.comm, it.seq }];
    bool shared = false;
    for (size_t r = 0; r < perRank.size(); ++r) {
        const std::vector<Step>& steps = perRank[r].second;
        size_t k = 0;
        for (size_t s = 0; s < steps.size(); ++s) {
            // The step's collectives: those starting in [its start, the next step's start).
            const TimeNs end = s + 1 < steps.size() ? steps[s + 1].start : std::numeric_limits<TimeNs>::max();
            while (k < items[r].size() && items[r][k].start < steps[s].start)
                ++k;
            std::map<size_t, size_t> hits;
            std::vector<std::pair<uint64_t, uint64_t>> keys;
            for (; k < items[r].size() && items[r][k].start < end; ++k) {
                const auto key = std::make_pair(items[r][k].comm, items[r][k].seq);
                keys.push_back(key);
                shared = shared || seen[key] > 1;
                auto o = owner.find(key);
                if (o != owner.end())
                    ++hits[o->second];
            }
            size_t target = aligned.size();
            for (const auto& [a, n] : hits) {
                bool hasRank = false;
                for (const auto& m : aligned[a].members)
                    hasRank = hasRank || m.first == r;
                if (!hasRank && (target == aligned.size() || n > hits[target]))
                    target = a;
            }
            if (target == aligned.size())
                aligned.push_back(Aligned { steps[s].start, {} });
            aligned[target].members.emplace_back(r, s);
            aligned[target].start = std::min(aligned[target].start, steps[s].start);
            for (const auto& key : keys)
                owner.emplace(key, target);
        }
    }
    if (!shared)
        return false;
    std::vector<size_t> order(aligned.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(
        order.begin(), order.end(), [&](size_t a, size_t b) { return aligned[a].start < aligned[b].start; });
    for (size_t i = 0; i < order.size(); ++i)
        for (const auto& [r, s] : aligned[order[i]].members)
            perRank[r].second[s].index = uint32_t(i);
    // Indices must grow along each rank; where they would not (aligned steps that interleave), the
    // order is not trustworthy: keep time alignment.
    for (const auto& [rank, steps] : perRank)
        for (size_t s = 1; s < steps.size(); ++s)
            if (steps[s].index <= steps[s - 1].index) {
                for (auto& [rk, st] : perRank)
                    for (size_t j = 0; j < st.size(); ++j)
                        st[j].index = uint32_t(j);
                return false;
            }
    return true;
}

} // namespace gapscope::model
