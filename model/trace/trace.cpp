// SPDX-License-Identifier: MIT
#include "model/trace/trace.h"

#include "model/base/taskpool.h"
#include "model/trace/eventaux.h"
#include "model/trace/traceimpl.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <iterator>

namespace gapscope::model {

const char* toString(LaneKind kind)
{
    switch (kind) {
    case LaneKind::Unknown:
        return "unknown";
    case LaneKind::GpuStream:
        return "gpu";
    case LaneKind::Nvtx:
        return "nvtx";
    case LaneKind::CpuApi:
        return "api";
    case LaneKind::Collective:
        return "collective";
    case LaneKind::CpuThread:
        return "cpu";
    }
    return "unknown";
}

const char* toString(EventKind kind)
{
    switch (kind) {
    case EventKind::Kernel:
        return "kernel";
    case EventKind::Memcpy:
        return "memcpy";
    case EventKind::Memset:
        return "memset";
    case EventKind::Api:
        return "api";
    case EventKind::Sync:
        return "sync";
    case EventKind::Nvtx:
        return "nvtx";
    case EventKind::Collective:
        return "collective";
    case EventKind::Host:
        return "host";
    }
    return "unknown";
}

const char* toString(HostKind kind)
{
    switch (kind) {
    case HostKind::CpuOp:
        return "cpu_op";
    case HostKind::Python:
        return "python_function";
    case HostKind::UserAnnotation:
        return "user_annotation";
    case HostKind::OsRuntime:
        return "os_runtime";
    case HostKind::Sampled:
        return "sampled";
    }
    return "host";
}

std::string LaneInfo::key() const
{
    return "r" + std::to_string(rank) + "/" + toString(kind) + "/d" + std::to_string(device) + "/"
        + std::to_string(stream);
}

format::LaneKey LaneInfo::identity() const
{
    return format::LaneKey { uint32_t(kind), rank, host, pid, device, stream };
}

bool KernelConfig::operator==(const KernelConfig& o) const
{
    return std::equal(grid, grid + 3, o.grid) && std::equal(block, block + 3, o.block) && registers == o.registers
        && sharedStatic == o.sharedStatic && sharedDynamic == o.sharedDynamic && graphId == o.graphId
        && graphNodeId == o.graphNodeId;
}

Trace::Trace()
    : m_strings(1)
    , m_impl(std::make_unique<Impl>())
{
    m_impl->strings.insert(0, m_strings);
}

Trace::~Trace() = default;
Trace::Trace(Trace&&) noexcept = default;
Trace& Trace::operator=(Trace&&) noexcept = default;

std::string_view Trace::str(StringId id) const
{
    return id < m_strings.size() ? std::string_view(m_strings[id]) : std::string_view();
}

std::optional<StringId> Trace::findString(std::string_view s) const
{
    return m_impl->strings.find(s, m_strings);
}

std::vector<uint32_t> Trace::ranks() const
{
    std::vector<uint32_t> r;
    for (const auto& l : m_lanes)
        r.push_back(l.info.rank);
    for (uint32_t i = 0; i < m_steps.size(); ++i)
        if (!m_steps[i].empty())
            r.push_back(i);
    for (const auto& ri : m_header.ranks)
        r.push_back(ri.rank);
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    return r;
}

std::vector<LaneId> Trace::lanesOf(uint32_t rank, LaneKind kind) const
{
    std::vector<LaneId> out;
    for (const auto& l : m_lanes)
        if (l.info.rank == rank && l.info.kind == kind)
            out.push_back(l.id);
    return out;
}

std::optional<LaneId> Trace::findLane(std::string_view key) const
{
    auto it = m_impl->laneByKey.find(std::string(key));
    if (it == m_impl->laneByKey.end())
        return std::nullopt;
    return it->second;
}

const KernelConfig* Trace::kernelConfig(LaneId lane, size_t index) const
{
    uint32_t a = m_lanes[lane].events.aux(index);
    return aux::kind(a) == EventKind::Kernel && aux::payload(a) < m_configs.size() ? &m_configs[aux::payload(a)]
                                                                                   : nullptr;
}

const MemopInfo* Trace::memop(LaneId lane, size_t index) const
{
    uint32_t a = m_lanes[lane].events.aux(index);
    EventKind k = aux::kind(a);
    return (k == EventKind::Memcpy || k == EventKind::Memset) && aux::payload(a) < m_memops.size()
        ? &m_memops[aux::payload(a)]
        : nullptr;
}

const CollectiveInfo* Trace::collective(LaneId lane, size_t index) const
{
    uint32_t a = m_lanes[lane].events.aux(index);
    return aux::kind(a) == EventKind::Collective && aux::payload(a) < m_collectives.size()
        ? &m_collectives[aux::payload(a)]
        : nullptr;
}

const SyncInfo* Trace::sync(LaneId lane, size_t index) const
{
    uint32_t a = m_lanes[lane].events.aux(index);
    return aux::kind(a) == EventKind::Sync && aux::payload(a) < m_syncs.size() ? &m_syncs[aux::payload(a)] : nullptr;
}

uint32_t Trace::nvtxDepth(LaneId lane, size_t index) const
{
    uint32_t a = m_lanes[lane].events.aux(index);
    return aux::kind(a) == EventKind::Nvtx ? aux::payload(a) : 0;
}

HostKind Trace::hostKind(LaneId lane, size_t index) const
{
    uint32_t a = m_lanes[lane].events.aux(index);
    return aux::kind(a) == EventKind::Host ? aux::hostKind(a) : HostKind::CpuOp;
}

uint32_t Trace::hostDepth(LaneId lane, size_t index) const
{
    uint32_t a = m_lanes[lane].events.aux(index);
    return aux::kind(a) == EventKind::Host ? aux::depth(a) : 0;
}

ApiKind Trace::apiKind(LaneId lane, size_t index) const
{
    uint32_t a = m_lanes[lane].events.aux(index);
    return aux::kind(a) == EventKind::Api ? ApiKind(aux::payload(a)) : ApiKind::Runtime;
}

static bool launchLess(const LaunchEntry& a, const LaunchEntry& b)
{
    return a.rank != b.rank ? a.rank < b.rank : a.corr < b.corr;
}

EventRef Trace::launchOf(LaneId lane, size_t index) const
{
    if (lane >= m_lanes.size() || index >= m_lanes[lane].events.size())
        return {};
    const LaneKind kind = m_lanes[lane].info.kind;
    const uint32_t corr = m_lanes[lane].events.correlation(index);
    if (kind != LaneKind::GpuStream || corr == 0)
        return {};
    if (!m_impl->launchBuilt.load(std::memory_order_acquire)) {
        std::lock_guard<std::mutex> lock(m_impl->launchMutex);
        if (!m_impl->launchBuilt.load(std::memory_order_relaxed)) {
            auto& v = m_impl->launches;
            v.clear();
            for (const auto& l : m_lanes) {
                if (l.info.kind != LaneKind::CpuApi)
                    continue;
                for (size_t i = 0; i < l.events.size(); ++i) {
                    uint32_t a = l.events.aux(i);
                    // Runtime calls first: a driver call under a runtime call shares its correlation id.
                    if (aux::kind(a) == EventKind::Api && l.events.correlation(i) != 0)
                        v.push_back({ l.events.correlation(i), l.info.rank, l.id, uint32_t(i) });
                }
            }
            std::stable_sort(v.begin(), v.end(), [this](const LaunchEntry& a, const LaunchEntry& b) {
                if (a.rank != b.rank || a.corr != b.corr)
                    return launchLess(a, b);
                return apiKind(a.lane, a.index) < apiKind(b.lane, b.index);
            });
            m_impl->launchBuilt.store(true, std::memory_order_release);
        }
    }
    LaunchEntry key { corr, m_lanes[lane].info.rank, 0, 0 };
    const auto& v = m_impl->launches;
    auto it = std::lower_bound(v.begin(), v.end(), key, launchLess);
    if (it == v.end() || it->rank != key.rank || it->corr != corr)
        return {};
    return { it->lane, it->index };
}

std::vector<EventRef> Trace::launchedBy(LaneId apiLane, size_t index) const
{
    std::vector<EventRef> out;
    if (apiLane >= m_lanes.size() || index >= m_lanes[apiLane].events.size())
        return out;
    const Lane& api = m_lanes[apiLane];
    const uint32_t corr = api.events.correlation(index);
    if (corr == 0 || api.info.kind != LaneKind::CpuApi)
        return out;
    // Within a stream, launch order is execution order and correlation ids grow with launch order:
    // the first event with a larger id ends the search.
    for (const auto& l : m_lanes) {
        if (l.info.kind != LaneKind::GpuStream || l.info.rank != api.info.rank)
            continue;
        for (size_t i = l.events.lowerBound(api.events.start(index)); i < l.events.size(); ++i) {
            uint32_t c = l.events.correlation(i);
            if (c == corr)
                out.push_back({ l.id, uint32_t(i) });
            else if (c > corr)
                break;
        }
    }
    return out;
}

const std::vector<Step>& Trace::steps(uint32_t rank) const
{
    static const std::vector<Step> none;
    return rank < m_steps.size() ? m_steps[rank] : none;
}

void Trace::setSteps(uint32_t rank, std::vector<Step> steps)
{
    if (rank >= m_steps.size())
        m_steps.resize(rank + 1);
    std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.index < b.index; });
    m_steps[rank] = std::move(steps);
}

