// SPDX-License-Identifier: MIT
// GapAnalyzer construction: classification, step windows, host syncs, collective matching and the
// sweep of every (rank, step). Queries live in gapanalyzerquery.cpp.
#include "model/analysis/gapanalyzer.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <set>
#include <thread>

namespace gapscope::model {

namespace {

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

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

GapAnalyzer::~GapAnalyzer() = default;

GapAnalyzer::GapAnalyzer(const Trace& trace, KernelClassifier classifier, StepBudget budget, const Options& options)
    : m_trace(trace)
    , m_classifier(std::move(classifier))
    , m_budget(std::move(budget))
    , m_matcher(0)
{
    m_layout = makeSlotLayout(m_classifier, m_budget);
    m_threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    for (uint32_t rank : m_trace.ranks())
        if (!m_trace.steps(rank).empty())
            m_ranks.push_back(rank);
    m_rankData.resize(m_ranks.size());
    for (size_t i = 0; i < m_ranks.size(); ++i) {
        m_rankData[i].rank = m_ranks[i];
        m_rankData[i].slot = uint32_t(i);
    }
    classifyNames();
    forEachRank([this](RankData& r) {
        prepareRank(r);
        collectCollectives(r);
    });
    m_matcher = CollectiveMatcher(m_ranks.size());
    for (auto& r : m_rankData)
        for (size_t w = 0; w < r.windows.size(); ++w)
            m_matcher.add(r.slot, r.windows[w].index, std::move(r.stepCollectives[w]));
    m_matcher.match();
    for (auto& r : m_rankData) {
        r.stepCollectives.clear();
        for (const auto& win : r.windows)
            for (const auto& o : m_matcher.occurrences(r.slot, win.index))
                r.laneCollectives[o.tag >> 32].wait[o.tag & 0xffffffffu] = o.wait;
    }
    forEachRank([this](RankData& r) { sweepRank(r); });
    computeCritical();
    addNotes();
}

template <typename Fn>
void GapAnalyzer::forEachRank(Fn&& fn)
{
    std::atomic<size_t> next { 0 };
    auto worker = [&] {
        for (size_t i = next++; i < m_rankData.size(); i = next++)
            fn(m_rankData[i]);
    };
    std::vector<std::thread> pool;
    size_t extra = std::min<size_t>(m_threads, m_rankData.size());
    try {
        for (size_t t = 1; t < extra; ++t)
            pool.emplace_back(worker);
    } catch (const std::exception&) {
        // No more threads: the calling thread does the rest.
    }
    worker();
    for (auto& t : pool)
        t.join();
}

void GapAnalyzer::classifyNames()
{
    const size_t n = m_trace.stringCount();
    std::vector<uint8_t> kernelName(n, 0), apiName(n, 0);
    for (const Lane& lane : m_trace.lanes()) {
        auto& mark = lane.info.kind == LaneKind::GpuStream ? kernelName : apiName;
        if (lane.info.kind != LaneKind::GpuStream && lane.info.kind != LaneKind::CpuApi)
            continue;
        for (size_t i = 0; i < lane.events.size(); ++i)
            if (lane.events.name(i) < n)
                mark[lane.events.name(i)] = 1;
    }
    m_nameClass.assign(n, int16_t(KernelClassifier::kUnclassified));
    m_syncApi.assign(n, 0);
    std::vector<StringId> names;
    for (StringId id = 1; id < n; ++id) {
        if (kernelName[id])
            names.push_back(id);
        if (apiName[id])
            m_syncApi[id] = isSyncApiName(m_trace.str(id)) ? 1 : 0;
    }
    // Distinct names are few (hundreds to thousands) but each costs a few microseconds: split them.
    std::atomic<size_t> next { 0 };
    auto worker = [&] {
        for (size_t i = next++; i < names.size(); i = next++)
            m_nameClass[names[i]] = int16_t(m_classifier.classify(m_trace.str(names[i])));
    };
    std::vector<std::thread> pool;
    try {
        for (unsigned t = 1; t < m_threads && names.size() > 64 * t; ++t)
            pool.emplace_back(worker);
    } catch (const std::exception&) {
    }
    worker();
    for (auto& t : pool)
        t.join();
}

void GapAnalyzer::prepareRank(RankData& r)
{
    r.gpuLanes = m_trace.lanesOf(r.rank, LaneKind::GpuStream);
    const auto apiLanes = m_trace.lanesOf(r.rank, LaneKind::CpuApi);
    r.apiLanes = !apiLanes.empty();
    const auto& steps = m_trace.steps(r.rank);
    for (size_t k = 0; k < steps.size(); ++k) {
        TimeNs w0 = steps[k].start;
        bool next = k + 1 < steps.size() && steps[k + 1].index == steps[k].index + 1;
        TimeNs w1 = next ? steps[k + 1].start : steps[k].end;
        r.windows.push_back(Window { steps[k].index, w0, std::max(w0, w1) });
    }
    std::stable_sort(r.windows.begin(), r.windows.end(), [](const Window& a, const Window& b) { return a.w0 < b.w0; });
    std::vector<TimeInterval> syncs;
    for (LaneId id : apiLanes) {
        const LaneEvents& ev = m_trace.lane(id).events;
        for (size_t i = 0; i < ev.size(); ++i) {
            EventKind k = m_trace.kindOf(id, i);
            bool blocking = false;
            if (k == EventKind::Sync) {
                const SyncInfo* s = m_trace.sync(id, i);
                blocking = !s || s->kind != pb::SYNC_STREAM_WAIT_EVENT; // a stream wait does not block the host
            } else if (k == EventKind::Api) {
                blocking = ev.name(i) < m_syncApi.size() && m_syncApi[ev.name(i)];
            }
            if (blocking)
                syncs.push_back(TimeInterval { ev.start(i), ev.end(i) });
        }
    }
    r.syncs = mergeIntervals(std::move(syncs));
}

void GapAnalyzer::collectCollectives(RankData& r)
{
    r.laneCollectives.assign(r.gpuLanes.size(), {});
    r.stepCollectives.assign(r.windows.size(), {});
    const int coll = m_classifier.collectivesClass();
    if (coll < 0)
        return;
    for (size_t li = 0; li < r.gpuLanes.size(); ++li) {
        const LaneId id = r.gpuLanes[li];
        const LaneEvents& ev = m_trace.lane(id).events;
        auto& lc = r.laneCollectives[li];
        for (size_t i = 0; i < ev.size(); ++i) {
            StringId name = ev.name(i);
            if (name >= m_nameClass.size() || m_nameClass[name] != coll || m_trace.kindOf(id, i) != EventKind::Kernel)
                continue;
            const TimeNs s = ev.start(i);
            auto it = std::upper_bound(
                r.windows.begin(), r.windows.end(), s, [](TimeNs t, const Window& w) { return t < w.w0; });
            if (it != r.windows.begin() && s < std::prev(it)->w1) {
                size_t w = size_t(std::prev(it) - r.windows.begin());
                uint64_t tag = uint64_t(li) << 32 | uint64_t(lc.index.size());
                r.stepCollectives[w].push_back(CollectiveMatcher::Occurrence { s, ev.duration(i), name, 0, tag });
            } else {
                ++r.outsideCollectives;
            }
            lc.index.push_back(uint32_t(i));
            lc.wait.push_back(0);
        }
    }
    for (auto& v : r.stepCollectives)
        std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
            return a.start != b.start ? a.start < b.start : a.tag < b.tag;
        });
}

