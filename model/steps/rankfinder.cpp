// SPDX-License-Identifier: MIT
#include "model/steps/rankfinder.h"

#include "model/base/patternmatcher.h"
#include "model/steps/graphcycles.h"
#include "model/steps/periodrule.h"
#include "model/steps/stepannotation.h"
#include "model/steps/stepkinds.h"

#include <algorithm>
#include <climits>
#include <unordered_map>

namespace gapscope::model {
namespace {

std::string rankText(uint32_t rank) { return "rank " + std::to_string(rank) + ": "; }

// Correlation-id span of the CUDA/HIP API calls on `lanes` inside [t0, t1).
CorrRange apiSpan(const Trace& trace, const std::vector<LaneId>& lanes, TimeNs t0, TimeNs t1)
{
    CorrRange r;
    for (LaneId id : lanes) {
        const LaneEvents& ev = trace.lane(id).events;
        for (size_t i = ev.lowerBound(t0); i < ev.size() && ev.start(i) < t1; ++i) {
            if (trace.kindOf(id, i) != EventKind::Api || ev.correlation(i) == 0)
                continue;
            r.lo = std::min(r.lo, ev.correlation(i));
            r.hi = std::max(r.hi, ev.correlation(i));
        }
    }
    return r;
}

// Outermost host ranges of `rank` that `keep` accepts (a kept range inside another, on any thread,
// is part of it), in start order.
template <typename Keep> std::vector<Range> outerRanges(const Trace& trace, uint32_t rank, Keep keep)
{
    std::vector<Range> found;
    for (LaneId id : trace.lanesOf(rank, LaneKind::Nvtx)) {
        if (trace.lane(id).info.isGpuAnnotationLane())
            continue; // where the GPU ran a range's work: the host range itself says what the step is
        const LaneEvents& ev = trace.lane(id).events;
        TimeNs coveredUntil = INT64_MIN;
        for (size_t i = 0; i < ev.size(); ++i) {
            if (ev.start(i) < coveredUntil)
                continue;
            Range r { ev.start(i), ev.end(i), ev.name(i), {} };
            if (!keep(r))
                continue;
            coveredUntil = r.end;
            found.push_back(r);
        }
    }
    std::sort(found.begin(), found.end(),
        [](const Range& a, const Range& b) { return a.start != b.start ? a.start < b.start : a.end > b.end; });
    std::vector<Range> outer;
    for (const Range& r : found)
        if (outer.empty() || r.start >= outer.back().end)
            outer.push_back(r);
    return outer;
}

Step stepOf(const StepSequence& seq, size_t first, size_t last, StepSource source)
{
    Step s { 0, INT64_MAX, INT64_MIN, source };
    for (size_t i = first; i < last; ++i) {
        s.start = std::min(s.start, seq.units[i].start);
        s.end = std::max(s.end, seq.units[i].end);
    }
    return s;
}

// A decode loop repeats one forward: forwards of the same size (within 10% of the median) and alike in
// their kernels (StepKinds: the cores alike to the most common one) make at least 60% of them. Not so the stages
// of a network, nor a training loop's forward and backward passes, which alternate.
bool forwardsAgree(const StepSequence& seq, const ForwardSplit& f)
{
    std::vector<size_t> sizes;
    std::vector<std::vector<uint64_t>> sets;
    for (size_t k = 0; k < f.starts.size(); ++k) {
        const size_t last = k + 1 < f.starts.size() ? f.starts[k + 1] : f.end;
        sizes.push_back(seq.kernelCount(f.starts[k], last));
        std::vector<uint64_t> syms;
        for (size_t i = f.starts[k]; i < last; ++i)
            syms.push_back(seq.units[i].symbol);
        sets.push_back(StepKinds::core(std::move(syms)));
    }
    const size_t m = medianOf(sizes);
    const size_t close = size_t(std::count_if(sizes.begin(), sizes.end(),
        [m](size_t s) { return s * 10 >= m * 9 && s * 10 <= m * 11; }));
    const std::vector<uint64_t>& loop = sets[StepKinds::modal(sets)];
    const size_t same = size_t(
        std::count_if(sets.begin(), sets.end(), [&](const std::vector<uint64_t>& s) { return StepKinds::alike(s, loop); }));
    return close * 10 >= sizes.size() * 6 && same * 10 >= sizes.size() * 6;
}

} // namespace

const StepSequence& RankFinder::all()
{
    if (!m_all) {
        m_all = StepSequence::of(m_trace, m_rank);
        m_api = m_trace.lanesOf(m_rank, LaneKind::CpuApi);
    }
    return *m_all;
}

// The kernels a range launched (correlation ids of its API calls), or without launch records the
// kernels that started inside it, up to `until`.
StepSequence RankFinder::launchedIn(const Range& r, TimeNs until)
{
    const StepSequence& seq = all();
    const CorrRange c = apiSpan(m_trace, m_api, r.start, r.end);
    const bool byCorr = c.valid() && seq.byCorrelation;
    size_t first = 0, last = 0;
    if (byCorr) {
        auto lo = std::lower_bound(seq.units.begin(), seq.units.end(), c.lo,
            [](const StepSequence::Unit& u, uint32_t v) { return u.correlation < v; });
        auto hi = std::upper_bound(
            lo, seq.units.end(), c.hi, [](uint32_t v, const StepSequence::Unit& u) { return v < u.correlation; });
        first = size_t(lo - seq.units.begin());
        last = size_t(hi - seq.units.begin());
        return seq.slice(first, last);
    }
    StepSequence out;
    for (size_t i = 0; i < seq.size(); ++i)
        if (seq.units[i].start >= r.start && seq.units[i].start < until) {
            out.units.push_back(seq.units[i]);
            out.gpuIdleBefore.push_back(out.units.size() == 1 ? 0 : seq.gpuIdleBefore[i]);
        }
    out.graphKernelNames = seq.graphKernelNames;
    for (const auto& u : out.units)
        out.graphLaunches += u.graph() ? 1 : 0;
    return out;
}

// True when every event of a GPU lane has a correlation id and they grow along the lane (a stream runs
// what was launched onto it in launch order; graph replays share their launch's id).
static bool launchOrdered(const LaneEvents& ev)
{
    for (size_t i = 0; i < ev.size(); ++i)
        if (ev.correlation(i) == 0 || (i > 0 && ev.correlation(i) < ev.correlation(i - 1)))
            return false;
    return true;
}

std::vector<std::pair<Range, Step>> RankFinder::rangeSteps(const std::vector<Range>& ranges, StepSource source)
{
    // The window of a range: every GPU event (kernels, copies, memsets) its API calls launched, in one
    // pass over the rank's GPU lanes; without launch records, the events that started inside it.
    const std::vector<LaneId> api = m_trace.lanesOf(m_rank, LaneKind::CpuApi);
    std::vector<CorrRange> spans;
    bool anySpan = false;
    for (const Range& r : ranges) {
        spans.push_back(apiSpan(m_trace, api, r.start, r.end));
        anySpan = anySpan || spans.back().valid();
    }
    std::vector<Step> w(ranges.size(), Step { 0, INT64_MAX, INT64_MIN, source });
    std::vector<size_t> order; // ranges with a span, by their lowest correlation id
    for (size_t k = 0; k < spans.size(); ++k)
        if (spans[k].valid())
            order.push_back(k);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return spans[a].lo < spans[b].lo; });
    for (LaneId id : m_trace.lanesOf(m_rank, LaneKind::GpuStream)) {
        const LaneEvents& ev = m_trace.lane(id).events;
        if (anySpan && launchOrdered(ev)) {
            // A stream runs its work in launch order: each range's events are one stretch of the lane,
            // found by two binary searches instead of a look at every event.
            auto corrAt = [&ev](size_t i) { return ev.correlation(i); };
            for (size_t k : order) {
                size_t lo = 0, hi = ev.size();
                while (lo < hi) { // first event with correlation >= spans[k].lo
                    const size_t mid = (lo + hi) / 2;
                    (corrAt(mid) < spans[k].lo ? lo = mid + 1 : hi = mid);
                }
                for (size_t i = lo; i < ev.size() && corrAt(i) <= spans[k].hi; ++i) {
                    w[k].start = std::min(w[k].start, ev.start(i));
                    w[k].end = std::max(w[k].end, ev.end(i));
                    if (i + 1 < ev.size() && corrAt(i + 1) <= spans[k].hi) { // skip to the stretch's last event
                        size_t a = i + 1, b = ev.size();
                        while (a < b) {
                            const size_t mid = (a + b) / 2;
                            (corrAt(mid) <= spans[k].hi ? a = mid + 1 : b = mid);
                        }
                        w[k].end = std::max(w[k].end, ev.end(a - 1));
                        break;
                    }
                }
            }
            continue;
        }
        for (size_t i = 0; i < ev.size(); ++i) {
            size_t k = SIZE_MAX;
            if (anySpan) {
                const uint32_t c = ev.correlation(i);
                auto it = std::upper_bound(
                    order.begin(), order.end(), c, [&](uint32_t v, size_t o) { return v < spans[o].lo; });
                if (c == 0 || it == order.begin() || c > spans[*(it - 1)].hi)
                    continue;
                k = *(it - 1);
            } else {
                auto it = std::upper_bound(
                    ranges.begin(), ranges.end(), ev.start(i), [](TimeNs t, const Range& r) { return t < r.start; });
                if (it == ranges.begin())
                    continue;
                k = size_t(it - ranges.begin()) - 1;
            }
            w[k].start = std::min(w[k].start, ev.start(i));
            w[k].end = std::max(w[k].end, ev.end(i));
        }
    }
    std::vector<std::pair<Range, Step>> out;
    for (size_t k = 0; k < ranges.size(); ++k)
        if (w[k].start <= w[k].end)
            out.emplace_back(ranges[k], w[k]);
    return out;
}

