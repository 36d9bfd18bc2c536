// SPDX-License-Identifier: MIT
#include "model/import/stagedtrace.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace gapscope::model::importer {

StagedTrace::StagedTrace(std::string source, std::string path)
    : m_source(std::move(source))
    , m_path(std::move(path))
{
}

StagedTrace::StagedTrace(StagedTrace&&) noexcept = default;
StagedTrace& StagedTrace::operator=(StagedTrace&&) noexcept = default;
StagedTrace::~StagedTrace() = default;

uint16_t StagedTrace::addProcess(StagedProcess p)
{
    m_processes.push_back(std::move(p));
    return static_cast<uint16_t>(m_processes.size() - 1);
}

namespace {
std::string laneKey(uint16_t process, LaneKind kind, uint32_t device, uint64_t stream, uint32_t pid)
{
    std::string key;
    key.reserve(28);
    key.append(reinterpret_cast<const char*>(&process), sizeof process);
    key.push_back(static_cast<char>(kind));
    key.append(reinterpret_cast<const char*>(&device), sizeof device);
    key.append(reinterpret_cast<const char*>(&stream), sizeof stream);
    if (pid)
        key.append(reinterpret_cast<const char*>(&pid), sizeof pid);
    return key;
}
} // namespace

void StagedTrace::reorderProcesses(const std::vector<uint16_t>& order)
{
    std::vector<StagedProcess> processes;
    std::vector<uint16_t> newIndex(m_processes.size(), 0);
    processes.reserve(order.size());
    for (uint16_t old : order) {
        newIndex[old] = static_cast<uint16_t>(processes.size());
        processes.push_back(std::move(m_processes[old]));
    }
    m_processes = std::move(processes);
    m_laneIndex.clear();
    for (uint32_t i = 0; i < m_lanes.size(); ++i) {
        StagedLane& l = m_lanes[i];
        l.process = newIndex[l.process];
        m_laneIndex.emplace(laneKey(l.process, l.info.kind, l.info.device, l.info.stream, l.ownPid), i);
    }
    for (StagedStep& st : steps)
        st.process = newIndex[st.process];
    for (StagedGraphNode& g : graphNodes)
        g.process = newIndex[g.process];
}

void StagedTrace::orderProcessesByDevice()
{
    std::vector<uint16_t> order(m_processes.size());
    std::iota(order.begin(), order.end(), uint16_t(0));
    std::stable_sort(order.begin(), order.end(), [this](uint16_t a, uint16_t b) {
        const uint32_t da = m_processes[a].device.value_or(UINT32_MAX), db = m_processes[b].device.value_or(UINT32_MAX);
        return da != db ? da < db : m_processes[a].pid < m_processes[b].pid;
    });
    reorderProcesses(order);
}

uint64_t StagedTrace::dropProcesses(const std::vector<bool>& drop)
{
    std::vector<uint16_t> order;
    for (size_t i = 0; i < m_processes.size(); ++i)
        if (i >= drop.size() || !drop[i])
            order.push_back(uint16_t(i)); // process indices are 16-bit (StagedTrace)
    if (order.size() == m_processes.size())
        return 0;
    std::vector<uint32_t> newLane(m_lanes.size(), kNoLane);
    std::vector<StagedLane> lanes;
    for (uint32_t i = 0; i < m_lanes.size(); ++i)
        if (m_lanes[i].process >= drop.size() || !drop[m_lanes[i].process]) {
            newLane[i] = static_cast<uint32_t>(lanes.size());
            lanes.push_back(std::move(m_lanes[i]));
        }
    m_lanes = std::move(lanes);
    m_lastOfLane.assign(m_lanes.size(), UINT64_MAX);
    std::fill(std::begin(m_kindCount), std::end(m_kindCount), 0);
    m_minStart = INT64_MAX;
    m_maxEnd = INT64_MIN;
    std::unordered_map<uint64_t, int64_t> longDurations;
    uint64_t kept = 0;
    for (uint64_t i = 0; i < m_count; ++i) { // in place: an event only moves towards the front
        StagedEvent e = event(i);
        if (newLane[e.lane] == kNoLane)
            continue;
        const int64_t dur = duration(i);
        if (e.duration == kLongDuration)
            longDurations.emplace(kept, dur);
        e.lane = static_cast<uint16_t>(newLane[e.lane]);
        event(kept) = e;
        m_lastOfLane[e.lane] = kept;
        m_kindCount[static_cast<size_t>(e.kind)]++;
        m_minStart = std::min(m_minStart, e.start);
        m_maxEnd = std::max(m_maxEnd, addTimes(e.start, dur));
        ++kept;
    }
    const uint64_t removed = m_count - kept;
    m_count = kept;
    m_longDurations = std::move(longDurations);
    m_blocks.resize((kept + kBlockEvents - 1) / kBlockEvents);
    graphNodes.erase(std::remove_if(graphNodes.begin(), graphNodes.end(),
                         [&drop](const StagedGraphNode& g) { return g.process < drop.size() && drop[g.process]; }),
        graphNodes.end());
    // Processes last: reorderProcesses renumbers the lanes (now only those of kept processes) and
    // rebuilds the lane index.
    reorderProcesses(order);
    return removed;
}