uint32_t Trace::stepCount() const
{
    size_t n = 0;
    for (const auto& s : m_steps)
        n = std::max(n, s.size());
    return uint32_t(n);
}

uint64_t Trace::eventCount() const
{
    uint64_t n = 0;
    for (uint64_t c : m_impl->counts)
        n += c;
    return n;
}

uint64_t Trace::eventCount(EventKind kind) const
{
    return m_impl->counts[size_t(kind)];
}

size_t Trace::memoryBytes() const
{
    size_t b = sizeof(Trace) + m_impl->strings.memoryBytes() + m_lanes.capacity() * sizeof(Lane);
    for (const auto& s : m_strings)
        b += sizeof(std::string) + (s.size() > 15 ? s.capacity() : 0);
    for (const auto& l : m_lanes)
        b += l.events.memoryBytes() + l.summary.memoryBytes();
    b += m_configs.capacity() * sizeof(KernelConfig) + m_memops.capacity() * sizeof(MemopInfo)
        + m_collectives.capacity() * sizeof(CollectiveInfo) + m_syncs.capacity() * sizeof(SyncInfo);
    for (const auto& s : m_steps)
        b += s.capacity() * sizeof(Step);
    b += m_impl->launches.capacity() * sizeof(LaunchEntry);
    for (const auto& n : m_graphNodes)
        b += sizeof(GraphNodeInfo) + n.ranges.capacity() * sizeof(StringId);
    return b;
}

