// SPDX-License-Identifier: MIT
#pragma once

// ChunkBuilder: turns the injection library's fixed-size records into events of one
// format::ChunkEncoder stream (one per capture plan, as protocol.proto asks), and hands out Chunks.
//
// It keeps the small caches that make this cheap per event: lanes per (kind, device, stream or
// thread), kernel names per CUPTI name pointer (demangled once), launch configs, API names per
// callback id. It pairs NVTX push/pop per thread and start/end per range id, and puts each
// synchronisation record on the lane of the thread whose API call it belongs to (by correlation).
//
// Memory: caches grow with distinct names/lanes/configs only; open NVTX ranges and the
// correlation -> thread map are capped (kMaxOpen), overflow is counted (nvtx_unpaired).
// Threading: the injection library's own thread only. Never used inside a CUPTI/NVTX/NCCL callback.

#include "capture/inject/records.h"
#include "model/format/chunkencoder.h"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace gapscope::capture::inject {

class ChunkBuilder {
public:
    struct Identity {
        uint32_t rank = 0;
        std::string host;
        uint32_t pid = 0;
    };
    // Name of an API call from (domain: 0 runtime, 1 driver; callback id).
    using ApiNameFn = std::function<std::string(uint8_t domain, uint32_t cbid)>;

    static constexpr size_t kMaxOpen = 4096;

    ChunkBuilder(Identity identity, ApiNameFn apiName);

    void addGpu(const GpuRecord& record);
    void addNvtx(const NvtxRecord& record);
    void addCollective(const CollectiveRecord& record);
    void addStep(uint32_t index, int64_t start, uint64_t duration, pb::StepSource source);
    void addCounter(const pb::Counter& counter) { m_encoder.addCounter(counter); }

    size_t pendingEvents() const { return m_encoder.pendingEvents(); }
    // Events or step entries waiting for flush().
    bool hasPending() const { return m_encoder.pendingEvents() > 0 || m_pendingSteps > 0; }
    size_t pendingBytes() const { return m_encoder.pendingBytes(); }
    void flush(pb::Chunk& out);

    uint64_t eventsAdded() const { return m_events; }
    uint64_t nvtxUnpaired() const { return m_nvtxUnpaired; }
    // Graph nodes of recorded kernels and copies whose build context went into the stream, and those
    // whose build the library did not see (built before it watched, or GAPSCOPE_GRAPH_NODES=0).
    uint64_t graphNodesSent() const { return m_graphNodesSent; }
    uint64_t graphNodesUnknown() const { return m_graphNodesUnknown; }
    // Entries of the caches above and strings of the stream's dictionary (the memory they hold
    // grows with these: reported with the capture's counters).
    size_t cacheEntries() const;
    size_t dictionaryStrings() const { return m_encoder.strings().size(); }

    // Bytes of a NCCL datatype ("ncclBfloat16", "bf16", "ncclFloat32", ...); 0 when unknown.
    static uint32_t datatypeBytes(const char* datatype);
    static std::string demangle(const char* name);

private:
    uint32_t gpuLane(uint32_t device, uint32_t stream);
    uint32_t threadLane(pb::LaneKind kind, uint32_t tid);
    uint32_t kernelName(const char* name);
    uint32_t apiName(uint8_t domain, uint32_t cbid);
    uint32_t launchConfig(const GpuRecord& r);
    uint32_t staticString(const char* s);
    void addSync(const GpuRecord& r, bool last);
    // The first record of a graph node in this stream brings the node's entry (GraphNodeRegistry).
    void graphNode(uint64_t nodeId);

    Identity m_id;
    ApiNameFn m_apiName;
    format::ChunkEncoder m_encoder;

    std::unordered_map<uint64_t, uint32_t> m_lanes; // (kind, device, stream/tid) -> lane id
    std::unordered_map<const char*, uint32_t> m_names;
    std::unordered_map<uint32_t, uint32_t> m_apiNames; // (domain << 24 | cbid) -> string id
    // Launch config (grid xyz, block xyz, registers, static and dynamic shared memory) -> id; the
    // key is hashed in place, so a kernel record allocates nothing here.
    using ConfigKey = std::array<uint32_t, 9>;
    struct ConfigKeyHash {
        size_t operator()(const ConfigKey& k) const;
    };
    std::unordered_map<ConfigKey, uint32_t, ConfigKeyHash> m_configs;
    std::unordered_map<uint32_t, uint32_t> m_corrThread; // API call correlation -> thread id
    std::vector<GpuRecord> m_deferredSyncs; // waiting for their API record

    struct OpenRange {
        int64_t start = 0;
        uint32_t name = 0;
        uint32_t domain = 0;
        uint32_t tid = 0;
        uint32_t depth = 0;
    };
    std::unordered_map<uint32_t, std::vector<OpenRange>> m_stacks; // per thread
    std::unordered_map<uint64_t, OpenRange> m_started; // start/end by range id
    uint64_t m_events = 0;
    uint64_t m_nvtxUnpaired = 0;
    std::unordered_set<uint64_t> m_nodesSeen;
    uint64_t m_graphNodesSent = 0;
    uint64_t m_graphNodesUnknown = 0;
    size_t m_pendingSteps = 0;
};

} // namespace gapscope::capture::inject
