// SPDX-License-Identifier: MIT
#include "model/import/nsysrows.h"

#include "model/import/sqlitedb.h"

#include <algorithm>
#include <set>

namespace gapscope::model::importer {

namespace {
constexpr uint64_t kSyncLaneStream = ~0ull;
constexpr int64_t kNvtxMark = 34;
constexpr int64_t kNvtxPushPop = 59;
constexpr int64_t kNvtxStartEnd = 60;

int64_t pidOf(int64_t globalId)
{
    return (globalId >> 24) & 0xFFFFFF;
}

int64_t tidOf(int64_t globalId)
{
    return globalId & 0xFFFFFF;
}

CopyKind copyKindOf(int64_t k)
{
    switch (k) { // CUpti_ActivityMemcpyKind, as nsys exports it
    case 1:
    case 11:
        return CopyKind::HtoD;
    case 2:
    case 12:
        return CopyKind::DtoH;
    case 8:
    case 13:
        return CopyKind::DtoD;
    case 9:
        return CopyKind::HtoH;
    case 10:
        return CopyKind::PtoP;
    default:
        return CopyKind::Unknown;
    }
}

SyncKind syncKindOf(int64_t t)
{
    switch (t) { // CUpti_ActivitySynchronizationType
    case 1:
        return SyncKind::Event;
    case 2:
        return SyncKind::StreamWaitEvent;
    case 3:
        return SyncKind::Stream;
    case 4:
        return SyncKind::Context;
    default:
        return SyncKind::Unknown;
    }
}

const char* syncName(SyncKind k)
{
    switch (k) {
    case SyncKind::Event:
        return "Event Sync";
    case SyncKind::StreamWaitEvent:
        return "Stream Wait Event";
    case SyncKind::Stream:
        return "Stream Sync";
    case SyncKind::Context:
        return "Context Sync";
    default:
        return "Sync";
    }
}

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": nsys appends the API version to runtime names.
std::string_view withoutVersion(std::string_view s)
{
    const size_t p = s.rfind("_v");
    if (p == std::string_view::npos || p + 2 >= s.size())
        return s;
    for (size_t i = p + 2; i < s.size(); ++i)
        if (s[i] < '0' || s[i] > '9')
            return s;
    return s.substr(0, p);
}
} // namespace

void NsysKernelRow::readLaunchColumns(sqlite3_stmt* s, int first)
{
    for (int i = 0; i < 3; ++i) {
        grid[i] = SqliteDb::num(s, first + i);
        block[i] = SqliteDb::num(s, first + 3 + i);
    }
    registersPerThread = SqliteDb::num(s, first + 6);
    staticSharedMemory = SqliteDb::num(s, first + 7);
    dynamicSharedMemory = SqliteDb::num(s, first + 8);
    graphId = SqliteDb::num(s, first + 9);
    graphNodeId = SqliteDb::num(s, first + 10);
}

NsysRowConverter::NsysRowConverter(StagedTrace& out)
    : m_out(out)
{
    m_out.metadata["source"] = "nsys";
}

void NsysRowConverter::string(int64_t id, std::string_view value)
{
    m_strings[id] = m_out.strings().intern(value);
}

uint32_t NsysRowConverter::name(int64_t stringId)
{
    auto it = m_strings.find(stringId);
    if (it != m_strings.end())
        return it->second;
    ++m_missingStrings;
    return m_out.strings().intern("<string " + std::to_string(stringId) + ">");
}

uint16_t NsysRowConverter::processOf(int64_t globalId)
{
    const int64_t pid = pidOf(globalId);
    auto it = m_processes.find(pid);
    if (it != m_processes.end())
        return it->second;
    StagedProcess p;
    p.pid = static_cast<uint32_t>(pid);
    if (m_out.processes().size() >= 0xFFFF) { // process indexes are 16-bit: the last one takes the rest
        m_out.count(format::Stat::ImportProcessOverflow);
        return static_cast<uint16_t>(m_out.processes().size() - 1);
    }
    const uint16_t index = m_out.addProcess(std::move(p));
    m_processes.emplace(pid, index);
    return index;
}

void NsysRowConverter::process(int64_t globalPid, std::string_view name)
{
    m_processNames[pidOf(globalPid)] = std::string(name);
}

void NsysRowConverter::threadName(int64_t globalTid, int64_t nameId)
{
    m_threadNames[tidOf(globalTid)] = std::string(m_out.strings().str(name(nameId)));
}

bool NsysRowConverter::checkTimes(int64_t start, int64_t end, const char* what)
{
    if (end >= start && start >= 0)
        return true;
    ++m_badRows;
    m_out.count(format::Stat::ImportBadEvents, std::string(what) + " rows with end before start or a negative start");
    return false;
}

uint32_t NsysRowConverter::gpuLane(uint16_t process, int64_t device, int64_t stream)
{
    auto& p = m_out.process(process);
    if (!p.device || uint32_t(device) < *p.device)
        p.device = static_cast<uint32_t>(device);
    return m_out.lane(process, LaneKind::GpuStream, static_cast<uint32_t>(device), static_cast<uint64_t>(stream));
}

void NsysRowConverter::kernel(const NsysKernelRow& r)
{
    if (!checkTimes(r.start, r.end, "kernel"))
        return;
    const uint32_t lane = gpuLane(processOf(r.globalPid), r.deviceId, r.streamId);
    if (lane == StagedTrace::kNoLane)
        return;
    KernelConfig c;
    for (int i = 0; i < 3; ++i) {
        c.grid[i] = static_cast<uint32_t>(r.grid[i]);
        c.block[i] = static_cast<uint32_t>(r.block[i]);
    }
    c.registers = static_cast<uint32_t>(r.registersPerThread);
    c.sharedStatic = static_cast<uint32_t>(r.staticSharedMemory);
    c.sharedDynamic = static_cast<uint32_t>(r.dynamicSharedMemory);
    c.graphId = static_cast<uint64_t>(r.graphId);
    c.graphNodeId = static_cast<uint64_t>(r.graphNodeId);
    m_out.addKernel(
        lane, r.start, r.end - r.start, kernelName(r), static_cast<uint32_t>(r.correlationId), m_out.config(c));
}

uint32_t NsysRowConverter::kernelName(const NsysKernelRow& r)
{
    if (m_strings.count(r.nameId) || !m_strings.count(r.shortNameId))
        return name(r.nameId);
    ++m_shortNames;
    return m_strings[r.shortNameId];
}

void NsysRowConverter::memop(const NsysMemopRow& r)
{
    if (!checkTimes(r.start, r.end, r.memset ? "memset" : "memcpy"))
        return;
    const uint32_t lane = gpuLane(processOf(r.globalPid), r.deviceId, r.streamId);
    if (lane == StagedTrace::kNoLane)
        return;
    MemopInfo info;
    info.kind = r.memset ? MemopKind::Memset : MemopKind::Memcpy;
    info.copyKind = r.memset ? CopyKind::Unknown : copyKindOf(r.copyKind);
    info.bytes = r.bytes > 0 ? uint64_t(r.bytes) : 0;
    const uint32_t n = m_out.strings().intern(r.memset ? "Memset" : "Memcpy");
    m_out.addMemop(lane, r.start, r.end - r.start, n, static_cast<uint32_t>(r.correlationId), info);
}

void NsysRowConverter::api(const NsysApiRow& r)
{
    if (!checkTimes(r.start, r.end, "CUDA API"))
        return;
    const uint16_t process = processOf(r.globalTid);
    const uint32_t lane = m_out.lane(process, LaneKind::CpuApi, 0, static_cast<uint64_t>(tidOf(r.globalTid)));
    if (lane == StagedTrace::kNoLane)
        return;
    if (m_apiCalls.size() <= process)
        m_apiCalls.resize(process + size_t(1), 0);
    ++m_apiCalls[process];
    const uint32_t raw = name(r.nameId);
    auto it = m_apiNames.find(raw);
    if (it == m_apiNames.end())
        it = m_apiNames.emplace(raw, m_out.strings().intern(withoutVersion(m_out.strings().str(raw)))).first;
    const std::string_view n = m_out.strings().str(it->second);
    const bool driver = n.size() > 2 && n.compare(0, 2, "cu") == 0 && n.compare(0, 4, "cuda") != 0;
    m_out.addApi(lane, r.start, r.end - r.start, it->second, static_cast<uint32_t>(r.correlationId),
        driver ? ApiKind::Driver : ApiKind::Runtime);
}

void NsysRowConverter::sync(const NsysSyncRow& r)
{
    if (!checkTimes(r.start, r.end, "synchronization"))
        return;
    const uint16_t process = processOf(r.globalTid ? r.globalTid : r.globalPid);
    const uint64_t stream = r.globalTid ? static_cast<uint64_t>(tidOf(r.globalTid)) : kSyncLaneStream;
    const uint32_t lane = m_out.lane(process, LaneKind::CpuApi, 0, stream);
    if (lane == StagedTrace::kNoLane)
        return;
    SyncInfo info;
    info.kind = syncKindOf(r.syncType);
    info.stream = static_cast<uint64_t>(r.streamId);
    m_out.addSync(lane, r.start, r.end - r.start, m_out.strings().intern(syncName(info.kind)),
        static_cast<uint32_t>(r.correlationId), info);
}

void NsysRowConverter::nvtx(const NsysNvtxRow& r)
{
    if (r.eventType == kNvtxMark) {
        ++m_marks;
        return;
    }
    if (r.eventType != kNvtxPushPop && r.eventType != kNvtxStartEnd)
        return; // domain creation, registered strings, ...
    if (r.end < 0) {
        ++m_unterminated;
        return;
    }
    if (!checkTimes(r.start, r.end, "NVTX"))
        return;
    const std::optional<uint16_t> p = gpuProcess(r.globalTid);
    if (!p) {
        ++m_nvtxWithoutGpu;
        return;
    }
    const uint16_t process = *p;
    const uint32_t lane = m_out.lane(process, LaneKind::Nvtx, 0, static_cast<uint64_t>(tidOf(r.globalTid)));
    if (lane == StagedTrace::kNoLane)
        return;
    const uint32_t text = !r.text.empty() ? m_out.strings().intern(r.text) : r.textId ? name(r.textId) : 0;
    m_out.addRange(lane, r.start, r.end - r.start, text);
}

void NsysRowConverter::osrt(const NsysOsrtRow& r)
{
    if (!checkTimes(r.start, r.end, "OS runtime"))
        return;
    const std::optional<uint16_t> p = gpuProcess(r.globalTid);
    if (!p) {
        ++m_osrtWithoutGpu;
        return;
    }
    const uint32_t lane = m_out.lane(*p, LaneKind::CpuThread, 0, static_cast<uint64_t>(tidOf(r.globalTid)));
    if (lane != StagedTrace::kNoLane)
        m_out.addHost(lane, r.start, r.end - r.start, name(r.nameId), HostKind::OsRuntime);
}

void NsysRowConverter::sample(const NsysSampleRow& r)
{
    if (!gpuProcess(r.globalTid)) {
        ++m_samplesWithoutGpu;
        return;
    }
    // Frames root first; an unresolved frame is named after its module ("[libcuda.so.1]"), so the
    // samples that stopped somewhere in one library share a range.
    std::vector<uint32_t> frames;
    frames.reserve(r.frames.size());
    for (auto it = r.frames.rbegin(); it != r.frames.rend(); ++it) {
        uint32_t id;
        if (it->unresolved) {
            std::string_view module = m_out.strings().str(name(it->module));
            const size_t slash = module.rfind('/');
            if (slash != std::string_view::npos)
                module.remove_prefix(slash + 1);
            id = m_out.strings().intern("[" + std::string(module.empty() ? "unknown" : module) + "]");
        } else {
            id = name(it->symbol);
        }
        if (frames.empty() || frames.back() != id) // one library's unresolved frames in a row: one range
            frames.push_back(id);
    }
    m_samples[r.globalTid].add(r.start, std::move(frames));
}

void NsysRowConverter::finishSamples()
{
    if (m_samples.empty())
        return;
    std::vector<int64_t> intervals; // a thread with a single sample takes the others' median interval
    for (const auto& [tid, s] : m_samples)
        if (int64_t i = s.medianInterval(); i > 0)
            intervals.push_back(i);
    std::sort(intervals.begin(), intervals.end());
    const int64_t fallback = intervals.empty() ? 1000000 : intervals[intervals.size() / 2];
    m_out.metadata["import.cpu_sampling_interval_ns"] = std::to_string(fallback);
    for (auto& [globalTid, s] : m_samples) {
        const uint16_t process = m_processes.at(pidOf(globalTid));
        const uint64_t tid = static_cast<uint64_t>(tidOf(globalTid));
        const uint32_t lane = m_out.lane(process, LaneKind::CpuThread, 0, tid | kSampledStreamBit);
        if (lane == StagedTrace::kNoLane)
            continue;
        for (const SampledStacks::Range& x : s.finish(fallback))
            m_out.addHost(lane, x.start, x.end - x.start, x.name, HostKind::Sampled);
    }
    m_samples.clear();
}

void NsysRowConverter::graphNode(const NsysGraphNodeRow& r)
{
    if (!checkTimes(r.start, r.end, "CUDA graph node"))
        return;
    if (r.graphNodeId <= 0) {
        ++m_badRows;
        m_out.count(format::Stat::ImportBadEvents, "CUDA graph node rows without a node id");
        return;
    }
    if (gpuProcess(r.globalTid))
        m_graphNodes.add(r);
    else
        ++m_graphNodesWithoutGpu;
}

void NsysRowConverter::gpu(const NsysGpuRow& r)
{
    GpuInfo& g = m_gpus[r.id];
    g.deviceIndex = static_cast<uint32_t>(r.id);
    if (g.name.empty())
        g.name = std::string(r.name);
    if (g.uuid.empty())
        g.uuid = std::string(r.uuid);
    if (g.pciBusId.empty())
        g.pciBusId = std::string(r.busLocation);
    if (!g.smCount)
        g.smCount = static_cast<uint32_t>(std::clamp<int64_t>(r.smCount, 0, UINT32_MAX));
    if (!g.memoryBytes)
        g.memoryBytes = static_cast<uint64_t>(std::max<int64_t>(0, r.totalMemory));
    if (!g.ccMajor && !g.ccMinor) {
        g.ccMajor = static_cast<uint32_t>(std::clamp<int64_t>(r.ccMajor, 0, 255));
        g.ccMinor = static_cast<uint32_t>(std::clamp<int64_t>(r.ccMinor, 0, 255));
    }
    if (!g.smClockMhz)
        g.smClockMhz = static_cast<uint32_t>(std::clamp<int64_t>(r.smClockHz / 1000000, 0, UINT32_MAX));
    if (g.peakMemoryBandwidthGbs <= 0 && r.memoryBandwidth > 0)
        g.peakMemoryBandwidthGbs = r.memoryBandwidth / 1e9;
}

void NsysRowConverter::sessionStart(int64_t utcEpochNs)
{
    m_out.timeOffsetNs = utcEpochNs;
    m_out.absoluteClock = utcEpochNs > 0;
}

void NsysRowConverter::epochTimes()
{
    m_out.timeOffsetNs = 0;
    m_out.absoluteClock = true;
}

void NsysRowConverter::exportMetadata(std::string_view key, std::string_view value)
{
    if (key == "EXPORT_PRODUCT_NAME")
        m_product = std::string(value);
    else if (key == "EXPORT_PRODUCT_VERSION")
        m_productVersion = std::string(value);
    else if (key == "EXPORT_SCHEMA_VERSION")
        m_schemaVersion = std::string(value);
}

size_t NsysRowConverter::rankCount() const
{
    return m_out.processes().size();
}

// The process of an id when it ran GPU work (a kernel, memcpy or memset: gpuLane gave it a device).
std::optional<uint16_t> NsysRowConverter::gpuProcess(int64_t globalPidOrTid) const
{
    auto p = m_processes.find(pidOf(globalPidOrTid));
    if (p == m_processes.end() || !m_out.processes()[p->second].device)
        return std::nullopt;
    return p->second;
}

// A process with CUDA calls and no GPU work is not a rank (StagedTrace::dropProcessesWithoutGpuWork).
void NsysRowConverter::dropProcessesWithoutGpuWork()
{
    m_out.dropProcessesWithoutGpuWork(
        "CUDA", m_apiCalls,
        [this](const StagedProcess& p) {
            auto n = m_processNames.find(p.pid);
            return n != m_processNames.end() ? n->second : std::string();
        },
        "CUDA API calls and synchronization records of processes without GPU work");
    m_processes.clear();
    for (size_t i = 0; i < m_out.processes().size(); ++i)
        m_processes.emplace(m_out.process(i).pid, i);
}

// The header's GPUs: the export's rows, and for a device that ran GPU work without one (no GPU table,
// or a device it leaves out) its id alone, with a warning.
void NsysRowConverter::listGpus()
{
    const bool table = !m_gpus.empty();
    std::set<uint32_t> undescribed;
    for (const StagedLane& l : m_out.lanes())
        if (l.info.kind == LaneKind::GpuStream && !m_gpus.count(l.info.device))
            undescribed.insert(l.info.device);
    std::string devices;
    for (uint32_t d : undescribed) {
        m_gpus[d].deviceIndex = d;
        devices += (devices.empty() ? "" : ", ") + std::to_string(d);
    }
    for (auto& [device, g] : m_gpus)
        m_out.gpus.push_back(g);
    if (undescribed.empty())
        return;
    devices = (undescribed.size() == 1 ? "device " : "devices ") + devices;
    m_out.warnings.push_back(m_out.path()
        + (table ? ": " + devices + " ran GPU work but the export's GPU table (" + m_gpuTable + ") does not list "
                    + (undescribed.size() == 1 ? "it" : "them")
                 : ": the export has no GPU table (" + m_gpuTable + " missing or empty)")
        + ": " + devices + " listed by device id only, name unknown");
    m_out.count(format::Stat::ImportBadMetadata, "GPUs the export does not describe (listed by device id only)",
        undescribed.size());
}

// By lowest device, then pid (every process has GPU work by now).
void NsysRowConverter::orderProcesses()
{
    m_out.orderProcessesByDevice();
    for (size_t i = 0; i < m_out.processes().size(); ++i) {
        StagedProcess& p = m_out.process(i);
        auto n = m_processNames.find(p.pid);
        if (n != m_processNames.end())
            p.name = n->second;
    }
}

// "Nsight Systems 2024.6.2.25, schema 3.16.1" from the export's metadata rows.
std::string NsysRowConverter::tool() const
{
    std::string tool = m_product.empty() ? "Nsight Systems" : m_product;
    if (tool.rfind("NVIDIA ", 0) == 0)
        tool = tool.substr(7);
    if (!m_productVersion.empty())
        tool += " " + m_productVersion;
    else if (m_product.empty())
        tool += " (version not recorded)";
    if (!m_schemaVersion.empty())
        tool += ", schema " + m_schemaVersion;
    return tool;
}

void NsysRowConverter::nameLanes()
{
    for (uint32_t i = 0; i < m_out.lanes().size(); ++i) {
        LaneInfo& info = m_out.laneAt(i).info;
        const uint64_t s = info.threadId();
        auto tn = m_threadNames.find(static_cast<int64_t>(s));
        const std::string thread
            = "thread " + std::to_string(s) + (tn != m_threadNames.end() ? " (" + tn->second + ")" : "");
        if (info.kind == LaneKind::GpuStream)
            info.name = "stream " + std::to_string(s);
        else if (info.kind == LaneKind::Nvtx)
            info.name = thread;
        else if (info.kind == LaneKind::CpuApi)
            info.name = s == kSyncLaneStream ? "CUDA synchronization" : thread + " CUDA API";
        else if (info.kind == LaneKind::CpuThread)
            info.name = thread + (info.isSampledLane() ? " CPU samples" : " CPU");
    }
}

void NsysRowConverter::finish()
{
    dropProcessesWithoutGpuWork();
    orderProcesses();
    if (const uint64_t loops = m_graphNodes.finish(m_out)) // after the order: it keeps process indices
        m_out.count(format::Stat::ImportBadEvents, "CUDA graph nodes whose chain of originals loops", loops);
    listGpus();
    m_out.metadata["tool"] = tool();
    if (!m_productVersion.empty())
        m_out.metadata["import.product_version"] = m_productVersion;
    if (!m_schemaVersion.empty())
        m_out.metadata["import.schema_version"] = m_schemaVersion;
    nameLanes();
    if (m_missingStrings)
        m_out.count(format::Stat::ImportMissingStrings, m_missingStrings);
    if (m_unterminated)
        m_out.count(format::Stat::ImportUnterminatedRanges, m_unterminated);
    if (m_marks)
        m_out.count(format::Stat::ImportSkippedEvents, "NVTX marks", m_marks);
    if (m_nvtxWithoutGpu)
        m_out.count(format::Stat::ImportSkippedEvents, "NVTX ranges of processes without GPU work", m_nvtxWithoutGpu);
    if (m_samplesWithoutGpu)
        m_out.count(
            format::Stat::ImportSkippedEvents, "CPU samples of processes without GPU work", m_samplesWithoutGpu);
    if (m_graphNodesWithoutGpu)
        m_out.count(format::Stat::ImportSkippedEvents, "CUDA graph node rows of processes without GPU work",
            m_graphNodesWithoutGpu);
    if (m_osrtWithoutGpu)
        m_out.count(
            format::Stat::ImportSkippedEvents, "OS runtime calls of processes without GPU work", m_osrtWithoutGpu);
    if (m_shortNames)
        m_out.count(format::Stat::ImportKernelShortNames, m_shortNames);
}

} // namespace gapscope::model::importer
