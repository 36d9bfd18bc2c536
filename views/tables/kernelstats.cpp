// SPDX-License-Identifier: MIT
#include "views/tables/kernelstats.h"

#include "model/trace/kernelname.h"
#include "model/trace/owntime.h"
#include "views/common/eventcolors.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

using namespace gapscope::model;
namespace pb = gapscope::pb;

namespace {

const QString kMemoryOps = QString::fromLatin1(barInfo(BarId::MemoryOps).name); // the bucket of copies and sets

// Bucket of events sharing a name (string id) or, for unnamed memory operations, a copy kind.
struct Bucket {
    std::vector<uint32_t> durations; // saturated at UINT32_MAX ns (4.3 s): fine for percentiles
    double total = 0;
    double own = 0;
    uint64_t bytes = 0;
    int component = -1; // index into EventColors::components(), -2 = memory ops
};

QString copyKindName(CopyKind k)
{
    return k == CopyKind::Unknown ? QStringLiteral("memcpy")
                                  : QStringLiteral("memcpy ") + QString::fromLatin1(toString(k));
}

double quantile(std::vector<uint32_t>& v, double q)
{
    if (v.empty())
        return 0;
    const size_t k = std::min(v.size() - 1, size_t(std::llround(q * double(v.size() - 1))));
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(k), v.end());
    return v[k];
}

NameStats finish(const QString& name, const QString& component, Bucket& b, double stepTime)
{
    NameStats s;
    s.name = name;
    s.shortName = QString::fromStdString(gapscope::model::shortKernelName(name.toStdString()));
    s.component = component;
    s.count = b.durations.size();
    s.totalNs = b.total;
    s.ownTotalNs = b.own;
    s.meanNs = s.count ? b.total / double(s.count) : 0;
    s.p50Ns = quantile(b.durations, 0.5);
    s.p99Ns = quantile(b.durations, 0.99);
    s.maxNs = b.durations.empty() ? 0 : *std::max_element(b.durations.begin(), b.durations.end());
    s.bytes = b.bytes;
    s.percentOfStep = stepTime > 0 ? 100.0 * b.total / stepTime : 0;
    return s;
}

double stepTimeIn(const Trace& trace, const StatsScope& scope, uint32_t& steps, uint32_t& ranks)
{
    double total = 0;
    steps = 0;
    ranks = 0;
    for (uint32_t r : trace.ranks()) {
        if (scope.rank >= 0 && uint32_t(scope.rank) != r)
            continue;
        ++ranks;
        const auto& st = trace.steps(r);
        if (st.empty()) {
            total += double(std::min(scope.t1, trace.endTime()) - std::max(scope.t0, trace.startTime()));
            continue;
        }
        for (const Step& s : st) {
            const TimeNs a = std::max(s.start, scope.t0), b = std::min(s.end, scope.t1);
            if (b > a) {
                total += double(b - a);
                ++steps;
            }
        }
    }
    return total;
}

} // namespace

KernelStatsResult computeKernelStats(
    const Trace& trace, const StatsScope& scope, const EventColors* colors, const JobTracker::Ticket& ticket)
{
    KernelStatsResult result;
    result.stepTimeNs = stepTimeIn(trace, scope, result.steps, result.ranks);
    std::vector<Bucket> byName(trace.stringCount());
    Bucket copies[8];
    for (LaneId id = 0; id < trace.laneCount(); ++id) {
        const Lane& lane = trace.lane(id);
        if (lane.info.kind != LaneKind::GpuStream || (scope.rank >= 0 && lane.info.rank != uint32_t(scope.rank)))
            continue;
        if (ticket.stale() && ticket.id() != 0) {
            result.canceled = true;
            return result;
        }
        const LaneEvents& ev = lane.events;
        const auto& starts = ev.starts();
        size_t i = size_t(std::lower_bound(starts.begin(), starts.end(), scope.t0) - starts.begin());
        // The latest end of the stream's events before i: only those still running at t0 can matter.
        OwnTime stream;
        const auto running = ev.overlapping(scope.t0, scope.t1);
        for (size_t k = running.first; k < std::min(i, running.second); ++k)
            stream.seed(ev.end(k));
        for (; i < ev.size() && ev.start(i) < scope.t1; ++i) {
            const TimeNs d = ev.duration(i);
            const TimeNs own = stream.duration(ev.start(i), ev.end(i));
            const EventKind kind = trace.kindOf(id, i);
            Bucket* b = &byName[ev.name(i)];
            if (kind == EventKind::Memcpy || kind == EventKind::Memset) {
                const MemopInfo* m = trace.memop(id, i);
                if (ev.name(i) == 0)
                    b = &copies[m && kind == EventKind::Memcpy ? std::min<int>(7, int(m->copyKind)) : 7];
                b->bytes += m ? m->bytes : 0;
                b->component = -2;
            }
            b->durations.push_back(uint32_t(std::min<TimeNs>(d, UINT32_MAX)));
            b->total += double(d);
            b->own += double(own);
        }
    }
    auto componentName = [&](int c, StringId id) -> QString {
        if (c == -2)
            return kMemoryOps;
        const int k = colors ? colors->component(id) : -1;
        return k >= 0 ? colors->components()[size_t(k)] : QString();
    };
    std::unordered_map<QString, Bucket> comps;
    auto merge = [&](const QString& comp, const Bucket& b) {
        Bucket& c = comps[comp.isEmpty() ? QString::fromLatin1(barInfo(BarId::UnclassifiedKernels).name) : comp];
        c.durations.insert(c.durations.end(), b.durations.begin(), b.durations.end());
        c.total += b.total;
        c.own += b.own;
        c.bytes += b.bytes;
    };
    for (StringId id = 0; id < byName.size(); ++id) {
        if (byName[id].durations.empty())
            continue;
        const QString comp = componentName(byName[id].component, id);
        merge(comp, byName[id]);
        const QString name = id == 0 ? QStringLiteral("(unnamed)") : QString::fromStdString(std::string(trace.str(id)));
        result.names.push_back(finish(name, comp, byName[id], result.stepTimeNs));
    }
    for (int k = 0; k < 8; ++k) {
        if (copies[k].durations.empty())
            continue;
        merge(kMemoryOps, copies[k]);
        const QString name
            = k == 7 ? QStringLiteral("memset / memcpy") : copyKindName(CopyKind(k));
        result.names.push_back(finish(name, kMemoryOps, copies[k], result.stepTimeNs));
    }
    for (auto& [comp, b] : comps)
        result.components.push_back(finish(comp, comp, b, result.stepTimeNs));
    auto byTotal = [](const NameStats& a, const NameStats& b) { return a.totalNs > b.totalNs; };
    std::sort(result.names.begin(), result.names.end(), byTotal);
    std::sort(result.components.begin(), result.components.end(), byTotal);
    return result;
}
