// SPDX-License-Identifier: MIT
#include "model/tracesummary.h"

#include "model/owntime.h"
#include "model/taskpool.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>

namespace gapscope::model {

TraceStats traceStats(const Trace& trace)
{
    TraceStats s;
    std::map<uint32_t, RankStats> ranks;
    for (uint32_t r : trace.ranks())
        ranks[r].rank = r;
    for (const Lane& lane : trace.lanes()) {
        RankStats& rs = ranks[lane.info.rank];
        rs.rank = lane.info.rank;
        ++rs.lanes;
        rs.events += lane.events.size();
        s.cpuThreads += lane.info.kind == LaneKind::CpuThread && !lane.events.empty() ? 1 : 0;
        for (size_t i = 0; i < lane.events.size(); ++i) {
            const EventKind k = trace.kindOf(lane.id, i);
            ++s.byKind[size_t(k)];
            if (k == EventKind::Host)
                ++s.byHostKind[size_t(trace.hostKind(lane.id, i))];
            if (k == EventKind::Kernel) {
                ++rs.kernels;
                rs.kernelTime += lane.events.duration(i);
            }
        }
    }
    for (auto& [r, rs] : ranks) {
        rs.steps = uint32_t(trace.steps(r).size());
        if (!trace.steps(r).empty())
            s.stepSource = trace.steps(r).front().source;
        s.kernels += rs.kernels;
        s.kernelTime += rs.kernelTime;
        s.ranks.push_back(rs);
    }
    return s;
}

namespace {

// Busy time of one stream in [w0, w1): the union of its events' intervals clipped to the window (a
// PDL kernel that starts before the previous one ends adds only what lies past that end). Also
// counts the kernels that start in the window.
void addLaneBusy(const Trace& trace, LaneId id, TimeNs w0, TimeNs w1, StepRow& row)
{
    const LaneEvents& ev = trace.lane(id).events;
    auto [a, b] = ev.overlapping(w0, w1); // every event in the range starts before w1
    TimeNs covered = w0; // the union so far ends here
    for (size_t k = a; k < b; ++k) {
        const TimeNs st = ev.start(k);
        const TimeNs from = std::max(st, covered), to = std::min(ev.end(k), w1);
        if (to > from) {
            row.busy += to - from;
            covered = to;
        }
        row.kernels += trace.kindOf(id, k) == EventKind::Kernel && st >= w0;
    }
}

// Calls fn(events, index, own) for every kernel of one GPU stream, in event order. own is the kernel's
// own time (OwnTime).
template <class Fn> void forEachKernel(const Trace& trace, const Lane& lane, Fn&& fn)
{
    const LaneEvents& ev = lane.events;
    OwnTime stream;
    for (size_t i = 0; i < ev.size(); ++i) {
        const TimeNs own = stream.duration(ev.start(i), ev.end(i));
        if (trace.kindOf(lane.id, i) == EventKind::Kernel)
            fn(ev, i, own);
    }
}

uint32_t saturated(TimeNs d)
{
    return uint32_t(std::min<TimeNs>(d, UINT32_MAX));
}

TimeNs medianOf(std::vector<uint32_t>& v)
{
    std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
    return v[v.size() / 2];
}

} // namespace

StepRow stepRow(const Trace& trace, uint32_t rank, const Step& step, TimeNs windowEnd)
{
    StepRow row;
    row.rank = rank;
    row.index = step.index;
    row.start = step.start;
    row.gpuSpan = step.duration();
    row.window = windowEnd - step.start;
    for (LaneId id : trace.lanesOf(rank, LaneKind::GpuStream))
        addLaneBusy(trace, id, step.start, windowEnd, row);
    return row;
}

std::vector<StepRow> stepTable(const Trace& trace)
{
    std::vector<StepRow> rows;
    for (uint32_t r : trace.ranks()) {
        const auto& steps = trace.steps(r);
        for (size_t i = 0; i < steps.size(); ++i)
            rows.push_back(stepRow(trace, r, steps[i], i + 1 < steps.size() ? steps[i + 1].start : steps[i].end));
    }
    return rows;
}

void KernelTableBuilder::Durations::add(TimeNs d, TimeNs ownNs)
{
    if (ownNs != d && !overlapped) {
        own = raw;
        overlapped = true;
    }
    raw.push_back(saturated(d));
    if (overlapped)
        own.push_back(saturated(ownNs));
}

void KernelTableBuilder::Durations::append(Durations&& o)
{
    if (o.overlapped && !overlapped) {
        own = raw;
        overlapped = true;
    }
    const std::vector<uint32_t>& ownOf = o.overlapped ? o.own : o.raw;
    if (raw.empty() && !overlapped)
        raw = std::move(o.raw);
    else
        raw.insert(raw.end(), o.raw.begin(), o.raw.end());
    if (overlapped)
        own.insert(own.end(), ownOf.begin(), ownOf.end());
}

void KernelTableBuilder::addLane(const Trace& trace, const Lane& lane, TimeNs from, TimeNs to)
{
    constexpr uint32_t kNone = UINT32_MAX;
    if (m_rowOf.size() < trace.stringCount())
        m_rowOf.resize(trace.stringCount(), kNone);
    forEachKernel(trace, lane, [&](const LaneEvents& ev, size_t i, TimeNs own) {
        if (ev.start(i) < from || ev.start(i) >= to)
            return;
        const StringId name = ev.name(i);
        const TimeNs d = ev.duration(i);
        if (name >= m_rowOf.size())
            m_rowOf.resize(size_t(name) + 1, kNone);
        if (m_rowOf[name] == kNone) {
            m_rowOf[name] = uint32_t(m_rows.size());
            KernelRow row;
            row.name = name;
            row.min = row.max = d;
            m_rows.push_back(row);
            m_durations.emplace_back();
        }
        KernelRow& row = m_rows[m_rowOf[name]];
        ++row.count;
        row.total += d;
        row.ownTotal += own;
        row.min = std::min(row.min, d);
        row.max = std::max(row.max, d);
        m_durations[m_rowOf[name]].add(d, own);
    });
}

void KernelTableBuilder::merge(KernelTableBuilder&& part)
{
    constexpr uint32_t kNone = UINT32_MAX;
    if (m_rowOf.size() < part.m_rowOf.size())
        m_rowOf.resize(part.m_rowOf.size(), kNone);
    for (size_t r = 0; r < part.m_rows.size(); ++r) {
        const KernelRow& src = part.m_rows[r];
        if (m_rowOf[src.name] == kNone) {
            m_rowOf[src.name] = uint32_t(m_rows.size());
            m_rows.push_back(src);
            m_durations.push_back(std::move(part.m_durations[r]));
            continue;
        }
        KernelRow& row = m_rows[m_rowOf[src.name]];
        row.count += src.count;
        row.total += src.total;
        row.ownTotal += src.ownTotal;
        row.min = std::min(row.min, src.min);
        row.max = std::max(row.max, src.max);
        m_durations[m_rowOf[src.name]].append(std::move(part.m_durations[r]));
    }
}

void KernelTableBuilder::add(const Trace& trace, TimeNs from, TimeNs to)
{
    std::vector<const Lane*> lanes;
    for (const Lane& lane : trace.lanes())
        if (lane.info.kind == LaneKind::GpuStream && !lane.events.empty())
            lanes.push_back(&lane);
    // Streams on the pool, each into a part of its own; the parts join in stream order (the rows are
    // sums, and a median does not depend on the order of its durations).
    std::vector<KernelTableBuilder> parts(lanes.size());
    TaskPool::shared().parallelFor(lanes.size(), [&](size_t k) { parts[k].addLane(trace, *lanes[k], from, to); });
    for (KernelTableBuilder& part : parts)
        merge(std::move(part));
}

void KernelTableBuilder::expect(double factor)
{
    for (Durations& du : m_durations) {
        du.raw.reserve(size_t(double(du.raw.size()) * factor) + 1024);
        if (du.overlapped)
            du.own.reserve(size_t(double(du.own.size()) * factor) + 1024);
    }
}

std::vector<KernelRow> KernelTableBuilder::finish(
    KernelOrder order, const std::function<std::string_view(StringId)>& name)
{
    std::vector<KernelRow> rows = std::move(m_rows);
    TaskPool::shared().parallelFor(rows.size(), [&](size_t r) {
        Durations& du = m_durations[r];
        rows[r].median = medianOf(du.raw);
        rows[r].ownMedian = du.overlapped ? medianOf(du.own) : rows[r].median;
    });
    m_rows.clear();
    m_durations.clear();
    m_rowOf.clear();
    const bool byOwn = order == KernelOrder::Own;
    std::sort(rows.begin(), rows.end(), [&name, byOwn](const KernelRow& a, const KernelRow& b) {
        const TimeNs ta = byOwn ? a.ownTotal : a.total, tb = byOwn ? b.ownTotal : b.total;
        return ta != tb ? ta > tb : name(a.name) < name(b.name);
    });
    return rows;
}

std::vector<KernelRow> kernelTable(const Trace& trace, KernelOrder order)
{
    KernelTableBuilder b;
    b.add(trace);
    return b.finish(order, [&trace](StringId id) { return trace.str(id); });
}

std::string formatDuration(TimeNs ns)
{
    char b[64];
    const double v = double(ns);
    if (ns < 0)
        return "-" + formatDuration(-ns);
    if (ns < 1000)
        std::snprintf(b, sizeof b, "%lld ns", (long long)ns);
    else if (ns < 1000000)
        std::snprintf(b, sizeof b, "%.3f us", v / 1e3);
    else if (ns < 1000000000)
        std::snprintf(b, sizeof b, "%.3f ms", v / 1e6);
    else
        std::snprintf(b, sizeof b, "%.3f s", v / 1e9);
    return b;
}

const OverheadEvidence* captureOverhead(const TraceHeader& header, uint32_t rank)
{
    for (const auto& r : header.ranks)
        if (r.rank == rank && r.hasOverhead) {
            const OverheadEvidence& o = r.overhead;
            if (o.stepsBefore > 0 && o.stepsDuring > 0 && o.stepMsMedianBefore > 0)
                return &o;
        }
    return nullptr;
}

double captureOverheadPct(const OverheadEvidence& o)
{
    return 100.0 * (o.stepMsMedianDuring - o.stepMsMedianBefore) / o.stepMsMedianBefore;
}

json::Value captureOverheadJson(const OverheadEvidence& o)
{
    json::Value c = json::Value::object();
    c.set("steps_before", o.stepsBefore);
    c.set("before_ms", o.stepMsMedianBefore);
    c.set("steps_during", o.stepsDuring);
    c.set("during_ms", o.stepMsMedianDuring);
    c.set("pct", captureOverheadPct(o));
    c.set("arm_latency_ms", o.armLatencyMs);
    return c;
}

} // namespace gapscope::model
