// SPDX-License-Identifier: MIT
#include "model/analysis/kernelranges.h"

#include "model/base/patternmatcher.h"
#include "model/format/wholegraph.h"
#include "model/trace/owntime.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace gapscope::model {

const char* toString(RangeSource s)
{
    switch (s) {
    case RangeSource::None:
        return "none";
    case RangeSource::Launch:
        return "launch";
    case RangeSource::Capture:
        return "capture";
    case RangeSource::Inferred:
        return "inferred";
    }
    return "none";
}

namespace {

// The pattern of ranges left out of paths: the option's, else the NVTX step rule's ("nvtx:PATTERN").
std::optional<PatternMatcher> skipPattern(const Trace& trace, const KernelRangeOptions& options)
{
    std::string pattern = options.skip;
    const std::string& rule = trace.stepReport().rule;
    if (pattern.empty() && rule.rfind("nvtx:", 0) == 0)
        pattern = rule.substr(5);
    if (pattern.empty())
        return std::nullopt;
    auto m = PatternMatcher::compile(pattern);
    if (!m)
        return std::nullopt;
    return std::move(*m);
}

bool isGraphKernel(const KernelConfig* c)
{
    return c && c->graphId != 0 && c->graphNodeId != 0 && c->graphNodeId != format::kWholeGraphNode;
}

// A range open on a host thread (NVTX push/pop or a user annotation).
struct HostRange {
    TimeNs start, end;
    StringId name;
};

} // namespace

uint32_t KernelRanges::intern(std::vector<std::string> parts, RangeSource source)
{
    if (parts.empty())
        return 0;
    std::string text;
    for (const std::string& p : parts)
        text += (text.empty() ? "" : " > ") + p;
    const std::string key = std::to_string(int(source)) + text;
    auto [it, inserted] = m_pathIds.emplace(key, uint32_t(m_paths.size()));
    if (inserted) {
        m_paths.push_back(std::move(text));
        m_parts.push_back(std::move(parts));
        m_sources.push_back(source);
    }
    return it->second;
}

uint32_t KernelRanges::pathOf(LaneId lane, size_t index) const
{
    if (lane >= m_byLane.size() || index >= m_byLane[lane].size())
        return 0;
    return m_byLane[lane][index];
}

KernelRanges::LayerBlock KernelRanges::findLayers(const std::vector<uint32_t>& s)
{
    LayerBlock best;
    const size_t n = s.size();
    size_t bestCover = 0;
    for (size_t p = kMinPeriod; p * 2 <= n; ++p) {
        size_t run = 0, runStart = 0;
        for (size_t i = 0; i + p < n; ++i) {
            if (s[i] != s[i + p]) {
                run = 0;
                continue;
            }
            if (run++ == 0)
                runStart = i;
            const size_t cover = run + p; // positions [runStart, runStart + run + p) repeat with period p
            if (run >= p && cover > bestCover) {
                bestCover = cover;
                best.period = p;
                best.first = runStart;
                best.layers = cover / p;
            }
        }
    }
    best.nodes = n;
    return best;
}

