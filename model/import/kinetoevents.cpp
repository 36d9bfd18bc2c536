// SPDX-License-Identifier: MIT
#include "model/import/kinetoevents.h"

#include "model/import/decimal.h"
#include "model/import/stringpool.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace gapscope::model::importer {

namespace od = simdjson::ondemand;

namespace {

enum Category : int {
    kKernel,
    kMemcpy,
    kMemset,
    kRuntime,
    kDriver,
    kSync,
    kUserAnnotation,
    kGpuUserAnnotation,
    kDeviceEvent, // another accelerator's device activity (MTIA): a kernel-like event on its stream's lane
    kCpuOp,
    kPython,
    kFlow,
    kSkipped,
    kUnknown
};

constexpr uint64_t kGpuRangeBit = kGpuAnnotationStreamBit; // GPU-side annotation lanes (model/trace/trace.h)
constexpr uint64_t kSyncLaneStream = ~0ull;

Category classify(std::string_view c)
{
    switch (c.size()) {
    case 4:
        return c == "ac2g" ? kFlow : kUnknown;
    case 5:
        return c == "Trace" ? kSkipped : kUnknown;
    case 6:
        if (c == "kernel" || c == "Kernel")
            return kKernel;
        if (c == "cpu_op")
            return kCpuOp;
        if (c == "Memcpy")
            return kMemcpy;
        if (c == "Memset")
            return kMemset;
        if (c == "Driver")
            return kDriver;
        return c == "python" ? kPython : kUnknown;
    case 7:
        return c == "Runtime" ? kRuntime : kUnknown;
    case 8:
        if (c == "overhead")
            return kSkipped;
        return c == "Operator" ? kCpuOp : kUnknown;
    case 9:
        return c == "cuda_sync" ? kSync : kUnknown;
    case 10:
        if (c == "gpu_memcpy")
            return kMemcpy;
        if (c == "gpu_memset")
            return kMemset;
        return kUnknown;
    case 11:
        if (c == "xpu_runtime")
            return kRuntime;
        return c == "cuda_driver" ? kDriver : kUnknown;
    case 12:
        return c == "cuda_runtime" || c == "mtia_runtime" || c == "glow_runtime" ? kRuntime : kUnknown;
    case 15:
        if (c == "user_annotation")
            return kUserAnnotation;
        if (c == "mtia_ccp_events")
            return kDeviceEvent;
        return c == "python_function" ? kPython : kUnknown;
    case 17:
        return c == "cpu_instant_event" ? kSkipped : kUnknown;
    case 18:
        return c == "privateuse1_driver" ? kDriver : kUnknown;
    case 19:
        if (c == "privateuse1_runtime")
            return kRuntime;
        return c == "gpu_user_annotation" ? kGpuUserAnnotation : kUnknown;
    default:
        return kUnknown;
    }
}

CopyKind copyKindOf(std::string_view name)
{
    if (name.find("HtoD") != std::string_view::npos)
        return CopyKind::HtoD;
    if (name.find("DtoH") != std::string_view::npos)
        return CopyKind::DtoH;
    if (name.find("DtoD") != std::string_view::npos)
        return CopyKind::DtoD;
    if (name.find("HtoH") != std::string_view::npos)
        return CopyKind::HtoH;
    if (name.find("PtoP") != std::string_view::npos)
        return CopyKind::PtoP;
    return CopyKind::Unknown;
}

SyncKind syncKindOf(std::string_view name)
{
    if (name == "Stream Wait Event")
        return SyncKind::StreamWaitEvent;
    if (name == "Stream Sync")
        return SyncKind::Stream;
    if (name == "Event Sync")
        return SyncKind::Event;
    if (name == "Context Sync")
        return SyncKind::Context;
    return SyncKind::Unknown;
}

// Bytes per element of the dtype names torch writes in collective args ("BFloat16", "Float", ...).
uint64_t dtypeBytes(std::string_view t)
{
    if (t == "Float" || t == "Int" || t == "UInt32" || t == "float" || t == "int32")
        return 4;
    if (t == "Double" || t == "Long" || t == "ComplexFloat" || t == "UInt64" || t == "int64")
        return 8;
    if (t == "BFloat16" || t == "Half" || t == "Short" || t == "bfloat16" || t == "float16")
        return 2;
    if (t == "ComplexDouble")
        return 16;
    return 1; // Byte, Char, Bool, the float8 types
}

uint64_t hashText(std::string_view s)
{
    return StringPool::hash(s);
}

bool isCudaApi(std::string_view cat)
{
    return cat.rfind("cuda_", 0) == 0 || cat == "Runtime" || cat == "Driver";
}

// The accelerator a non-CUDA category belongs to, for its lanes' names: "mtia_runtime" -> "MTIA".
std::string acceleratorOf(std::string_view cat)
{
    std::string a(cat.substr(0, cat.find('_')));
    for (char& ch : a)
        ch = char(std::toupper(static_cast<unsigned char>(ch)));
    return a;
}

} // namespace

