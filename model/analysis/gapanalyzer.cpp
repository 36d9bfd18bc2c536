// SPDX-License-Identifier: MIT
// GapAnalyzer construction: step windows, host syncs, the sweep of every (rank, step), collective
// matching and the waits. The sweep of one window is in gapanalyzersweep.cpp, queries in
// gapanalyzerquery.cpp.
#include "model/analysis/gapanalyzer.h"

#include "model/analysis/findings.h"
#include "model/base/taskpool.h"
#include "model/format/wholegraph.h"
#include "model/trace/collectivekeys.h"

#include <algorithm>
#include <map>

namespace gapscope::model {

namespace {

bool startsWith(std::string_view s, std::string_view p)
{
    return s.substr(0, p.size()) == p;
}

// API calls that block the calling host thread until GPU work has finished.
bool isSyncApiName(std::string_view n)
{
    static const char* const kSync[] = { "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
        "cudaThreadSynchronize", "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize" };
    for (const char* p : kSync)
        if (startsWith(n, p))
            return true;
    // Blocking copies: cudaMemcpy, cudaMemcpy2D, cudaMemcpyFromSymbol, cuMemcpyDtoH_v2, ... (not *Async*).
    return (startsWith(n, "cudaMemcpy") || startsWith(n, "cuMemcpy")) && n.find("Async") == std::string_view::npos;
}

std::vector<TimeInterval> mergeIntervals(std::vector<TimeInterval> v)
{
    std::sort(v.begin(), v.end(), [](const TimeInterval& a, const TimeInterval& b) { return a.start < b.start; });
    std::vector<TimeInterval> out;
    for (const auto& i : v) {
        if (i.end <= i.start)
            continue;
        if (!out.empty() && i.start <= out.back().end)
            out.back().end = std::max(out.back().end, i.end);
        else
            out.push_back(i);
    }
    return out;
}

} // namespace

GapAnalyzer::~GapAnalyzer()
{
    if (m_keepStepGaps) // the borrowed buffers go back, for the next batch
        for (RankData& r : m_rankData)
            if (r.slot < m_keepStepGaps->size())
                (*m_keepStepGaps)[r.slot].swap(r.keptGaps);
}

GapAnalyzer::GapAnalyzer(const Trace& trace, KernelClassifier classifier, StepBudget budget, const Options& options)
    : m_trace(trace)
    , m_classifier(std::move(classifier))
    , m_budget(std::move(budget))
    , m_matcher(0)
{
    setUp(options);
    forEachRank([this](RankData& r) {
        prepareRank(r);
        sweepRank(r);
    });
    if (stopped())
        return;
    if (m_rankData.size() > 1)
        keyCollectives();
    if (stopped())
        return;
    for (auto& r : m_rankData) {
        for (size_t w = 0; w < r.windows.size(); ++w)
            m_matcher.add(r.slot, r.windows[w].index, std::move(r.collectives[w]));
        m_matcher.add(r.slot, CollectiveMatcher::kNoStep, std::move(r.outside));
        r.collectives.clear();
    }
    m_matcher.match();
    forEachRank([this](RankData& r) { applyWaits(r); });
    if (stopped())
        return;
    finish();
}

GapAnalyzer::GapAnalyzer(
    const Trace& skeleton, KernelClassifier classifier, StepBudget budget, const Options& options, Batched)
    : m_trace(skeleton)
    , m_classifier(std::move(classifier))
    , m_budget(std::move(budget))
    , m_matcher(0)
{
    setUp(options);
    m_batched = true;
    for (auto& r : m_rankData) {
        r.firstEvent = std::numeric_limits<TimeNs>::max();
        r.lastEvent = std::numeric_limits<TimeNs>::min();
    }
}

void GapAnalyzer::setUp(const Options& options)
{
    m_layout = makeSlotLayout(m_classifier, m_budget);
    m_threads = options.threads;
    m_kind = options.kind;
    m_cancel = options.cancel;
    m_firstStep = options.firstStep;
    m_lastStep = options.lastStep;
    m_margin = options.margin;
    m_ownedFrom = options.ownedFrom;
    m_ownedTo = options.ownedTo;
    m_keepStepGaps = options.keepStepGaps;
    m_stringCount = m_trace.stringCount();
    m_nameClass.reset(new std::atomic<int16_t>[m_stringCount]);
    m_syncApi.reset(new std::atomic<uint8_t>[m_stringCount]);
    for (size_t i = 0; i < m_stringCount; ++i) {
        m_nameClass[i].store(-2, std::memory_order_relaxed);
        m_syncApi[i].store(kSyncUnknown, std::memory_order_relaxed);
    }
    m_wholeGraphName = m_trace.findString(format::kWholeGraphName).value_or(StringId(0));
    m_layout.wholeGraphs = m_wholeGraphName != 0;
    m_graphLaunchName.clear();
    for (size_t i = 1; i < m_stringCount; ++i)
        if (isGraphLaunchName(m_trace.str(StringId(i)))) {
            m_graphLaunchName.resize(m_stringCount, 0);
            m_graphLaunchName[i] = 1;
        }
    for (uint32_t rank : m_trace.ranks())
        if (!m_trace.steps(rank).empty())
            m_ranks.push_back(rank);
    m_rankData.resize(m_ranks.size());
    for (size_t i = 0; i < m_ranks.size(); ++i) {
        m_rankData[i].rank = m_ranks[i];
        m_rankData[i].slot = uint32_t(i);
    }
    m_matcher = CollectiveMatcher(m_ranks.size());
    if (m_keepStepGaps && m_keepStepGaps->size() < m_rankData.size())
        m_keepStepGaps->resize(m_rankData.size());
}

void GapAnalyzer::finish()
{
    findIncomplete();
    leaveOutOtherKinds();
    leaveOutWholeGraphSteps();
    computeCritical();
    addNotes();
}

// A batch's results join the ones before: its steps' records, gaps and collectives (the matches and
// lateness; the occurrences themselves are no longer needed), the span of each rank's capture.
void GapAnalyzer::absorb(GapAnalyzer&& batch)
{
    if (batch.m_ranks != m_ranks)
        return; // a batch of another trace: nothing of it fits
    for (size_t i = 0; i < m_rankData.size(); ++i) {
        RankData& r = m_rankData[i];
        RankData& b = batch.m_rankData[i];
        for (size_t w = 0; w < b.windows.size(); ++w) {
            if (!batch.own(b.windows[w].index))
                continue; // the margin: another batch's step
            r.windows.push_back(b.windows[w]);
            r.records.push_back(std::move(b.records[w]));
            for (size_t g = 0; g < kTopGaps; ++g) {
                r.gaps.push_back(b.gaps[w * kTopGaps + g]);
                r.gaps.back().next = EventRef {}; // an event of the batch's trace
            }
            r.overlapped.push_back(b.overlapped[w]);
        }
        r.unclassified.insert(r.unclassified.end(), b.unclassified.begin(), b.unclassified.end());
        r.apiLanes = r.apiLanes || b.apiLanes;
        r.outsideCollectives += b.outsideCollectives;
        r.firstEvent = std::min(r.firstEvent, b.firstEvent);
        r.lastEvent = std::max(r.lastEvent, b.lastEvent);
    }
    m_matcher.absorb(std::move(batch.m_matcher), batch.m_firstStep, batch.m_lastStep);
}

bool GapAnalyzer::stopped()
{
    m_cancelled = m_cancelled || m_cancel.cancelled();
    return m_cancelled;
}

template <typename Fn> void GapAnalyzer::forEachRank(Fn&& fn)
{
    TaskPool::shared().parallelFor(
        m_rankData.size(), [&](size_t i) { fn(m_rankData[i]); }, m_threads, m_cancel);
}

int GapAnalyzer::classOf(StringId name) const
{
    if (name >= m_stringCount)
        return KernelClassifier::kUnclassified;
    int c = m_nameClass[name].load(std::memory_order_relaxed);
    if (c == -2) {
        c = m_classifier.classify(m_trace.str(name));
        m_nameClass[name].store(int16_t(c), std::memory_order_relaxed);
    }
    return c;
}

bool GapAnalyzer::isSyncApi(StringId name) const
{
    if (name >= m_stringCount)
        return false;
    uint8_t v = m_syncApi[name].load(std::memory_order_relaxed);
    if (v == kSyncUnknown) {
        v = isSyncApiName(m_trace.str(name)) ? 1 : 0;
        m_syncApi[name].store(v, std::memory_order_relaxed);
    }
    return v == 1;
}

bool GapAnalyzer::blocksHost(LaneId lane, size_t index) const
{
    const EventKind k = m_trace.kindOf(lane, index);
    if (k == EventKind::Sync) {
        const SyncInfo* s = m_trace.sync(lane, index);
        return !s || s->kind != SyncKind::StreamWaitEvent; // a stream wait does not block the host
    }
    return k == EventKind::Api && isSyncApi(m_trace.lane(lane).events.name(index));
}

void GapAnalyzer::prepareRank(RankData& r)
{
    r.gpuLanes = m_trace.lanesOf(r.rank, LaneKind::GpuStream);
    const auto apiLanes = m_trace.lanesOf(r.rank, LaneKind::CpuApi);
    r.apiLanes = !apiLanes.empty();
    const auto& steps = m_trace.steps(r.rank);
    std::vector<Window> all; // every step's; r.windows: those to analyse
    for (size_t k = 0; k < steps.size(); ++k) {
        TimeNs w0 = steps[k].start;
        bool next = k + 1 < steps.size() && steps[k + 1].index == steps[k].index + 1;
        TimeNs w1 = next ? steps[k + 1].start : steps[k].end;
        all.push_back(Window { steps[k].index, w0, std::max(w0, w1) });
    }
    std::stable_sort(all.begin(), all.end(), [](const Window& a, const Window& b) { return a.w0 < b.w0; });
    const uint32_t from = m_firstStep - std::min(m_firstStep, m_margin);
    const uint32_t to = m_lastStep + std::min(kAllSteps - m_lastStep, m_margin);
    for (const Window& w : all)
        if (w.index >= from && w.index <= to)
            r.windows.push_back(w);
    std::vector<TimeInterval> syncs;
    for (LaneId id : apiLanes) {
        const LaneEvents& ev = m_trace.lane(id).events;
        for (size_t i = 0; i < ev.size(); ++i)
            if (blocksHost(id, i))
                syncs.push_back(TimeInterval { ev.start(i), ev.end(i) });
    }
    r.syncs = mergeIntervals(std::move(syncs));
    r.firstEvent = std::numeric_limits<TimeNs>::max();
    r.lastEvent = std::numeric_limits<TimeNs>::min();
    for (LaneId id : r.gpuLanes) {
        const LaneEvents& ev = m_trace.lane(id).events;
        if (ev.empty())
            continue;
        r.firstEvent = std::min(r.firstEvent, ev.start(0));
        r.lastEvent = std::max(r.lastEvent, ev.end(ev.size() - 1)); // one stream runs in order
    }
    // Collective kernels outside every window cannot be matched: count them.
    const int coll = m_classifier.collectivesClass();
    if (coll < 0 || all.empty())
        return;
    for (LaneId id : r.gpuLanes) {
        const LaneEvents& ev = m_trace.lane(id).events;
        const size_t before = ev.lowerBound(all.front().w0);
        const size_t after = std::max(before, ev.lowerBound(all.back().w1));
        auto count = [&](size_t from, size_t to) {
            for (size_t i = from; i < to; ++i)
                if (classOf(ev.name(i)) == coll && m_trace.kindOf(id, i) == EventKind::Kernel
                    && ev.start(i) >= m_ownedFrom && ev.start(i) < m_ownedTo) {
                    ++r.outsideCollectives;
                    r.outside.push_back(CollectiveMatcher::Occurrence { ev.start(i), ev.duration(i), ev.name(i) });
                }
        };
        count(0, before);
        count(after, ev.size());
    }
    std::sort(r.outside.begin(), r.outside.end(),
        [](const CollectiveMatcher::Occurrence& a, const CollectiveMatcher::Occurrence& b) {
            return a.start < b.start;
        });
}

void GapAnalyzer::sweepRank(RankData& r)
{
    Scratch s;
    s.trackEnds = m_keepStepGaps != nullptr;
    r.records.resize(r.windows.size());
    r.gaps.assign(r.windows.size() * kTopGaps, IdleGap {});
    r.overlapped.assign(r.windows.size(), 0);
    r.collectives.assign(r.windows.size(), {});
    if (m_keepStepGaps) {
        r.keptGaps.swap((*m_keepStepGaps)[r.slot]);
        r.keptGaps.clear();
        r.kept.assign(r.windows.size(), {});
    }
    for (size_t w = 0; w < r.windows.size(); ++w) {
        const Window& win = r.windows[w];
        SweepMode mode { win.w0, win.w1, WindowSweep::Input::Gaps::Longest, false, &r.collectives[w],
            own(win.index) ? &r.unclassified : nullptr, m_keepStepGaps ? &r.keptGaps : nullptr };
        const size_t from = r.keptGaps.size();
        sweepWindow(r, w, mode, s);
        if (m_keepStepGaps) {
            // With one stream the waits found later move no gap and no first or last event: keep them.
            if (s.direct && r.keptGaps.size() < RankData::kNotKept)
                r.kept[w] = { uint32_t(from), uint32_t(r.keptGaps.size()), s.singleLane, s.first, s.last };
            else
                r.keptGaps.resize(from);
        }
        storeRecord(r, w, s);
    }
}

void GapAnalyzer::storeRecord(RankData& r, size_t w, const Scratch& s) const
{
    const Window& win = r.windows[w];
    StepRecord& rec = r.records[w];
    rec.index = win.index;
    rec.start = win.w0;
    rec.end = win.w1;
    rec.lastEventEnd = s.result.lastEventEnd;
    rec.slotNs = s.result.busyNs;
    rec.slotNs.insert(rec.slotNs.end(), s.result.idleNs.begin(), s.result.idleNs.end());
    r.overlapped[w] = s.sweep.overlapped() ? 1 : 0;
    const auto& gaps = s.result.gaps; // the longest, longest first
    const size_t keep = std::min(kTopGaps, gaps.size());
    for (size_t g = 0; g < kTopGaps; ++g)
        r.gaps[w * kTopGaps + g] = g < keep ? idleGap(r.rank, win.index, gaps[g], s) : IdleGap {};
}

GapAnalyzer::IdleGap GapAnalyzer::idleGap(
    uint32_t rank, uint32_t step, const WindowSweep::Gap& g, const Scratch& s) const
{
    return idleGap(rank, step, g, g.next != WindowSweep::kNoTag ? s.ref(g.next) : EventRef {});
}

GapAnalyzer::IdleGap GapAnalyzer::idleGap(uint32_t rank, uint32_t step, const WindowSweep::Gap& g, EventRef next) const
{
    IdleGap out { rank, step, g.start, g.end, g.kind, EventRef {} };
    if (g.next != WindowSweep::kNoTag) {
        out.next = next;
        out.hasNext = true;
        out.nextName = m_trace.lane(out.next.lane).events.name(out.next.index);
        out.nextKind = m_trace.kindOf(out.next.lane, out.next.index);
    }
    return out;
}

// Moves each collective's wait from its class slot to "collective wait". Where at most one event
// ran at a time the wait part counted whole, so it moves exactly; windows where streams overlapped
// are swept again with the split pieces (their shares depend on it).
void GapAnalyzer::applyWaits(RankData& r)
{
    const int coll = m_classifier.collectivesClass();
    if (coll < 0)
        return;
    const size_t waitSlot = m_layout.waitSlot();
    std::vector<uint8_t> again(r.windows.size(), 0);
    for (size_t w = 0; w < r.windows.size(); ++w)
        for (const auto& o : m_matcher.occurrences(r.slot, r.windows[w].index)) {
            const TimeNs a = o.start, b = o.start + o.wait;
            for (size_t v = w; o.wait > 0 && v < r.windows.size() && r.windows[v].w0 < b; ++v) {
                TimeNs len = std::min(b, r.windows[v].w1) - std::max(a, r.windows[v].w0);
                if (len <= 0)
                    continue;
                if (r.overlapped[v]) {
                    again[v] = 1;
                    continue;
                }
                r.records[v].slotNs[size_t(coll)] -= len;
                r.records[v].slotNs[waitSlot] += len;
            }
        }
    Scratch s;
    for (size_t w = 0; w < r.windows.size(); ++w)
        if (again[w]) {
            SweepMode mode { r.windows[w].w0, r.windows[w].w1, WindowSweep::Input::Gaps::Longest, true, nullptr,
                nullptr };
            sweepWindow(r, w, mode, s);
            storeRecord(r, w, s);
        }
}

// Names every collective (in steps or not) by communicator and sequence, so that ranks match by the
// operation, not by step index.
void GapAnalyzer::keyCollectives()
{
    // Each rank's occurrences in start order: those before its first step, its steps', those after.
    std::vector<std::vector<CollectiveMatcher::Occurrence*>> order(m_rankData.size());
    std::vector<std::vector<CollectiveKeys::Item>> items(m_rankData.size());
    forEachRank([&](RankData& r) {
        auto& all = order[r.slot];
        size_t o = 0;
        while (o < r.outside.size() && !r.windows.empty() && r.outside[o].start < r.windows.front().w0)
            all.push_back(&r.outside[o++]);
        for (auto& w : r.collectives)
            for (auto& occ : w)
                all.push_back(&occ);
        for (; o < r.outside.size(); ++o)
            all.push_back(&r.outside[o]);
        auto earlier = [](const auto* a, const auto* b) { return a->start < b->start; };
        if (!std::is_sorted(all.begin(), all.end(), earlier))
            std::stable_sort(all.begin(), all.end(), earlier);
        items[r.slot].reserve(all.size());
        for (const auto* occ : all)
            items[r.slot].push_back(CollectiveKeys::Item { occ->start, occ->start + occ->duration, occ->name });
    });
    CollectiveKeys::assign(m_trace, m_ranks, items);
    for (size_t i = 0; i < m_rankData.size(); ++i)
        for (size_t k = 0; k < order[i].size(); ++k) {
            order[i][k]->keyed = true;
            order[i][k]->comm = items[i][k].comm;
            order[i][k]->seq = items[i][k].seq;
        }
}

StepKind GapAnalyzer::defaultKind(const Trace& trace)
{
    for (uint32_t rank : trace.ranks())
        for (const Step& s : trace.steps(rank))
            if (s.kind == StepKind::Decode)
                return StepKind::Decode;
    return StepKind::Unknown;
}

// Steps of another kind than the one analysed: shown, left out of every summary like incomplete ones.
void GapAnalyzer::leaveOutOtherKinds()
{
    if (m_kind == StepKind::Unknown)
        return;
    std::map<uint32_t, StepKind> other; // step index -> its kind (the first rank's that has it)
    for (uint32_t rank : m_trace.ranks())
        for (const Step& s : m_trace.steps(rank))
            if (s.kind != m_kind)
                other.emplace(s.index, s.kind);
    for (const auto& [index, kind] : other) {
        if (isIncomplete(index))
            continue;
        m_incomplete.push_back(Incomplete { index,
            std::string("a ") + toString(kind) + " step; this analysis is of " + toString(m_kind) + " steps: step "
                + std::to_string(index) + " left out" });
    }
    std::sort(m_incomplete.begin(), m_incomplete.end(),
        [](const Incomplete& a, const Incomplete& b) { return a.index < b.index; });
    m_incompleteIndex.clear();
    for (const auto& i : m_incomplete)
        m_incompleteIndex.push_back(i.index);
}

bool GapAnalyzer::isWholeGraph(LaneId lane, size_t index) const
{
    const KernelConfig* c = m_trace.kernelConfig(lane, index);
    return c && c->graphNodeId == format::kWholeGraphNode;
}

// A light-mode capture: steps where a rank ran whole graph replays have no kernel detail. With
// detailed steps beside them they are left out of the summaries (their step times stay in steps()).
void GapAnalyzer::leaveOutWholeGraphSteps()
{
    if (!m_layout.wholeGraphs)
        return;
    const size_t slot = m_layout.wholeGraphSlot();
    std::map<uint32_t, bool> whole; // step index -> some rank ran a whole replay in it
    for (const auto& r : m_rankData)
        for (size_t w = 0; w < r.windows.size(); ++w) {
            const auto& ns = r.records[w].slotNs;
            bool& any = whole[r.windows[w].index];
            any = any || (slot < ns.size() && ns[slot] > 0);
        }
    m_wholeGraphSteps = m_detailedSteps = 0;
    for (const auto& [index, any] : whole)
        ++(any ? m_wholeGraphSteps : m_detailedSteps);
    if (m_wholeGraphSteps == 0 || m_detailedSteps == 0)
        return;
    for (const auto& [index, any] : whole) {
        if (!any || isIncomplete(index))
            continue;
        m_incomplete.push_back(Incomplete { index,
            "step " + std::to_string(index) + " ran as whole graph replays (light mode): left out of the bars", true });
    }
    std::sort(m_incomplete.begin(), m_incomplete.end(),
        [](const Incomplete& a, const Incomplete& b) { return a.index < b.index; });
    m_incompleteIndex.clear();
    for (const auto& i : m_incomplete)
        m_incompleteIndex.push_back(i.index);
}

bool GapAnalyzer::isIncomplete(uint32_t stepIndex) const
{
    return std::binary_search(m_incompleteIndex.begin(), m_incompleteIndex.end(), stepIndex);
}

// A step some rank lacks while others have it lies partly outside that rank's capture.
void GapAnalyzer::findIncomplete()
{
    if (m_rankData.size() < 2)
        return;
    struct Seen {
        std::vector<const RankData*> ranks;
        TimeNs start = std::numeric_limits<TimeNs>::max(), end = std::numeric_limits<TimeNs>::min();
    };
    std::map<uint32_t, Seen> byStep;
    for (const auto& r : m_rankData)
        for (const auto& w : r.windows) {
            Seen& s = byStep[w.index];
            s.ranks.push_back(&r);
            s.start = std::min(s.start, w.w0);
            s.end = std::max(s.end, w.w1);
        }
    auto ms = [](TimeNs ns) { return formatDuration(double(ns) / 1e6); };
    for (const auto& [index, seen] : byStep) {
        if (seen.ranks.size() == m_rankData.size())
            continue;
        const RankData* early = &m_rankData.front(); // earliest capture start among all
        const RankData* lateStop = &m_rankData.front(); // latest capture end among all
        for (const auto& r : m_rankData) {
            early = r.firstEvent < early->firstEvent ? &r : early;
            lateStop = r.lastEvent > lateStop->lastEvent ? &r : lateStop;
        }
        const RankData *started = nullptr, *stopped = nullptr;
        for (const auto& r : m_rankData) {
            if (std::find(seen.ranks.begin(), seen.ranks.end(), &r) != seen.ranks.end())
                continue;
            if (r.firstEvent > seen.start && (!started || r.firstEvent > started->firstEvent))
                started = &r;
            else if (r.lastEvent < seen.end && (!stopped || r.lastEvent < stopped->lastEvent))
                stopped = &r;
        }
        const std::string left = "; step " + std::to_string(index) + " left out";
        std::string why;
        if (started)
            why = "capture started " + ms(started->firstEvent - early->firstEvent) + " apart on ranks "
                + std::to_string(std::min(early->rank, started->rank)) + " and "
                + std::to_string(std::max(early->rank, started->rank)) + left;
        else if (stopped)
            why = "capture stopped " + ms(lateStop->lastEvent - stopped->lastEvent) + " apart on ranks "
                + std::to_string(std::min(stopped->rank, lateStop->rank)) + " and "
                + std::to_string(std::max(stopped->rank, lateStop->rank)) + left;
        else
            why = "step " + std::to_string(index) + " is missing on "
                + std::to_string(m_rankData.size() - seen.ranks.size()) + " of " + std::to_string(m_rankData.size())
                + " ranks: left out";
        m_incomplete.push_back(Incomplete { index, why });
        m_incompleteIndex.push_back(index);
    }
}

void GapAnalyzer::computeCritical()
{
    struct Candidate {
        TimeNs wait;
        TimeNs measured;
        uint32_t rank;
    };
    std::map<uint32_t, Candidate> best;
    const size_t waitSlot = m_layout.waitSlot();
    for (const auto& r : m_rankData)
        for (const auto& rec : r.records) {
            Candidate c { rec.slotNs[waitSlot], rec.measured(), r.rank };
            auto [it, inserted] = best.emplace(rec.index, c);
            if (inserted)
                continue;
            Candidate& b = it->second;
            bool better = c.wait != b.wait ? c.wait < b.wait
                                           : (c.measured != b.measured ? c.measured > b.measured : c.rank < b.rank);
            if (better)
                b = c;
        }
    m_critical.clear();
    for (const auto& [step, c] : best)
        m_critical.emplace_back(step, int(c.rank));
}

void GapAnalyzer::addNotes()
{
    for (const auto& w : m_trace.warnings())
        if (w.rfind("steps: ", 0) == 0) // why a step rule made no steps (StepDetector)
            m_notes.push_back(w.substr(7));
    for (uint32_t rank : m_trace.ranks())
        if (m_trace.steps(rank).empty())
            m_notes.push_back("rank " + std::to_string(rank) + " has no decode steps: not analysed");
    for (const auto& r : m_rankData) {
        std::string rank = "rank " + std::to_string(r.rank);
        if (!r.apiLanes)
            m_notes.push_back(rank
                + ": launch times were not recorded (no CUDA API events), so idle time inside "
                  "steps is shown as launch/host gaps and sync stalls cannot be told apart");
        if (r.outsideCollectives)
            m_notes.push_back(rank + ": " + std::to_string(r.outsideCollectives)
                + " collective kernels run before the first or after the last step (in no step)");
    }
    auto stats = m_matcher.stats(0, kAllSteps);
    uint64_t matched = 0;
    for (size_t i = 0; i < stats.size(); ++i) {
        matched += stats[i].matched + stats[i].unmatched;
        if (stats[i].unmatched)
            m_notes.push_back("rank " + std::to_string(m_ranks[i]) + ": " + std::to_string(stats[i].unmatched)
                + " collective kernels have no counterpart on the other ranks (outside their capture, or on a "
                  "communicator whose other ranks were not traced)");
    }
    for (const auto& i : m_incomplete)
        if (!i.summarised)
            m_notes.push_back(i.why);
    if (m_wholeGraphSteps > 0 && m_detailedSteps > 0)
        m_notes.push_back("light-mode capture: kernel bars from the " + std::to_string(m_detailedSteps)
            + " detailed steps; the " + std::to_string(m_wholeGraphSteps)
            + " steps recorded as whole graph replays are left out of them (their step times are in the per-step "
              "list)");
    else if (m_wholeGraphSteps > 0)
        m_notes.push_back("light-mode capture without a detailed step: which kernels ran is not known (\"graph "
                          "replays, nodes not recorded\")");
    if (m_rankData.size() > 1 && m_classifier.collectivesClass() >= 0 && matched == 0)
        m_notes.push_back("no collective kernels found in the steps: waiting for other ranks cannot be measured");
}

} // namespace gapscope::model