KernelRanges KernelRanges::of(const Trace& trace, const KernelRangeOptions& options)
{
    KernelRanges out;
    const std::optional<PatternMatcher> skip = skipPattern(trace, options);
    // The step markers: ranges named as a step's annotation ("decode step 836"), and the pattern's.
    std::unordered_map<StringId, bool> skipped;
    for (uint32_t rank : trace.ranks())
        for (const Step& st : trace.steps(rank))
            if (!st.label.empty())
                if (auto id = trace.findString(st.label))
                    skipped[*id] = true;
    auto keep = [&](StringId name) {
        auto [it, inserted] = skipped.emplace(name, false);
        if (inserted && skip)
            it->second = skip->search(trace.str(name));
        return !it->second;
    };
    auto pathParts = [&](const std::vector<StringId>& ranges) {
        std::vector<std::string> parts;
        for (StringId id : ranges)
            if (keep(id))
                parts.emplace_back(trace.str(id));
        return parts;
    };
    std::vector<uint32_t> layerPaths; // "layer k (inferred)", interned once per k
    auto layerPath = [&out, &layerPaths](size_t k) {
        while (layerPaths.size() <= k)
            layerPaths.push_back(
                out.intern({ "layer " + std::to_string(layerPaths.size()) + " (inferred)" }, RangeSource::Inferred));
        return layerPaths[k];
    };
    out.m_byLane.resize(trace.laneCount());

    // Graph kernels: the build context of their node; the others of each graph to layer inference.
    struct GraphKey {
        uint32_t rank;
        uint64_t graph;
        bool operator<(const GraphKey& o) const { return rank != o.rank ? rank < o.rank : graph < o.graph; }
    };
    std::map<GraphKey, std::map<uint64_t, StringId>> unknownNodes; // node id -> kernel name
    std::unordered_map<const GraphNodeInfo*, uint32_t> nodePath; // each node's path, interned once
    std::vector<std::pair<LaneId, uint32_t>> launchedEager;
    for (const Lane& lane : trace.lanes()) {
        if (lane.info.kind != LaneKind::GpuStream)
            continue;
        const LaneEvents& ev = lane.events;
        std::vector<uint32_t>& ids = out.m_byLane[lane.id];
        ids.assign(ev.size(), 0);
        for (size_t i = 0; i < ev.size(); ++i) {
            if (trace.kindOf(lane.id, i) != EventKind::Kernel)
                continue;
            const KernelConfig* c = trace.kernelConfig(lane.id, i);
            if (!isGraphKernel(c)) {
                launchedEager.push_back({ lane.id, uint32_t(i) });
                continue;
            }
            ++out.m_graphKernels;
            const GraphNodeInfo* node
                = options.ignoreNodeTable ? nullptr : trace.graphNode(lane.info.rank, c->graphNodeId);
            if (node)
                ++out.m_graphWithContext;
            // A node built under no range (left) is placed by layer inference like one without a context.
            uint32_t id = 0;
            if (node) {
                auto [cached, fresh] = nodePath.emplace(node, 0);
                if (fresh)
                    cached->second = out.intern(pathParts(node->ranges), RangeSource::Capture);
                id = cached->second;
            }
            if (id) {
                ids[i] = id;
                ++out.m_counts[size_t(RangeSource::Capture)];
            } else {
                unknownNodes[{ lane.info.rank, c->graphId }].emplace(c->graphNodeId, ev.name(i));
            }
        }
    }

    // Layer inference per graph; node ids in creation order.
    std::map<std::pair<uint32_t, uint64_t>, uint32_t> inferred; // (rank, node) -> path id
    for (const auto& [key, nodes] : unknownNodes) {
        std::vector<uint32_t> symbols;
        std::vector<uint64_t> order;
        for (const auto& [node, name] : nodes) {
            symbols.push_back(name);
            order.push_back(node);
        }
        LayerBlock b = findLayers(symbols);
        b.rank = key.rank;
        b.graphId = key.graph;
        out.m_blocks.push_back(b);
        if (!b.period)
            continue;
        for (size_t k = 0; k < b.layers; ++k)
            for (size_t j = 0; j < b.period; ++j)
                inferred[{ key.rank, order[b.first + k * b.period + j] }] = layerPath(k);
    }
    if (!inferred.empty() || !unknownNodes.empty()) {
        for (const Lane& lane : trace.lanes()) {
            if (lane.info.kind != LaneKind::GpuStream)
                continue;
            std::vector<uint32_t>& ids = out.m_byLane[lane.id];
            for (size_t i = 0; i < lane.events.size(); ++i) {
                if (trace.kindOf(lane.id, i) != EventKind::Kernel)
                    continue;
                const KernelConfig* c = trace.kernelConfig(lane.id, i);
                if (!isGraphKernel(c) || ids[i] != 0)
                    continue; // not a graph kernel, or placed by its build context
                auto it = inferred.find({ lane.info.rank, c->graphNodeId });
                ids[i] = it == inferred.end() ? 0 : it->second;
                ++out.m_counts[size_t(ids[i] ? RangeSource::Inferred : RangeSource::None)];
            }
        }
    }

    // Eager kernels: the ranges open on the launching thread when the launch started, by one sweep per
    // thread over its launches in time order.
    struct Launch {
        TimeNs time;
        LaneId lane;
        uint32_t index;
    };
    std::map<std::pair<uint32_t, uint64_t>, std::vector<Launch>> byThread; // (rank, thread) -> launches
    // Kernels of a graph launch that carry no node id (torch.profiler's traces): one replay per launch, in
    // start order, layers inferred per replay (the same sequence is looked at once).
    std::map<std::pair<LaneId, uint32_t>, std::vector<std::pair<TimeNs, std::pair<LaneId, uint32_t>>>> replays;
    std::unordered_map<StringId, bool> graphLaunchName;
    for (const auto& [lane, i] : launchedEager) {
        const EventRef api = trace.launchOf(lane, i);
        if (!api.valid()) {
            ++out.m_counts[size_t(RangeSource::None)];
            continue;
        }
        const Lane& apiLane = trace.lane(api.lane);
        const StringId apiName = apiLane.events.name(api.index);
        auto [g, fresh] = graphLaunchName.emplace(apiName, false);
        if (fresh)
            g->second = isGraphLaunchName(trace.str(apiName));
        if (g->second) {
            replays[{ api.lane, api.index }].push_back({ trace.lane(lane).events.start(i), { lane, i } });
            continue;
        }
        byThread[{ apiLane.info.rank, apiLane.info.threadId() }].push_back(
            { apiLane.events.start(api.index), lane, i });
    }
    std::map<std::vector<uint32_t>, LayerBlock> blockOf;
    for (auto& [launch, kernels] : replays) {
        std::sort(kernels.begin(), kernels.end());
        std::vector<uint32_t> symbols;
        symbols.reserve(kernels.size());
        for (const auto& k : kernels)
            symbols.push_back(trace.lane(k.second.first).events.name(k.second.second));
        auto it = blockOf.find(symbols);
        if (it == blockOf.end()) {
            LayerBlock b = findLayers(symbols);
            b.rank = trace.lane(launch.first).info.rank;
            if (b.period)
                out.m_blocks.push_back(b);
            it = blockOf.emplace(std::move(symbols), b).first;
        }
        const LayerBlock& b = it->second;
        for (size_t pos = 0; pos < kernels.size(); ++pos) {
            uint32_t id = 0;
            if (b.period && pos >= b.first && pos < b.first + b.layers * b.period)
                id = layerPath((pos - b.first) / b.period);
            out.m_byLane[kernels[pos].second.first][kernels[pos].second.second] = id;
            ++out.m_counts[size_t(id ? RangeSource::Inferred : RangeSource::None)];
        }
    }
    if (byThread.empty())
        return out;
    std::map<std::pair<uint32_t, uint64_t>, std::vector<HostRange>> rangesByThread;
    for (const Lane& lane : trace.lanes()) {
        const bool nvtx = lane.info.kind == LaneKind::Nvtx && !lane.info.isGpuAnnotationLane();
        const bool host = lane.info.kind == LaneKind::CpuThread && !lane.info.isSampledLane();
        if (!nvtx && !host)
            continue;
        const std::pair<uint32_t, uint64_t> key { lane.info.rank, lane.info.threadId() };
        if (!byThread.count(key))
            continue;
        std::vector<HostRange>& r = rangesByThread[key];
        for (size_t i = 0; i < lane.events.size(); ++i) {
            if (host && trace.hostKind(lane.id, i) != HostKind::UserAnnotation)
                continue;
            r.push_back({ lane.events.start(i), lane.events.end(i), lane.events.name(i) });
        }
    }
    for (auto& [key, launches] : byThread) {
        std::sort(launches.begin(), launches.end(), [](const Launch& a, const Launch& b) { return a.time < b.time; });
        std::vector<HostRange>& ranges = rangesByThread[key];
        std::stable_sort(ranges.begin(), ranges.end(), [](const HostRange& a, const HostRange& b) {
            return a.start != b.start ? a.start < b.start : a.end > b.end;
        });
        std::vector<const HostRange*> open;
        std::vector<StringId> names;
        std::map<std::vector<StringId>, uint32_t> stackPath;
        size_t next = 0;
        for (const Launch& l : launches) {
            while (next < ranges.size() && ranges[next].start <= l.time) {
                while (!open.empty() && open.back()->end <= ranges[next].start)
                    open.pop_back();
                open.push_back(&ranges[next++]);
            }
            while (!open.empty() && open.back()->end <= l.time)
                open.pop_back();
            // A range that ended inside an open one that is still open below it: drop ended ones anywhere.
            names.clear();
            for (const HostRange* r : open)
                if (r->end > l.time)
                    names.push_back(r->name);
            auto [cached, fresh] = stackPath.emplace(names, 0);
            if (fresh) // each distinct open stack is named once
                cached->second = out.intern(pathParts(names), RangeSource::Launch);
            const uint32_t id = cached->second;
            out.m_byLane[l.lane][l.index] = id;
            ++out.m_counts[size_t(id ? RangeSource::Launch : RangeSource::None)];
        }
    }
    return out;
}

