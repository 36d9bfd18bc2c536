// SPDX-License-Identifier: MIT
#include "model/analysis/hostattribution.h"
#include "model/base/taskpool.h"

#include <algorithm>
#include <memory>
#include <queue>
#include <tuple>

namespace gapscope::model {

namespace {

const char* syncRecordName(const SyncInfo* s)
{
    switch (s ? s->kind : SyncKind::Unknown) {
    case SyncKind::Event:
        return "event sync";
    case SyncKind::Stream:
        return "stream sync";
    case SyncKind::Context:
        return "context sync";
    default:
        return "sync";
    }
}

} // namespace

// The innermost candidate active at each moment of [a, b) (encloses() decides), as stretches: emit(x,
// y, event) for each, an invalid event where none is active. Sorts `c` by start.
template <typename Emit>
void HostAttribution::sweepInnermost(std::vector<Candidate>& c, TimeNs a, TimeNs b, Emit&& emit)
{
    std::sort(c.begin(), c.end(), [](const Candidate& x, const Candidate& y) { return x.start < y.start; });
    std::priority_queue<Candidate, std::vector<Candidate>, decltype(&encloses)> active(&encloses);
    size_t next = 0;
    TimeNs t = a;
    while (t < b) {
        while (next < c.size() && c[next].start <= t)
            active.push(c[next++]);
        while (!active.empty() && active.top().end <= t)
            active.pop();
        TimeNs until = b;
        if (next < c.size())
            until = std::min(until, c[next].start);
        if (!active.empty())
            until = std::min(until, active.top().end);
        emit(t, until, active.empty() ? EventRef {} : active.top().ref);
        t = until;
    }
}

const char* HostAttribution::hostKindName(const Trace& trace, EventRef ev)
{
    const LaneInfo& info = trace.lane(ev.lane).info;
    switch (info.kind) {
    case LaneKind::CpuApi:
        return trace.apiKind(ev.lane, ev.index) == ApiKind::Driver ? "cuda_driver" : "cuda_runtime";
    case LaneKind::CpuThread:
        return toString(trace.hostKind(ev.lane, ev.index));
    case LaneKind::Nvtx:
        return trace.header().source == "kineto" ? "user_annotation" : "nvtx";
    default:
        return "host";
    }
}

HostAttribution::HostAttribution(const GapAnalyzer& analyzer)
    : m_analyzer(analyzer)
    , m_trace(analyzer.trace())
{
    for (const Lane& l : m_trace.lanes()) {
        const LaneKind k = l.info.kind;
        if (isThreadLane(l.info)) {
            m_thread[{ l.info.rank, l.info.host, l.info.pid, l.info.threadId() }].push_back(l.id);
            m_process[{ l.info.rank, l.info.host, l.info.pid }].push_back(l.id);
        }
        if (k == LaneKind::CpuApi)
            m_apiLanes[l.info.rank].push_back(l.id);
    }
}

HostAttribution::HostAttribution(const GapAnalyzer& analyzer, const GapAnalyzer::Selection& selection, bool keepGaps)
    : HostAttribution(analyzer)
{
    std::vector<uint32_t> wanted;
    for (uint32_t r : analyzer.ranks())
        if (selection.rank == GapAnalyzer::kCriticalRank || uint32_t(selection.rank) == r)
            wanted.push_back(r);
    if (wanted.size() <= 1) {
        compute(selection, keepGaps, wanted);
        return;
    }
    // Ranks are independent: each on its own part, on the pool, joined in rank order.
    std::vector<std::unique_ptr<HostAttribution>> parts(wanted.size());
    TaskPool::shared().parallelFor(wanted.size(), [&](size_t i) {
        parts[i].reset(new HostAttribution(analyzer));
        parts[i]->compute(selection, keepGaps, { wanted[i] });
    });
    size_t gaps = 0, pieces = 0;
    for (const auto& part : parts) {
        gaps += part->m_gaps.size();
        pieces += part->m_pieces.size();
    }
    m_gaps.reserve(gaps); // once: a gap per kernel can be gigabytes, growing by doubling would copy them twice
    m_pieces.reserve(pieces);
    for (auto& part : parts)
        append(std::move(*part));
}

void HostAttribution::compute(
    const GapAnalyzer::Selection& selection, bool keepGaps, const std::vector<uint32_t>& wanted)
{
    for (uint32_t r : wanted)
        m_byRank[r].rank = r;
    uint64_t serial = 0;
    for (uint32_t r : wanted) {
        const bool keep = keepGaps && rankHasHostLanes(r);
        m_byRank[r].gapsKept = keep;
        GapAnalyzer::Selection sel = selection;
        sel.rank = int(r);
        m_analyzer.forEachStepGaps(sel, [&](const GapAnalyzer::StepGapsView& step) {
            const StepScope scope = scopeOf(step);
            m_cursors.clear();
            m_reuse = Reuse {};
            m_lastGapStart = INT64_MIN;
            for (size_t i = 0; i < step.size(); ++i) {
                const WindowSweep::Gap& raw = step.raw(i);
                if (raw.kind == IdleKind::InGraph && raw.end > raw.start)
                    addInGraph(m_byRank[r], step.next(i), raw.end - raw.start);
                // Step gaps and in-graph gaps were not the host's doing: nothing to attribute.
                if ((raw.kind != IdleKind::LaunchHost && raw.kind != IdleKind::SyncStall) || raw.end <= raw.start)
                    continue;
                if (!keep && queuedOnly(step.rank, raw, step.next(i))) {
                    ++serial;
                    continue;
                }
                Gap g;
                g.gap = step.gap(i);
                attribute(g, scope);
                if (raw.kind == IdleKind::SyncStall)
                    findSyncCall(g, scope);
                else
                    explainRest(g, scope);
                add(g, keep ? m_gaps.size() : serial, keep);
                ++serial;
                if (keep)
                    m_gaps.push_back(g);
                else
                    m_pieces.clear();
            }
        });
    }
    finish();
}

// The common gap of a step launched ahead of the GPU (a CUDA graph, a queue of launches): what the last
// gap's attribution found holds for it too (attribute()'s reuse: same launching thread, no host event
// until after it), and its launch call had returned before it began, so all of it is queued time.
// Adds it as attribute(), explainRest() and add() would, without building its Gap.
bool HostAttribution::queuedOnly(uint32_t rank, const WindowSweep::Gap& gap, EventRef next)
{
    if (gap.kind != IdleKind::LaunchHost || !next.valid() || m_reuse.host.valid() || !m_current
        || m_current->rank != rank)
        return false;
    const EventRef launch = launchOf(next); // sets m_lastLaunch and m_lastLaunchEnd
    if (!launch.valid() || launch.lane != m_reuse.apiLane || gap.start < m_lastGapStart || gap.end > m_reuse.until
        || gap.start < m_lastLaunchEnd)
        return false;
    m_lastGapStart = gap.start;
    m_otherPieces.clear();
    Rank& r = *m_current;
    r.gapNs += gap.end - gap.start;
    r.queuedNs += gap.end - gap.start;
    ++r.queuedGaps;
    return true;
}

void HostAttribution::append(HostAttribution&& part)
{
    const uint32_t gapBase = uint32_t(m_gaps.size()), pieceBase = uint32_t(m_pieces.size());
    for (Gap& g : part.m_gaps)
        g.firstPiece += pieceBase;
    m_gaps.insert(m_gaps.end(), part.m_gaps.begin(), part.m_gaps.end());
    m_pieces.insert(m_pieces.end(), part.m_pieces.begin(), part.m_pieces.end());
    std::vector<Gap>().swap(part.m_gaps); // freed as soon as copied
    std::vector<Piece>().swap(part.m_pieces);
    auto shift = [gapBase](std::vector<uint32_t>& gaps) {
        for (uint32_t& gi : gaps)
            gi += gapBase;
    };
    for (Rank& r : part.m_ranks) {
        for (Row& row : r.rows)
            shift(row.gaps);
        for (Row& row : r.syncMoments)
            shift(row.gaps);
        for (Row& row : r.otherThreads)
            shift(row.gaps);
        for (SyncRow& row : r.syncs)
            shift(row.gaps);
        m_ranks.push_back(std::move(r));
    }
}

bool HostAttribution::isThreadLane(const LaneInfo& info)
{
    const LaneKind k = info.kind;
    return k == LaneKind::CpuApi || k == LaneKind::CpuThread || (k == LaneKind::Nvtx && !info.isGpuAnnotationLane());
}

bool HostAttribution::rankHasHostLanes(uint32_t rank) const
{
    const auto it = m_process.lower_bound({ rank, std::string(), 0 });
    return it != m_process.end() && std::get<0>(it->first) == rank;
}

bool HostAttribution::encloses(const Candidate& x, const Candidate& y)
{
    if (x.start != y.start)
        return x.start < y.start;
    if (x.end - x.start != y.end - y.start)
        return x.end - x.start > y.end - y.start;
    if (x.priority != y.priority)
        return x.priority < y.priority;
    if (x.depth != y.depth)
        return x.depth < y.depth;
    return x.ref.lane != y.ref.lane ? x.ref.lane < y.ref.lane : x.ref.index < y.ref.index;
}

std::vector<EventRef> HostAttribution::enclosing(const Trace& trace, EventRef call)
{
    std::vector<EventRef> out;
    if (!call.valid() || call.lane >= trace.laneCount())
        return out;
    const LaneInfo& thread = trace.lane(call.lane).info;
    const LaneEvents& ce = trace.lane(call.lane).events;
    if (call.index >= ce.size())
        return out;
    const TimeNs c0 = ce.start(call.index), c1 = ce.end(call.index);
    std::vector<Candidate> found;
    for (const Lane& l : trace.lanes()) {
        if (l.info.kind == LaneKind::CpuApi || !isThreadLane(l.info) || l.info.rank != thread.rank
            || l.info.threadId() != thread.threadId() || l.info.pid != thread.pid || l.info.host != thread.host)
            continue;
        const bool cpu = l.info.kind == LaneKind::CpuThread;
        const auto [first, last] = l.events.overlapping(c0, c1 > c0 ? c1 : c0 + 1);
        for (size_t i = first; i < last; ++i) {
            if (l.events.start(i) > c0 || l.events.end(i) < c1
                || trace.kindOf(l.id, i) != (cpu ? EventKind::Host : EventKind::Nvtx))
                continue;
            const uint32_t depth = cpu ? trace.hostDepth(l.id, i) : trace.nvtxDepth(l.id, i);
            found.push_back(Candidate {
                l.events.start(i), l.events.end(i), uint8_t(cpu ? 1 : 0), depth, EventRef { l.id, uint32_t(i) } });
        }
    }
    // Innermost first: the recorded ranges, then the sampled call stack (an estimate) around them.
    std::sort(found.begin(), found.end(), [&trace](const Candidate& a, const Candidate& b) {
        const bool sa = trace.lane(a.ref.lane).info.isSampledLane(), sb = trace.lane(b.ref.lane).info.isSampledLane();
        return sa != sb ? sb : encloses(b, a);
    });
    for (const Candidate& c : found)
        out.push_back(c.ref);
    return out;
}

const HostAttribution::Rank* HostAttribution::rank(uint32_t rank) const
{
    for (const Rank& r : m_ranks)
        if (r.rank == rank)
            return &r;
    return nullptr;
}

const std::vector<LaneId>& HostAttribution::threadLanes(LaneId apiLane)
{
    if (apiLane != m_lastApiLane || !m_lastThreadLanes) { // most gaps of a rank share one launching thread
        const LaneInfo& info = m_trace.lane(apiLane).info;
        m_lastThreadLanes = &m_thread[{ info.rank, info.host, info.pid, info.threadId() }];
        m_lastApiLane = apiLane;
    }
    return *m_lastThreadLanes;
}

EventRef HostAttribution::launchOf(EventRef ev)
{
    const Lane& lane = m_trace.lane(ev.lane);
    const uint64_t key = uint64_t(lane.info.rank) << 32 | lane.events.correlation(ev.index);
    if (key != m_lastLaunchKey || lane.info.kind != LaneKind::GpuStream) {
        m_lastLaunch = m_trace.launchOf(ev.lane, ev.index);
        m_lastLaunchKey = lane.info.kind == LaneKind::GpuStream ? key : UINT64_MAX;
        if (m_lastLaunch.valid())
            m_lastLaunchEnd = m_trace.lane(m_lastLaunch.lane).events.end(m_lastLaunch.index);
    }
    return m_lastLaunch;
}

HostAttribution::StepScope HostAttribution::scopeOf(const GapAnalyzer::StepGapsView& step) const
{
    StepScope s;
    s.w0 = step.w0;
    s.w1 = step.w1;
    for (size_t i = 0; i < step.size(); ++i) { // the window, and every gap in it
        s.w0 = std::min(s.w0, step.raw(i).start);
        s.w1 = std::max(s.w1, step.raw(i).end);
    }
    if (!step.first.valid() || !step.last.valid())
        return s;
    const EventRef a = m_trace.launchOf(step.first.lane, step.first.index);
    const EventRef b = m_trace.launchOf(step.last.lane, step.last.index);
    if (!a.valid() || !b.valid())
        return s;
    const LaneEvents& ea = m_trace.lane(a.lane).events;
    const LaneEvents& eb = m_trace.lane(b.lane).events;
    s.known = true;
    s.several = a.lane != b.lane || a.index != b.index;
    s.launch0 = std::min(ea.start(a.index), eb.start(b.index));
    s.launch1 = std::max(ea.end(a.index), eb.end(b.index));
    return s;
}

bool HostAttribution::stepLevel(const StepScope& scope, LaneId lane, size_t index) const
{
    const LaneKind k = m_trace.lane(lane).info.kind;
    if (!scope.known || k == LaneKind::CpuApi || (!scope.several && k != LaneKind::Nvtx))
        return false;
    const LaneEvents& ev = m_trace.lane(lane).events;
    return ev.start(index) <= scope.launch0 && ev.end(index) >= scope.launch1;
}

void HostAttribution::attribute(Gap& g, const StepScope& scope)
{
    const TimeNs a = g.gap.start, b = g.gap.end;
    g.firstPiece = uint32_t(m_pieces.size());
    if (g.gap.next.valid())
        g.launch = launchOf(g.gap.next);
    if (g.launch.valid() && g.launch.lane == m_reuse.apiLane && a >= m_lastGapStart && b <= m_reuse.until) {
        m_lastGapStart = a;
        m_pieces.push_back(Piece { a, b, m_reuse.host });
        g.pieceCount = 1;
        if (m_reuse.host.valid()) {
            g.explained = b - a;
            g.host = m_reuse.host;
        }
        return;
    }
    m_reuse = Reuse {};
    m_scratch.clear();
    m_sampled.clear();
    if (a < m_lastGapStart) // not in time order: start the step's cursors again
        m_cursors.clear();
    m_lastGapStart = a;
    TimeNs until = INT64_MAX; // when the events that can count here change next
    if (g.launch.valid())
        for (LaneId id : threadLanes(g.launch.lane)) {
            const LaneEvents& ev = m_trace.lane(id).events;
            const LaneKind lk = m_trace.lane(id).info.kind;
            const EventKind want = lk == LaneKind::CpuApi ? EventKind::Api
                : lk == LaneKind::CpuThread               ? EventKind::Host
                                                          : EventKind::Nvtx;
            const uint8_t priority = lk == LaneKind::CpuApi ? 2 : lk == LaneKind::CpuThread ? 1 : 0;
            std::vector<Candidate>& into = m_trace.lane(id).info.isSampledLane() ? m_sampled : m_scratch;
            auto it = std::find_if(m_cursors.begin(), m_cursors.end(), [id](const auto& e) { return e.first == id; });
            const bool fresh = it == m_cursors.end();
            if (fresh)
                it = m_cursors.insert(m_cursors.end(), { id, LaneCursor {} });
            LaneCursor& c = it->second;
            if (fresh)
                std::tie(c.next, c.last) = ev.overlapping(std::min(a, scope.w0), std::max(b, scope.w1));
            // Events that start before the gap ends join the pool (those that can count at all).
            for (; c.next < c.last && ev.start(c.next) < b; ++c.next)
                if (ev.duration(c.next) > 0 && m_trace.kindOf(id, c.next) == want && !stepLevel(scope, id, c.next))
                    c.pool.push_back(uint32_t(c.next));
            // Those that ended before this gap cannot reach a later one either.
            c.pool.erase(
                std::remove_if(c.pool.begin(), c.pool.end(), [&](uint32_t i) { return ev.end(i) <= a; }), c.pool.end());
            if (c.next < c.last)
                until = std::min(until, ev.start(c.next));
            for (uint32_t i : c.pool) {
                if (ev.end(i) > b) // ending by b, it is gone before any later gap
                    until = std::min(until, ev.end(i));
                const uint32_t depth = lk == LaneKind::CpuThread ? m_trace.hostDepth(id, i)
                    : lk == LaneKind::Nvtx                       ? m_trace.nvtxDepth(id, i)
                                                                 : 0;
                into.push_back(Candidate { ev.start(i), ev.end(i), priority, depth, EventRef { id, i } });
            }
        }
    if (m_scratch.empty() && m_sampled.empty()) { // no host event in the gap: one unattributed piece
        m_pieces.push_back(Piece { a, b, EventRef {} });
        g.pieceCount = 1;
        if (g.launch.valid())
            m_reuse = Reuse { g.launch.lane, until, EventRef {} };
        return;
    }
    // Sweep: the innermost active event holds each stretch until it ends or a later one starts. The
    // recorded events come first; sampled call stacks (estimates) explain only what they leave.
    auto emit = [&](TimeNs x, TimeNs y, EventRef host) {
        if (y <= x)
            return;
        if (g.pieceCount > 0) {
            Piece& p = m_pieces.back();
            if (p.end == x && p.host.lane == host.lane && p.host.index == host.index) {
                p.end = y;
                return;
            }
        }
        m_pieces.push_back(Piece { x, y, host });
        ++g.pieceCount;
    };
    sweepInnermost(m_scratch, a, b, [&](TimeNs x, TimeNs y, EventRef host) {
        if (host.valid() || m_sampled.empty())
            emit(x, y, host);
        else
            sweepInnermost(m_sampled, x, y, emit);
    });
    // The event with the most time in the gap, and the explained time.
    TimeNs best = 0;
    for (uint32_t p = g.firstPiece; p < g.firstPiece + g.pieceCount; ++p) {
        const Piece& piece = m_pieces[p];
        if (!piece.host.valid())
            continue;
        g.explained += piece.end - piece.start;
        TimeNs own = 0;
        for (uint32_t q = g.firstPiece; q < g.firstPiece + g.pieceCount; ++q)
            if (m_pieces[q].host.lane == piece.host.lane && m_pieces[q].host.index == piece.host.index)
                own += m_pieces[q].end - m_pieces[q].start;
        if (own > best) {
            best = own;
            g.host = piece.host;
        }
    }
    if (g.pieceCount == 1 && g.launch.valid()) { // one event (or none) all through: later gaps may repeat it
        const EventRef h = m_pieces.back().host;
        if (h.valid())
            until = std::min(until, m_trace.lane(h.lane).events.end(h.index)); // gone once it ends
        m_reuse = Reuse { g.launch.lane, until, h };
    }
}

const std::vector<LaneId>& HostAttribution::processLanes(LaneId apiLane)
{
    const LaneInfo& info = m_trace.lane(apiLane).info;
    return m_process[{ info.rank, info.host, info.pid }];
}

void HostAttribution::explainRest(Gap& g, const StepScope& scope)
{
    m_otherPieces.clear();
    if (g.explained >= g.gap.duration())
        return;
    if (!g.launch.valid()) {
        g.noLaunch = g.gap.duration() - g.explained;
        return;
    }
    if (g.launch.lane != m_lastLaunch.lane || g.launch.index != m_lastLaunch.index) // not the cached one
        m_lastLaunchEnd = m_trace.lane(g.launch.lane).events.end(g.launch.index);
    const TimeNs launchEnd = m_lastLaunchEnd;
    const std::vector<LaneId>* own = nullptr;
    for (uint32_t p = g.firstPiece; p < g.firstPiece + g.pieceCount; ++p) {
        const Piece piece = m_pieces[p];
        if (piece.host.valid())
            continue;
        if (piece.end > launchEnd) // the work was queued from here on
            g.queued += piece.end - std::max(piece.start, launchEnd);
        const TimeNs x = piece.start, y = std::min(piece.end, launchEnd);
        if (x >= y)
            continue;
        if (!own)
            own = &threadLanes(g.launch.lane);
        m_scratch.clear();
        for (LaneId id : processLanes(g.launch.lane)) {
            if (std::find(own->begin(), own->end(), id) != own->end())
                continue;
            const LaneKind lk = m_trace.lane(id).info.kind;
            const EventKind want = lk == LaneKind::CpuApi ? EventKind::Api
                : lk == LaneKind::CpuThread               ? EventKind::Host
                                                          : EventKind::Nvtx;
            const uint8_t priority = lk == LaneKind::CpuApi ? 2 : lk == LaneKind::CpuThread ? 1 : 0;
            const LaneEvents& ev = m_trace.lane(id).events;
            const auto [first, last] = ev.overlapping(x, y);
            for (size_t i = first; i < last; ++i) {
                if (ev.end(i) <= x || ev.start(i) >= y || ev.duration(i) <= 0 || m_trace.kindOf(id, i) != want
                    || stepLevel(scope, id, i))
                    continue;
                const uint32_t depth = lk == LaneKind::CpuThread ? m_trace.hostDepth(id, i)
                    : lk == LaneKind::Nvtx                       ? m_trace.nvtxDepth(id, i)
                                                                 : 0;
                m_scratch.push_back(
                    Candidate { ev.start(i), ev.end(i), priority, depth, EventRef { id, uint32_t(i) } });
            }
        }
        sweepInnermost(m_scratch, x, y, [&](TimeNs s, TimeNs e, EventRef host) {
            if (!host.valid()) {
                g.nothing += e - s;
                return;
            }
            g.otherThreads += e - s;
            if (!m_otherPieces.empty() && m_otherPieces.back().end == s && m_otherPieces.back().host.lane == host.lane
                && m_otherPieces.back().host.index == host.index)
                m_otherPieces.back().end = e;
            else
                m_otherPieces.push_back(Piece { s, e, host });
        });
    }
}

void HostAttribution::findSyncCall(Gap& g, const StepScope& scope)
{
    const TimeNs x = g.gap.start;
    auto it = m_apiLanes.find(g.gap.rank);
    if (it == m_apiLanes.end())
        return;
    bool named = false;
    TimeNs latest = 0;
    for (LaneId id : it->second) {
        const LaneEvents& ev = m_trace.lane(id).events;
        const auto [first, last] = ev.overlapping(x, x + 1);
        for (size_t i = first; i < last; ++i) {
            if (ev.start(i) > x || ev.end(i) <= x || !m_analyzer.blocksHost(id, i))
                continue;
            const bool isApi = m_trace.kindOf(id, i) == EventKind::Api;
            if (g.syncCall.valid() && ((named && !isApi) || (named == isApi && ev.start(i) <= latest)))
                continue;
            g.syncCall = EventRef { id, uint32_t(i) };
            named = isApi;
            latest = ev.start(i);
        }
    }
    if (!g.syncCall.valid())
        return;
    const LaneEvents& call = m_trace.lane(g.syncCall.lane).events;
    const TimeNs c0 = call.start(g.syncCall.index), c1 = call.end(g.syncCall.index);
    TimeNs bestStart = 0, bestLength = 0;
    for (LaneId id : threadLanes(g.syncCall.lane)) {
        const LaneKind lk = m_trace.lane(id).info.kind;
        if (lk == LaneKind::CpuApi)
            continue;
        const LaneEvents& ev = m_trace.lane(id).events;
        const auto [first, last] = ev.overlapping(c0, c1 > c0 ? c1 : c0 + 1);
        for (size_t i = first; i < last; ++i) {
            if (ev.start(i) > c0 || ev.end(i) < c1 || stepLevel(scope, id, i))
                continue;
            const EventKind k = m_trace.kindOf(id, i);
            if (k != EventKind::Host && k != EventKind::Nvtx)
                continue;
            const TimeNs length = ev.duration(i);
            if (!g.syncAround.valid() || ev.start(i) > bestStart || (ev.start(i) == bestStart && length < bestLength)) {
                g.syncAround = EventRef { id, uint32_t(i) };
                bestStart = ev.start(i);
                bestLength = length;
            }
        }
    }
}

void HostAttribution::add(const Gap& g, uint64_t serial, bool keep)
{
    if (!m_current || m_current->rank != g.gap.rank) { // a part attributes one rank at a time
        m_current = &m_byRank[g.gap.rank];
        m_current->rank = g.gap.rank;
        m_currentRows = &m_rowIndex[g.gap.rank];
        m_currentOthers = &m_otherIndex[g.gap.rank];
    }
    Rank& r = *m_current;
    r.rank = g.gap.rank;
    // Rows by (name, kind); a host event counts once per row, and a gap is listed once per row.
    auto addMoments = [&](std::vector<Row>& rows, std::map<std::pair<StringId, const char*>, size_t>& index,
                          const Piece* begin, const Piece* end) {
        for (const Piece* p = begin; p != end; ++p) {
            const Piece& piece = *p;
            if (!piece.host.valid())
                continue;
            const char* kind = hostKindName(m_trace, piece.host);
            const StringId name = m_trace.lane(piece.host.lane).events.name(piece.host.index);
            auto [it, fresh] = index.emplace(std::make_pair(name, kind), rows.size());
            if (fresh)
                rows.push_back(Row { name, kind, 0, 0, {}, UINT64_MAX, EventRef {} });
            Row& row = rows[it->second];
            row.ns += piece.end - piece.start;
            if (row.lastHost != piece.host) {
                row.lastHost = piece.host;
                ++row.count;
            }
            if (row.lastGap != serial) {
                row.lastGap = serial;
                if (keep)
                    row.gaps.push_back(uint32_t(serial));
            }
        }
    };
    const Piece* pieces = m_pieces.data() + g.firstPiece;
    if (g.gap.kind == IdleKind::LaunchHost) {
        r.gapNs += g.gap.duration();
        r.explainedNs += g.explained;
        r.noLaunchNs += g.noLaunch;
        r.queuedNs += g.queued;
        r.otherThreadsNs += g.otherThreads;
        r.nothingNs += g.nothing;
        r.noLaunchGaps += g.noLaunch > 0;
        r.queuedGaps += g.queued > 0;
        r.otherThreadsGaps += g.otherThreads > 0;
        r.nothingGaps += g.nothing > 0;
        if (g.explained > 0)
            addMoments(r.rows, *m_currentRows, pieces, pieces + g.pieceCount);
        if (!m_otherPieces.empty())
            addMoments(
                r.otherThreads, *m_currentOthers, m_otherPieces.data(), m_otherPieces.data() + m_otherPieces.size());
        return;
    }
    r.syncNs += g.gap.duration();
    r.syncExplainedNs += g.explained;
    addMoments(r.syncMoments, m_momentIndex[r.rank], pieces, pieces + g.pieceCount);
    std::string call = "unknown call";
    if (g.syncCall.valid())
        call = m_trace.kindOf(g.syncCall.lane, g.syncCall.index) == EventKind::Api
            ? std::string(m_trace.str(m_trace.lane(g.syncCall.lane).events.name(g.syncCall.index)))
            : syncRecordName(m_trace.sync(g.syncCall.lane, g.syncCall.index));
    const StringId around = g.syncAround.valid() ? m_trace.lane(g.syncAround.lane).events.name(g.syncAround.index) : 0;
    auto [it, fresh] = m_syncIndex[r.rank].emplace(std::make_pair(call, around), r.syncs.size());
    if (fresh)
        r.syncs.push_back(
            SyncRow { call, around, g.syncAround.valid() ? hostKindName(m_trace, g.syncAround) : "", 0, 0, {}, EventRef {} });
    SyncRow& row = r.syncs[it->second];
    row.ns += g.gap.duration();
    if (!g.syncCall.valid() || row.lastCall != g.syncCall)
        ++row.count;
    row.lastCall = g.syncCall;
    if (keep)
        row.gaps.push_back(uint32_t(serial));
}

void HostAttribution::addInGraph(Rank& r, EventRef next, TimeNs ns)
{
    // The node after the gap (the row's key, its path built once per node and rank), else why there is none.
    const GraphNodeInfo* node = nullptr;
    const char* why = "(gap end not known)";
    if (next.valid() && m_trace.kindOf(next.lane, next.index) != EventKind::Kernel) {
        why = "(ended by a copy or memset)";
    } else if (next.valid()) {
        why = "(build not recorded)";
        if (const KernelConfig* c = m_trace.kernelConfig(next.lane, next.index))
            node = m_trace.graphNode(m_trace.lane(next.lane).info.rank, c->graphNodeId);
    }
    r.inGraphNs += ns;
    size_t row = 0;
    auto [cached, fresh] = m_inGraphIndex[r.rank].emplace(node, 0);
    if (!fresh && node) {
        row = cached->second;
    } else {
        const std::string range = !node ? std::string(why)
            : node->ranges.empty()
            ? std::string("(built under no range)")
            : rangePath(node->ranges, [this](StringId id) { return std::string(m_trace.str(id)); });
        auto it = std::find_if(
            r.inGraph.begin(), r.inGraph.end(), [&range](const RangeRow& x) { return x.range == range; });
        if (it == r.inGraph.end())
            it = r.inGraph.insert(r.inGraph.end(), RangeRow { range, 0, 0 });
        row = size_t(it - r.inGraph.begin());
        cached->second = row;
    }
    r.inGraph[row].ns += ns;
    ++r.inGraph[row].count;
}

void HostAttribution::sortRows(Rank& r) const
{
    auto byTime = [this](const Row& x, const Row& y) {
        if (x.ns != y.ns)
            return x.ns > y.ns;
        const int c = m_trace.str(x.name).compare(m_trace.str(y.name));
        return c != 0 ? c < 0 : std::string(x.kind) < std::string(y.kind);
    };
    std::stable_sort(r.rows.begin(), r.rows.end(), byTime);
    std::stable_sort(r.syncMoments.begin(), r.syncMoments.end(), byTime);
    std::stable_sort(r.otherThreads.begin(), r.otherThreads.end(), byTime);
    std::stable_sort(r.inGraph.begin(), r.inGraph.end(),
        [](const RangeRow& x, const RangeRow& y) { return x.ns != y.ns ? x.ns > y.ns : x.range < y.range; });
    std::stable_sort(r.syncs.begin(), r.syncs.end(), [this](const SyncRow& x, const SyncRow& y) {
        if (x.ns != y.ns)
            return x.ns > y.ns;
        return x.call != y.call ? x.call < y.call : m_trace.str(x.around) < m_trace.str(y.around);
    });
}

HostAttribution::HostAttribution(const GapAnalyzer& batched, GapAnalyzer::Batched)
    : HostAttribution(batched)
{
}

void HostAttribution::absorb(const HostAttribution& batch)
{
    auto addRows = [](std::vector<Row>& into, const std::vector<Row>& from) {
        for (const Row& x : from) {
            auto it = std::find_if(into.begin(), into.end(), [&x](const Row& y) {
                return y.name == x.name && std::string_view(y.kind) == std::string_view(x.kind);
            });
            if (it == into.end())
                it = into.insert(into.end(), Row { x.name, x.kind, 0, 0, {}, UINT64_MAX, EventRef {} });
            it->ns += x.ns;
            it->count += x.count;
        }
    };
    for (const Rank& b : batch.m_ranks) {
        auto it = std::lower_bound(
            m_ranks.begin(), m_ranks.end(), b.rank, [](const Rank& r, uint32_t k) { return r.rank < k; });
        if (it == m_ranks.end() || it->rank != b.rank) {
            it = m_ranks.insert(it, Rank {});
            it->rank = b.rank;
            it->gapsKept = false;
        }
        Rank& r = *it;
        for (TimeNs Rank::*f : { &Rank::gapNs, &Rank::explainedNs, &Rank::noLaunchNs, &Rank::queuedNs,
                 &Rank::otherThreadsNs, &Rank::nothingNs, &Rank::syncNs, &Rank::syncExplainedNs, &Rank::inGraphNs })
            r.*f += b.*f;
        for (uint64_t Rank::*f :
            { &Rank::noLaunchGaps, &Rank::queuedGaps, &Rank::otherThreadsGaps, &Rank::nothingGaps })
            r.*f += b.*f;
        addRows(r.rows, b.rows);
        addRows(r.otherThreads, b.otherThreads);
        addRows(r.syncMoments, b.syncMoments);
        for (const RangeRow& x : b.inGraph) {
            auto g = std::find_if(
                r.inGraph.begin(), r.inGraph.end(), [&x](const RangeRow& y) { return y.range == x.range; });
            if (g == r.inGraph.end())
                g = r.inGraph.insert(r.inGraph.end(), RangeRow { x.range, 0, 0 });
            g->ns += x.ns;
            g->count += x.count;
        }
        for (const SyncRow& x : b.syncs) {
            auto s = std::find_if(r.syncs.begin(), r.syncs.end(),
                [&x](const SyncRow& y) { return y.call == x.call && y.around == x.around; });
            if (s == r.syncs.end())
                s = r.syncs.insert(r.syncs.end(), SyncRow { x.call, x.around, x.aroundKind, 0, 0, {}, EventRef {} });
            s->ns += x.ns;
            s->count += x.count;
        }
        sortRows(r);
    }
}

void HostAttribution::finish()
{
    for (auto& [rank, r] : m_byRank) {
        sortRows(r);
        m_ranks.push_back(std::move(r));
    }
    m_byRank.clear();
    m_current = nullptr;
    m_currentRows = m_currentOthers = nullptr;
    m_rowIndex.clear();
    m_momentIndex.clear();
    m_otherIndex.clear();
    m_syncIndex.clear();
    m_inGraphIndex.clear();
}

json::Value hostGapsJson(const Trace& trace, const HostAttribution& host, size_t top)
{
    const auto ms = [](TimeNs ns) { return double(ns) / 1e6; };
    json::Value out = json::Value::array();
    for (const auto& r : host.ranks()) {
        json::Value o = json::Value::object();
        o.set("rank", r.rank);
        o.set("gap_ms", ms(r.gapNs));
        o.set("explained_ms", ms(r.explainedNs));
        o.set("unattributed_ms", ms(r.gapNs - r.explainedNs));
        auto rowsJson = [&](const std::vector<HostAttribution::Row>& rows) {
            json::Value a = json::Value::array();
            for (size_t i = 0; i < rows.size() && i < top; ++i) {
                json::Value e = json::Value::object();
                e.set("name", std::string(trace.str(rows[i].name)));
                e.set("kind", rows[i].kind);
                e.set("ms", ms(rows[i].ns));
                e.set("count", (unsigned long long)rows[i].count);
                a.push(std::move(e));
            }
            return a;
        };
        o.set("top", rowsJson(r.rows));
        json::Value why = json::Value::object();
        why.set("queued_ms", ms(r.queuedNs));
        why.set("other_threads_ms", ms(r.otherThreadsNs));
        why.set("nothing_ms", ms(r.nothingNs));
        why.set("no_launch_ms", ms(r.noLaunchNs));
        o.set("unattributed", std::move(why));
        o.set("other_threads", rowsJson(r.otherThreads));
        out.push(std::move(o));
    }
    return out;
}

} // namespace gapscope::model