uint64_t StagedTrace::dropProcessesWithoutGpuWork(const std::string& api, const std::vector<uint64_t>& calls,
    const std::function<std::string(const StagedProcess&)>& names, const std::string& skippedWhat)
{
    std::vector<bool> drop(m_processes.size(), false);
    size_t dropped = 0;
    for (size_t i = 0; i < m_processes.size(); ++i) {
        const StagedProcess& p = m_processes[i];
        if (p.device)
            continue;
        drop[i] = true;
        if (++dropped > 10)
            continue;
        const std::string name = names ? names(p) : p.name;
        const uint64_t n = i < calls.size() ? calls[i] : 0;
        warnings.push_back(m_path + ": process " + std::to_string(p.pid) + (name.empty() ? "" : " (" + name + ")")
            + " made " + std::to_string(n) + " " + api + " call" + (n == 1 ? "" : "s")
            + " and no GPU work: not a rank");
    }
    if (!dropped)
        return 0;
    if (dropped > 10)
        warnings.push_back(m_path + ": " + std::to_string(dropped - 10) + " more processes made " + api
            + " calls and no GPU work: not ranks");
    const uint64_t removed = dropProcesses(drop);
    count(format::Stat::ImportSkippedEvents, skippedWhat, removed);
    return removed;
}

uint32_t StagedTrace::lane(uint16_t process, LaneKind kind, uint32_t device, uint64_t stream, uint32_t pid)
{
    if (process < m_processes.size() && pid == m_processes[process].pid)
        pid = 0;
    std::string key = laneKey(process, kind, device, stream, pid);
    auto it = m_laneIndex.find(key);
    if (it != m_laneIndex.end())
        return it->second;
    if (m_lanes.size() >= 0xFFFF) {
        count(format::Stat::ImportLaneOverflow);
        return kNoLane;
    }
    StagedLane lane;
    lane.process = process;
    lane.info.kind = kind;
    lane.info.device = device;
    lane.info.stream = stream;
    lane.info.pid = pid ? pid : process < m_processes.size() ? m_processes[process].pid : 0;
    lane.ownPid = pid;
    const auto id = static_cast<uint32_t>(m_lanes.size());
    m_lanes.push_back(std::move(lane));
    m_lastOfLane.push_back(UINT64_MAX);
    m_laneIndex.emplace(std::move(key), id);
    return id;
}

uint32_t StagedTrace::config(const KernelConfig& c)
{
    if (auto found = m_configIndex.find(c); found != m_configIndex.end())
        return found->second; // nearly always: emplace would allocate a node first, then drop it
    auto [it, inserted] = m_configIndex.emplace(c, static_cast<uint32_t>(m_configs.size()));
    if (inserted)
        m_configs.push_back(c);
    return it->second;
}

StagedEvent& StagedTrace::push(uint32_t lane, int64_t start, int64_t dur, StagedKind kind)
{
    if (m_count % kBlockEvents == 0 && m_count / kBlockEvents == m_blocks.size()) {
        if (m_overBudget || !m_budget.grow(kBlockEvents * format::kTraceBytesPerEvent)) {
            m_overBudget = true;
            ++m_overBudgetDropped;
            return m_discard;
        }
        m_blocks.push_back(std::make_unique<StagedEvent[]>(kBlockEvents));
    }
    if (start < 0)
        count(format::Stat::ImportNegativeTimes);
    if (dur < 0) {
        count(format::Stat::ImportNegativeDurations);
        dur = 0;
    }
    if (start != clampTime(start) || dur > kMaxTimeNs / 2) {
        count(format::Stat::ImportOutOfRangeTimes);
        start = clampTime(start);
        dur = std::min(dur, kMaxTimeNs / 2);
    }
    StagedEvent& e = m_blocks[m_count / kBlockEvents][m_count % kBlockEvents];
    e.start = start;
    if (dur >= kLongDuration) {
        e.duration = kLongDuration;
        m_longDurations.emplace(m_count, dur);
    } else {
        e.duration = static_cast<uint32_t>(dur);
    }
    e.name = 0;
    e.correlation = 0;
    e.aux = 0;
    e.lane = static_cast<uint16_t>(lane);
    e.kind = kind;
    e.flags = 0;
    m_lastOfLane[lane] = m_count;
    m_lanes[lane].events++;
    m_kindCount[static_cast<size_t>(kind)]++;
    m_minStart = std::min(m_minStart, start);
    m_maxEnd = std::max(m_maxEnd, addTimes(start, dur));
    ++m_count;
    return e;
}

