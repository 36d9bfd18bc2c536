// SPDX-License-Identifier: MIT
#include "model/tracesummary.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <unordered_map>

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
        for (size_t i = 0; i < lane.events.size(); ++i) {
            const EventKind k = trace.kindOf(lane.id, i);
            ++s.byKind[size_t(k)];
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

std::vector<StepRow> stepTable(const Trace& trace)
{
    std::vector<StepRow> rows;
    for (uint32_t r : trace.ranks()) {
        const auto& steps = trace.steps(r);
        const auto gpu = trace.lanesOf(r, LaneKind::GpuStream);
        for (size_t i = 0; i < steps.size(); ++i) {
            StepRow row;
            row.rank = r;
            row.index = steps[i].index;
            row.start = steps[i].start;
            row.gpuSpan = steps[i].duration();
            const TimeNs end = i + 1 < steps.size() ? steps[i + 1].start : steps[i].end;
            row.window = end - steps[i].start;
            for (LaneId id : gpu) {
                const Lane& lane = trace.lane(id);
                auto t = lane.summary.totals(lane.events, steps[i].start, end);
                row.busy += t.busy;
                auto [a, b] = lane.events.overlapping(steps[i].start, end);
                for (size_t k = a; k < b; ++k)
                    row.kernels += trace.kindOf(id, k) == EventKind::Kernel && lane.events.start(k) >= steps[i].start;
            }
            rows.push_back(row);
        }
    }
    return rows;
}

std::vector<KernelRow> kernelTable(const Trace& trace)
{
    std::unordered_map<StringId, std::vector<uint32_t>> durations; // saturating: medians of normal kernels
    std::unordered_map<StringId, KernelRow> rows;
    for (const Lane& lane : trace.lanes()) {
        if (lane.info.kind != LaneKind::GpuStream)
            continue;
        const LaneEvents& ev = lane.events;
        for (size_t i = 0; i < ev.size(); ++i) {
            if (trace.kindOf(lane.id, i) != EventKind::Kernel)
                continue;
            const TimeNs d = ev.duration(i);
            KernelRow& row = rows[ev.name(i)];
            if (row.count == 0)
                row.min = row.max = d;
            row.name = ev.name(i);
            ++row.count;
            row.total += d;
            row.min = std::min(row.min, d);
            row.max = std::max(row.max, d);
            durations[ev.name(i)].push_back(uint32_t(std::min<TimeNs>(d, UINT32_MAX)));
        }
    }
    std::vector<KernelRow> out;
    for (auto& [name, row] : rows) {
        auto& v = durations[name];
        std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
        row.median = v[v.size() / 2];
        out.push_back(row);
    }
    std::sort(out.begin(), out.end(), [&trace](const KernelRow& a, const KernelRow& b) {
        return a.total != b.total ? a.total > b.total : trace.str(a.name) < trace.str(b.name);
    });
    return out;
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

const pb::OverheadEvidence* captureOverhead(const Trace& trace, uint32_t rank)
{
    for (const auto& r : trace.header().ranks())
        if (r.rank() == rank && r.has_overhead()) {
            const pb::OverheadEvidence& o = r.overhead();
            if (o.steps_before() > 0 && o.steps_during() > 0 && o.step_ms_median_before() > 0)
                return &o;
        }
    return nullptr;
}

double captureOverheadPct(const pb::OverheadEvidence& o)
{
    return 100.0 * (o.step_ms_median_during() - o.step_ms_median_before()) / o.step_ms_median_before();
}

json::Value captureOverheadJson(const pb::OverheadEvidence& o)
{
    json::Value c = json::Value::object();
    c.set("steps_before", o.steps_before());
    c.set("before_ms", o.step_ms_median_before());
    c.set("steps_during", o.steps_during());
    c.set("during_ms", o.step_ms_median_during());
    c.set("pct", captureOverheadPct(o));
    c.set("arm_latency_ms", o.arm_latency_ms());
    return c;
}

} // namespace gapscope::model