RangeTable rangeTable(const Trace& trace, const KernelRanges& ranges)
{
    RangeTable table;
    std::vector<RangeRow> rows(ranges.pathCount());
    for (uint32_t id = 0; id < rows.size(); ++id) {
        rows[id].path = id ? ranges.path(id) : "(no range)";
        rows[id].source = ranges.source(id);
    }
    // Step slots: the steps of every rank, numbered one after the other.
    std::unordered_map<uint32_t, uint64_t> firstSlot;
    for (uint32_t rank : trace.ranks()) {
        firstSlot[rank] = table.steps;
        table.steps += trace.steps(rank).size();
    }
    std::unordered_map<uint64_t, uint32_t> inStep; // (path id << 32 | step slot) -> kernels
    for (const Lane& lane : trace.lanes()) {
        if (lane.info.kind != LaneKind::GpuStream)
            continue;
        const std::vector<Step>& steps = trace.steps(lane.info.rank);
        const uint64_t slot0 = firstSlot[lane.info.rank];
        const LaneEvents& ev = lane.events;
        OwnTime own;
        size_t s = 0;
        for (size_t i = 0; i < ev.size(); ++i) {
            const TimeNs start = ev.start(i), end = ev.end(i);
            const TimeNs ownDur = own.duration(start, end);
            if (trace.kindOf(lane.id, i) != EventKind::Kernel)
                continue;
            if (table.steps) {
                while (s < steps.size() && steps[s].end <= start)
                    ++s;
                if (s == steps.size() || start < steps[s].start)
                    continue; // outside every step of its rank
            }
            const uint32_t id = ranges.pathOf(lane.id, i);
            RangeRow& row = rows[id];
            if (table.steps)
                ++inStep[uint64_t(id) << 32 | (slot0 + s)];
            ++row.count;
            row.total += end - start;
            row.ownTotal += ownDur;
            ++table.kernels;
        }
    }
    std::vector<std::vector<uint32_t>> perStep(rows.size());
    for (const auto& [key, n] : inStep)
        perStep[key >> 32].push_back(n);
    for (uint32_t id = 0; id < rows.size(); ++id) {
        RangeRow& r = rows[id];
        if (!r.count)
            continue;
        if (table.steps) {
            std::vector<uint32_t>& v = perStep[id];
            v.resize(table.steps, 0); // the steps without any
            std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
            r.medianPerStep = v[v.size() / 2];
        } else {
            r.medianPerStep = double(r.count);
        }
        table.rows.push_back(std::move(r));
    }
    std::stable_sort(table.rows.begin(), table.rows.end(),
        [](const RangeRow& a, const RangeRow& b) { return a.ownTotal > b.ownTotal; });
    return table;
}