std::vector<Piece> RankFinder::byForward(const StepSequence& seq, size_t offset, bool top)
{
    const ForwardSplit f = ForwardRule::split(seq);
    if (top && f.starts.size() >= 2) // layer runs with forwards between them: a finer scale than a step
        m_layerPeriod = f.layerPeriod;
    for (uint64_t c : f.anchorCandidates)
        if (top && m_report.anchorCandidates.size() < 5
            && std::find(m_report.anchorCandidates.begin(), m_report.anchorCandidates.end(), name(c))
                == m_report.anchorCandidates.end())
            m_report.anchorCandidates.push_back(name(c));
    std::vector<Piece> out;
    if (f.starts.size() < 2) { // one forward is no evidence of a loop of them
        if (top)
            note("forward", f.starts.empty() ? f.note : f.note + ": one forward is not a loop, no steps made");
        return out;
    }
    if (!forwardsAgree(seq, f)) {
        if (top)
            note("forward", f.note + ", but they differ in size or kernels: not a decode loop, no steps made");
        return out;
    }
    for (size_t k = 0; k < f.starts.size(); ++k)
        out.push_back({ offset + f.starts[k], offset + (k + 1 < f.starts.size() ? f.starts[k + 1] : f.end),
            StepSource::Forward });
    if (top)
        note("forward", f.note + (f.anchor ? ", each starting at " + name(f.anchor) : std::string()));
    return out;
}

