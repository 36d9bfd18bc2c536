// SPDX-License-Identifier: MIT
#include "model/trace/tracesummary.h"

#include "model/base/taskpool.h"
#include "model/trace/owntime.h"

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
    s.stepKinds = stepKindCounts(trace);
    return s;
}

std::array<uint32_t, kStepKinds> stepKindCounts(const Trace& trace)
{
    std::vector<const std::vector<Step>*> perRank;
    for (uint32_t r : trace.ranks())
        perRank.push_back(&trace.steps(r));
    return stepKindCounts(perRank);
}

std::array<uint32_t, kStepKinds> stepKindCounts(const std::vector<const std::vector<Step>*>& perRank)
{
    std::map<uint32_t, StepKind> kindOf; // aligned step index -> kind (the first rank's that has it)
    for (const std::vector<Step>* steps : perRank)
        for (const Step& st : *steps)
            kindOf.emplace(st.index, st.kind);
    std::array<uint32_t, kStepKinds> counts {};
    for (const auto& [index, kind] : kindOf)
        ++counts[size_t(kind)];
    return counts;
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

// Appends v to a block list: into the last block while it has room, else into a new block twice as
// large (up to 4 MB), so that nothing written is moved again.
void pushBlock(std::vector<std::vector<uint32_t>>& blocks, uint32_t v)
{
    if (blocks.empty() || blocks.back().size() == blocks.back().capacity()) {
        constexpr size_t kFirst = 256, kLargest = size_t(1) << 20;
        const size_t next = blocks.empty() ? kFirst : std::min(kLargest, 2 * blocks.back().capacity());
        blocks.emplace_back().reserve(next);
    }
    blocks.back().push_back(v);
}

// Spans of a block list's first `limit` values.
void spansOf(const std::vector<std::vector<uint32_t>>& blocks, uint64_t limit, std::vector<U32Span>& out)
{
    for (const auto& b : blocks) {
        if (limit == 0)
            return;
        const size_t n = size_t(std::min<uint64_t>(limit, b.size()));
        out.push_back({ b.data(), n });
        limit -= n;
    }
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
    row.kind = step.kind;
    row.label = step.label;
    row.batch = step.batch;
    row.tokens = step.tokens;
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

uint32_t kthOfSpans(const std::vector<U32Span>& spans, uint64_t k)
{
    uint64_t n = 0;
    uint32_t top = 0;
    for (const U32Span& s : spans) {
        n += s.size;
        for (size_t i = 0; i < s.size; ++i)
            top = std::max(top, s.data[i]);
    }
    std::vector<uint32_t> pick;
    if (n <= 65536) { // few: select among a copy
        pick.reserve(size_t(n));
        for (const U32Span& s : spans)
            pick.insert(pick.end(), s.data, s.data + s.size);
        std::nth_element(pick.begin(), pick.begin() + long(k), pick.end());
        return pick[size_t(k)];
    }
    // Buckets of the 16 highest bits in use; the k-th value lies in the bucket where the count passes k.
    int width = 0;
    while (width < 32 && (top >> width) != 0)
        ++width;
    const int shift = std::max(0, width - 16);
    std::vector<uint64_t> count(size_t(1) << 16);
    for (const U32Span& s : spans)
        for (size_t i = 0; i < s.size; ++i)
            ++count[s.data[i] >> shift];
    uint32_t bucket = 0;
    while (k >= count[bucket])
        k -= count[bucket++];
    pick.reserve(size_t(count[bucket]));
    for (const U32Span& s : spans)
        for (size_t i = 0; i < s.size; ++i)
            if ((s.data[i] >> shift) == bucket)
                pick.push_back(s.data[i]);
    std::nth_element(pick.begin(), pick.begin() + long(k), pick.end());
    return pick[size_t(k)];
}

void KernelTableBuilder::Durations::add(TimeNs d, TimeNs ownNs)
{
    if (ownNs != d && ownFrom == kAll) { // once per name and share: the raw durations so far
        ownFrom = 0;
        for (const auto& b : raw)
            ownFrom += b.size();
    }
    pushBlock(raw, saturated(d));
    if (ownFrom != kAll)
        pushBlock(own, saturated(ownNs));
}

void KernelTableBuilder::Share::addLane(const Trace& trace, const Lane& lane, TimeNs from, TimeNs to)
{
    constexpr uint32_t kNone = UINT32_MAX;
    if (rowOf.size() < trace.stringCount())
        rowOf.resize(trace.stringCount(), kNone);
    forEachKernel(trace, lane, [&](const LaneEvents& ev, size_t i, TimeNs own) {
        if (ev.start(i) < from || ev.start(i) >= to)
            return;
        const StringId name = ev.name(i);
        const TimeNs d = ev.duration(i);
        if (name >= rowOf.size())
            rowOf.resize(size_t(name) + 1, kNone);
        if (rowOf[name] == kNone) {
            rowOf[name] = uint32_t(rows.size());
            KernelRow row;
            row.name = name;
            row.min = row.max = d;
            rows.push_back(row);
            durations.emplace_back();
        }
        KernelRow& row = rows[rowOf[name]];
        ++row.count;
        row.total += d;
        row.ownTotal += own;
        row.min = std::min(row.min, d);
        row.max = std::max(row.max, d);
        durations[rowOf[name]].add(d, own);
    });
}

void KernelTableBuilder::add(const Trace& trace, TimeNs from, TimeNs to)
{
    std::vector<const Lane*> lanes;
    for (const Lane& lane : trace.lanes())
        if (lane.info.kind == LaneKind::GpuStream && !lane.events.empty())
            lanes.push_back(&lane);
    // Streams on the pool, each task into its share (the rows are sums, and a median does not depend
    // on the order of its durations, so which share counts a stream does not matter).
    if (m_shares.size() < lanes.size())
        m_shares.resize(lanes.size());
    TaskPool::shared().parallelFor(lanes.size(), [&](size_t k) { m_shares[k].addLane(trace, *lanes[k], from, to); });
}

std::vector<KernelRow> KernelTableBuilder::finish(
    KernelOrder order, const std::function<std::string_view(StringId)>& name)
{
    // Rows joined by name, in the order the shares first saw them; each share's durations of a row.
    constexpr uint32_t kNone = UINT32_MAX;
    std::vector<uint32_t> rowOf;
    std::vector<KernelRow> rows;
    std::vector<std::vector<const Durations*>> parts;
    for (const Share& share : m_shares)
        for (size_t r = 0; r < share.rows.size(); ++r) {
            const KernelRow& src = share.rows[r];
            if (src.name >= rowOf.size())
                rowOf.resize(size_t(src.name) + 1, kNone);
            if (rowOf[src.name] == kNone) {
                rowOf[src.name] = uint32_t(rows.size());
                rows.push_back(src);
                parts.push_back({ &share.durations[r] });
                continue;
            }
            KernelRow& row = rows[rowOf[src.name]];
            row.count += src.count;
            row.total += src.total;
            row.ownTotal += src.ownTotal;
            row.min = std::min(row.min, src.min);
            row.max = std::max(row.max, src.max);
            parts[rowOf[src.name]].push_back(&share.durations[r]);
        }
    TaskPool::shared().parallelFor(rows.size(), [&](size_t r) {
        std::vector<U32Span> spans;
        bool overlapped = false;
        for (const Durations* du : parts[r]) {
            spansOf(du->raw, Durations::kAll, spans);
            overlapped |= du->ownFrom != Durations::kAll;
        }
        rows[r].median = kthOfSpans(spans, rows[r].count / 2);
        if (!overlapped) {
            rows[r].ownMedian = rows[r].median;
            return;
        }
        spans.clear();
        for (const Durations* du : parts[r]) {
            spansOf(du->raw, du->ownFrom, spans); // own = raw before the first that differs
            spansOf(du->own, Durations::kAll, spans);
        }
        rows[r].ownMedian = kthOfSpans(spans, rows[r].count / 2);
    });
    m_shares.clear();
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

} // namespace gapscope::model