void Trace::finalizeLane(Lane& lane, uint64_t counts[8], bool summary)
{
    lane.events.sortIfNeeded();
    lane.events.shrink();
    lane.events.buildIndex(0);
    if (summary)
        lane.summary.build(lane.events);
    for (uint32_t a : lane.events.m_aux)
        ++counts[size_t(aux::kind(a)) & 7];
}

void Trace::finalize(unsigned threads, bool summaries)
{
    // Lanes are independent: biggest first, spread over the threads.
    std::vector<LaneId> order(m_lanes.size());
    for (LaneId i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(),
        [this](LaneId a, LaneId b) { return m_lanes[a].events.size() > m_lanes[b].events.size(); });
    std::vector<std::array<uint64_t, 8>> laneCounts(m_lanes.size());
    TaskPool::shared().parallelFor(
        order.size(), [&](size_t k) { finalizeLane(m_lanes[order[k]], laneCounts[order[k]].data(), summaries); }, threads);

    m_impl->counts.fill(0);
    for (const auto& c : laneCounts)
        for (size_t k = 0; k < 8; ++k)
            m_impl->counts[k] += c[k];
    m_start = INT64_MAX;
    m_end = INT64_MIN;
    for (const auto& l : m_lanes) {
        if (!l.events.empty()) {
            m_start = std::min(m_start, l.events.start(0));
            m_end = std::max(m_end, l.events.m_blockMaxEnd.back());
        }
    }
    for (auto& steps : m_steps) {
        std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.index < b.index; });
        for (const auto& s : steps) {
            m_start = std::min(m_start, s.start);
            m_end = std::max(m_end, s.end);
        }
    }
    if (m_start > m_end)
        m_start = m_end = 0;
    sortGraphNodes();
    m_impl->invalidateLaunches();
}

void Trace::sortGraphNodes()
{
    // Stable: of two entries for one node, the later one (added last) wins.
    std::stable_sort(m_graphNodes.begin(), m_graphNodes.end(), [](const GraphNodeInfo& a, const GraphNodeInfo& b) {
        return a.rank != b.rank ? a.rank < b.rank : a.nodeId < b.nodeId;
    });
    size_t out = 0;
    for (size_t i = 0; i < m_graphNodes.size(); ++i) {
        const bool lastOfNode = i + 1 == m_graphNodes.size() || m_graphNodes[i + 1].rank != m_graphNodes[i].rank
            || m_graphNodes[i + 1].nodeId != m_graphNodes[i].nodeId;
        if (lastOfNode) {
            if (out != i)
                m_graphNodes[out] = std::move(m_graphNodes[i]);
            ++out;
        }
    }
    m_graphNodes.resize(out);
}

const GraphNodeInfo* Trace::graphNode(uint32_t rank, uint64_t nodeId) const
{
    auto it = std::lower_bound(m_graphNodes.begin(), m_graphNodes.end(), std::make_pair(rank, nodeId),
        [](const GraphNodeInfo& n, const std::pair<uint32_t, uint64_t>& key) {
            return n.rank != key.first ? n.rank < key.first : n.nodeId < key.second;
        });
    return it != m_graphNodes.end() && it->rank == rank && it->nodeId == nodeId ? &*it : nullptr;
}

std::string graphNodeTypeName(uint8_t nodeType)
{
    static const char* const names[]
        = { "kernel", "memcpy", "memset", "host", "child graph", "empty", "event wait", "event record",
              "semaphore signal", "semaphore wait", "memory alloc", "memory free", "batch memory op", "conditional" };
    if (nodeType == 0)
        return {};
    if (nodeType <= std::size(names))
        return names[nodeType - 1];
    return "type " + std::to_string(nodeType - 1);
}

bool isGraphLaunchName(std::string_view apiName)
{
    for (std::string_view p : { "cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch" })
        if (apiName.substr(0, p.size()) == p)
            return true;
    return false;
}

} // namespace gapscope::model