void StagedTrace::addKernel(uint32_t lane, int64_t start, int64_t dur, uint32_t name, uint32_t corr, uint32_t config)
{
    StagedEvent& e = push(lane, start, dur, StagedKind::Kernel);
    e.name = name;
    e.correlation = corr;
    e.aux = config;
}

void StagedTrace::addMemop(
    uint32_t lane, int64_t start, int64_t dur, uint32_t name, uint32_t corr, const MemopInfo& info)
{
    StagedEvent& e = push(lane, start, dur, info.kind == MemopKind::Memset ? StagedKind::Memset : StagedKind::Memcpy);
    if (&e == &m_discard)
        return;
    e.name = name;
    e.correlation = corr;
    e.aux = static_cast<uint32_t>(m_memops.size());
    m_memops.push_back(info);
}

void StagedTrace::addApi(uint32_t lane, int64_t start, int64_t dur, uint32_t name, uint32_t corr, ApiKind kind)
{
    StagedEvent& e = push(lane, start, dur, StagedKind::Api);
    e.name = name;
    e.correlation = corr;
    e.aux = static_cast<uint32_t>(kind);
}

void StagedTrace::addSync(uint32_t lane, int64_t start, int64_t dur, uint32_t name, uint32_t corr, const SyncInfo& info)
{
    StagedEvent& e = push(lane, start, dur, StagedKind::Sync);
    if (&e == &m_discard)
        return;
    e.name = name;
    e.correlation = corr;
    e.aux = static_cast<uint32_t>(m_syncs.size());
    m_syncs.push_back(info);
}

void StagedTrace::addRange(uint32_t lane, int64_t start, int64_t dur, uint32_t name)
{
    push(lane, start, dur, StagedKind::Range).name = name;
}

void StagedTrace::addHost(uint32_t lane, int64_t start, int64_t dur, uint32_t name, HostKind kind)
{
    StagedEvent& e = push(lane, start, dur, StagedKind::Host);
    e.name = name;
    e.flags = static_cast<uint8_t>(kind);
}

void StagedTrace::addCollective(uint32_t lane, int64_t start, int64_t dur, uint32_t name, const CollectiveInfo& info)
{
    StagedEvent& e = push(lane, start, dur, StagedKind::Collective);
    if (&e == &m_discard)
        return;
    e.name = name;
    e.aux = static_cast<uint32_t>(m_collectives.size());
    m_collectives.push_back(info);
}

int64_t StagedTrace::duration(uint64_t i) const
{
    const StagedEvent& e = event(i);
    if (e.duration != kLongDuration)
        return e.duration;
    auto it = m_longDurations.find(i);
    return it == m_longDurations.end() ? int64_t(kLongDuration) : it->second;
}

void StagedTrace::releaseBefore(uint64_t i)
{
    for (size_t b = 0; b < m_blocks.size() && (b + 1) * kBlockEvents <= i; ++b)
        m_blocks[b].reset();
}

void StagedTrace::count(format::Stat stat, uint64_t n)
{
    count(stat, format::statInfo(stat).description, n);
}

void StagedTrace::count(format::Stat stat, const std::string& detail, uint64_t n)
{
    auto key = format::statInfo(stat).name + ('\n' + detail);
    auto it = m_counters.find(key);
    if (it == m_counters.end())
        it = m_counters.emplace(std::move(key), statCounter(stat, -1, 0, detail)).first;
    it->second.value += n;
}

size_t StagedTrace::memoryBytes() const
{
    size_t n = m_strings.memoryBytes();
    for (const auto& b : m_blocks)
        n += b ? kBlockEvents * sizeof(StagedEvent) : 0;
    n += m_memops.capacity() * sizeof(MemopInfo) + m_syncs.capacity() * sizeof(SyncInfo)
        + m_collectives.capacity() * sizeof(CollectiveInfo) + m_configs.capacity() * sizeof(KernelConfig) * 3;
    n += m_longDurations.size() * 32;
    for (const StagedGraphNode& g : graphNodes)
        n += sizeof(StagedGraphNode) + g.node.ranges.capacity() * sizeof(StringId);
    return n;
}

} // namespace gapscope::model::importer
