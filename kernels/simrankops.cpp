// SPDX-License-Identifier: MIT
// SimRank: launching one op of the plan with its buffers (see simrank.h).
#include "kernels/attention.h"
#include "kernels/cudastatus.h"
#include "kernels/gemv.h"
#include "kernels/ops.h"
#include "kernels/pdl.h"
#include "kernels/simrank.h"

namespace gapscope::kernels {

static_assert(SimOptions::kMaxAttentionSplits == kAttentionMaxSplits, "--attention-splits bound");

Status SimRank::launchGemvOp(const OpRes& r, cudaStream_t s, bool inject)
{
    const GemvOp& g = r.op->gemv;
    GemvParams p;
    p.values = r.weights;
    p.scales = g.layout.scaleBytes ? r.weights + r.scaleOffset : nullptr;
    p.valueGroupStride = p.scaleGroupStride = r.groupBytes;
    p.auxOffset = g.layout.auxOffset;
    p.x = buf(g.in) + g.inOffset;
    p.xLd = g.inLd;
    p.xGroupStride = g.inGroupStride;
    p.y = buf(g.out) + g.outOffset;
    p.yLd = g.outLd;
    p.yGroupStride = g.outGroupStride;
    p.rows = static_cast<uint32_t>(g.layout.rows);
    p.cols = static_cast<uint32_t>(g.layout.cols);
    p.tokens = m_opt.plan.batch;
    p.groups = g.indirect ? m_plan.expertSlots() : g.groups;
    if (g.indirect) {
        p.slotExpert = m_slotExpert;
        p.slotCount = m_slotCount;
    }
    p.tail = inject ? r.tail : nullptr;
    const cudaError_t e = launchGemv(g.layout.precision, p, s);
    if (e != cudaSuccess)
        return Status::error(r.op->name + ": GEMV launch failed: " + cudaGetErrorString(e));
    return Status::ok();
}

Status SimRank::launchAttentionOp(const OpRes& r, cudaStream_t s, bool inject)
{
    const AttentionOp& a = r.op->attn;
    const uint32_t B = m_opt.plan.batch;
    const bool fp8 = a.cache == model::Precision::Fp8;
    if (r.op->kind == OpKind::RopeAppend) {
        RopeParams p;
        p.mla = a.mla;
        p.fp8 = fp8;
        p.tokens = B;
        p.qHeads = a.qHeads;
        p.kvHeads = a.kvHeads;
        p.headDim = a.headDimK;
        p.ropeDim = a.ropeDim;
        p.context = a.context;
        if (a.mla) {
            const auto& cfg = m_plan.config();
            p.q = buf(Buf::Q);
            p.qStride = cfg.qkNopeHeadDim + cfg.qkRopeHeadDim;
            p.qRopeOffset = cfg.qkNopeHeadDim;
            p.kvLatent = a.headDimV;
            p.k = buf(Buf::Kv);
            p.qLat = buf(Buf::QLat);
        } else { // q, k and v are parts of the fused qkv_proj output, `in` (DecodePlan's AttentionOp)
            uint16_t* qkv = buf(r.op->in);
            p.q = qkv + a.qOffset;
            p.k = qkv + a.kOffset;
            p.v = qkv + a.vOffset;
            p.qTokenStride = p.kTokenStride = p.vTokenStride = a.tokenStride;
        }
        p.kCache = r.kCache;
        p.vCache = r.vCache;
        GS_CUDA(launchRopeAppend(p, s));
        return Status::ok();
    }
    AttentionParams p;
    p.mla = a.mla;
    p.fp8 = fp8;
    p.q = buf(r.op->in) + a.qOffset;
    p.qHeadStride = a.headDimK;
    p.qTokenStride = a.tokenStride ? a.tokenStride : uint64_t(a.qHeads) * a.headDimK;
    p.kCache = r.kCache;
    p.vCache = r.vCache;
    p.kRowStride = a.headDimK;
    p.vRowStride = a.mla ? a.headDimK : a.headDimV;
    p.context = a.context;
    p.rows = a.rows;
    p.qHeads = a.qHeads;
    p.kvHeads = a.kvHeads;
    p.dk = a.headDimK;
    p.dv = a.headDimV;
    p.tokens = B;
    p.scale = a.scale;
    p.workspace = m_attnWorkspace;
    p.out = buf(r.op->out);
    p.tail = inject ? r.tail : nullptr;
    p.splits = m_opt.attentionSplits;
    if (a.ropeInAttention) { // the new k and v are parts of the fused qkv_proj output, as q
        p.ropeCosSin = m_ropeTable;
        p.newK = buf(r.op->in) + a.kOffset;
        p.newV = buf(r.op->in) + a.vOffset;
        p.newTokenStride = a.tokenStride;
    }
    const cudaError_t e = launchAttention(p, m_smCount, s);
    if (e != cudaSuccess)
        return Status::error(r.op->name + ": attention launch failed: " + cudaGetErrorString(e));
    return Status::ok();
}

Status SimRank::launchMiscOp(const OpRes& r, cudaStream_t s)
{
    const PlanOp& op = *r.op;
    const auto& cfg = m_plan.config();
    const uint32_t B = m_opt.plan.batch, tp = m_opt.plan.tp;
    const uint64_t vl = (cfg.vocab + tp - 1) / tp;
    switch (op.kind) {
    case OpKind::Embedding:
        GS_CUDA(launchEmbedding(
            m_tokens, m_embedding, m_rank * vl, vl, static_cast<uint32_t>(cfg.hidden), B, buf(op.out), s));
        break;
    case OpKind::RmsNorm: {
        RmsNormParams p;
        p.in = buf(op.in);
        p.residual = buf(Buf::Residual);
        p.out = buf(op.out);
        p.gamma = reinterpret_cast<const uint16_t*>(r.weights);
        p.width = static_cast<uint32_t>(op.width);
        p.ld = static_cast<uint32_t>(op.ld);
        p.tokens = B;
        p.add = op.flag;
        p.reset = op.resetResidual;
        GS_CUDA(launchRmsNorm(p, s));
        break;
    }
    case OpKind::SiluMul:
        GS_CUDA(launchSiluMul(buf(op.in), buf(op.out), static_cast<uint32_t>(op.width), B * op.groups,
            op.flag ? m_slotCount : nullptr, B, s));
        break;
    case OpKind::RouterTopk: {
        RouterParams p;
        p.logits = buf(op.in);
        p.experts = static_cast<uint32_t>(op.width);
        p.topk = op.groups;
        p.tokens = B;
        p.slots = m_plan.expertSlots();
        p.directPool = m_allExperts;
        p.slotExpert = m_slotExpert;
        p.slotCount = m_slotCount;
        p.slotIds = m_slotIds;
        p.slotWeight = m_slotWeight;
        GS_CUDA(launchRouterTopk(p, s));
        break;
    }
    case OpKind::MoeCombine: {
        CombineParams p;
        p.expertOut = buf(op.in);
        p.slotWeight = m_slotWeight;
        p.slotCount = m_slotCount;
        p.shared = op.aux == Buf::None ? nullptr : buf(op.aux);
        p.out = buf(op.out);
        p.width = static_cast<uint32_t>(op.width);
        p.tokens = B;
        p.slots = op.groups;
        GS_CUDA(launchMoeCombine(p, s));
        break;
    }
    case OpKind::AllReduce:
        GS_NCCL(ncclAllReduce(buf(op.in), buf(op.out), op.width, ncclBfloat16, ncclSum, m_comm, s));
        break;
    case OpKind::SampleLocal:
        GS_CUDA(launchSampleLocal(buf(op.in), op.width, m_rank * vl, B, static_cast<SamplePair*>(m_localPairs), s));
        break;
    case OpKind::AllGather:
        GS_NCCL(ncclAllGather(m_localPairs, m_gatheredPairs, uint64_t(B) * sizeof(SamplePair), ncclUint8, m_comm, s));
        break;
    case OpKind::SampleFinal:
        GS_CUDA(launchSampleFinal(
            static_cast<const SamplePair*>(tp > 1 ? m_gatheredPairs : m_localPairs), tp, B, m_tokens, s));
        break;
    case OpKind::IndexerScan: {
        IndexerScanParams p;
        p.q = buf(op.in);
        p.w = buf(op.aux);
        p.keys = r.kCache;
        p.scales = reinterpret_cast<const float*>(r.vCache);
        p.out = buf(op.out);
        p.heads = static_cast<uint32_t>(op.width);
        p.dim = static_cast<uint32_t>(op.ld);
        p.tokens = B;
        p.context = op.attn.context;
        p.rows = op.attn.rows;
        GS_CUDA(launchIndexerScan(p, s));
        break;
    }
    default:
        return Status::error(op.name + ": not a misc op");
    }
    return Status::ok();
}

Status SimRank::launchOp(const OpRes& r, cudaStream_t s, bool inject, bool pdl)
{
    const PdlScope scope(pdl);
    switch (r.op->kind) {
    case OpKind::Gemv:
        return launchGemvOp(r, s, inject);
    case OpKind::Attention:
    case OpKind::RopeAppend:
        return launchAttentionOp(r, s, inject);
    default:
        return launchMiscOp(r, s);
    }
}

} // namespace gapscope::kernels
