// SPDX-License-Identifier: MIT
#include "model/steps/stepsequence.h"

#include "model/trace/graphnode.h"

#include <algorithm>
#include <map>
#include <unordered_set>

namespace gapscope::model {

namespace {

struct Kernel {
    uint32_t corr;
    TimeNs start, end;
    StringId name;
    const KernelConfig* config; // its graph ids (graphnode.h: a whole replay's node id)
    bool inGraph() const { return config && config->graphId != 0; }
};

// Correlation ids of the rank's graph launches; `anyCalls`: whether any API call was recorded.
std::unordered_set<uint32_t> graphLaunchIds(const Trace& trace, uint32_t rank, bool* anyCalls)
{
    std::unordered_set<uint32_t> out;
    std::unordered_map<StringId, bool> isLaunch;
    *anyCalls = false;
    for (LaneId id : trace.lanesOf(rank, LaneKind::CpuApi)) {
        const LaneEvents& ev = trace.lane(id).events;
        *anyCalls = *anyCalls || ev.size() > 0;
        for (size_t i = 0; i < ev.size(); ++i) {
            if (ev.correlation(i) == 0)
                continue;
            auto [it, fresh] = isLaunch.try_emplace(ev.name(i), false);
            if (fresh)
                it->second = isGraphLaunchName(trace.str(ev.name(i)));
            if (it->second)
                out.insert(ev.correlation(i));
        }
    }
    return out;
}

} // namespace

StepSequence StepSequence::of(const Trace& trace, uint32_t rank)
{
    std::vector<Kernel> ks;
    bool allCorrelated = true;
    for (LaneId id : trace.lanesOf(rank, LaneKind::GpuStream)) {
        const LaneEvents& ev = trace.lane(id).events;
        for (size_t i = 0; i < ev.size(); ++i) {
            if (trace.kindOf(id, i) != EventKind::Kernel)
                continue;
            const uint32_t c = ev.correlation(i);
            allCorrelated = allCorrelated && c != 0;
            ks.push_back({ c, ev.start(i), ev.end(i), ev.name(i), trace.kernelConfig(id, i) });
        }
    }
    if (allCorrelated)
        std::sort(ks.begin(), ks.end(),
            [](const Kernel& a, const Kernel& b) { return a.corr != b.corr ? a.corr < b.corr : a.start < b.start; });
    else
        std::sort(ks.begin(), ks.end(), [](const Kernel& a, const Kernel& b) { return a.start < b.start; });
    bool anyCalls = false;
    const std::unordered_set<uint32_t> graphs
        = allCorrelated ? graphLaunchIds(trace, rank, &anyCalls) : std::unordered_set<uint32_t>();
    // Without recorded calls (a light-mode capture of kernels only) the graph id on a kernel says it was
    // replayed; where calls were recorded, only a recorded graph launch does (an nsys export can name
    // graphs on kernels whose launch it kept no record of).
    const bool byGraphId = allCorrelated && !anyCalls;
    StepSequence s;
    auto names = std::make_shared<std::vector<StringId>>();
    s.byCorrelation = allCorrelated && !ks.empty();
    std::map<std::pair<StringId, uint32_t>, uint64_t> graphSymbols; // (first kernel, kernel count) -> symbol
    for (size_t i = 0; i < ks.size();) {
        size_t j = i + 1;
        // A graph launch: its API call was recorded, or (no calls recorded) its kernels name the graph;
        // grouped by the launch's correlation.
        const bool graph = graphs.count(ks[i].corr) != 0 || (byGraphId && ks[i].inGraph());
        Unit u { ks[i].name, ks[i].start, ks[i].end, ks[i].corr, 1 };
        if (graph) {
            while (j < ks.size() && ks[j].corr == ks[i].corr) {
                u.start = std::min(u.start, ks[j].start);
                u.end = std::max(u.end, ks[j].end);
                ++j;
            }
            u.kernels = uint32_t(j - i);
            u.wholeReplay = u.kernels == 1 && ks[i].inGraph() && isWholeReplayNode(ks[i].config->graphNodeId);
            u.firstKernel = uint32_t(names->size());
            for (size_t k = i; k < j; ++k)
                names->push_back(ks[k].name);
            auto key = std::make_pair(ks[i].name, u.kernels);
            auto [it, fresh] = graphSymbols.try_emplace(key, kGraphSymbol | graphSymbols.size());
            u.symbol = it->second;
            ++s.graphLaunches;
        }
        s.units.push_back(u);
        i = j;
    }
    s.graphKernelNames = std::move(names);
    TimeNs busyUntil = INT64_MIN;
    s.gpuIdleBefore.resize(s.units.size());
    for (size_t i = 0; i < s.units.size(); ++i) {
        s.gpuIdleBefore[i] = busyUntil == INT64_MIN ? 0 : std::max<TimeNs>(0, s.units[i].start - busyUntil);
        busyUntil = std::max(busyUntil, s.units[i].end);
    }
    return s;
}

StepSequence StepSequence::slice(size_t first, size_t last) const
{
    StepSequence s;
    s.byCorrelation = byCorrelation;
    s.graphKernelNames = graphKernelNames;
    s.units.assign(units.begin() + long(first), units.begin() + long(last));
    s.gpuIdleBefore.assign(gpuIdleBefore.begin() + long(first), gpuIdleBefore.begin() + long(last));
    if (!s.gpuIdleBefore.empty())
        s.gpuIdleBefore[0] = 0;
    for (const Unit& u : s.units)
        s.graphLaunches += u.graph() ? 1 : 0;
    return s;
}

StepSequence StepSequence::replayed(size_t unit) const
{
    StepSequence s;
    const Unit& u = units[unit];
    for (uint32_t k = 0; u.graph() && k < u.kernels; ++k) {
        s.units.push_back(Unit { graphKernel(u, k), 0, 0, 0, 1, 0 });
        s.gpuIdleBefore.push_back(0);
    }
    return s;
}

size_t StepSequence::kernelCount(size_t first, size_t last) const
{
    size_t n = 0;
    for (size_t i = first; i < last && i < units.size(); ++i)
        n += units[i].kernels;
    return n;
}

} // namespace gapscope::model