KinetoEventParser::KinetoEventParser(StagedTrace& out)
    : m_out(out)
{
    m_process = m_out.addProcess(StagedProcess {});
    m_out.metadata["source"] = "kineto";
}

void KinetoEventParser::tally(std::map<std::string, uint64_t, std::less<>>& m, std::string_view key)
{
    auto it = m.find(key);
    if (it == m.end())
        it = m.emplace(std::string(key), 0).first;
    ++it->second;
}

KinetoEventParser::Result KinetoEventParser::parse(od::value element)
{
    KinetoRawEvent r;
    if (!m_reader.read(element, r))
        return Result::JsonError;
    return dispatch(r);
}

// The event as its rank's process sees it: a pid "[TP01] 1234" selects (creates) the process of that
// label and reads as 1234.
const KinetoRawEvent& KinetoEventParser::rankOf(const KinetoRawEvent& r, KinetoRawEvent& relabelled)
{
    SglangRanks::Label label;
    std::string_view rest;
    if (!r.pidString || !SglangRanks::parsePid(r.pidText, label, rest))
        return r;
    auto it = std::find_if(m_labels.begin(), m_labels.end(), [&](const auto& l) { return l.first == label; });
    if (it == m_labels.end()) {
        // The first label takes the file's own process (which the top-level distributedInfo describes).
        const uint16_t p = m_labels.empty() ? m_process : m_out.addProcess(StagedProcess {});
        m_labels.emplace_back(label, p);
        it = m_labels.end() - 1;
    }
    m_process = it->second;
    relabelled = r;
    int64_t pid = 0;
    relabelled.pidString = !parseInteger(rest, pid);
    relabelled.pid = relabelled.pidString ? int64_t(hashText(rest) & 0x7FFFFFFFFFFFFFFFull) : pid;
    relabelled.pidText = rest;
    return relabelled;
}

KinetoEventParser::Result KinetoEventParser::dispatch(const KinetoRawEvent& raw)
{
    KinetoRawEvent relabelled;
    const KinetoRawEvent& r = rankOf(raw, relabelled);
    if (r.bad) {
        tally(m_bad, r.bad);
        return Result::Bad;
    }
    if (r.ph.size() != 1) {
        tally(m_unknown, r.ph.empty() ? std::string_view("event without ph") : r.ph);
        return Result::Ok;
    }
    const Category cat = classify(r.cat);
    switch (r.ph[0]) {
    case 'X':
        break;
    case 'M':
        addMetadata(r);
        return Result::Ok;
    case 's':
    case 'f':
    case 't':
        if (cat == kFlow)
            addFlow(r);
        else
            tally(m_skipped, "flow events");
        return Result::Ok;
    case 'i':
    case 'I':
    case 'C':
        tally(m_skipped, r.ph[0] == 'C' ? "counter events" : "instant events");
        return Result::Ok;
    default:
        tally(m_unknown, std::string("ph=") + std::string(r.ph));
        return Result::Ok;
    }
    if (!r.hasTs) {
        tally(m_bad, "complete event without ts");
        return Result::Bad;
    }
    const int64_t dur = r.dur; // StagedTrace counts and clamps a negative one
    if (cat == kSkipped) {
        tally(m_skipped, r.cat);
    } else if (cat == kUnknown || cat == kFlow) {
        tally(m_unknown, r.cat.empty() ? std::string_view("event without cat") : r.cat);
    } else if (cat == kKernel || cat == kMemcpy || cat == kMemset || cat == kSync || cat == kGpuUserAnnotation
        || cat == kDeviceEvent) {
        addGpuEvent(r, dur, cat);
    } else {
        addCpuEvent(r, dur, cat);
    }
    return Result::Ok;
}