void GapAnalyzer::sweepWindow(const RankData& r, size_t w, TimeNs clip0, TimeNs clip1, Scratch& s) const
{
    const TimeNs w0 = r.windows[w].w0, w1 = r.windows[w].w1;
    const int coll = m_classifier.collectivesClass();
    const uint32_t waitSlot = uint32_t(m_layout.waitSlot()), unclassified = uint32_t(m_layout.unclassifiedSlot()),
                   memops = uint32_t(m_layout.memopsSlot());
    s.pieces.clear();
    s.refs.clear();
    s.runs.assign(1, 0);
    bool sorted = true;
    for (size_t li = 0; li < r.gpuLanes.size(); ++li) {
        const LaneId id = r.gpuLanes[li];
        const LaneEvents& ev = m_trace.lane(id).events;
        const auto& lc = r.laneCollectives[li];
        auto [first, last] = ev.overlapping(w0, w1);
        size_t cpos = size_t(std::lower_bound(lc.index.begin(), lc.index.end(), uint32_t(first)) - lc.index.begin());
        TimeNs runLast = std::numeric_limits<TimeNs>::min();
        auto push = [&](TimeNs a, TimeNs b, uint32_t slot) {
            a = std::clamp(a, w0, w1);
            b = std::clamp(b, w0, w1);
            sorted = sorted && a >= runLast;
            runLast = a;
            s.pieces.push_back(WindowSweep::Piece { a, b, slot, uint32_t(s.refs.size()) });
        };
        for (size_t i = first; i < last; ++i) {
            const TimeNs st = ev.start(i);
            if (st >= w1)
                break;
            const TimeNs en = ev.end(i);
            if (en <= w0 && st < w0)
                continue;
            const EventKind k = m_trace.kindOf(id, i);
            uint32_t slot;
            TimeNs wait = 0;
            if (k == EventKind::Kernel) {
                StringId name = ev.name(i);
                int c = name < m_nameClass.size() ? m_nameClass[name] : -1;
                slot = c < 0 ? unclassified : uint32_t(c);
                if (c >= 0 && c == coll) {
                    while (cpos < lc.index.size() && lc.index[cpos] < i)
                        ++cpos;
                    if (cpos < lc.index.size() && lc.index[cpos] == i)
                        wait = lc.wait[cpos];
                }
            } else if (k == EventKind::Memcpy || k == EventKind::Memset) {
                slot = memops;
            } else {
                continue;
            }
            if (wait > 0) {
                push(st, st + wait, waitSlot);
                push(st + wait, en, slot);
            } else {
                push(st, en, slot);
            }
            s.refs.push_back(EventRef { id, uint32_t(i) });
        }
        if (s.pieces.size() > s.runs.back())
            s.runs.push_back(s.pieces.size());
    }
    auto byStart = [](const WindowSweep::Piece& a, const WindowSweep::Piece& b) { return a.start < b.start; };
    if (!sorted) {
        std::stable_sort(s.pieces.begin(), s.pieces.end(), byStart);
    } else {
        for (size_t k = 2; k < s.runs.size(); ++k) // merge the per-lane runs, which are sorted
            std::inplace_merge(s.pieces.begin(), s.pieces.begin() + std::ptrdiff_t(s.runs[k - 1]),
                s.pieces.begin() + std::ptrdiff_t(s.runs[k]), byStart);
    }
    auto syncBegin = std::lower_bound(r.syncs.begin(), r.syncs.end(), w0,
        [](const TimeInterval& i, TimeNs t) { return i.end <= t; });
    auto syncEnd = std::lower_bound(syncBegin, r.syncs.end(), w1,
        [](const TimeInterval& i, TimeNs t) { return i.start < t; });
    WindowSweep::Input in;
    in.w0 = w0;
    in.w1 = w1;
    in.clip0 = std::max(clip0, w0);
    in.clip1 = std::min(clip1, w1);
    in.pieces = s.pieces.data();
    in.pieceCount = s.pieces.size();
    in.syncs = r.syncs.data() + (syncBegin - r.syncs.begin());
    in.syncCount = size_t(syncEnd - syncBegin);
    in.slotCount = m_layout.busySlots();
    in.collectGaps = true;
    s.sweep.run(in, s.result);
}

