// SPDX-License-Identifier: MIT
// GapAnalyzer: the sweep of one (rank, step) window. Events of one stream go straight into the
// sweep; events of several streams are gathered as pieces, merged by start, then swept.
#include "model/analysis/gapanalyzer.h"

#include "model/trace/owntime.h"

#include <algorithm>

namespace gapscope::model {

namespace {
void addUnclassified(std::vector<GapAnalyzer::NameTime>& v, StringId name, TimeNs ns)
{
    for (auto& n : v) // few distinct unclassified names: a linear search is enough
        if (n.name == name) {
            n.ns += std::max<TimeNs>(0, ns);
            ++n.count;
            return;
        }
    v.push_back(GapAnalyzer::NameTime { name, std::max<TimeNs>(0, ns), 1 });
}
// The event of a swept piece: with one lane the tag is the event index on it, else it indexes refs.
EventRef pieceEvent(const LaneId* singleLane, const std::vector<EventRef>* refs, uint32_t tag)
{
    return *singleLane != kNoLane ? EventRef { *singleLane, tag } : (*refs)[tag];
}
// Host launch time of a swept piece: the start of the API call that launched its event.
struct LaunchLookup {
    const Trace* trace;
    const LaneId* singleLane; // one lane: the tag is the event index on it
    const std::vector<EventRef>* refs; // else the tag indexes refs
    static TimeNs time(const void* ctx, uint32_t tag)
    {
        const auto* l = static_cast<const LaunchLookup*>(ctx);
        const EventRef ev = pieceEvent(l->singleLane, l->refs, tag);
        const EventRef api = l->trace->launchOf(ev.lane, ev.index);
        return api.valid() ? l->trace->lane(api.lane).events.start(api.index) : WindowSweep::kUnknownLaunch;
    }
};
// Whether a swept piece continues the graph launch of the work before it on its stream: both were
// launched by the same cudaGraphLaunch (or cuGraphLaunch, hipGraphLaunch) call. One call gives its
// work one correlation id (on one rank), so the ids are compared first; the launch call is looked up
// once per launch (the last answer is kept: a replay's gaps come one after the other).
struct GraphLookup {
    const Trace* trace;
    const LaneId* singleLane; // as in LaunchLookup
    const std::vector<EventRef>* refs;
    const std::vector<uint8_t>* graphLaunchName;
    mutable uint32_t lastCorr = 0;
    mutable bool lastIsGraph = false;
    static bool inGraph(const void* ctx, uint32_t tag)
    {
        const auto* l = static_cast<const GraphLookup*>(ctx);
        const EventRef ev = pieceEvent(l->singleLane, l->refs, tag);
        if (ev.index == 0)
            return false;
        const LaneEvents& events = l->trace->lane(ev.lane).events;
        const uint32_t corr = events.correlation(ev.index);
        if (corr == 0 || corr != events.correlation(ev.index - 1))
            return false;
        if (corr != l->lastCorr) {
            const EventRef api = l->trace->launchOf(ev.lane, ev.index);
            l->lastCorr = corr;
            l->lastIsGraph = api.valid() && (*l->graphLaunchName)[l->trace->lane(api.lane).events.name(api.index)];
        }
        return l->lastIsGraph;
    }
};
} // namespace

TimeNs GapAnalyzer::waitOf(const RankData& r, size_t w, uint32_t laneSlot, uint32_t index, TimeNs start) const
{
    const uint64_t key = uint64_t(laneSlot) << 32 | index;
    for (size_t v = w + 1; v-- > 0;) { // the window where the event starts holds its occurrence
        const auto& occ = m_matcher.occurrences(r.slot, r.windows[v].index);
        auto it = std::lower_bound(occ.begin(), occ.end(), start,
            [](const CollectiveMatcher::Occurrence& o, TimeNs t) { return o.start < t; });
        for (; it != occ.end() && it->start == start; ++it)
            if (it->tag == key)
                return it->wait;
        if (r.windows[v].w0 <= start)
            break;
    }
    return 0;
}

void GapAnalyzer::sweepWindow(const RankData& r, size_t w, const SweepMode& mode, Scratch& s) const
{
    const TimeNs w0 = r.windows[w].w0, w1 = r.windows[w].w1;
    const int coll = m_classifier.collectivesClass();
    const uint32_t waitSlot = uint32_t(m_layout.waitSlot()), unclassified = uint32_t(m_layout.unclassifiedSlot()),
                   memops = uint32_t(m_layout.memopsSlot()), wholeGraph = uint32_t(m_layout.wholeGraphSlot());
    auto syncBegin = std::lower_bound(
        r.syncs.begin(), r.syncs.end(), w0, [](const TimeInterval& i, TimeNs t) { return i.end <= t; });
    auto syncEnd
        = std::lower_bound(syncBegin, r.syncs.end(), w1, [](const TimeInterval& i, TimeNs t) { return i.start < t; });
    WindowSweep::Input in;
    in.w0 = w0;
    in.w1 = w1;
    in.clip0 = std::max(mode.clip0, w0);
    in.clip1 = std::min(mode.clip1, w1);
    in.syncs = r.syncs.data() + (syncBegin - r.syncs.begin());
    in.syncCount = size_t(syncEnd - syncBegin);
    in.slotCount = m_layout.busySlots();
    in.gaps = mode.gaps;
    in.allGaps = mode.allGaps;
    const LaunchLookup lookup { &m_trace, &s.singleLane, &s.refs };
    if (in.syncCount > 0) {
        in.launchTime = &LaunchLookup::time;
        in.launchCtx = &lookup;
    }
    const GraphLookup graphs { &m_trace, &s.singleLane, &s.refs, &m_graphLaunchName };
    if (!m_graphLaunchName.empty()) {
        in.inGraph = &GraphLookup::inGraph;
        in.inGraphCtx = &graphs;
    }

    // Lanes with events in the window, and their index ranges.
    s.ranges.resize(r.gpuLanes.size());
    auto range = [&](size_t li) -> std::pair<size_t, size_t>& { return s.ranges[li]; };
    size_t busyLanes = 0, onlyLane = 0;
    for (size_t li = 0; li < r.gpuLanes.size(); ++li) {
        const LaneEvents& ev = m_trace.lane(r.gpuLanes[li]).events;
        range(li) = ev.overlapping(w0, w1);
        if (range(li).first < range(li).second) {
            ++busyLanes;
            onlyLane = li;
        }
    }
    const bool direct = busyLanes <= 1 && !s.forcePieces;
    s.direct = direct;
    s.singleLane = direct && busyLanes == 1 ? r.gpuLanes[onlyLane] : kNoLane;
    s.pieces.clear();
    s.refs.clear();
    s.runs.assign(1, 0);
    s.first = s.last = EventRef {};
    s.firstStart = std::numeric_limits<TimeNs>::max();
    s.lastStart = std::numeric_limits<TimeNs>::min();
    bool sorted = true;

    // Feeds one lane's events: into the sweep directly (one lane), or into `pieces`.
    auto feed = [&](size_t li) {
        const LaneId id = r.gpuLanes[li];
        const LaneEvents& ev = m_trace.lane(id).events;
        TimeNs runLast = std::numeric_limits<TimeNs>::min();
        // Work of one stream runs in order: a kernel that starts before the one before it ended
        // was launched early (programmatic dependent launch) and waits, so it counts from that end.
        OwnTime stream;
        auto emit = [&](TimeNs a, TimeNs b, uint32_t slot, uint32_t tag) {
            WindowSweep::Piece p { std::clamp(a, w0, w1), std::clamp(b, w0, w1), slot, tag };
            if (direct) {
                s.sweep.add(p);
                return;
            }
            sorted = sorted && p.start >= runLast;
            runLast = p.start;
            s.pieces.push_back(p);
        };
        for (size_t i = range(li).first; i < range(li).second; ++i) {
            const TimeNs rawStart = ev.start(i);
            if (rawStart >= w1)
                break;
            const TimeNs en = ev.end(i);
            if (en <= w0 && rawStart < w0)
                continue;
            const TimeNs st = stream.start(rawStart, en);
            const EventKind k = m_trace.kindOf(id, i);
            uint32_t slot;
            TimeNs wait = 0;
            if (k == EventKind::Kernel && m_wholeGraphName != 0 && ev.name(i) == m_wholeGraphName
                && isWholeGraph(id, i)) {
                slot = wholeGraph;
            } else if (k == EventKind::Kernel) {
                const StringId name = ev.name(i);
                const int c = classOf(name);
                slot = c < 0 ? unclassified : uint32_t(c);
                if (c < 0 && mode.unclassified)
                    addUnclassified(*mode.unclassified, name, std::min(en, w1) - std::max(st, w0));
                if (c >= 0 && c == coll) {
                    const uint64_t key = uint64_t(li) << 32 | uint64_t(i);
                    if (mode.record && rawStart >= w0)
                        mode.record->push_back(CollectiveMatcher::Occurrence { rawStart, en - rawStart, name, 0, key });
                    if (mode.waitsKnown)
                        wait = std::max<TimeNs>(0, waitOf(r, w, uint32_t(li), uint32_t(i), rawStart) - (st - rawStart));
                }
            } else if (k == EventKind::Memcpy || k == EventKind::Memset) {
                slot = memops;
            } else {
                continue;
            }
            const uint32_t tag = direct ? uint32_t(i) : uint32_t(s.refs.size());
            if (s.trackEnds) {
                const TimeNs p0 = std::clamp(st, w0, w1), p1 = wait > 0 ? std::clamp(st + wait, w0, w1) : p0;
                if (p0 < s.firstStart) {
                    s.firstStart = p0;
                    s.first = EventRef { id, uint32_t(i) };
                }
                if (p1 >= s.lastStart) {
                    s.lastStart = p1;
                    s.last = EventRef { id, uint32_t(i) };
                }
            }
            if (wait > 0) {
                emit(st, st + wait, waitSlot, tag);
                emit(st + wait, en, slot, tag);
            } else {
                emit(st, en, slot, tag);
            }
            if (!direct)
                s.refs.push_back(EventRef { id, uint32_t(i) });
        }
        if (!direct && s.pieces.size() > s.runs.back())
            s.runs.push_back(s.pieces.size());
    };

    if (direct) {
        s.sweep.begin(in, s.result);
        if (busyLanes == 1)
            feed(onlyLane);
        s.sweep.finish();
    } else {
        for (size_t li = 0; li < r.gpuLanes.size(); ++li)
            if (range(li).first < range(li).second)
                feed(li);
        auto byStart = [](const WindowSweep::Piece& a, const WindowSweep::Piece& b) { return a.start < b.start; };
        if (!sorted)
            std::stable_sort(s.pieces.begin(), s.pieces.end(), byStart);
        else
            for (size_t k = 2; k < s.runs.size(); ++k) // merge the per-lane runs, each sorted
                std::inplace_merge(s.pieces.begin(), s.pieces.begin() + std::ptrdiff_t(s.runs[k - 1]),
                    s.pieces.begin() + std::ptrdiff_t(s.runs[k]), byStart);
        in.pieces = s.pieces.data();
        in.pieceCount = s.pieces.size();
        s.sweep.run(in, s.result);
    }
    if (mode.record)
        std::sort(mode.record->begin(), mode.record->end(),
            [](const auto& a, const auto& b) { return a.start != b.start ? a.start < b.start : a.tag < b.tag; });
}

} // namespace gapscope::model