// One step per graph launch, or per cycle of piecewise graphs; eager work between replays that is as
// large as a forward is a step (or several, by the forward rule) of its own.
std::vector<Piece> RankFinder::byGraph(const StepSequence& seq)
{
    std::vector<size_t> launches;
    for (size_t i = 0; i < seq.size(); ++i)
        if (seq.units[i].graph())
            launches.push_back(i);
    std::vector<size_t> starts = GraphCycles::starts(seq, launches);
    // How many kernels a step's replays run, from the steps whose kernels were recorded (a light-mode
    // capture's whole replays count one each, and no eager work was recorded beside them).
    std::vector<size_t> stepKernels;
    for (size_t k = 0; k < starts.size(); ++k) {
        const size_t last = k + 1 < starts.size() ? starts[k + 1] : seq.size();
        size_t n = 0;
        bool whole = false;
        for (size_t i = starts[k]; i < last; ++i)
            if (seq.units[i].graph()) {
                n += seq.units[i].kernels;
                whole = whole || seq.units[i].wholeReplay;
            }
        if (!whole)
            stepKernels.push_back(n);
    }
    const size_t eagerStep = std::max<size_t>(8, medianOf(stepKernels) / 2);
    std::vector<Piece> out;
    auto eagerStretch = [&](size_t first, size_t last) {
        if (seq.kernelCount(first, last) < eagerStep)
            return false;
        auto inner = byForward(seq.slice(first, last), first, false);
        if (inner.size() >= 2) {
            out.insert(out.end(), inner.begin(), inner.end());
            return true;
        }
        // One forward (the prefill of the next call): it starts where the GPU waited longest, or at the
        // start of the recording.
        size_t at = first;
        for (size_t i = first; i < last && first > 0; ++i)
            if (seq.gpuIdleBefore[i] > seq.gpuIdleBefore[at])
                at = i;
        out.push_back({ at, last, StepSource::Forward });
        return true;
    };
    if (!starts.empty())
        eagerStretch(0, starts.front());
    for (size_t k = 0; k < starts.size(); ++k) {
        const size_t last = k + 1 < starts.size() ? starts[k + 1] : seq.size();
        size_t lastLaunch = starts[k];
        for (size_t i = starts[k]; i < last; ++i)
            if (seq.units[i].graph())
                lastLaunch = i;
        // The eager work after the step's last replay: the step's own sampling, or a forward of its own.
        size_t split = lastLaunch + 1;
        out.push_back({ starts[k], last, StepSource::Graph });
        const size_t before = out.size();
        if (eagerStretch(split, last)) {
            const size_t cut = out[before].first;
            out[before - 1].last = cut;
        }
    }
    std::sort(out.begin(), out.end(), [](const Piece& a, const Piece& b) { return a.first < b.first; });
    note("graph",
        std::to_string(seq.graphLaunches) + " graph launches make " + std::to_string(out.size()) + " steps"
            + (starts.size() < launches.size() ? " (piecewise graphs grouped by cycle)" : ""));
    return out;
}

