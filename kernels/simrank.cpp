// SPDX-License-Identifier: MIT
#include "kernels/simrank.h"
#include "kernels/attention.h"
#include "kernels/cudastatus.h"
#include "kernels/gemv.h"
#include "kernels/ops.h"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <nvtx3/nvToolsExt.h>

namespace gapscope::kernels {

namespace {

constexpr uint64_t kAlign = 256;
constexpr uint32_t kNoLayer = 0xffffffffu;

uint64_t align(uint64_t v)
{
    return (v + kAlign - 1) / kAlign * kAlign;
}

uint64_t nowNs()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

uint64_t elapsedNs(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    if (cudaEventElapsedTime(&ms, a, b) != cudaSuccess)
        return 0;
    return static_cast<uint64_t>(static_cast<double>(ms) * 1e6);
}

void CUDART_CB hostDelayCallback(void* p)
{
    auto* d = static_cast<HostDelayState*>(p);
    d->injected.fetch_add(SimRank::hostSpin(d->ns), std::memory_order_relaxed);
}

bool isCollective(OpKind k)
{
    return k == OpKind::AllReduce || k == OpKind::AllGather;
}

} // namespace

uint64_t SimRank::hostSpin(uint64_t ns)
{
    const uint64_t start = nowNs();
    uint64_t t = start;
    while (t - start < ns)
        t = nowNs();
    return t - start;
}

SimRank::SimRank(const DecodePlan& plan, const SimOptions& options, uint32_t rank, const ncclUniqueId& id)
    : m_plan(plan)
    , m_opt(options)
    , m_rank(rank)
    , m_id(id)
{
}

SimRank::~SimRank()
{
    for (auto g : m_graphs)
        cudaGraphExecDestroy(g);
    for (auto e : m_segBegin)
        cudaEventDestroy(e);
    for (auto e : m_segEnd)
        cudaEventDestroy(e);
    for (auto e : m_delayEv)
        cudaEventDestroy(e);
    for (auto e : { m_stepStart[0], m_stepStart[1], m_stepEnd })
        if (e)
            cudaEventDestroy(e);
    if (m_comm)
        ncclCommDestroy(m_comm);
    for (void* p :
        { static_cast<void*>(m_weightArena), static_cast<void*>(m_cacheArena), static_cast<void*>(m_actArena) })
        if (p)
            cudaFree(p);
    if (m_hostCounters)
        cudaFreeHost(m_hostCounters);
    if (m_stamps)
        cudaFree(m_stamps);
    if (m_hostStamps)
        cudaFreeHost(m_hostStamps);
    if (m_stream)
        cudaStreamDestroy(m_stream);
}

Status SimRank::setup()
{
    int count = 0;
    GS_CUDA(cudaGetDeviceCount(&count));
    if (count == 0)
        return Status::error("no CUDA device");
    m_device = static_cast<int>(m_rank % static_cast<uint32_t>(count));
    GS_CUDA(cudaSetDevice(m_device));
    cudaDeviceProp prop {};
    GS_CUDA(cudaGetDeviceProperties(&prop, m_device));
    m_smCount = prop.multiProcessorCount;
    m_deviceName = prop.name;
    GS_CUDA(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking));
    GS_CUDA(prepareAttentionKernels());
    if (m_opt.plan.tp > 1)
        GS_NCCL(ncclCommInitRank(&m_comm, static_cast<int>(m_opt.plan.tp), m_id, static_cast<int>(m_rank)));
    m_delay.ns = m_opt.path.hostDelayNs;
    GS_TRY(allocate());
    GS_TRY(fillData());
    GS_CUDA(cudaEventCreate(&m_stepStart[0]));
    GS_CUDA(cudaEventCreate(&m_stepStart[1]));
    GS_CUDA(cudaEventCreate(&m_stepEnd));
    m_segBegin.resize(m_segStart.size() - 1);
    m_segEnd.resize(m_segStart.size() - 1);
    for (size_t i = 0; i + 1 < m_segStart.size(); ++i) {
        GS_CUDA(cudaEventCreate(&m_segBegin[i]));
        GS_CUDA(cudaEventCreate(&m_segEnd[i]));
    }
    if (m_opt.path.syncStamps && m_segStart.size() > 2) {
        const size_t bytes = 16 * (m_segStart.size() - 2);
        GS_CUDA(cudaMalloc(&m_stamps, bytes));
        GS_CUDA(cudaMallocHost(&m_hostStamps, bytes));
    }
    for (const auto& r : m_ops)
        m_delayCount += delayBefore(r);
    m_delayEv.resize(2 * m_delayCount);
    for (auto& e : m_delayEv)
        GS_CUDA(cudaEventCreate(&e));
    GS_CUDA(cudaStreamSynchronize(m_stream));
    if (m_opt.mode == LaunchMode::Graph) {
        GS_TRY(buildGraphs());
        if (m_delayCount || m_segStart.size() > 2)
            GS_TRY(measureMarkerCost());
        if (m_segStart.size() > 2)
            GS_TRY(measureBoundaryCost());
    }
    return Status::ok();
}