void GapAnalyzer::sweepRank(RankData& r)
{
    Scratch s;
    r.records.resize(r.windows.size());
    r.gaps.assign(r.windows.size() * kTopGaps, IdleGap {});
    for (size_t w = 0; w < r.windows.size(); ++w) {
        const Window& win = r.windows[w];
        sweepWindow(r, w, win.w0, win.w1, s);
        StepRecord& rec = r.records[w];
        rec.index = win.index;
        rec.start = win.w0;
        rec.end = win.w1;
        rec.lastEventEnd = s.result.lastEventEnd;
        rec.slotNs = s.result.busyNs;
        rec.slotNs.insert(rec.slotNs.end(), s.result.idleNs.begin(), s.result.idleNs.end());
        auto& gaps = s.result.gaps;
        auto longer = [](const WindowSweep::Gap& a, const WindowSweep::Gap& b) {
            return a.end - a.start > b.end - b.start;
        };
        size_t keep = std::min(kTopGaps, gaps.size());
        std::partial_sort(gaps.begin(), gaps.begin() + std::ptrdiff_t(keep), gaps.end(), longer);
        for (size_t g = 0; g < keep; ++g) {
            IdleGap& out = r.gaps[w * kTopGaps + g];
            out = IdleGap { r.rank, win.index, gaps[g].start, gaps[g].end, gaps[g].kind, EventRef {} };
            auto p = std::lower_bound(s.pieces.begin(), s.pieces.end(), gaps[g].end,
                [](const WindowSweep::Piece& piece, TimeNs t) { return piece.start < t; });
            if (gaps[g].kind != IdleKind::StepGap && p != s.pieces.end())
                out.next = s.refs[p->tag];
        }
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
    for (uint32_t rank : m_trace.ranks())
        if (m_trace.steps(rank).empty())
            m_notes.push_back("rank " + std::to_string(rank) + " has no decode steps: not analysed");
    for (const auto& r : m_rankData) {
        std::string rank = "rank " + std::to_string(r.rank);
        if (!r.apiLanes)
            m_notes.push_back(rank + ": launch times were not recorded (no CUDA API events), so idle time inside "
                                     "steps is shown as launch/host gaps and sync stalls cannot be told apart");
        if (r.outsideCollectives)
            m_notes.push_back(rank + ": " + std::to_string(r.outsideCollectives)
                + " collective kernels start outside every step window and were not matched");
    }
    auto stats = m_matcher.stats(0, kAllSteps);
    for (size_t i = 0; i < stats.size(); ++i)
        if (stats[i].unmatched)
            m_notes.push_back("rank " + std::to_string(m_ranks[i]) + ": " + std::to_string(stats[i].unmatched)
                + " collective kernels have no counterpart on some other rank (collective counts differ per step)");
    std::map<uint32_t, size_t> ranksPerStep;
    for (const auto& r : m_rankData)
        for (const auto& w : r.windows)
            ++ranksPerStep[w.index];
    size_t partial = 0;
    for (const auto& [step, n] : ranksPerStep)
        partial += n < m_rankData.size() ? 1 : 0;
    if (partial)
        m_notes.push_back(std::to_string(partial) + " steps are missing on some ranks");
    if (m_rankData.size() > 1 && m_classifier.collectivesClass() >= 0) {
        bool any = false;
        for (const auto& r : m_rankData)
            for (const auto& lc : r.laneCollectives)
                any = any || !lc.index.empty();
        if (!any)
            m_notes.push_back("no collective kernels found: waiting for other ranks cannot be measured");
    }
}

} // namespace gapscope::model