uint32_t KinetoEventParser::laneFor(
    LaneMap& map, LaneKind kind, int64_t a, int64_t b, uint32_t device, uint64_t stream, uint32_t pid)
{
    a ^= int64_t(m_process) << 40; // ranks of a merged file may share pids and devices
    auto it = map.find({ a, b });
    if (it != map.end())
        return it->second;
    const uint32_t lane = m_out.lane(m_process, kind, device, stream, pid);
    map.emplace(std::make_pair(a, b), lane);
    return lane;
}

void KinetoEventParser::noteHostPid(int64_t pid)
{
    if (m_hostPidSeen.size() <= m_process)
        m_hostPidSeen.resize(m_process + 1u, 0);
    if (m_hostPidSeen[m_process])
        return;
    m_hostPidSeen[m_process] = 1;
    m_out.process(m_process).pid = static_cast<uint32_t>(pid);
}

void KinetoEventParser::addGpuEvent(const KinetoRawEvent& r, int64_t dur, int cat)
{
    const int64_t device = r.device >= 0 ? r.device : (r.hasPid && !r.pidString ? r.pid : 0);
    const int64_t stream = r.stream >= 0 ? r.stream : (r.hasTid ? r.tid : 0);
    const auto dev = static_cast<uint32_t>(device);
    auto& proc = m_out.process(m_process);
    if (!proc.device && cat != kSync)
        proc.device = dev;
    const uint32_t name = m_out.strings().intern(r.name, r.nameHash);
    const auto corr = static_cast<uint32_t>(r.correlation);
    uint32_t lane;
    if (cat == kDeviceEvent) {
        lane = laneFor(m_gpuLanes, LaneKind::GpuStream, device, stream, dev, uint64_t(stream));
        if (lane == StagedTrace::kNoLane)
            return;
        labelLane(lane, r.cat);
        // Flow ends name the event's pid/tid, not its device/stream as CUDA kernels' do.
        if (r.hasPid && r.hasTid)
            m_deviceFlowLanes[{ r.pid ^ (int64_t(m_process) << 40), r.tid }] = lane;
        m_out.addKernel(lane, r.ts, dur, name, corr, m_out.config(KernelConfig {}));
        return;
    }
    if (cat == kKernel) {
        lane = laneFor(m_gpuLanes, LaneKind::GpuStream, device, stream, dev, uint64_t(stream));
        if (lane == StagedTrace::kNoLane)
            return;
        KernelConfig c;
        std::copy(r.grid, r.grid + 3, c.grid);
        std::copy(r.block, r.block + 3, c.block);
        c.registers = static_cast<uint32_t>(r.registers);
        c.sharedDynamic = static_cast<uint32_t>(r.sharedMemory); // Kineto reports static + dynamic as one sum
        c.graphId = static_cast<uint64_t>(r.graphId);
        c.graphNodeId = static_cast<uint64_t>(r.graphNodeId);
        m_out.addKernel(lane, r.ts, dur, name, corr, m_out.config(c));
        if (!r.collective.empty()) {
            CollectiveInfo info;
            info.bytes = r.nelems > 0 ? uint64_t(r.nelems) * dtypeBytes(r.dtype) : 0;
            info.datatype = m_out.strings().intern(r.dtype);
            info.comm = r.pgName.empty() ? 0 : hashText(r.pgName);
            const uint32_t cl = laneFor(m_collLanes, LaneKind::Collective, device, 0, dev, 0);
            if (cl != StagedTrace::kNoLane)
                m_out.addCollective(cl, r.ts, dur, m_out.strings().intern(r.collective), info);
        }
        return;
    }
    if (cat == kMemcpy || cat == kMemset) {
        lane = laneFor(m_gpuLanes, LaneKind::GpuStream, device, stream, dev, uint64_t(stream));
        if (lane == StagedTrace::kNoLane)
            return;
        MemopInfo info;
        info.kind = cat == kMemset ? MemopKind::Memset : MemopKind::Memcpy;
        info.copyKind = cat == kMemcpy ? copyKindOf(r.name) : CopyKind::Unknown;
        info.bytes = r.bytes > 0 ? uint64_t(r.bytes) : 0;
        m_out.addMemop(lane, r.ts, dur, name, corr, info);
        return;
    }
    if (cat == kGpuUserAnnotation) {
        lane = laneFor(m_gpuRangeLanes, LaneKind::Nvtx, device, stream, dev, kGpuRangeBit | uint64_t(stream));
        if (lane != StagedTrace::kNoLane)
            m_out.addRange(lane, r.ts, dur, name);
        return;
    }
    lane = laneFor(m_syncLanes, LaneKind::CpuApi, device, 0, dev, kSyncLaneStream); // cuda_sync
    if (lane == StagedTrace::kNoLane)
        return;
    SyncInfo info;
    info.kind = syncKindOf(r.name);
    info.stream = static_cast<uint64_t>(r.waitStream >= 0 ? r.waitStream : stream);
    m_out.addSync(lane, r.ts, dur, name, corr, info);
}

