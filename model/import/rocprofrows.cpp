// SPDX-License-Identifier: MIT
#include "model/import/rocprofrows.h"

#include "model/import/demangle.h"

#include <algorithm>
#include <cstdio>

namespace gapscope::model::importer {

namespace {
// The stream id of a device's lane of memory copies when the file records no streams (queue handles,
// the other lanes' ids, are far smaller).
constexpr uint64_t kCopyLane = uint64_t(1) << 40;

uint32_t clamp32(int64_t v)
{
    return static_cast<uint32_t>(std::clamp<int64_t>(v, 0, UINT32_MAX));
}

// "0000:75:00.0" from rocprofiler's domain and location id (bus << 8 | device << 3 | function).
std::string pciBusId(int64_t domain, int64_t location)
{
    if (domain < 0 || location < 0)
        return {};
    char text[32];
    std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", unsigned(domain & 0xFFFF), unsigned(location >> 8 & 0xFF),
        unsigned(location >> 3 & 0x1F), unsigned(location & 7));
    return text;
}
} // namespace

RocprofRowConverter::RocprofRowConverter(StagedTrace& out, const std::string& source, const std::string& tool)
    : m_out(out)
{
    m_out.metadata["source"] = source;
    m_out.metadata["tool"] = tool;
}

uint16_t RocprofRowConverter::process(int64_t pid, std::string_view name, std::string_view host)
{
    auto it = m_processes.find(pid);
    if (it == m_processes.end()) {
        if (m_out.processes().size() >= 0xFFFF) { // process indexes are 16-bit: the last one takes the rest
            m_out.count(format::Stat::ImportProcessOverflow);
            return static_cast<uint16_t>(m_out.processes().size() - 1);
        }
        StagedProcess p;
        p.pid = clamp32(pid);
        it = m_processes.emplace(pid, m_out.addProcess(std::move(p))).first;
    }
    StagedProcess& p = m_out.process(it->second);
    if (p.name.empty())
        p.name = std::string(name);
    if (p.host.empty())
        p.host = std::string(host);
    return it->second;
}

void RocprofRowConverter::agent(const RocprofAgentRow& a)
{
    if (a.gpuIndex < 0 || a.gpuIndex > 0xFFFF)
        return; // a CPU agent
    m_agentDevice[a.handle] = a.gpuIndex;
    GpuInfo& g = m_gpus[a.gpuIndex];
    g.deviceIndex = static_cast<uint32_t>(a.gpuIndex);
    g.name = std::string(a.productName.empty() ? a.arch : a.productName);
    g.smCount = clamp32(a.computeUnits);
    g.smClockMhz = clamp32(a.clockMhz);
    g.memoryBytes = static_cast<uint64_t>(std::max<int64_t>(0, a.memoryBytes));
    g.memoryClockMhz = clamp32(a.memoryClockMhz);
    g.memoryBusWidthBits = clamp32(a.memoryBusBits);
    g.pciBusId = pciBusId(a.pciDomain, a.pciLocation);
    if (!a.arch.empty() && std::find(m_archs.begin(), m_archs.end(), a.arch) == m_archs.end())
        m_archs.emplace_back(a.arch);
}

uint32_t RocprofRowConverter::kernelName(std::string_view symbol)
{
    const uint32_t raw = m_out.strings().intern(symbol);
    auto it = m_names.find(raw);
    if (it == m_names.end())
        it = m_names.emplace(raw, m_out.strings().intern(rocmKernelName(symbol))).first;
    return it->second;
}

bool RocprofRowConverter::checkTimes(int64_t start, int64_t end, const char* what)
{
    if (end >= start && start >= 0)
        return true;
    m_out.count(format::Stat::ImportBadEvents, std::string(what) + " with end before start or a negative start");
    return false;
}

