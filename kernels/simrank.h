// SPDX-License-Identifier: MIT
#pragma once

// SimRank: one tensor-parallel rank of gapscope-decode-sim (one process, one GPU). Allocates the
// per-GPU weights of every layer in distinct device memory (so no step is served from L2), the KV
// caches and activations, fills them with random valid data, and runs decode steps of the plan
// eagerly or as CUDA graphs (one graph per step; one per layer segment when a host action sits
// between layers), injecting the pathologies of SimOptions and recording what it injected and
// what its CUDA events measured into a RankResult.
// Threading: one host thread drives the rank; stream-ordered host delays run on CUDA's callback
// thread and only touch an atomic counter.

#include "kernels/decodeplan.h"
#include "kernels/groundtruth.h"
#include "kernels/simoptions.h"
#include "kernels/slowtail.h"
#include "model/base/status.h"

#include <atomic>
#include <cstdint>
#include <cuda_runtime_api.h>
#include <memory>
#include <nccl.h>
#include <vector>

namespace gapscope::kernels {

// Stream-ordered host delay: CUDA's callback thread spins `ns` and adds what it spun.
struct HostDelayState {
    std::atomic<uint64_t> injected { 0 };
    uint64_t ns = 0;
};

class SimRank {
public:
    SimRank(const DecodePlan& plan, const SimOptions& options, uint32_t rank, const ncclUniqueId& id);
    ~SimRank();
    SimRank(const SimRank&) = delete;
    SimRank& operator=(const SimRank&) = delete;

    Status setup();
    Status run(RankResult& out);

    // Busy-waits `ns` on the host (CLOCK_MONOTONIC) and returns the time actually waited.
    static uint64_t hostSpin(uint64_t ns);

private:
    struct OpRes {
        const PlanOp* op = nullptr;
        uint32_t layer = 0; // UINT32_MAX for head/tail ops
        uint8_t* weights = nullptr; // group 0 values; scales at +scaleOffset; groups every groupBytes
        uint64_t scaleOffset = 0, groupBytes = 0;
        uint8_t* kCache = nullptr;
        uint8_t* vCache = nullptr;
        SlowTail* tail = nullptr;
        bool firstOfLayer = false;
        uint32_t collectiveOrdinal = 0;
    };

    Status allocate();
    Status assignWeights(uint64_t& offset, bool allExperts);
    Status fillData();
    // pdl: launch with programmatic dependent launch (kernels/pdl.h; the op before is one of the
    // sim's own kernels on the same stream, with no host node or event between).
    Status launchOp(const OpRes& r, cudaStream_t s, bool inject, bool pdl = false);
    Status launchGemvOp(const OpRes& r, cudaStream_t s, bool inject);
    Status launchAttentionOp(const OpRes& r, cudaStream_t s, bool inject);
    Status launchMiscOp(const OpRes& r, cudaStream_t s);
    Status enqueueSegment(size_t seg, bool inject, uint64_t& threadDelayNs);
    bool delayBefore(const OpRes& r) const;
    Status buildGraphs();
    Status runStep(uint32_t index, bool record, StepRecord& rec);
    Status profileOps(RankResult& out);
    Status measureMarkerCost();
    Status measureBoundaryCost();
    Status barrier();
    uint16_t* buf(Buf b) const { return m_bufs[static_cast<size_t>(b)]; }

    const DecodePlan& m_plan;
    const SimOptions& m_opt;
    uint32_t m_rank;
    ncclUniqueId m_id;
    int m_device = 0;
    int m_smCount = 0;
    std::string m_deviceName;
    cudaStream_t m_stream = nullptr;
    ncclComm_t m_comm = nullptr;
    std::vector<OpRes> m_ops;
    std::vector<size_t> m_segStart; // op index where each segment starts; last entry = m_ops.size()
    std::vector<cudaGraphExec_t> m_graphs;
    std::vector<cudaEvent_t> m_segBegin, m_segEnd;
    std::vector<cudaEvent_t> m_delayEv; // pairs around every host delay: the GPU idle it caused
    size_t m_delayCount = 0; // delay points per step
    cudaEvent_t m_stepStart[2] = {}, m_stepEnd = nullptr;
    bool m_allExperts = true;
    uint8_t* m_weightArena = nullptr;
    uint8_t* m_cacheArena = nullptr;
    uint8_t* m_actArena = nullptr;
    uint64_t m_weightBytes = 0, m_cacheBytes = 0;
    uint16_t* m_bufs[static_cast<size_t>(Buf::Count)] = {};
    uint16_t* m_embedding = nullptr;
    int32_t* m_tokens = nullptr;
    int32_t* m_slotExpert = nullptr;
    int32_t* m_slotCount = nullptr;
    int32_t* m_slotIds = nullptr;
    float* m_slotWeight = nullptr;
    float* m_attnWorkspace = nullptr;
    float* m_ropeTable = nullptr; // cos then sin at position context-1 (AttentionOp::ropeInAttention)
    void* m_localPairs = nullptr;
    void* m_gatheredPairs = nullptr;
    SlowTail* m_tails = nullptr;
    // [0] slow-kernel ns, [1] straggler ns; --step-stamps: [2] GPU clock after a step's last copy,
    // [3] at its first kernel (copied at the end of a step: the step before's end, this step's start)
    unsigned long long* m_counters = nullptr;
    static constexpr size_t kStepEndStamp = 2, kStepStartStamp = 3, kCounterWords = 4; // <= 8 (m_hostTokens)
    unsigned long long* m_hostCounters = nullptr; // pinned copy, read after each step
    int32_t* m_hostTokens = nullptr;
    // --sync-stamps: GPU clock before ([2b]) and after ([2b + 1]) the sync at boundary b, and its pinned copy
    unsigned long long* m_stamps = nullptr;
    unsigned long long* m_hostStamps = nullptr;
    HostDelayState m_delay;
    uint64_t m_markerNs = 0; // GPU time one captured event-record node adds (graph mode, measured)
    uint64_t m_boundaryNs = 0; // GPU time a marked segment boundary adds outside its markers (measured)
    uint64_t m_prevCounters[2] = { 0, 0 };
};

} // namespace gapscope::kernels