void KinetoEventParser::addCpuEvent(const KinetoRawEvent& r, int64_t dur, int cat)
{
    noteHostPid(r.pid);
    const auto tid = static_cast<uint64_t>(r.tid);
    const auto pid = static_cast<uint32_t>(r.pid); // a thread of another pid of the process's file stays apart
    const uint32_t name = m_out.strings().intern(r.name, r.nameHash);
    if (cat == kRuntime || cat == kDriver) {
        const uint32_t lane = laneFor(m_apiLanes, LaneKind::CpuApi, r.pid, r.tid, 0, tid, pid);
        if (lane != StagedTrace::kNoLane && !isCudaApi(r.cat))
            labelLane(lane, r.cat);
        if (lane != StagedTrace::kNoLane)
            m_out.addApi(lane, r.ts, dur, name, static_cast<uint32_t>(r.correlation),
                cat == kDriver ? ApiKind::Driver : ApiKind::Runtime);
        return;
    }
    if (cat == kCpuOp || cat == kPython) {
        const uint32_t lane = laneFor(m_hostLanes, LaneKind::CpuThread, r.pid, r.tid, 0, tid, pid);
        if (lane == StagedTrace::kNoLane)
            return;
        tally(m_host, r.cat);
        m_out.addHost(lane, r.ts, dur, name, cat == kCpuOp ? HostKind::CpuOp : HostKind::Python);
        return;
    }
    const uint32_t lane = laneFor(m_rangeLanes, LaneKind::Nvtx, r.pid, r.tid, 0, tid, pid);
    if (lane != StagedTrace::kNoLane)
        m_out.addRange(lane, r.ts, dur, name);
}

uint64_t KinetoEventParser::hostEventCount() const
{
    uint64_t n = 0;
    for (const auto& [cat, count] : m_host)
        n += count;
    return n;
}