// The GPU index of an agent the file described; else the id itself (rocprof v1's gpu-id), and an
// agent handle the file does not describe is counted.
uint32_t RocprofRowConverter::deviceOf(int64_t agent)
{
    auto it = m_agentDevice.find(agent);
    if (it != m_agentDevice.end())
        return static_cast<uint32_t>(it->second);
    if (!m_agentDevice.empty())
        ++m_unknownAgents;
    return clamp32(agent);
}

void RocprofRowConverter::dispatch(const RocprofDispatchRow& r)
{
    if (!checkTimes(r.start, r.end, "kernel dispatches"))
        return;
    const uint16_t process = this->process(r.pid);
    const uint32_t device = deviceOf(r.agent);
    m_byStream = m_byStream || r.stream >= 0;
    const int64_t id = r.stream >= 0 ? r.stream : r.queue;
    const uint32_t lane = m_out.lane(process, LaneKind::GpuStream, device, static_cast<uint64_t>(id));
    if (lane == StagedTrace::kNoLane)
        return;
    auto q = m_laneQueue.emplace(lane, r.queue).first;
    if (q->second != r.queue)
        q->second = -1;
    StagedProcess& p = m_out.process(process);
    if (!p.device || device < *p.device)
        p.device = device;
    KernelConfig c;
    for (int i = 0; i < 3; ++i) {
        const int64_t wg = std::max<int64_t>(1, r.workgroup[i]);
        c.grid[i] = clamp32(r.grid[i] / wg + (r.grid[i] % wg != 0));
        c.block[i] = clamp32(r.workgroup[i]);
    }
    c.registers = clamp32(r.vgprs);
    c.sharedDynamic = clamp32(r.groupSegment);
    m_out.addKernel(lane, r.start, r.end - r.start, r.name, static_cast<uint32_t>(r.correlation), m_out.config(c));
    ++m_dispatches;
}

void RocprofRowConverter::api(const RocprofApiRow& r)
{
    if (!checkTimes(r.start, r.end, "HIP API calls"))
        return;
    const uint16_t process = this->process(r.pid);
    const uint32_t lane = m_out.lane(process, LaneKind::CpuApi, 0, static_cast<uint64_t>(r.tid));
    if (lane == StagedTrace::kNoLane)
        return;
    m_out.addApi(lane, r.start, r.end - r.start, m_out.strings().intern(r.name), static_cast<uint32_t>(r.correlation),
        ApiKind::Runtime);
    if (m_processCalls.size() <= process)
        m_processCalls.resize(process + size_t(1), 0);
    ++m_processCalls[process];
    ++m_apiCalls;
}

void RocprofRowConverter::memoryCopy(const RocprofCopyRow& r)
{
    if (!checkTimes(r.start, r.end, "memory copies"))
        return;
    MemopInfo info;
    info.kind = MemopKind::Memcpy;
    info.async = true;
    info.bytes = r.bytes > 0 ? uint64_t(r.bytes) : 0;
    const std::string_view d = r.direction;
    const bool fromHost = d.find("HOST_TO") != std::string_view::npos;
    const bool toHost = d.find("TO_HOST") != std::string_view::npos;
    info.copyKind = fromHost && toHost ? CopyKind::HtoH
        : fromHost                     ? CopyKind::HtoD
        : toHost                       ? CopyKind::DtoH
        : d.find("DEVICE_TO_DEVICE") != std::string_view::npos || d.find("PEER") != std::string_view::npos
        ? CopyKind::DtoD
        : CopyKind::Unknown;
    // The GPU end: an agent the file describes as a GPU, else the one the direction says is a device.
    auto gpu = [this](int64_t agent) { return agent >= 0 && m_agentDevice.count(agent) != 0; };
    int64_t agent = gpu(r.dstAgent) ? r.dstAgent : gpu(r.srcAgent) ? r.srcAgent : -1;
    if (agent < 0)
        agent = info.copyKind == CopyKind::DtoH ? r.srcAgent : r.dstAgent >= 0 ? r.dstAgent : r.srcAgent;
    if (agent < 0 || info.copyKind == CopyKind::HtoH) {
        m_out.count(format::Stat::ImportSkippedEvents, "rocprofv3 memory copies without a GPU end (not read)");
        return;
    }
    const uint16_t process = this->process(r.pid);
    const uint32_t device = deviceOf(agent);
    const uint64_t id = r.stream >= 0 ? static_cast<uint64_t>(r.stream) : kCopyLane;
    m_byStream = m_byStream || r.stream >= 0;
    const uint32_t lane = m_out.lane(process, LaneKind::GpuStream, device, id);
    if (lane == StagedTrace::kNoLane)
        return;
    StagedProcess& p = m_out.process(process);
    if (!p.device || device < *p.device)
        p.device = device;
    m_out.addMemop(
        lane, r.start, r.end - r.start, m_out.strings().intern("Memcpy"), static_cast<uint32_t>(r.correlation), info);
    ++m_copies;
}

