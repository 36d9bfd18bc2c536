// SPDX-License-Identifier: MIT
#include "capture/inject/chunkbuilder.h"

#include "capture/inject/graphnodes.h"
#include "model/format/wholegraph.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>

namespace gapscope::capture::inject {

namespace {

uint64_t laneKeyOf(pb::LaneKind kind, uint32_t device, uint32_t stream)
{
    return (uint64_t(kind) << 56) | (uint64_t(device & 0xffffff) << 32) | stream;
}

bool isSyncApi(uint8_t domain, uint32_t cbid)
{
    // Runtime: cudaThreadSynchronize 126, cudaStreamSynchronize 131, cudaEventSynchronize 137,
    // cudaStreamWaitEvent 147, cudaDeviceSynchronize 165, *_ptsz 239/247. Driver: cuCtxSynchronize
    // 17/800, cuEventSynchronize 121, cuStreamSynchronize 126/440, cuStreamWaitEvent 295/436.
    if (domain == 0)
        return cbid == 126 || cbid == 131 || cbid == 137 || cbid == 147 || cbid == 165 || cbid == 239 || cbid == 247;
    return cbid == 17 || cbid == 800 || cbid == 121 || cbid == 126 || cbid == 440 || cbid == 295 || cbid == 436;
}

} // namespace

ChunkBuilder::ChunkBuilder(Identity identity, ApiNameFn apiName)
    : m_id(std::move(identity))
    , m_apiName(std::move(apiName))
{
}

std::string ChunkBuilder::demangle(const char* name)
{
    if (!name)
        return {};
    int status = 0;
    char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    if (status != 0 || !out) {
        std::free(out);
        return name;
    }
    std::string result(out);
    std::free(out);
    return result;
}

uint32_t ChunkBuilder::datatypeBytes(const char* dt)
{
    if (!dt)
        return 0;
    std::string s(dt);
    if (s.rfind("nccl", 0) == 0)
        s = s.substr(4);
    for (auto& c : s)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    if (s == "int8" || s == "char" || s == "uint8" || s == "float8e4m3" || s == "float8e5m2" || s == "fp8e4m3"
        || s == "fp8e5m2" || s == "i8" || s == "u8")
        return 1;
    if (s == "float16" || s == "half" || s == "bfloat16" || s == "bf16" || s == "fp16" || s == "f16")
        return 2;
    if (s == "int32" || s == "int" || s == "uint32" || s == "float32" || s == "float" || s == "f32" || s == "i32"
        || s == "u32")
        return 4;
    if (s == "int64" || s == "uint64" || s == "float64" || s == "double" || s == "f64" || s == "i64" || s == "u64")
        return 8;
    return 0;
}

uint32_t ChunkBuilder::gpuLane(uint32_t device, uint32_t stream)
{
    const uint64_t key = laneKeyOf(pb::LANE_GPU_STREAM, device, stream);
    auto it = m_lanes.find(key);
    if (it != m_lanes.end())
        return it->second;
    pb::LaneDef def;
    def.set_kind(pb::LANE_GPU_STREAM);
    def.set_rank(m_id.rank);
    def.set_host(m_id.host);
    def.set_device(device);
    def.set_stream(stream);
    def.set_pid(m_id.pid);
    def.set_name("stream " + std::to_string(stream));
    const uint32_t id = m_encoder.lane(def);
    m_lanes.emplace(key, id);
    return id;
}

uint32_t ChunkBuilder::threadLane(pb::LaneKind kind, uint32_t tid)
{
    const uint64_t key = laneKeyOf(kind, 0, tid);
    auto it = m_lanes.find(key);
    if (it != m_lanes.end())
        return it->second;
    pb::LaneDef def;
    def.set_kind(kind);
    def.set_rank(m_id.rank);
    def.set_host(m_id.host);
    def.set_stream(tid);
    def.set_pid(m_id.pid);
    const char* what = kind == pb::LANE_NVTX ? "nvtx" : kind == pb::LANE_COLLECTIVE ? "nccl" : "cuda api";
    def.set_name(
        kind == pb::LANE_COLLECTIVE ? std::string(what) : std::string(what) + " thread " + std::to_string(tid));
    const uint32_t id = m_encoder.lane(def);
    m_lanes.emplace(key, id);
    return id;
}

uint32_t ChunkBuilder::kernelName(const char* name)
{
    auto it = m_names.find(name);
    if (it != m_names.end())
        return it->second;
    const uint32_t id = m_encoder.internString(name ? demangle(name) : std::string("<unnamed kernel>"));
    m_names.emplace(name, id);
    return id;
}

uint32_t ChunkBuilder::staticString(const char* s)
{
    if (!s || !*s)
        return 0;
    auto it = m_names.find(s);
    if (it != m_names.end())
        return it->second;
    const uint32_t id = m_encoder.internString(s);
    m_names.emplace(s, id);
    return id;
}

uint32_t ChunkBuilder::apiName(uint8_t domain, uint32_t cbid)
{
    const uint32_t key = (uint32_t(domain) << 24) | (cbid & 0xffffff);
    auto it = m_apiNames.find(key);
    if (it != m_apiNames.end())
        return it->second;
    std::string name = m_apiName ? m_apiName(domain, cbid) : std::string();
    if (name.empty())
        name = std::string(domain ? "driver api " : "runtime api ") + std::to_string(cbid);
    const uint32_t id = m_encoder.internString(name);
    m_apiNames.emplace(key, id);
    return id;
}

size_t ChunkBuilder::ConfigKeyHash::operator()(const ConfigKey& k) const
{
    uint64_t h = 1469598103934665603ull; // FNV-1a over the nine words
    for (uint32_t w : k) {
        h ^= w;
        h *= 1099511628211ull;
    }
    return static_cast<size_t>(h ^ (h >> 32));
}

uint32_t ChunkBuilder::launchConfig(const GpuRecord& r)
{
    const ConfigKey v = { r.grid[0], r.grid[1], r.grid[2], r.block[0], r.block[1], r.block[2], r.registers,
        r.sharedStatic, r.sharedDynamic };
    auto it = m_configs.find(v);
    if (it != m_configs.end())
        return it->second;
    pb::LaunchConfig c;
    c.set_grid_x(v[0]);
    c.set_grid_y(v[1]);
    c.set_grid_z(v[2]);
    c.set_block_x(v[3]);
    c.set_block_y(v[4]);
    c.set_block_z(v[5]);
    c.set_registers(v[6]);
    c.set_shared_static(v[7]);
    c.set_shared_dynamic(v[8]);
    const uint32_t id = m_encoder.config(c);
    m_configs.emplace(v, id);
    return id;
}

size_t ChunkBuilder::cacheEntries() const
{
    size_t open = 0;
    for (const auto& [tid, stack] : m_stacks)
        open += stack.size();
    return m_lanes.size() + m_names.size() + m_apiNames.size() + m_configs.size() + m_corrThread.size()
        + m_deferredSyncs.size() + m_stacks.size() + open + m_started.size() + m_nodesSeen.size();
}

void ChunkBuilder::graphNode(uint64_t nodeId)
{
    if (nodeId == 0 || nodeId == format::kWholeGraphNode || !m_nodesSeen.insert(nodeId).second)
        return;
    pb::GraphNode node;
    if (!GraphNodeRegistry::instance().find(nodeId, node)) {
        ++m_graphNodesUnknown;
        return;
    }
    node.set_rank(m_id.rank);
    m_encoder.addGraphNode(node);
    ++m_graphNodesSent;
}

void ChunkBuilder::addGpu(const GpuRecord& r)
{
    const uint64_t dur = r.end > r.start ? uint64_t(r.end - r.start) : 0;
    switch (r.kind) {
    case GpuRecordKind::Kernel:
        m_encoder.addKernel(gpuLane(r.device, r.stream), r.start, dur, kernelName(r.name), r.correlation,
            launchConfig(r), r.graphId, r.graphNodeId);
        graphNode(r.graphNodeId);
        break;
    case GpuRecordKind::Memcpy:
    case GpuRecordKind::Memset:
        graphNode(r.graphNodeId);
        m_encoder.addMemop(gpuLane(r.device, r.stream), r.start, dur,
            r.kind == GpuRecordKind::Memcpy ? pb::MEMOP_MEMCPY : pb::MEMOP_MEMSET, pb::CopyKind(r.copyKind), r.bytes,
            r.flags, r.correlation);
        break;
    case GpuRecordKind::Api:
        if (isSyncApi(r.apiDomain, r.cbid)) {
            if (m_corrThread.size() >= kMaxOpen)
                m_corrThread.clear();
            m_corrThread[r.correlation] = r.stream;
        }
        m_encoder.addApi(threadLane(pb::LANE_CPU_API, r.stream), r.start, dur, apiName(r.apiDomain, r.cbid),
            r.correlation, r.apiDomain ? pb::API_DRIVER : pb::API_RUNTIME);
        break;
    case GpuRecordKind::Sync:
        addSync(r, false);
        return;
    case GpuRecordKind::None:
        return;
    }
    ++m_events;
}

void ChunkBuilder::addSync(const GpuRecord& r, bool last)
{
    uint32_t tid = 0;
    auto it = m_corrThread.find(r.correlation);
    if (it != m_corrThread.end()) {
        tid = it->second;
    } else if (!last) {
        if (m_deferredSyncs.size() < kMaxOpen) {
            m_deferredSyncs.push_back(r);
            return;
        }
    }
    const uint64_t dur = r.end > r.start ? uint64_t(r.end - r.start) : 0;
    m_encoder.addSync(
        threadLane(pb::LANE_CPU_API, tid), r.start, dur, pb::SyncKind(r.syncKind), r.stream, r.correlation);
    ++m_events;
}

void ChunkBuilder::addNvtx(const NvtxRecord& r)
{
    std::string text(r.name, strnlen(r.name, sizeof(r.name)));
    if (r.truncated)
        text += "...";
    switch (r.op) {
    case NvtxOp::Push: {
        auto& stack = m_stacks[r.tid];
        if (stack.size() >= 256) {
            ++m_nvtxUnpaired;
            return;
        }
        stack.push_back(OpenRange { r.time, m_encoder.internString(text), 0, r.tid, r.depth });
        return;
    }
    case NvtxOp::Pop: {
        auto it = m_stacks.find(r.tid);
        if (it == m_stacks.end() || it->second.empty()) {
            ++m_nvtxUnpaired;
            return;
        }
        const OpenRange o = it->second.back();
        it->second.pop_back();
        m_encoder.addNvtx(threadLane(pb::LANE_NVTX, r.tid), o.start, uint64_t(std::max<int64_t>(0, r.time - o.start)),
            o.name, uint32_t(it->second.size()));
        ++m_events;
        return;
    }
    case NvtxOp::Start:
        if (m_started.size() >= kMaxOpen) {
            ++m_nvtxUnpaired;
            return;
        }
        m_started[r.rangeId] = OpenRange { r.time, m_encoder.internString(text), 0, r.tid, 0 };
        return;
    case NvtxOp::End: {
        auto it = m_started.find(r.rangeId);
        if (it == m_started.end()) {
            ++m_nvtxUnpaired;
            return;
        }
        const OpenRange o = it->second;
        m_started.erase(it);
        m_encoder.addNvtx(
            threadLane(pb::LANE_NVTX, o.tid), o.start, uint64_t(std::max<int64_t>(0, r.time - o.start)), o.name, 0);
        ++m_events;
        return;
    }
    case NvtxOp::Mark:
        m_encoder.addNvtx(threadLane(pb::LANE_NVTX, r.tid), r.time, 0, m_encoder.internString(text), r.depth);
        ++m_events;
        return;
    }
}

void ChunkBuilder::addCollective(const CollectiveRecord& r)
{
    format::ChunkEncoder::Collective c;
    c.bytes = r.count * datatypeBytes(r.datatype);
    c.datatype = staticString(r.datatype);
    c.algorithm = staticString(r.algorithm);
    c.protocol = staticString(r.protocol);
    c.sequence = r.sequence;
    c.comm = r.comm;
    c.channels = r.channels;
    c.root = uint32_t(r.root < 0 ? 0 : r.root);
    const uint64_t dur = r.end > r.start ? uint64_t(r.end - r.start) : 0;
    m_encoder.addCollective(threadLane(pb::LANE_COLLECTIVE, 0), r.start, dur, staticString(r.func ? r.func : "?"), c);
    ++m_events;
}

void ChunkBuilder::addStep(uint32_t index, int64_t start, uint64_t duration, pb::StepSource source)
{
    m_encoder.addStep(m_id.rank, index, start, duration, source);
    ++m_pendingSteps;
}

void ChunkBuilder::flush(pb::Chunk& out)
{
    std::vector<GpuRecord> deferred;
    deferred.swap(m_deferredSyncs);
    for (const GpuRecord& r : deferred)
        addSync(r, true);
    m_encoder.flush(out);
    m_pendingSteps = 0;
    out.set_source_rank(m_id.rank);
}

} // namespace gapscope::capture::inject
