// SPDX-License-Identifier: MIT
#include "model/trace/trace.h"

#include "model/trace/eventaux.h"
#include "model/trace/traceimpl.h"

#include <algorithm>
#include <climits>

namespace gapscope::model {

// Hand-over state for live mode: how builder ids map into the trace they were appended to.
struct TraceBuilder::Pending {
    std::vector<StringId> stringMap;
    std::vector<LaneId> laneMap;
    std::vector<uint32_t> configMap;
    uint64_t events = 0;
};

TraceBuilder::TraceBuilder()
    : m_trace(std::make_unique<Trace>())
    , m_pending(std::make_unique<Pending>())
{
}

TraceBuilder::~TraceBuilder() = default;

StringId TraceBuilder::intern(std::string_view s)
{
    Trace& t = *m_trace;
    if (auto id = t.m_impl->strings.find(s, t.m_strings))
        return *id;
    t.m_strings.emplace_back(s);
    StringId id = StringId(t.m_strings.size() - 1);
    t.m_impl->strings.insert(id, t.m_strings);
    return id;
}

LaneId TraceBuilder::lane(const LaneInfo& info)
{
    Trace& t = *m_trace;
    format::LaneKey key = info.identity();
    auto it = t.m_impl->laneById.find(key);
    if (it != t.m_impl->laneById.end())
        return it->second;
    Lane l;
    l.id = LaneId(t.m_lanes.size());
    l.info = info;
    if (l.info.name.empty())
        l.info.name = (info.kind == LaneKind::GpuStream           ? "stream "
                              : info.kind == LaneKind::Collective ? "nccl "
                                                                  : "thread ")
            + std::to_string(info.stream);
    t.m_lanes.push_back(std::move(l));
    t.m_impl->laneById.emplace(std::move(key), t.m_lanes.back().id);
    t.m_impl->laneByKey.emplace(info.key(), t.m_lanes.back().id);
    return t.m_lanes.back().id;
}

uint32_t TraceBuilder::config(const KernelConfig& c)
{
    Trace& t = *m_trace;
    auto& index = t.m_impl->configIndex;
    if (auto it = index.find(c); it != index.end())
        return it->second; // look up first: emplace() allocates a node even when the key is there
    const uint32_t id = uint32_t(t.m_configs.size());
    index.emplace(c, id);
    t.m_configs.push_back(c);
    return id;
}

void TraceBuilder::addKernel(
    LaneId lane, TimeNs start, TimeNs duration, StringId name, uint32_t correlation, const KernelConfig& c)
{
    uint32_t idx = config(c);
    m_trace->m_lanes[lane].events.push(start, duration, name, correlation, aux::pack(EventKind::Kernel, idx));
    ++m_pending->events;
}

void TraceBuilder::addMemop(LaneId lane, TimeNs start, TimeNs duration, const MemopInfo& info, uint32_t correlation)
{
    Trace& t = *m_trace;
    EventKind k = info.kind == MemopKind::Memset ? EventKind::Memset : EventKind::Memcpy;
    t.m_memops.push_back(info);
    t.m_lanes[lane].events.push(start, duration, 0, correlation, aux::pack(k, uint32_t(t.m_memops.size() - 1)));
    ++m_pending->events;
}

void TraceBuilder::addApi(LaneId lane, TimeNs start, TimeNs duration, StringId name, uint32_t correlation, ApiKind kind)
{
    m_trace->m_lanes[lane].events.push(start, duration, name, correlation, aux::pack(EventKind::Api, uint32_t(kind)));
    ++m_pending->events;
}

void TraceBuilder::addSync(LaneId lane, TimeNs start, TimeNs duration, const SyncInfo& info, uint32_t correlation)
{
    Trace& t = *m_trace;
    t.m_syncs.push_back(info);
    t.m_lanes[lane].events.push(
        start, duration, 0, correlation, aux::pack(EventKind::Sync, uint32_t(t.m_syncs.size() - 1)));
    ++m_pending->events;
}

void TraceBuilder::addNvtx(LaneId lane, TimeNs start, TimeNs duration, StringId name, uint32_t depth)
{
    m_trace->m_lanes[lane].events.push(
        start, duration, name, 0, aux::pack(EventKind::Nvtx, std::min(depth, aux::kMaxPayload)));
    ++m_pending->events;
}

void TraceBuilder::addHost(LaneId lane, TimeNs start, TimeNs duration, StringId name, HostKind kind, uint32_t depth)
{
    m_trace->m_lanes[lane].events.push(start, duration, name, 0, aux::packHost(kind, depth));
    ++m_pending->events;
}

void TraceBuilder::addCollective(LaneId lane, TimeNs start, TimeNs duration, StringId op, const CollectiveInfo& info)
{
    Trace& t = *m_trace;
    t.m_collectives.push_back(info);
    t.m_lanes[lane].events.push(start, duration, op, uint32_t(info.sequence),
        aux::pack(EventKind::Collective, uint32_t(t.m_collectives.size() - 1)));
    ++m_pending->events;
}

void TraceBuilder::addStep(uint32_t rank, const Step& step)
{
    auto& steps = m_trace->m_steps;
    if (rank >= steps.size())
        steps.resize(rank + 1);
    steps[rank].push_back(step);
}

void TraceBuilder::addGraphNode(GraphNodeInfo node)
{
    m_trace->m_graphNodes.push_back(std::move(node));
}

TraceHeader& TraceBuilder::header()
{
    return m_trace->m_header;
}
void TraceBuilder::addWarning(std::string w)
{
    m_trace->m_warnings.push_back(std::move(w));
}
void TraceBuilder::setAnnotations(AnnotationSet a)
{
    m_trace->m_annotations = std::move(a);
}
void TraceBuilder::setBudgetSettings(BudgetSettings b)
{
    m_trace->m_budget = std::move(b);
}
void TraceBuilder::setClassifierTable(ClassifierTable t)
{
    m_trace->m_classifier = std::move(t);
}
uint64_t TraceBuilder::pendingEvents() const
{
    return m_pending->events;
}

Trace TraceBuilder::finish(bool laneSummaries)
{
    Trace t = std::move(*m_trace);
    m_trace = std::make_unique<Trace>();
    m_pending = std::make_unique<Pending>();
    t.finalize(8, laneSummaries); // lanes finalize on at most 8 threads of the pool
    return t;
}

// ---------------------------------------------------------------------------------------------
// Live mode

namespace {

uint32_t remapAux(
    uint32_t a, const std::vector<uint32_t>& configMap, uint32_t memopBase, uint32_t syncBase, uint32_t collBase)
{
    uint32_t p = aux::payload(a);
    switch (aux::kind(a)) {
    case EventKind::Kernel:
        return aux::pack(EventKind::Kernel, p < configMap.size() ? configMap[p] : 0);
    case EventKind::Memcpy:
    case EventKind::Memset:
        return aux::pack(aux::kind(a), p + memopBase);
    case EventKind::Sync:
        return aux::pack(EventKind::Sync, p + syncBase);
    case EventKind::Collective:
        return aux::pack(EventKind::Collective, p + collBase);
    default:
        return a;
    }
}

} // namespace

void Trace::appendFrom(TraceBuilder& builder)
{
    Trace& src = *builder.m_trace;
    TraceBuilder::Pending& map = *builder.m_pending;
    bool wasEmpty = eventCount() == 0;
    // Strings, lanes and configs defined since the last hand-over get ids in this trace.
    for (size_t i = map.stringMap.size(); i < src.m_strings.size(); ++i) {
        auto id = m_impl->strings.find(src.m_strings[i], m_strings);
        if (!id) {
            m_strings.push_back(src.m_strings[i]);
            id = StringId(m_strings.size() - 1);
            m_impl->strings.insert(*id, m_strings);
        }
        map.stringMap.push_back(*id);
    }
    for (size_t i = map.laneMap.size(); i < src.m_lanes.size(); ++i) {
        const LaneInfo& info = src.m_lanes[i].info;
        auto [it, inserted] = m_impl->laneById.emplace(info.identity(), LaneId(m_lanes.size()));
        if (inserted) {
            m_impl->laneByKey.emplace(info.key(), it->second);
            m_lanes.emplace_back();
            m_lanes.back().id = it->second;
            m_lanes.back().info = info;
        }
        map.laneMap.push_back(it->second);
    }
    for (size_t i = map.configMap.size(); i < src.m_configs.size(); ++i) {
        auto [it, inserted] = m_impl->configIndex.emplace(src.m_configs[i], uint32_t(m_configs.size()));
        if (inserted)
            m_configs.push_back(src.m_configs[i]);
        map.configMap.push_back(it->second);
    }
    const uint32_t memopBase = uint32_t(m_memops.size()), syncBase = uint32_t(m_syncs.size()),
                   collBase = uint32_t(m_collectives.size());
    m_memops.insert(m_memops.end(), src.m_memops.begin(), src.m_memops.end());
    m_syncs.insert(m_syncs.end(), src.m_syncs.begin(), src.m_syncs.end());
    for (CollectiveInfo c : src.m_collectives) {
        c.datatype = map.stringMap[c.datatype];
        c.algorithm = map.stringMap[c.algorithm];
        c.protocol = map.stringMap[c.protocol];
        m_collectives.push_back(c);
    }
    src.m_memops.clear();
    src.m_syncs.clear();
    src.m_collectives.clear();

    for (auto& sl : src.m_lanes) {
        LaneEvents& se = sl.events;
        if (se.empty())
            continue;
        Lane& dl = m_lanes[map.laneMap[sl.id]];
        LaneEvents& de = dl.events;
        const size_t before = de.size();
        const TimeNs lastStart = before ? de.start(before - 1) : INT64_MIN;
        for (size_t i = 0; i < se.size(); ++i) {
            de.push(se.start(i), se.duration(i), map.stringMap[se.name(i)], se.correlation(i),
                remapAux(se.aux(i), map.configMap, memopBase, syncBase, collBase));
            m_impl->counts[size_t(aux::kind(se.aux(i))) & 7]++;
        }
        bool sorted = before == 0 || se.start(0) >= lastStart;
        for (size_t i = std::max<size_t>(before, 1); i < de.size() && sorted; ++i)
            sorted = de.start(i) > de.start(i - 1)
                || (de.start(i) == de.start(i - 1) && de.duration(i) <= de.duration(i - 1));
        if (!sorted) {
            de.sortIfNeeded();
            de.buildIndex(0);
            dl.summary.build(de);
        } else {
            de.buildIndex(before);
            dl.summary.extend(de);
        }
        m_start = wasEmpty ? de.start(0) : std::min(m_start, de.start(0));
        m_end = wasEmpty ? de.m_blockMaxEnd.back() : std::max(m_end, de.m_blockMaxEnd.back());
        wasEmpty = false;
        se = LaneEvents();
    }
    for (uint32_t r = 0; r < src.m_steps.size(); ++r) {
        if (src.m_steps[r].empty())
            continue;
        std::vector<Step> merged = steps(r);
        for (const Step& s : src.m_steps[r]) {
            auto it = std::find_if(merged.begin(), merged.end(), [&s](const Step& x) { return x.index == s.index; });
            if (it != merged.end())
                *it = s;
            else
                merged.push_back(s);
        }
        setSteps(r, std::move(merged));
        src.m_steps[r].clear();
    }
    if (!src.m_graphNodes.empty()) {
        for (GraphNodeInfo& n : src.m_graphNodes) {
            for (StringId& id : n.ranges)
                id = map.stringMap[id];
            n.api = map.stringMap[n.api];
            m_graphNodes.push_back(std::move(n));
        }
        src.m_graphNodes.clear();
        sortGraphNodes();
    }
    for (auto& w : src.m_warnings)
        m_warnings.push_back(std::move(w));
    src.m_warnings.clear();
    if (!src.m_header.empty()) // a hand-over with a header replaces it
        m_header = src.m_header;
    map.events = 0;
    m_impl->invalidateLaunches();
}

} // namespace gapscope::model