// An ac2g flow end ("f") sits on the GPU event it points to, at the same time: it names that event's
// correlation id when the event's args did not. Kineto writes it right after that event, so it is
// tried against the lane's last event first; any other (a file whose flows all come at its end, or
// before their events) waits for finish(), where it is matched by lane and time.
void KinetoEventParser::addFlow(const KinetoRawEvent& r)
{
    if (r.ph[0] != 'f' || !r.hasId || !r.hasTs)
        return;
    const std::pair<int64_t, int64_t> key { r.pid ^ (int64_t(m_process) << 40), r.tid }; // as laneFor keys it
    const uint32_t lane = flowLane(key);
    if (lane != StagedTrace::kNoLane) {
        const uint64_t last = m_out.lastEventOf(lane);
        if (last != UINT64_MAX && m_out.event(last).start == r.ts
            && takeFlow(m_out.event(last), uint32_t(r.id), m_flowsMatched))
            return;
    } else if (m_apiLanes.count(key) || m_hostLanes.count(key) || m_rangeLanes.count(key)) {
        return; // a flow into a host-side event (a runtime call): nothing to correlate, nothing kept
    }
    m_pendingFlows.push_back({ key, r.ts, uint32_t(r.id) });
}

// The GPU lane (CUDA stream or another accelerator's device lane) a flow's (pid, tid) names, if any.
uint32_t KinetoEventParser::flowLane(const std::pair<int64_t, int64_t>& key) const
{
    if (auto it = m_gpuLanes.find(key); it != m_gpuLanes.end())
        return it->second;
    if (auto dt = m_deviceFlowLanes.find(key); dt != m_deviceFlowLanes.end())
        return dt->second;
    return StagedTrace::kNoLane;
}

// A flow of id `id` ends on `e`: fills its correlation when it has none (counted in `matched`); false
// when `e` carries another one.
bool KinetoEventParser::takeFlow(StagedEvent& e, uint32_t id, uint64_t& matched)
{
    if (e.correlation != 0 && e.correlation != id)
        return false;
    matched += e.correlation == 0 ? 1 : 0;
    e.correlation = id;
    return true;
}

// The flows not matched where they came, against every GPU event of their lane at their time (one pass
// over the staged events). A flow whose (pid, tid) is no GPU lane ends on a host-side event: nothing
// to correlate, not counted; one that finds no GPU event at its time is unmatched.
void KinetoEventParser::resolvePendingFlows()
{
    if (m_pendingFlows.empty())
        return;
    std::vector<std::pair<std::pair<int64_t, int64_t>, uint32_t>> byPlace; // ((lane, ts), id)
    byPlace.reserve(m_pendingFlows.size());
    for (const PendingFlow& f : m_pendingFlows)
        if (const uint32_t lane = flowLane(f.key); lane != StagedTrace::kNoLane)
            byPlace.push_back({ { int64_t(lane), f.ts }, f.id });
    std::vector<PendingFlow>().swap(m_pendingFlows);
    std::sort(byPlace.begin(), byPlace.end());
    std::unordered_map<std::pair<int64_t, int64_t>, size_t, PairHash> first; // (lane, ts) -> first in byPlace
    for (size_t i = byPlace.size(); i-- > 0;)
        first[byPlace[i].first] = i;
    std::vector<bool> taken(byPlace.size(), false);
    for (uint64_t i = 0; i < m_out.eventCount() && !first.empty(); ++i) {
        StagedEvent& e = m_out.event(i);
        if (e.kind != StagedKind::Kernel && e.kind != StagedKind::Memcpy && e.kind != StagedKind::Memset)
            continue;
        const std::pair<int64_t, int64_t> place { int64_t(e.lane), e.start };
        auto it = first.find(place);
        if (it == first.end())
            continue;
        for (size_t k = it->second; k < byPlace.size() && byPlace[k].first == place; ++k)
            if (!taken[k])
                taken[k] = takeFlow(e, byPlace[k].second, m_flowsMatched);
    }
    m_flowsUnmatched += uint64_t(std::count(taken.begin(), taken.end(), false));
}