std::vector<RangeDiffRow> rangeDiff(const RangeTable& a, const RangeTable& b)
{
    std::map<std::string, RangeDiffRow> byPath;
    auto add = [&byPath](const RangeTable& t, bool isA) {
        const double steps = double(std::max<uint64_t>(1, t.steps));
        for (const RangeRow& r : t.rows) {
            RangeDiffRow& d = byPath[r.path];
            d.path = r.path;
            (isA ? d.aCount : d.bCount) += double(r.count) / steps;
            (isA ? d.aOwnNs : d.bOwnNs) += double(r.ownTotal) / steps;
        }
    };
    add(a, true);
    add(b, false);
    std::vector<RangeDiffRow> out;
    out.reserve(byPath.size());
    for (auto& [path, d] : byPath)
        out.push_back(std::move(d));
    std::stable_sort(out.begin(), out.end(),
        [](const RangeDiffRow& x, const RangeDiffRow& y) { return std::abs(x.deltaNs()) > std::abs(y.deltaNs()); });
    return out;
}

bool hasGraphReplays(const Trace& trace)
{
    for (const KernelConfig& c : trace.kernelConfigs())
        if (c.graphId != 0 && c.graphNodeId != 0)
            return true;
    for (StringId id = 0; id < trace.stringCount(); ++id)
        if (isGraphLaunchName(trace.str(id)))
            return true;
    return false;
}