std::vector<Piece> RankFinder::split(const StepSequence& seq, bool top)
{
    using K = StepRule::Kind;
    std::vector<Piece> pieces;
    // Graphs that run a small part of the work (a few kernels captured beside an eager loop) are not steps.
    const size_t graphKernels = seq.kernelCount(0, seq.size()) - (seq.size() - seq.graphLaunches);
    const bool graphsRunTheWork = seq.graphLaunches >= 1 && graphKernels * 10 >= seq.kernelCount(0, seq.size()) * 3;
    if (allows(K::Graph) && graphsRunTheWork)
        pieces = byGraph(seq);
    else if (top && (m_rule.kind == K::Graph || (m_rule.kind == K::Auto && seq.graphLaunches)))
        note("graph",
            seq.graphLaunches ? std::to_string(seq.graphLaunches) + " graph launches run "
                    + std::to_string(100 * graphKernels / std::max<size_t>(1, seq.kernelCount(0, seq.size())))
                    + "% of the kernels: too small a part of the work to be the steps"
                              : std::string("no graph launches (cudaGraphLaunch, cuGraphLaunch, hipGraphLaunch)"));
    if (pieces.empty() && allows(K::Forward) && (!graphsRunTheWork || m_rule.kind == K::Forward))
        pieces = byForward(seq, 0, top);
    if (pieces.empty() && allows(K::Period)) {
        const PeriodSplit p = PeriodRule::split(seq, m_layerPeriod);
        if (top)
            note("period", p.note);
        for (size_t k = 0; k < p.starts.size(); ++k)
            pieces.push_back(
                { p.starts[k], k + 1 < p.starts.size() ? p.starts[k + 1] : seq.size(), StepSource::Auto });
    }
    return pieces;
}