// The events that measure host delays and syncs inside captured graphs are nodes of their own, and
// each costs GPU time after its timestamp (before the next node starts): the idle a capture would
// see in that gap. Measured here as the difference between replays of 64 empty kernels with and
// without an event-record node before each, and added once per marker whose cost falls outside
// its measured interval (runStep).
Status SimRank::measureMarkerCost()
{
    constexpr int kNodes = 64, kReps = 15;
    cudaEvent_t mark = nullptr, a = nullptr, b = nullptr;
    GS_CUDA(cudaEventCreate(&mark));
    GS_CUDA(cudaEventCreate(&a));
    GS_CUDA(cudaEventCreate(&b));
    double ms[2] = { 0, 0 };
    Status st = Status::ok();
    for (int withMarks = 0; st && withMarks < 2; ++withMarks) {
        cudaGraph_t g = nullptr;
        cudaGraphExec_t exec = nullptr;
        if (cudaStreamBeginCapture(m_stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess)
            st = Status::error("marker cost: cudaStreamBeginCapture failed");
        for (int i = 0; st && i < kNodes; ++i)
            if ((withMarks && cudaEventRecordWithFlags(mark, m_stream, cudaEventRecordExternal) != cudaSuccess)
                || launchEmptyKernel(m_stream) != cudaSuccess)
                st = Status::error("marker cost: capture failed");
        if (cudaStreamEndCapture(m_stream, &g) != cudaSuccess
            || (st && cudaGraphInstantiate(&exec, g, 0) != cudaSuccess))
            st = Status::error("marker cost: graph capture or instantiation failed");
        if (g)
            cudaGraphDestroy(g);
        std::vector<double> t;
        for (int r = 0; st && r < kReps + 2; ++r) {
            float e = 0;
            if (cudaEventRecord(a, m_stream) != cudaSuccess || cudaGraphLaunch(exec, m_stream) != cudaSuccess
                || cudaEventRecord(b, m_stream) != cudaSuccess || cudaEventSynchronize(b) != cudaSuccess
                || cudaEventElapsedTime(&e, a, b) != cudaSuccess)
                st = Status::error("marker cost: replay failed");
            if (r >= 2)
                t.push_back(e);
        }
        if (exec)
            cudaGraphExecDestroy(exec);
        if (st) {
            std::sort(t.begin(), t.end());
            ms[withMarks] = t[t.size() / 2];
        }
    }
    for (auto e : { mark, a, b })
        cudaEventDestroy(e);
    GS_TRY(st);
    m_markerNs = ms[1] > ms[0] ? static_cast<uint64_t>((ms[1] - ms[0]) * 1e6 / kNodes) : 0;
    return Status::ok();
}

// A segment boundary (--sync-every-layer in graph mode) costs GPU time outside its two markers
// as well: the node latency before the closing marker and after the opening one, which one graph
// of back-to-back kernels does not pay. Measured as the replay of 2 x 32 empty kernels split in
// two graphs at a marked boundary with a host sync between them, less the idle between the
// markers, less one graph of the 64 kernels: median of 15 repeats (runStep adds it per boundary).
Status SimRank::measureBoundaryCost()
{
    constexpr int kNodes = 32, kReps = 15;
    cudaEvent_t end = nullptr, begin = nullptr, a = nullptr, b = nullptr;
    GS_CUDA(cudaEventCreate(&end));
    GS_CUDA(cudaEventCreate(&begin));
    GS_CUDA(cudaEventCreate(&a));
    GS_CUDA(cudaEventCreate(&b));
    cudaGraphExec_t exec[3] = {}; // the whole, the half that closes with a marker, the half that opens with one
    Status st = Status::ok();
    for (int part = 0; st && part < 3; ++part) {
        cudaGraph_t g = nullptr;
        if (cudaStreamBeginCapture(m_stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
            st = Status::error("boundary cost: cudaStreamBeginCapture failed");
            break;
        }
        if (part == 2 && cudaEventRecordWithFlags(begin, m_stream, cudaEventRecordExternal) != cudaSuccess)
            st = Status::error("boundary cost: capture failed");
        for (int i = 0; st && i < (part == 0 ? 2 * kNodes : kNodes); ++i)
            if (launchEmptyKernel(m_stream) != cudaSuccess)
                st = Status::error("boundary cost: capture failed");
        if (st && part == 1 && cudaEventRecordWithFlags(end, m_stream, cudaEventRecordExternal) != cudaSuccess)
            st = Status::error("boundary cost: capture failed");
        if (cudaStreamEndCapture(m_stream, &g) != cudaSuccess
            || (st && cudaGraphInstantiate(&exec[part], g, 0) != cudaSuccess))
            st = Status::error("boundary cost: graph capture or instantiation failed");
        if (g)
            cudaGraphDestroy(g);
    }
    std::vector<double> extra;
    for (int r = 0; st && r < kReps + 2; ++r) {
        float whole = 0, split = 0, idle = 0;
        if (cudaEventRecord(a, m_stream) != cudaSuccess || cudaGraphLaunch(exec[0], m_stream) != cudaSuccess
            || cudaEventRecord(b, m_stream) != cudaSuccess || cudaEventSynchronize(b) != cudaSuccess
            || cudaEventElapsedTime(&whole, a, b) != cudaSuccess || cudaEventRecord(a, m_stream) != cudaSuccess
            || cudaGraphLaunch(exec[1], m_stream) != cudaSuccess || cudaStreamSynchronize(m_stream) != cudaSuccess
            || cudaGraphLaunch(exec[2], m_stream) != cudaSuccess || cudaEventRecord(b, m_stream) != cudaSuccess
            || cudaEventSynchronize(b) != cudaSuccess || cudaEventElapsedTime(&split, a, b) != cudaSuccess
            || cudaEventElapsedTime(&idle, end, begin) != cudaSuccess)
            st = Status::error("boundary cost: replay failed");
        if (st && r >= 2)
            extra.push_back((static_cast<double>(split) - idle - whole) * 1e6);
    }
    for (auto& e : exec)
        if (e)
            cudaGraphExecDestroy(e);
    for (auto e : { end, begin, a, b })
        cudaEventDestroy(e);
    GS_TRY(st);
    std::sort(extra.begin(), extra.end());
    const double med = extra[extra.size() / 2];
    m_boundaryNs = med > 0 ? static_cast<uint64_t>(med) : 0;
    return Status::ok();
}

// Lays out every op's weights in the arena (offsets only; the arena is allocated afterwards).
Status SimRank::assignWeights(uint64_t& off, bool allExperts)
{
    uint32_t collective = 0;
    size_t li = 0;
    auto add = [&](const PlanOp& op, uint32_t l, bool first) {
        OpRes r;
        r.op = &op;
        r.layer = l;
        r.firstOfLayer = first;
        if (op.kind == OpKind::Gemv) {
            const auto& lay = op.gemv.layout;
            r.scaleOffset = align(lay.valueBytes);
            r.groupBytes = r.scaleOffset + align(lay.scaleBytes);
            const uint64_t groups
                = op.gemv.indirect ? (allExperts ? op.gemv.poolExperts : m_plan.expertSlots()) : op.gemv.groups;
            r.weights = reinterpret_cast<uint8_t*>(off);
            off += r.groupBytes * groups;
        } else if (op.kind == OpKind::RmsNorm) {
            r.weights = reinterpret_cast<uint8_t*>(off);
            off += align(op.width * 2);
        }
        if (isCollective(op.kind))
            r.collectiveOrdinal = collective++;
        m_ops.push_back(r);
    };
    m_segStart.clear();
    m_segStart.push_back(0);
    for (const auto& op : m_plan.head())
        add(op, kNoLayer, false);
    for (const auto& l : m_plan.layers()) {
        if (li > 0 && m_opt.path.syncEveryLayer)
            m_segStart.push_back(m_ops.size());
        for (size_t i = 0; i < l.ops.size(); ++i)
            add(l.ops[i], l.index, i == 0);
        ++li;
    }
    for (const auto& op : m_plan.tail())
        add(op, kNoLayer, false);
    m_segStart.push_back(m_ops.size());
    return Status::ok();
}

Status SimRank::allocate()
{
    const auto& cfg = m_plan.config();
    const uint32_t tp = m_opt.plan.tp, B = m_opt.plan.batch;
    const uint64_t vl = (cfg.vocab + tp - 1) / tp;
    size_t freeB = 0, totalB = 0;
    GS_CUDA(cudaMemGetInfo(&freeB, &totalB));
    const uint64_t cache = m_plan.cacheStorageBytes();
    const uint64_t all = m_plan.weightStorageBytes(true), touched = m_plan.weightStorageBytes(false);
    const uint64_t budget = freeB > (2ull << 30) ? freeB - (2ull << 30) : 0;
    m_allExperts
        = m_opt.expertPool == ExpertPool::All || (m_opt.expertPool == ExpertPool::Auto && all + cache <= budget);
    const uint64_t need = (m_allExperts ? all : touched) + cache;
    if (need > budget)
        return Status::error("rank " + std::to_string(m_rank) + ": needs " + std::to_string(need >> 20)
            + " MiB of weights and KV cache, " + std::to_string(budget >> 20)
            + " MiB free (use fewer --layers, a "
              "smaller --context or a larger --tp)");
    uint64_t off = align(vl * cfg.hidden * 2); // embedding slice first
    m_ops.clear();
    GS_TRY(assignWeights(off, m_allExperts));
    m_weightBytes = off;
    GS_CUDA(cudaMalloc(&m_weightArena, m_weightBytes));
    m_embedding = reinterpret_cast<uint16_t*>(m_weightArena);
    for (auto& r : m_ops)
        if (r.weights)
            r.weights = m_weightArena + reinterpret_cast<uint64_t>(r.weights);
    // KV caches, one per layer (the rope op of a layer writes the cache its attention op reads).
    uint64_t coff = 0;
    std::map<uint32_t, std::pair<uint64_t, uint64_t>> layerCache;
    std::map<size_t, std::pair<uint64_t, uint64_t>> indexCache; // op index -> (keys, scales)
    for (size_t i = 0; i < m_ops.size(); ++i)
        if (m_ops[i].op->kind == OpKind::IndexerScan) {
            const uint64_t rows = uint64_t(B) * m_ops[i].op->attn.context;
            indexCache[i] = { coff, coff + align(rows * m_ops[i].op->ld) };
            coff += align(rows * m_ops[i].op->ld) + align(rows * 4);
        }
    for (auto& r : m_ops) {
        if (r.op->kind != OpKind::Attention)
            continue;
        const auto& a = r.op->attn;
        const uint64_t esz = a.cache == model::Precision::Fp8 ? 1 : 2;
        const uint64_t kBytes = align(uint64_t(B) * a.kvHeads * a.context * a.headDimK * esz);
        const uint64_t vBytes = a.mla ? 0 : align(uint64_t(B) * a.kvHeads * a.context * a.headDimV * esz);
        layerCache[r.layer] = { coff, a.mla ? coff : coff + kBytes };
        coff += kBytes + vBytes;
    }
    m_cacheBytes = coff;
    if (coff)
        GS_CUDA(cudaMalloc(&m_cacheArena, coff));
    for (const auto& [i, off] : indexCache) {
        m_ops[i].kCache = m_cacheArena + off.first;
        m_ops[i].vCache = m_cacheArena + off.second;
    }
    for (auto& r : m_ops)
        if (r.op->kind == OpKind::Attention || r.op->kind == OpKind::RopeAppend) {
            r.kCache = m_cacheArena + layerCache[r.layer].first;
            r.vCache = m_cacheArena + layerCache[r.layer].second;
        }
    // Activations and small state.
    uint64_t aoff = 0;
    std::vector<uint64_t> bufOff(static_cast<size_t>(Buf::Count), 0);
    for (size_t b = 1; b < bufOff.size(); ++b) {
        bufOff[b] = aoff;
        aoff += align(m_plan.bufferElems(static_cast<Buf>(b)) * 2 + 16);
    }
    uint32_t maxHeads = 1, maxDv = 16;
    for (const auto& r : m_ops)
        if (r.op->kind == OpKind::Attention) {
            maxHeads = std::max(maxHeads, r.op->attn.qHeads);
            maxDv = std::max(maxDv, r.op->attn.headDimV);
        }
    const uint32_t slots = std::max(1u, m_plan.expertSlots());
    const uint64_t tokOff = aoff, slotOff = tokOff + kAlign, weightOff = slotOff + align(3 * slots * 4 + 4);
    const uint64_t wsOff = weightOff + align(uint64_t(B) * slots * 4);
    const uint64_t pairOff = wsOff + align(attentionWorkspaceFloats(B, maxHeads, maxDv) * 4);
    const uint64_t tailOff = pairOff + align(uint64_t(B) * 8 * (tp + 1));
    const uint64_t cntOff = tailOff + align(m_ops.size() * sizeof(SlowTail));
    // RoPE cos/sin at position context-1 for attention that rotates and appends itself (the same
    // for every layer: one head dim, one context), as engines read their cos_sin_cache.
    uint32_t ropeDim = 0;
    for (const auto& r : m_ops)
        if (r.op->kind == OpKind::Attention && r.op->attn.ropeInAttention)
            ropeDim = std::max(ropeDim, r.op->attn.ropeDim);
    const uint64_t ropeOff = cntOff + kAlign;
    aoff = ropeOff + align(uint64_t(ropeDim) * 4 + 16);
    GS_CUDA(cudaMalloc(&m_actArena, aoff));
    GS_CUDA(cudaMemset(m_actArena, 0, aoff));
    for (size_t b = 1; b < bufOff.size(); ++b)
        m_bufs[b] = reinterpret_cast<uint16_t*>(m_actArena + bufOff[b]);
    m_tokens = reinterpret_cast<int32_t*>(m_actArena + tokOff);
    m_slotExpert = reinterpret_cast<int32_t*>(m_actArena + slotOff);
    m_slotIds = m_slotExpert + slots;
    m_slotCount = m_slotIds + slots;
    m_slotWeight = reinterpret_cast<float*>(m_actArena + weightOff);
    m_attnWorkspace = reinterpret_cast<float*>(m_actArena + wsOff);
    m_localPairs = m_actArena + pairOff;
    m_gatheredPairs = m_actArena + pairOff + uint64_t(B) * 8;
    m_tails = reinterpret_cast<SlowTail*>(m_actArena + tailOff);
    m_counters = reinterpret_cast<unsigned long long*>(m_actArena + cntOff);
    m_ropeTable = reinterpret_cast<float*>(m_actArena + ropeOff);
    for (const auto& r : m_ops)
        if (r.op->kind == OpKind::Attention && r.op->attn.ropeInAttention) {
            const auto t = ropeCosSinTable(r.op->attn.context - 1, r.op->attn.ropeDim, kRopeTheta);
            GS_CUDA(cudaMemcpy(m_ropeTable, t.data(), t.size() * 4, cudaMemcpyHostToDevice));
            break;
        }
    GS_CUDA(cudaMallocHost(&m_hostCounters, 64 + 4 * B));
    m_hostTokens = reinterpret_cast<int32_t*>(m_hostCounters + 8);
    return Status::ok();
}

Status SimRank::fillData()
{
    const auto& cfg = m_plan.config();
    const uint64_t vl = (cfg.vocab + m_opt.plan.tp - 1) / m_opt.plan.tp;
    const uint64_t seed = m_opt.seed * 1000003ull + m_rank * 7919ull;
    GS_CUDA(launchFillBf16(m_embedding, vl * cfg.hidden, 1.0f, seed, m_stream));
    uint64_t n = 1;
    std::vector<SlowTail> tails(m_ops.size());
    for (size_t i = 0; i < m_ops.size(); ++i) {
        auto& r = m_ops[i];
        const PlanOp& op = *r.op;
        if (op.kind == OpKind::Gemv) {
            const uint64_t groups
                = op.gemv.indirect ? (m_allExperts ? op.gemv.poolExperts : m_plan.expertSlots()) : op.gemv.groups;
            for (uint64_t g = 0; g < groups; ++g)
                GS_CUDA(launchFillWeights(op.gemv.layout, r.weights + g * r.groupBytes,
                    r.weights + g * r.groupBytes + r.scaleOffset, seed + n++, m_stream));
        } else if (op.kind == OpKind::RmsNorm) {
            GS_CUDA(launchFillBf16(reinterpret_cast<uint16_t*>(r.weights), op.width, 1.0f, seed + n++, m_stream));
        } else if (op.kind == OpKind::Attention) {
            const bool fp8 = op.attn.cache == model::Precision::Fp8;
            const uint64_t esz = fp8 ? 1 : 2, B = m_opt.plan.batch;
            const uint64_t k = B * op.attn.kvHeads * op.attn.context * op.attn.headDimK * esz;
            GS_CUDA(launchFillBytes(r.kCache, k, fp8, seed + n++, m_stream));
            if (!fp8)
                GS_CUDA(launchFillBf16(reinterpret_cast<uint16_t*>(r.kCache), k / 2, 1.0f, seed + n++, m_stream));
            if (!op.attn.mla) {
                const uint64_t v = B * op.attn.kvHeads * op.attn.context * op.attn.headDimV * esz;
                GS_CUDA(fp8 ? launchFillBytes(r.vCache, v, true, seed + n++, m_stream)
                            : launchFillBf16(reinterpret_cast<uint16_t*>(r.vCache), v / 2, 1.0f, seed + n++, m_stream));
            }
        }
        if (op.kind == OpKind::IndexerScan) {
            const uint64_t rows = uint64_t(m_opt.plan.batch) * op.attn.context;
            GS_CUDA(launchFillBytes(r.kCache, rows * op.ld, true, seed + n++, m_stream));
            const std::vector<float> scales(rows, 1.0f / static_cast<float>(op.ld));
            GS_CUDA(cudaMemcpy(r.vCache, scales.data(), rows * 4, cudaMemcpyHostToDevice));
        }
        const bool slow = m_opt.path.slow && op.component == m_opt.path.slowComponent
            && (op.kind == OpKind::Gemv || op.kind == OpKind::Attention);
        if (slow) {
            tails[i] = SlowTail { ~0ull, 0u, static_cast<float>(m_opt.path.slowFactor), m_counters };
            r.tail = m_tails + i;
        }
    }
    GS_CUDA(cudaMemcpyAsync(m_tails, tails.data(), tails.size() * sizeof(SlowTail), cudaMemcpyHostToDevice, m_stream));
    std::vector<int32_t> tok(m_opt.plan.batch);
    for (size_t t = 0; t < tok.size(); ++t)
        tok[t] = static_cast<int32_t>((t * 7919 + 1) % cfg.vocab);
    GS_CUDA(cudaMemcpyAsync(m_tokens, tok.data(), tok.size() * 4, cudaMemcpyHostToDevice, m_stream));
    GS_CUDA(launchFillBf16(buf(Buf::Residual), m_plan.bufferElems(Buf::Residual), 1.0f, seed + n++, m_stream));
    GS_CUDA(cudaStreamSynchronize(m_stream));
    return Status::ok();
}

bool SimRank::delayBefore(const OpRes& r) const
{
    const Pathologies& path = m_opt.path;
    return path.hostDelayNs
        && (path.hostDelayScope == HostDelayScope::Kernel || (r.firstOfLayer && r.layer != kNoLayer));
}

// Launches the ops of one segment with the injections of the options (none when !inject). Host
// delays sit between two events, so the GPU idle they cause is measured, not assumed.
Status SimRank::enqueueSegment(size_t seg, bool inject, uint64_t& threadDelayNs)
{
    const Pathologies& path = m_opt.path;
    const bool straggler = inject && path.stragglerRank == static_cast<int32_t>(m_rank) && path.stragglerNs;
    // Inside a CUDA graph an event must be recorded as an external node to stay readable with
    // cudaEventElapsedTime after each replay; outside one a plain record does.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    GS_CUDA(cudaStreamIsCapturing(m_stream, &capture));
    const unsigned recordFlags = capture == cudaStreamCaptureStatusActive ? cudaEventRecordExternal : 0u;
    // --step-stamps: the step's first kernel writes the GPU clock (read with the step's counters).
    if (seg == 0 && inject && m_opt.path.stepStamps)
        GS_CUDA(launchClockStamp(m_counters + kStepStartStamp, m_stream));
    if (seg > 0 && inject) {
        GS_CUDA(cudaEventRecordWithFlags(m_segBegin[seg], m_stream, recordFlags));
        if (m_stamps)
            GS_CUDA(launchClockStamp(m_stamps + 2 * (seg - 1) + 1, m_stream));
    }
    size_t d = 0;
    for (size_t i = 0; i < m_segStart[seg]; ++i)
        d += delayBefore(m_ops[i]);
    for (size_t i = m_segStart[seg]; i < m_segStart[seg + 1]; ++i) {
        const OpRes& r = m_ops[i];
        const bool delayed = inject && delayBefore(r);
        if (delayed) {
            GS_CUDA(cudaEventRecordWithFlags(m_delayEv[2 * d], m_stream, recordFlags));
            if (path.hostDelayMode == HostDelayMode::Thread) {
                // Named, so a host-side attribution can say what the launching thread was doing.
                if (m_opt.nvtx)
                    nvtxRangePushA("host_delay");
                threadDelayNs += hostSpin(path.hostDelayNs);
                if (m_opt.nvtx)
                    nvtxRangePop();
            } else
                GS_CUDA(cudaLaunchHostFunc(m_stream, hostDelayCallback, &m_delay));
            GS_CUDA(cudaEventRecordWithFlags(m_delayEv[2 * d + 1], m_stream, recordFlags));
            ++d;
        }
        if (straggler && isCollective(r.op->kind) && r.collectiveOrdinal % path.stragglerEvery == 0)
            GS_CUDA(launchStragglerDelay(path.stragglerNs, m_counters + 1, m_stream));
        // Kernels overlap their start with the end of the kernel before (PDL) as engines do, except
        // after a host delay's node and events, and after NCCL's kernels.
        const bool pdl = i > m_segStart[seg] && !delayed && !isCollective(m_ops[i - 1].op->kind);
        GS_TRY(launchOp(r, m_stream, inject, pdl));
    }
    // The end of a segment the host waits for (--sync-every-layer): the last node of its graph, so
    // the graph's own completion counts as part of the idle that follows.
    if (seg + 2 < m_segStart.size() && inject) {
        if (m_stamps)
            GS_CUDA(launchClockStamp(m_stamps + 2 * seg, m_stream));
        GS_CUDA(cudaEventRecordWithFlags(m_segEnd[seg], m_stream, recordFlags));
    }
    return Status::ok();
}

Status SimRank::buildGraphs()
{
    for (size_t seg = 0; seg + 1 < m_segStart.size(); ++seg) {
        uint64_t unused = 0;
        GS_CUDA(cudaStreamBeginCapture(m_stream, cudaStreamCaptureModeThreadLocal));
        Status st = enqueueSegment(seg, true, unused);
        cudaGraph_t graph = nullptr;
        const cudaError_t e = cudaStreamEndCapture(m_stream, &graph);
        GS_TRY(st);
        GS_CUDA(e);
        cudaGraphExec_t exec = nullptr;
        const cudaError_t ie = cudaGraphInstantiate(&exec, graph, 0);
        cudaGraphDestroy(graph);
        GS_CUDA(ie);
        m_graphs.push_back(exec);
        GS_CUDA(cudaGraphUpload(exec, m_stream));
    }
    return Status::ok();
}

Status SimRank::barrier()
{
    if (m_comm)
        GS_NCCL(ncclAllReduce(buf(Buf::Delta), buf(Buf::Delta), 1, ncclBfloat16, ncclSum, m_comm, m_stream));
    GS_CUDA(cudaStreamSynchronize(m_stream));
    return Status::ok();
}

Status SimRank::runStep(uint32_t index, bool record, StepRecord& rec)
{
    const uint64_t h0 = nowNs();
    timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    rec.startUnixNs = uint64_t(wall.tv_sec) * 1000000000ull + uint64_t(wall.tv_nsec);
    if (m_opt.nvtx)
        nvtxRangePushA(("decode_step " + std::to_string(index)).c_str());
    m_delay.injected.store(0);
    uint64_t threadDelay = 0;
    const size_t segs = m_segStart.size() - 1;
    GS_CUDA(cudaEventRecord(m_stepStart[index % 2], m_stream));
    for (size_t seg = 0; seg < segs; ++seg) {
        if (m_opt.mode == LaunchMode::Graph)
            GS_CUDA(cudaGraphLaunch(m_graphs[seg], m_stream));
        else
            GS_TRY(enqueueSegment(seg, true, threadDelay));
        if (seg + 1 < segs) // --sync-every-layer: the host waits for the layer before launching the next
            GS_CUDA(cudaStreamSynchronize(m_stream));
    }
    GS_CUDA(cudaMemcpyAsync(m_hostTokens, m_tokens, 4 * m_opt.plan.batch, cudaMemcpyDeviceToHost, m_stream));
    // The counters, and with --step-stamps the end stamp of the step before and this step's start.
    GS_CUDA(cudaMemcpyAsync(m_hostCounters, m_counters, 8 * kCounterWords, cudaMemcpyDeviceToHost, m_stream));
    if (m_stamps)
        GS_CUDA(cudaMemcpyAsync(m_hostStamps, m_stamps, 16 * (segs - 1), cudaMemcpyDeviceToHost, m_stream));
    // --step-stamps: the GPU clock after the step's last copy, the start of the idle before the
    // next step (the host's wait, any --step-gap-us spin, the next launch). Launched after the
    // copies, so they read the stamp of the step before.
    if (m_opt.path.stepStamps)
        GS_CUDA(launchClockStamp(m_counters + kStepEndStamp, m_stream));
    GS_CUDA(cudaEventRecord(m_stepEnd, m_stream));
    GS_CUDA(cudaStreamSynchronize(m_stream));
    if (m_opt.nvtx)
        nvtxRangePop();
    if (!record) {
        m_prevCounters[0] = m_hostCounters[0];
        m_prevCounters[1] = m_hostCounters[1];
        return Status::ok();
    }
    rec.index = index;
    rec.gpuNs = elapsedNs(m_stepStart[index % 2], m_stepEnd);
    rec.measuredNs = rec.gpuNs; // replaced by start-to-start once the next step has started
    rec.hostNs = nowNs() - h0;
    rec.hostDelayNs = threadDelay + m_delay.injected.load();
    // In graph mode the marker after each delay and the one opening each segment cost GPU idle
    // past their own timestamps (measureMarkerCost).
    const uint64_t marker = m_opt.mode == LaunchMode::Graph ? m_markerNs : 0;
    for (size_t d = 0; d < m_delayCount; ++d)
        rec.launchHostNs += elapsedNs(m_delayEv[2 * d], m_delayEv[2 * d + 1]) + marker;
    // A segment boundary: the idle between its markers and what the boundary costs outside them
    // (measureBoundaryCost); with --sync-stamps the GPU clock between the two stamp kernels.
    rec.syncs = static_cast<uint32_t>(segs - 1);
    for (size_t seg = 1; seg < segs; ++seg) {
        uint64_t idle = elapsedNs(m_segEnd[seg - 1], m_segBegin[seg]) + m_boundaryNs;
        if (m_stamps) {
            const unsigned long long* st = m_hostStamps + 2 * (seg - 1);
            idle = st[1] > st[0] ? st[1] - st[0] : 0;
        }
        rec.syncIdleNs.push_back(idle);
        rec.syncStallNs += rec.syncIdleNs.back();
    }
    rec.slowNs = m_hostCounters[0] - m_prevCounters[0];
    rec.stragglerNs = m_hostCounters[1] - m_prevCounters[1];
    m_prevCounters[0] = m_hostCounters[0];
    m_prevCounters[1] = m_hostCounters[1];
    return Status::ok();
}

// One step without injections and an event between every two ops: per-op and per-component
// times. In graph mode the events are captured into a graph of the whole step (event nodes cost
// about as much as an empty kernel node, so the per-op times include that).
Status SimRank::profileOps(RankResult& out)
{
    std::vector<cudaEvent_t> ev(m_ops.size() + 1);
    for (auto& e : ev)
        GS_CUDA(cudaEventCreate(&e));
    const bool graph = m_opt.mode == LaunchMode::Graph;
    cudaGraphExec_t exec = nullptr;
    Status st = barrier();
    // Captured events must be external nodes to stay readable after the replay (see enqueueSegment).
    const unsigned flags = graph ? cudaEventRecordExternal : 0u;
    auto record = [&]() -> Status {
        for (size_t i = 0; i < m_ops.size(); ++i) {
            GS_CUDA(cudaEventRecordWithFlags(ev[i], m_stream, flags));
            GS_TRY(launchOp(m_ops[i], m_stream, false));
        }
        GS_CUDA(cudaEventRecordWithFlags(ev.back(), m_stream, flags));
        return Status::ok();
    };
    if (st && graph) {
        cudaGraph_t g = nullptr;
        st = cudaStreamBeginCapture(m_stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess
            ? record()
            : Status::error("profiling: cudaStreamBeginCapture failed");
        const cudaError_t e = cudaStreamEndCapture(m_stream, &g);
        if (st && e != cudaSuccess)
            st = Status::error(std::string("profiling: cudaStreamEndCapture: ") + cudaGetErrorString(e));
        if (st && cudaGraphInstantiate(&exec, g, 0) != cudaSuccess)
            st = Status::error("profiling: cudaGraphInstantiate failed");
        if (g)
            cudaGraphDestroy(g);
        for (int i = 0; st && i < 2; ++i) // once to warm up, once to measure
            if (cudaGraphLaunch(exec, m_stream) != cudaSuccess || cudaStreamSynchronize(m_stream) != cudaSuccess)
                st = Status::error("profiling graph failed to run");
    } else if (st) {
        st = record();
        if (st && cudaStreamSynchronize(m_stream) != cudaSuccess)
            st = Status::error("profiling step failed to complete");
    }
    if (st) {
        for (size_t i = 0; i < m_ops.size(); ++i) {
            const PlanOp& op = *m_ops[i].op;
            const double ns = static_cast<double>(elapsedNs(ev[i], ev[i + 1]));
            out.cleanComponentsNs[model::toString(op.component)] += ns;
            out.cleanOpNs[op.name] += ns;
            out.cleanOpBytes[op.name] += static_cast<double>(op.weightBytes + op.cacheBytes + op.messageBytes);
            out.cleanOpCount[op.name] += 1;
        }
        out.cleanProfiledStepNs = static_cast<double>(elapsedNs(ev.front(), ev.back()));
    }
    if (exec)
        cudaGraphExecDestroy(exec);
    for (auto& e : ev)
        cudaEventDestroy(e);
    return st;
}

Status SimRank::run(RankResult& out)
{
    out.rank = m_rank;
    out.device = m_deviceName;
    out.markerNs = m_markerNs;
    out.boundaryNs = m_boundaryNs;
    for (const auto& r : m_ops)
        if (isCollective(r.op->kind)) {
            ++out.collectivesPerStep;
            if (static_cast<int32_t>(m_rank) == m_opt.path.stragglerRank
                && r.collectiveOrdinal % m_opt.path.stragglerEvery == 0)
                ++out.stragglerCollectivesPerStep;
        }
    StepRecord scratch;
    GS_TRY(barrier());
    for (uint32_t i = 0; i < m_opt.warmup; ++i)
        GS_TRY(runStep(i, false, scratch));
    if (m_opt.profileOps)
        GS_TRY(profileOps(out));
    GS_TRY(barrier());
    if (m_rank == 0 && !m_opt.readyFile.empty())
        std::ofstream(m_opt.readyFile) << "measured steps begin\n";
    out.steps.clear();
    for (uint32_t i = 0; i < m_opt.steps; ++i) {
        StepRecord rec;
        GS_TRY(runStep(i, true, rec));
        if (i > 0) {
            out.steps.back().measuredNs = elapsedNs(m_stepStart[(i - 1) % 2], m_stepStart[i % 2]);
            // The idle after step i - 1 in the GPU clock: from its end stamp to step i's first kernel.
            const unsigned long long end = m_hostCounters[kStepEndStamp], start = m_hostCounters[kStepStartStamp];
            if (m_opt.path.stepStamps)
                out.steps.back().stepGapIdleNs = start > end ? start - end : 0;
        }
        out.steps.push_back(rec);
        if (i + 1 < m_opt.steps && m_opt.path.stepGapNs)
            out.steps.back().stepGapNs = hostSpin(m_opt.path.stepGapNs);
    }
    out.lastTokens.assign(m_hostTokens, m_hostTokens + m_opt.plan.batch);
    return Status::ok();
}

} // namespace gapscope::kernels