namespace {
bool hasReplayRangeLanes(const Trace& trace)
{
    for (const Lane& lane : trace.lanes())
        if (isReplayRangeLane(lane.info))
            return true;
    return false;
}
} // namespace

uint64_t addReplayRangeLanes(Trace& trace)
{
    return hasGraphReplays(trace) && !hasReplayRangeLanes(trace) ? addReplayRangeLanes(trace, KernelRanges::of(trace))
                                                                 : 0;
}

uint64_t addReplayRangeLanes(Trace& trace, const KernelRanges& ranges)
{
    if (hasReplayRangeLanes(trace))
        return 0; // added before (a trace saved with them): not twice
    TraceBuilder b;
    // Each path's parts as the builder's strings, interned once per path.
    std::vector<std::vector<StringId>> components(ranges.pathCount());
    auto componentsOf = [&](uint32_t id) -> const std::vector<StringId>& {
        std::vector<StringId>& c = components[id];
        if (c.empty())
            for (const std::string& part : ranges.parts(id))
                c.push_back(b.intern(part));
        return c;
    };
    struct Open {
        StringId name;
        TimeNs start, end;
    };
    uint64_t added = 0;
    const LaneId lanes = LaneId(trace.laneCount());
    for (LaneId id = 0; id < lanes; ++id) {
        const Lane& lane = trace.lane(id);
        if (lane.info.kind != LaneKind::GpuStream)
            continue;
        const LaneEvents& ev = lane.events;
        LaneId out = kNoLane;
        std::vector<Open> open;
        auto closeTo = [&](size_t depth) {
            for (; open.size() > depth; open.pop_back(), ++added)
                b.addNvtx(out, open.back().start, open.back().end - open.back().start, open.back().name,
                    uint32_t(open.size() - 1));
        };
        uint32_t lastCorrelation = 0;
        uint64_t lastGraph = 0;
        for (size_t i = 0; i < ev.size(); ++i) {
            const uint32_t path = ranges.pathOf(id, i);
            const RangeSource source = ranges.source(path);
            if (source != RangeSource::Capture && source != RangeSource::Inferred) {
                closeTo(0);
                continue;
            }
            const KernelConfig* c = trace.kernelConfig(id, i);
            const uint64_t graph = c ? c->graphId : 0;
            if (ev.correlation(i) != lastCorrelation || graph != lastGraph)
                closeTo(0); // another replay
            lastCorrelation = ev.correlation(i);
            lastGraph = graph;
            if (out == kNoLane) {
                LaneInfo info = lane.info;
                info.kind = LaneKind::Nvtx;
                info.stream = lane.info.stream | kGpuAnnotationStreamBit | kReplayRangeStreamBit;
                info.name = (lane.info.name.empty() ? "stream " + std::to_string(lane.info.stream) : lane.info.name)
                    + " by range";
                out = b.lane(info);
            }
            const std::vector<StringId>& names = componentsOf(path);
            size_t common = 0;
            while (common < open.size() && common < names.size() && open[common].name == names[common])
                ++common;
            closeTo(common);
            const TimeNs start = ev.start(i), end = ev.end(i);
            for (Open& o : open)
                o.end = std::max(o.end, end);
            for (size_t d = common; d < names.size(); ++d)
                open.push_back({ names[d], start, end });
        }
        closeTo(0);
    }
    if (added)
        trace.appendFrom(b);
    return added;
}

} // namespace gapscope::model