std::vector<Step> RankFinder::byAnnotations()
{
    using K = StepRule::Kind;
    std::vector<Range> ranges;
    if (m_rule.kind == K::Nvtx) {
        auto m = PatternMatcher::compile(m_rule.pattern);
        std::unordered_map<StringId, bool> cache;
        ranges = outerRanges(m_trace, m_rank, [&](Range& r) {
            auto [it, fresh] = cache.try_emplace(r.name, false);
            if (fresh)
                it->second = m && m->search(m_trace.str(r.name));
            r.note = StepAnnotation::parse(m_trace.str(r.name));
            return it->second;
        });
    } else if (allows(K::Engine)) {
        ranges = outerRanges(m_trace, m_rank, [&](Range& r) {
            r.note = StepAnnotation::parse(m_trace.str(r.name));
            return r.note.role != StepAnnotation::Role::None;
        });
    }
    // Step ranges are final; ProfilerStep ranges enclose steps, found inside each by the other rules.
    std::vector<Range> final, enclosing;
    for (const Range& r : ranges)
        (r.note.role == StepAnnotation::Role::Enclosing && m_rule.kind != K::Nvtx ? enclosing : final).push_back(r);
    std::vector<Step> steps;
    const StepSource annotated = m_rule.kind == K::Nvtx ? StepSource::Nvtx : StepSource::Engine;
    for (auto& [r, s] : rangeSteps(final, annotated)) {
        s.kind = r.note.kind;
        s.batch = r.note.batch;
        s.tokens = r.note.tokens;
        s.label = m_trace.str(r.name);
        steps.push_back(std::move(s));
    }
    if (steps.size() < final.size())
        m_report.notes.push_back(rankText(m_rank) + std::to_string(final.size() - steps.size()) + " of "
            + std::to_string(final.size()) + " step ranges launched no GPU work: not steps");
    if (!final.empty())
        note(m_rule.kind == K::Nvtx ? "nvtx" : "engine",
            std::to_string(steps.size()) + " of " + std::to_string(final.size()) + " step ranges ("
                + (final.front().note.engine[0] ? final.front().note.engine : "nvtx") + ") launched GPU work");
    if (!steps.empty() || enclosing.empty())
        return steps;
    size_t split = 0;
    const auto wholes = rangeSteps(enclosing, StepSource::Engine);
    if (wholes.size() < enclosing.size())
        m_report.notes.push_back(rankText(m_rank) + std::to_string(enclosing.size() - wholes.size()) + " of "
            + std::to_string(enclosing.size()) + " step ranges launched no GPU work: not steps");
    for (size_t k = 0, w = 0; k < enclosing.size() && w < wholes.size(); ++k) {
        const Range& r = enclosing[k];
        if (wholes[w].first.start != r.start)
            continue; // launched no GPU work
        Step whole = wholes[w++].second;
        const StepSequence seq = launchedIn(r, k + 1 < enclosing.size() ? enclosing[k + 1].start : INT64_MAX);
        std::vector<Piece> inner = seq.size() ? this->split(seq, false) : std::vector<Piece>();
        if (inner.size() < 2) {
            whole.label = m_trace.str(r.name);
            steps.push_back(std::move(whole));
            continue;
        }
        ++split;
        for (const Piece& p : inner)
            steps.push_back(stepOf(seq, p.first, p.last, p.source));
    }
    note("engine",
        std::to_string(enclosing.size()) + " ProfilerStep ranges, " + std::to_string(split)
            + " of them split into the steps found inside");
    return steps;
}

std::vector<Step> RankFinder::byAnchor(const StepSequence& seq)
{
    auto m = PatternMatcher::compile(m_rule.pattern);
    std::vector<size_t> starts;
    std::unordered_map<StringId, bool> matches;
    auto match = [&](StringId name) {
        auto [it, fresh] = matches.try_emplace(name, false);
        if (fresh)
            it->second = m && m->search(m_trace.str(name));
        return it->second;
    };
    for (size_t i = 0; m && i < seq.size(); ++i) {
        const auto& u = seq.units[i];
        bool hit = !u.graph() && match(StringId(u.symbol));
        for (uint32_t k = 0; u.graph() && !hit && k < u.kernels; ++k) // a replay that runs the anchor
            hit = match(seq.graphKernel(u, k));
        if (hit)
            starts.push_back(i);
    }
    std::vector<Step> steps;
    for (size_t k = 0; k < starts.size(); ++k)
        steps.push_back(
            stepOf(seq, starts[k], k + 1 < starts.size() ? starts[k + 1] : seq.size(), StepSource::Anchor));
    note("anchor", std::to_string(steps.size()) + " kernels match " + m_rule.pattern);
    return steps;
}

std::vector<Step> RankFinder::run()
{
    using K = StepRule::Kind;
    std::vector<Step> steps = byAnnotations();
    if (steps.empty() && m_rule.kind != K::Nvtx && m_rule.kind != K::Engine) {
        const StepSequence& seq = all();
        if (m_rule.kind == K::Anchor)
            return byAnchor(seq);
        for (const Piece& p : split(seq, true))
            steps.push_back(stepOf(seq, p.first, p.last, p.source));
    } else if (steps.empty()) {
        note(m_rule.toString(), "no matching ranges with GPU work");
    }
    return steps;
}

} // namespace gapscope::model
