// SPDX-License-Identifier: MIT
#include "model/stepdetector.h"

#include "model/collectivekeys.h"
#include "model/kernelclassifier.h"
#include "model/patternmatcher.h"

#include <algorithm>
#include <climits>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

namespace gapscope::model {
namespace {

constexpr const char* kDefaultNvtxPattern = "decode|step|forward";
// The period rule refuses periods shorter than this many kernels, or covering less than this part of
// the busiest stream's kernels: such "steps" are a repeated op, not a decode step.
constexpr size_t kMinStepKernels = 8;
constexpr double kMinPeriodCoverage = 0.5;

// Name ids matching a pattern (PatternMatcher: linear time on any pattern), memoised (names repeat).
// An invalid pattern matches nothing.
class NameMatcher {
public:
    NameMatcher(const Trace& trace, const std::string& pattern)
        : m_trace(trace)
    {
        if (auto m = PatternMatcher::compile(pattern))
            m_matcher = std::move(*m);
    }
    bool valid() const { return m_matcher.has_value(); }
    bool operator()(StringId id)
    {
        auto it = m_cache.find(id);
        if (it != m_cache.end())
            return it->second;
        const bool m = m_matcher && m_matcher->search(m_trace.str(id));
        m_cache.emplace(id, m);
        return m;
    }

private:
    const Trace& m_trace;
    std::optional<PatternMatcher> m_matcher;
    std::unordered_map<StringId, bool> m_cache;
};

struct CorrRange {
    uint32_t lo, hi;
};

// GPU windows of the events whose correlation ids fall in each range (ranges ascending).
std::vector<Step> windowsFromCorr(
    const Trace& trace, uint32_t rank, const std::vector<CorrRange>& ranges, StepSource source)
{
    std::vector<Step> w(ranges.size(), Step { 0, INT64_MAX, INT64_MIN, source });
    for (LaneId id : trace.lanesOf(rank, LaneKind::GpuStream)) {
        const LaneEvents& ev = trace.lane(id).events;
        size_t k = 0;
        for (size_t i = 0; i < ev.size(); ++i) {
            const uint32_t c = ev.correlation(i);
            if (c == 0)
                continue;
            if (k >= ranges.size() || c < ranges[k].lo || c > ranges[k].hi) {
                auto it = std::upper_bound(
                    ranges.begin(), ranges.end(), c, [](uint32_t v, const CorrRange& r) { return v < r.lo; });
                if (it == ranges.begin())
                    continue;
                k = size_t(it - ranges.begin()) - 1;
                if (c > ranges[k].hi)
                    continue;
            }
            w[k].start = std::min(w[k].start, ev.start(i));
            w[k].end = std::max(w[k].end, ev.end(i));
        }
    }
    std::vector<Step> out;
    for (const Step& s : w)
        if (s.start <= s.end)
            out.push_back(s);
    return out;
}

// GPU windows between boundary times: step i holds the events starting in [b_i, b_i+1).
std::vector<Step> windowsFromStarts(
    const Trace& trace, uint32_t rank, const std::vector<TimeNs>& b, StepSource source)
{
    std::vector<Step> w(b.size(), Step { 0, INT64_MAX, INT64_MIN, source });
    for (LaneId id : trace.lanesOf(rank, LaneKind::GpuStream)) {
        const LaneEvents& ev = trace.lane(id).events;
        size_t k = 0;
        for (size_t i = ev.lowerBound(b.empty() ? 0 : b.front()); i < ev.size(); ++i) {
            while (k + 1 < b.size() && ev.start(i) >= b[k + 1])
                ++k;
            w[k].start = std::min(w[k].start, ev.start(i));
            w[k].end = std::max(w[k].end, ev.end(i));
        }
    }
    std::vector<Step> out;
    for (const Step& s : w)
        if (s.start <= s.end)
            out.push_back(s);
    return out;
}

// Correlation-id span of the CUDA API calls on `lanes` inside [t0, t1).
bool apiSpan(const Trace& trace, const std::vector<LaneId>& lanes, TimeNs t0, TimeNs t1, CorrRange& r)
{
    r = { UINT32_MAX, 0 };
    for (LaneId id : lanes) {
        const LaneEvents& ev = trace.lane(id).events;
        for (size_t i = ev.lowerBound(t0); i < ev.size() && ev.start(i) < t1; ++i) {
            if (trace.kindOf(id, i) != EventKind::Api || ev.correlation(i) == 0)
                continue;
            r.lo = std::min(r.lo, ev.correlation(i));
            r.hi = std::max(r.hi, ev.correlation(i));
        }
    }
    return r.lo <= r.hi;
}

LaneId busiestStream(const Trace& trace, uint32_t rank)
{
    LaneId best = kNoLane;
    for (LaneId id : trace.lanesOf(rank, LaneKind::GpuStream))
        if (best == kNoLane || trace.lane(id).events.size() > trace.lane(best).events.size())
            best = id;
    return best;
}

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

void number(std::vector<Step>& steps)
{
    for (uint32_t i = 0; i < steps.size(); ++i)
        steps[i].index = i;
}

} // namespace

bool StepRule::parse(const std::string& text, StepRule& out)
{
    auto colon = text.find(':');
    std::string kind = text.substr(0, colon);
    out.pattern = colon == std::string::npos ? std::string() : text.substr(colon + 1);
    if (kind == "auto")
        out.kind = Kind::Auto;
    else if (kind == "nvtx")
        out.kind = Kind::Nvtx;
    else if (kind == "graph")
        out.kind = Kind::Graph;
    else if (kind == "anchor" && !out.pattern.empty())
        out.kind = Kind::Anchor;
    else if (kind == "period")
        out.kind = Kind::Period;
    else
        return false;
    return true;
}

StepDetector::StepDetector(StepRule rule)
    : m_rule(std::move(rule))
{
}

std::vector<Step> StepDetector::byNvtx(const Trace& trace, uint32_t rank, std::vector<std::string>& notes) const
{
    const std::string pattern = m_rule.pattern.empty() || m_rule.kind != StepRule::Kind::Nvtx
        ? std::string(kDefaultNvtxPattern)
        : m_rule.pattern;
    NameMatcher match(trace, pattern);
    struct Range {
        TimeNs start, end;
    };
    std::vector<Range> found;
    for (LaneId id : trace.lanesOf(rank, LaneKind::Nvtx)) {
        if (trace.lane(id).info.isGpuAnnotationLane())
            continue; // where the GPU ran a range's work: the host range itself says what the step is
        const LaneEvents& ev = trace.lane(id).events;
        TimeNs coveredUntil = INT64_MIN;
        for (size_t i = 0; i < ev.size(); ++i) {
            if (ev.start(i) < coveredUntil || !match(ev.name(i)))
                continue;
            coveredUntil = ev.end(i);
            found.push_back({ ev.start(i), ev.end(i) });
        }
    }
    // Matching ranges of several host threads: one inside another is part of the same step.
    std::sort(found.begin(), found.end(),
        [](const Range& a, const Range& b) { return a.start != b.start ? a.start < b.start : a.end > b.end; });
    std::vector<Range> outer;
    for (const Range& r : found)
        if (outer.empty() || r.end > outer.back().end)
            outer.push_back(r);
    if (outer.size() < 2)
        return {};
    const std::vector<LaneId> api = trace.lanesOf(rank, LaneKind::CpuApi);
    std::vector<CorrRange> ranges;
    for (const Range& r : outer) {
        CorrRange c;
        if (apiSpan(trace, api, r.start, r.end, c))
            ranges.push_back(c);
    }
    if (ranges.empty()) { // launches not recorded: the GPU work that starts inside each range
        std::vector<TimeNs> starts;
        for (const Range& r : outer)
            starts.push_back(r.start);
        return windowsFromStarts(trace, rank, starts, StepSource::Nvtx);
    }
    // The step is the GPU work its range launched, wherever and whenever it ran.
    std::sort(ranges.begin(), ranges.end(), [](const CorrRange& a, const CorrRange& b) { return a.lo < b.lo; });
    std::vector<Step> steps = windowsFromCorr(trace, rank, ranges, StepSource::Nvtx);
    if (steps.size() < outer.size())
        notes.push_back("rank " + std::to_string(rank) + ": " + std::to_string(outer.size() - steps.size()) + " of "
            + std::to_string(outer.size()) + " step ranges launched no GPU work: not steps");
    return steps;
}

std::vector<Step> StepDetector::byGraph(const Trace& trace, uint32_t rank) const
{
    std::vector<CorrRange> ranges;
    NameMatcher isLaunch(trace, "^(cudaGraphLaunch|cuGraphLaunch)");
    for (LaneId id : trace.lanesOf(rank, LaneKind::CpuApi)) {
        const LaneEvents& ev = trace.lane(id).events;
        for (size_t i = 0; i < ev.size(); ++i)
            if (ev.correlation(i) != 0 && trace.kindOf(id, i) == EventKind::Api && isLaunch(ev.name(i)))
                ranges.push_back({ ev.correlation(i), ev.correlation(i) });
    }
    if (ranges.size() < 2)
        return {};
    std::sort(ranges.begin(), ranges.end(), [](const CorrRange& a, const CorrRange& b) { return a.lo < b.lo; });
    ranges.erase(
        std::unique(ranges.begin(), ranges.end(), [](const CorrRange& a, const CorrRange& b) { return a.lo == b.lo; }),
        ranges.end());
    return windowsFromCorr(trace, rank, ranges, StepSource::Graph);
}

std::vector<Step> StepDetector::byAnchor(const Trace& trace, uint32_t rank, const std::string& pattern) const
{
    NameMatcher match(trace, pattern);
    if (!match.valid())
        return {};
    std::vector<TimeNs> starts;
    for (LaneId id : trace.lanesOf(rank, LaneKind::GpuStream)) {
        const LaneEvents& ev = trace.lane(id).events;
        for (size_t i = 0; i < ev.size(); ++i)
            if (trace.kindOf(id, i) == EventKind::Kernel && match(ev.name(i)))
                starts.push_back(ev.start(i));
    }
    std::sort(starts.begin(), starts.end());
    if (starts.size() < 2)
        return {};
    return windowsFromStarts(trace, rank, starts, StepSource::Anchor);
}

std::vector<Step> StepDetector::byPeriod(const Trace& trace, uint32_t rank, std::vector<std::string>& notes) const
{
    const LaneId id = busiestStream(trace, rank);
    if (id == kNoLane || trace.lane(id).events.size() < 8)
        return {};
    const LaneEvents& ev = trace.lane(id).events;
    const size_t n = ev.size();
    // Positions of each name; the period comes from the name that recurs most regularly and least often.
    std::unordered_map<StringId, std::vector<uint32_t>> positions;
    for (size_t i = 0; i < n; ++i)
        positions[ev.name(i)].push_back(uint32_t(i));
    size_t bestPeriod = 0, bestCount = SIZE_MAX;
    const std::vector<uint32_t>* anchor = nullptr;
    for (const auto& [name, pos] : positions) {
        if (pos.size() < 3 || pos.size() > bestCount)
            continue;
        std::unordered_map<uint32_t, uint32_t> diffs;
        for (size_t k = 1; k < pos.size(); ++k)
            ++diffs[pos[k] - pos[k - 1]];
        auto mode = std::max_element(
            diffs.begin(), diffs.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
        if (mode->second * 10 < (pos.size() - 1) * 9) // at least 90% of the gaps agree
            continue;
        if (pos.size() < bestCount || (pos.size() == bestCount && mode->first > bestPeriod)) {
            bestCount = pos.size();
            bestPeriod = mode->first;
            anchor = &pos;
        }
    }
    if (!anchor || bestPeriod < 2)
        return {};
    const std::string rankText = "rank " + std::to_string(rank) + ": ";
    if (bestPeriod < kMinStepKernels) {
        notes.push_back(rankText + "the kernel sequence repeats every " + std::to_string(bestPeriod)
            + " kernels: too few for a decode step (at least " + std::to_string(kMinStepKernels)
            + "), so no steps were made (name a step rule: nvtx:PATTERN, graph or anchor:PATTERN)");
        return {};
    }
    // Phase: the offset from the anchor whose kernel follows the longest median idle gap.
    size_t bestPhase = 0;
    TimeNs bestGap = INT64_MIN;
    std::vector<TimeNs> gaps;
    for (size_t phase = 0; phase < bestPeriod; ++phase) {
        gaps.clear();
        for (uint32_t a : *anchor) {
            size_t i = a + phase;
            if (i >= 1 && i < n)
                gaps.push_back(ev.start(i) - ev.end(i - 1));
        }
        if (gaps.empty())
            continue;
        std::nth_element(gaps.begin(), gaps.begin() + long(gaps.size() / 2), gaps.end());
        if (gaps[gaps.size() / 2] > bestGap) {
            bestGap = gaps[gaps.size() / 2];
            bestPhase = phase;
        }
    }
    // One boundary per anchor occurrence, at the phase offset; and earlier periods before the first
    // anchor (the phase may fall before it, e.g. the first kernel of the step after the sampler).
    std::vector<size_t> idx;
    for (uint32_t a : *anchor)
        if (a + bestPhase < n)
            idx.push_back(a + bestPhase);
    if (idx.empty())
        return {};
    for (size_t first = idx.front(); first >= bestPeriod && ev.name(first - bestPeriod) == ev.name(first);) {
        first -= bestPeriod;
        idx.insert(idx.begin(), first);
    }
    const size_t covered = std::min(n, idx.back() + bestPeriod) - idx.front();
    if (double(covered) < kMinPeriodCoverage * double(n)) {
        notes.push_back(rankText + "the kernel sequence repeats every " + std::to_string(bestPeriod) + " kernels in "
            + std::to_string(100 * covered / n) + "% of the kernels only: too small a part of the work for decode "
            + "steps, so no steps were made (name a step rule: nvtx:PATTERN, graph or anchor:PATTERN)");
        return {};
    }
    std::vector<TimeNs> starts;
    for (size_t i : idx)
        if (starts.empty() || ev.start(i) > starts.back())
            starts.push_back(ev.start(i));
    return windowsFromStarts(trace, rank, starts, StepSource::Auto);
}

std::vector<Step> StepDetector::detectRank(
    const Trace& trace, uint32_t rank, StepSource& source, std::vector<std::string>* notes) const
{
    std::vector<std::string> scratch;
    std::vector<std::string>& why = notes ? *notes : scratch;
    using K = StepRule::Kind;
    std::vector<Step> steps;
    const K kind = m_rule.kind;
    if (kind == K::Nvtx || kind == K::Auto)
        steps = byNvtx(trace, rank, why);
    if (steps.empty() && (kind == K::Graph || kind == K::Auto))
        steps = byGraph(trace, rank);
    if (steps.empty() && (kind == K::Anchor || (kind == K::Auto && !m_rule.pattern.empty())))
        steps = byAnchor(trace, rank, m_rule.pattern);
    if (steps.empty() && (kind == K::Period || kind == K::Auto))
        steps = byPeriod(trace, rank, why);
    source = steps.empty() ? StepSource::Unknown : steps.front().source;
    number(steps);
    return steps;
}

StepSource StepDetector::detect(Trace& trace) const
{
    std::vector<std::pair<uint32_t, std::vector<Step>>> perRank;
    StepSource source = StepSource::Unknown;
    for (uint32_t rank : trace.ranks()) {
        StepSource s;
        std::vector<std::string> notes;
        auto steps = detectRank(trace, rank, s, &notes);
        for (auto& n : notes)
            trace.addWarning("steps: " + n);
        if (steps.empty())
            continue;
        source = s;
        perRank.emplace_back(rank, std::move(steps));
    }
    if (perRank.empty())
        return StepSource::Unknown;
    if (perRank.size() < 2 || !alignByCollectives(trace, perRank))
        alignByTime(perRank);
    for (auto& [rank, steps] : perRank)
        trace.setSteps(rank, std::move(steps));
    return source;
}

// Each rank's first step takes the index of the reference rank's (the one with most steps) step
// that starts nearest in time.
void StepDetector::alignByTime(std::vector<std::pair<uint32_t, std::vector<Step>>>& perRank)
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
bool StepDetector::alignByCollectives(const Trace& trace, std::vector<std::pair<uint32_t, std::vector<Step>>>& perRank)
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