void RocprofRowConverter::truncated(const std::string& path, uint64_t cutAtLine, bool gzipEndedEarly)
{
    std::vector<std::string> what;
    if (cutAtLine)
        what.push_back(path + ": line " + std::to_string(cutAtLine)
            + ": the file ends inside this row (cut short?); the rows before it are kept");
    if (gzipEndedEarly)
        what.push_back(path + ": the gzip stream ends early; kept the rows read before it");
    for (const std::string& w : what) {
        m_out.warnings.push_back(w);
        m_out.count(format::Stat::ImportTruncated, w);
    }
}

void RocprofRowConverter::marker(const RocprofMarkerRow& r)
{
    if (!checkTimes(r.start, r.end, "ROCTx markers"))
        return;
    const uint32_t lane = m_out.lane(process(r.pid), LaneKind::Nvtx, 0, static_cast<uint64_t>(r.tid));
    if (lane == StagedTrace::kNoLane)
        return;
    m_out.addRange(lane, r.start, r.end - r.start, m_out.strings().intern(r.text));
    ++m_markers;
}

void RocprofRowConverter::nameLanes()
{
    for (uint32_t i = 0; i < m_out.lanes().size(); ++i) {
        LaneInfo& info = m_out.laneAt(i).info;
        const std::string id = std::to_string(info.stream);
        if (info.kind == LaneKind::CpuApi) {
            info.name = "thread " + id + " HIP API";
        } else if (info.kind == LaneKind::Nvtx) {
            info.name = "thread " + id + " ROCTx";
        } else if (info.kind == LaneKind::GpuStream && info.stream == kCopyLane) {
            info.name = "memory copies";
        } else if (info.kind == LaneKind::GpuStream && m_byStream) {
            auto q = m_laneQueue.find(i);
            info.name = "stream " + id
                + (q != m_laneQueue.end() && q->second >= 0 ? " (queue " + std::to_string(q->second) + ")" : "");
        } else if (info.kind == LaneKind::GpuStream) {
            info.name = "queue " + id;
        }
    }
}

void RocprofRowConverter::finish()
{
    m_out.dropProcessesWithoutGpuWork(
        "HIP", m_processCalls, nullptr, "HIP API calls and ROCTx markers of processes without GPU work");
    m_out.orderProcessesByDevice();
    nameLanes();
    for (auto& [index, g] : m_gpus)
        m_out.gpus.push_back(g);
    std::string archs;
    for (const auto& a : m_archs)
        archs += (archs.empty() ? "" : ", ") + a;
    if (!archs.empty())
        m_out.metadata["import.gpu_arch"] = archs;
    m_out.metadata["import.lanes_by"] = m_byStream ? "HIP stream" : "queue";
    if (m_unknownAgents)
        m_out.count(format::Stat::ImportBadMetadata, "kernel dispatches on an agent the file does not describe",
            m_unknownAgents);
}

} // namespace gapscope::model::importer