void KinetoEventParser::labelLane(uint32_t lane, std::string_view cat)
{
    if (m_laneLabels.count(lane) == 0)
        m_laneLabels.emplace(lane, acceleratorOf(cat));
}

void KinetoEventParser::addMetadata(const KinetoRawEvent& r)
{
    if (r.name == "thread_name" && !r.metaName.empty())
        m_threadNames[r.tid] = std::string(r.metaName);
    else if (r.name == "process_name" && !r.metaName.empty())
        m_processNames[r.pid] = std::string(r.metaName);
    else if (r.name == "process_labels" && r.labels == "CPU" && !r.pidString)
        noteHostPid(r.pid);
}

} // namespace gapscope::model::importer

namespace gapscope::model::importer {

namespace {
std::string threadLabel(const std::unordered_map<int64_t, std::string>& names, uint64_t tid)
{
    auto it = names.find(static_cast<int64_t>(tid));
    std::string plain = "thread " + std::to_string(tid);
    if (it == names.end() || it->second.empty() || it->second == std::to_string(tid))
        return plain;
    if (it->second.rfind(plain, 0) == 0) // Kineto already names it "thread 831 (python3)"
        return it->second;
    return plain + " (" + it->second + ")";
}
} // namespace

void KinetoEventParser::finish()
{
    for (uint32_t i = 0; i < m_out.lanes().size(); ++i) {
        LaneInfo& info = m_out.laneAt(i).info;
        const uint64_t s = info.stream;
        auto label = m_laneLabels.find(i); // another accelerator's lane ("MTIA stream 108")
        const std::string accelerator = label == m_laneLabels.end() ? std::string() : label->second;
        switch (info.kind) {
        case LaneKind::GpuStream:
            info.name = (accelerator.empty() ? "" : accelerator + " ") + "stream " + std::to_string(s);
            break;
        case LaneKind::Nvtx:
            info.name = (s & kGpuRangeBit) ? "stream " + std::to_string(s & 0xFFFFFFFFull) + " annotations"
                                           : threadLabel(m_threadNames, s);
            break;
        case LaneKind::CpuApi:
            info.name = s == kSyncLaneStream
                ? "CUDA synchronization"
                : threadLabel(m_threadNames, s) + " " + (accelerator.empty() ? "CUDA" : accelerator) + " API";
            break;
        case LaneKind::Collective:
            info.name = "collectives";
            break;
        case LaneKind::CpuThread:
            info.name = threadLabel(m_threadNames, s) + " CPU";
            break;
        default:
            break;
        }
    }
    for (size_t p = 0; p < m_out.processes().size(); ++p) {
        auto it = m_processNames.find(m_out.process(p).pid);
        if (it != m_processNames.end())
            m_out.process(p).name = it->second;
    }
    // Merged SGLang file: each label's rank (its distributedInfo was only the first rank's).
    std::vector<SglangRanks::Label> labels;
    for (const auto& l : m_labels)
        labels.push_back(l.first);
    const std::vector<uint32_t> ranks = SglangRanks::ranksOf(labels);
    for (size_t i = 0; i < m_labels.size(); ++i)
        m_out.process(m_labels[i].second).rank = ranks[i];
    if (m_labels.size() > 1)
        m_out.count(format::Stat::ImportSglangRanks, m_labels.size());
    for (const auto& [k, n] : m_skipped)
        m_out.count(format::Stat::ImportSkippedEvents, k, n);
    for (const auto& [k, n] : m_unknown)
        m_out.count(format::Stat::ImportUnknownEventKinds, k, n);
    for (const auto& [k, n] : m_bad)
        m_out.count(format::Stat::ImportBadEvents, k, n);
    resolvePendingFlows();
    if (m_flowsMatched)
        m_out.count(format::Stat::ImportFlowCorrelations, m_flowsMatched);
    if (m_flowsUnmatched)
        m_out.count(format::Stat::ImportUnmatchedFlows, m_flowsUnmatched);
}

} // namespace gapscope::model::importer
