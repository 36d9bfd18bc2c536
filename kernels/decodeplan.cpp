// SPDX-License-Identifier: MIT
#include "kernels/decodeplan.h"
#include "kernels/attentionrows.h"

#include <algorithm>
#include <cmath>

namespace gapscope::kernels {

using model::Component;
using model::Precision;

const char* toString(OpKind k)
{
    switch (k) {
    case OpKind::Embedding:
        return "embedding";
    case OpKind::RmsNorm:
        return "rmsnorm";
    case OpKind::Gemv:
        return "gemv";
    case OpKind::RopeAppend:
        return "rope_append";
    case OpKind::Attention:
        return "attention";
    case OpKind::SiluMul:
        return "silu_mul";
    case OpKind::RouterTopk:
        return "router_topk";
    case OpKind::MoeCombine:
        return "moe_combine";
    case OpKind::AllReduce:
        return "allreduce";
    case OpKind::SampleLocal:
        return "sample_local";
    case OpKind::AllGather:
        return "allgather";
    case OpKind::SampleFinal:
        return "sample_final";
    case OpKind::IndexerScan:
        return "indexer_scan";
    }
    return "?";
}

const char* toString(Buf b)
{
    static const char* names[] = { "none", "residual", "delta", "normed", "qa", "q", "kv", "qkv", "qlat", "attn_out",
        "v_out", "gate_up", "act", "router_logits", "exp_gate_up", "exp_act", "exp_down", "shared_gate_up",
        "shared_act", "shared_down", "index_q", "index_k", "index_w", "logits", "index_scores" };
    static_assert(sizeof(names) / sizeof(names[0]) == static_cast<size_t>(Buf::Count));
    return names[static_cast<size_t>(b)];
}

// "all=" applies to weights; the KV cache and the embedding table stay bf16 unless named (as in the budget).
Precision PlanOptions::precisionOf(Component c) const
{
    auto it = precision.find(c);
    if (it != precision.end())
        return it->second;
    return c == Component::KvCache || c == Component::Embedding ? Precision::Bf16 : defaultPrecision;
}

// Builds the op lists; one method per block of the layer so each stays short.
class DecodePlanBuilder {
public:
    DecodePlanBuilder(DecodePlan& plan)
        : p(plan)
        , m(plan.m_config)
        , o(plan.m_options)
    {
    }

    Status run();

private:
    DecodePlan& p;
    const model::ModelConfig& m;
    const PlanOptions& o;
    std::vector<PlanOp>* ops = nullptr;
    uint32_t hl = 0; // local query heads
    uint32_t kvhl = 0; // local kv heads (GQA)
    std::string error;

    void need(Buf b, uint64_t elems)
    {
        auto& e = p.m_bufferElems[static_cast<size_t>(b)];
        e = std::max(e, elems);
    }
    bool gemv(const std::string& name, Component c, uint64_t rows, uint64_t cols, Buf in, Buf out, GemvOp g = {});
    void norm(const std::string& name, Buf in, Buf out, uint64_t width, uint64_t ld, bool addResidual, bool reset);
    void allReduce(const std::string& name);
    Status attentionMla(bool indexer);
    Status attentionGqa();
    Status ffnDense();
    Status ffnMoe();
    Status headAndTail();
    Status checkShapes() const;
};

bool DecodePlanBuilder::gemv(
    const std::string& name, Component c, uint64_t rows, uint64_t cols, Buf in, Buf out, GemvOp g)
{
    const Precision prec = o.precisionOf(c);
    std::string why;
    if (!WeightLayout::make(prec, rows, cols, g.layout, &why)) {
        if (error.empty())
            error = name + ": " + why;
        return false;
    }
    g.in = in;
    g.out = out;
    if (g.inLd == 0)
        g.inLd = cols;
    if (g.outLd == 0)
        g.outLd = rows;
    PlanOp op;
    op.kind = OpKind::Gemv;
    op.component = c;
    op.name = name;
    op.gemv = g;
    const double groupsRead = g.indirect ? p.m_touched : g.groups;
    op.weightBytes = static_cast<uint64_t>(std::llround(static_cast<double>(g.layout.bytes()) * groupsRead));
    const uint32_t slots = g.indirect ? p.m_expertSlots : g.groups;
    need(in, g.inOffset + (slots - 1) * g.inGroupStride + (o.batch - 1) * g.inLd + cols);
    need(out, g.outOffset + (slots - 1) * g.outGroupStride + (o.batch - 1) * g.outLd + rows);
    ops->push_back(op);
    return true;
}

void DecodePlanBuilder::norm(
    const std::string& name, Buf in, Buf out, uint64_t width, uint64_t ld, bool addResidual, bool reset)
{
    PlanOp op;
    op.kind = OpKind::RmsNorm;
    op.component = Component::Other;
    op.name = name;
    op.in = in;
    op.out = out;
    op.width = width;
    op.ld = ld ? ld : width;
    op.flag = addResidual;
    op.resetResidual = reset;
    op.weightBytes = width * 2;
    need(in, (o.batch - 1) * op.ld + width);
    need(out, (o.batch - 1) * op.ld + width);
    if (addResidual)
        need(Buf::Residual, o.batch * width);
    ops->push_back(op);
}

void DecodePlanBuilder::allReduce(const std::string& name)
{
    if (o.tp <= 1)
        return;
    PlanOp op;
    op.kind = OpKind::AllReduce;
    op.component = Component::Collectives;
    op.name = name;
    op.in = op.out = Buf::Delta;
    op.width = o.batch * m.hidden;
    op.messageBytes = op.width * 2;
    ops->push_back(op);
}

Status DecodePlanBuilder::attentionMla(bool indexer)
{
    const uint64_t h = m.hidden, qk = m.qkNopeHeadDim + m.qkRopeHeadDim, kvl = m.kvLoraRank;
    const uint64_t kvw = kvl + m.qkRopeHeadDim;
    if (m.qLoraRank > 0) {
        gemv("q_a_proj", Component::Attention, m.qLoraRank, h, Buf::Normed, Buf::QA);
        norm("q_a_layernorm", Buf::QA, Buf::QA, m.qLoraRank, 0, false, false);
        gemv("q_b_proj", Component::Attention, hl * qk, m.qLoraRank, Buf::QA, Buf::Q);
    } else {
        gemv("q_proj", Component::Attention, hl * qk, h, Buf::Normed, Buf::Q);
    }
    gemv("kv_a_proj_with_mqa", Component::Attention, kvw, h, Buf::Normed, Buf::Kv);
    norm("kv_a_layernorm", Buf::Kv, Buf::Kv, kvl, kvw, false, false);
    const bool indexQuery = indexer && o.context > m.indexTopk;
    if (indexer) {
        const Buf qin = m.qLoraRank > 0 ? Buf::QA : Buf::Normed;
        const uint64_t qinDim = m.qLoraRank > 0 ? m.qLoraRank : h;
        if (indexQuery)
            gemv("indexer.wq_b", Component::Indexer, uint64_t(m.indexHeads) * m.indexHeadDim, qinDim, qin, Buf::IndexQ);
        gemv("indexer.wk", Component::Indexer, m.indexHeadDim, h, Buf::Normed, Buf::IndexK);
        if (indexQuery) {
            gemv("indexer.weights_proj", Component::Indexer, m.indexHeads, h, Buf::Normed, Buf::IndexW);
            PlanOp scan;
            scan.kind = OpKind::IndexerScan;
            scan.component = Component::Indexer;
            scan.name = "indexer.key_scan";
            scan.in = Buf::IndexQ;
            scan.aux = Buf::IndexW;
            scan.out = Buf::IndexScores;
            scan.width = m.indexHeads;
            scan.ld = m.indexHeadDim;
            scan.attn.context = o.context;
            scan.attn.rows = o.context;
            scan.cacheBytes = uint64_t(o.batch) * o.context * (m.indexHeadDim + 4);
            ops->push_back(scan);
            need(Buf::IndexScores, uint64_t(o.batch) * o.context);
        }
    }
    GemvOp uk; // per head: q_nope[nope] -> q_latent[kv_lora]
    uk.groups = hl;
    uk.inLd = hl * qk;
    uk.inGroupStride = qk;
    uk.outLd = hl * kvw;
    uk.outGroupStride = kvw;
    gemv("kv_b_proj.absorb_k", Component::Attention, kvl, m.qkNopeHeadDim, Buf::Q, Buf::QLat, uk);

    PlanOp rope;
    rope.kind = OpKind::RopeAppend;
    rope.component = Component::Other;
    rope.name = "rope_kv_append";
    rope.attn.mla = true;
    rope.attn.qHeads = hl;
    rope.attn.kvHeads = 1;
    rope.attn.headDimK = static_cast<uint32_t>(kvw);
    rope.attn.headDimV = static_cast<uint32_t>(kvl);
    rope.attn.ropeDim = m.qkRopeHeadDim;
    rope.attn.context = o.context;
    rope.attn.cache = o.precisionOf(Component::KvCache);
    ops->push_back(rope);

    PlanOp at = rope;
    at.kind = OpKind::Attention;
    at.component = Component::KvCache;
    at.name = "mla_decode_attention";
    at.in = Buf::QLat;
    at.out = Buf::AttnOut;
    const bool dsa = indexer && m.indexTopk > 0;
    at.attn.rows = dsa ? std::min<uint64_t>(o.context, m.indexTopk) : o.context;
    at.attn.scale = 1.0f / std::sqrt(static_cast<float>(qk));
    at.cacheBytes = o.batch * at.attn.rows * kvw * (at.attn.cache == Precision::Fp8 ? 1 : 2);
    ops->push_back(at);
    need(Buf::AttnOut, o.batch * hl * kvl);

    GemvOp uv; // per head: latent[kv_lora] -> v[v_head_dim]
    uv.groups = hl;
    uv.inLd = hl * kvl;
    uv.inGroupStride = kvl;
    uv.outLd = uint64_t(hl) * m.vHeadDim;
    uv.outGroupStride = m.vHeadDim;
    gemv("kv_b_proj.absorb_v", Component::Attention, m.vHeadDim, kvl, Buf::AttnOut, Buf::VOut, uv);
    gemv("o_proj", Component::Attention, h, uint64_t(hl) * m.vHeadDim, Buf::VOut, Buf::Delta);
    allReduce("attn_allreduce");
    return error.empty() ? Status::ok() : Status::error(error);
}

Status DecodePlanBuilder::attentionGqa()
{
    const uint64_t h = m.hidden, hd = m.headDim, qkvRows = (uint64_t(hl) + 2 * kvhl) * hd;
    // One GEMV for q, k and v, as SGLang and vLLM run QKVParallelLinear: rows q | k | v, so each
    // token's output row is its q heads, then its new keys, then its new values.
    gemv("qkv_proj", Component::Attention, qkvRows, h, Buf::Normed, Buf::Qkv);
    PlanOp rope;
    rope.kind = OpKind::RopeAppend;
    rope.component = Component::Other;
    rope.name = "rope_kv_append";
    rope.in = Buf::Qkv;
    rope.attn.qOffset = 0;
    rope.attn.kOffset = hl * hd;
    rope.attn.vOffset = (uint64_t(hl) + kvhl) * hd;
    rope.attn.tokenStride = qkvRows;
    rope.attn.qHeads = hl;
    rope.attn.kvHeads = kvhl;
    rope.attn.headDimK = rope.attn.headDimV = static_cast<uint32_t>(hd);
    rope.attn.ropeDim = static_cast<uint32_t>(hd);
    rope.attn.context = o.context;
    rope.attn.cache = o.precisionOf(Component::KvCache);
    // GQA attention with head dim 64/128/256 applies RoPE and appends the new row itself (as
    // TensorRT-LLM's decoder attention does); otherwise a rope_kv_append kernel runs first.
    rope.attn.ropeInAttention = gqaRowsKernel(false, rope.attn.headDimK, rope.attn.headDimV);
    if (!rope.attn.ropeInAttention)
        ops->push_back(rope);
    PlanOp at = rope;
    at.kind = OpKind::Attention;
    at.component = Component::KvCache;
    at.name = "gqa_flash_decode_attention";
    at.in = Buf::Qkv; // q (rotated by the rope op, or on load) read at attn.qOffset / attn.tokenStride
    at.out = Buf::AttnOut;
    at.attn.rows = m.slidingWindow ? std::min<uint64_t>(o.context, m.slidingWindow) : o.context;
    at.attn.scale = 1.0f / std::sqrt(static_cast<float>(hd));
    at.cacheBytes = o.batch * at.attn.rows * kvhl * hd * 2 * (at.attn.cache == Precision::Fp8 ? 1 : 2);
    ops->push_back(at);
    need(Buf::AttnOut, o.batch * hl * hd);
    gemv("o_proj", Component::Attention, h, hl * hd, Buf::AttnOut, Buf::Delta);
    allReduce("attn_allreduce");
    return error.empty() ? Status::ok() : Status::error(error);
}

Status DecodePlanBuilder::ffnDense()
{
    const uint64_t inter = m.intermediate / o.tp;
    gemv("mlp.gate_up_proj", Component::DenseFfn, 2 * inter, m.hidden, Buf::Normed, Buf::GateUp);
    PlanOp act;
    act.kind = OpKind::SiluMul;
    act.component = Component::DenseFfn;
    act.name = "mlp.silu_and_mul";
    act.in = Buf::GateUp;
    act.out = Buf::Act;
    act.width = inter;
    ops->push_back(act);
    need(Buf::Act, o.batch * inter);
    gemv("mlp.down_proj", Component::DenseFfn, m.hidden, inter, Buf::Act, Buf::Delta);
    allReduce("mlp_allreduce");
    return error.empty() ? Status::ok() : Status::error(error);
}

Status DecodePlanBuilder::ffnMoe()
{
    const uint64_t h = m.hidden, mi = m.moeIntermediate / o.tp, slots = p.m_expertSlots;
    gemv("mlp.gate", Component::Router, m.experts, h, Buf::Normed, Buf::RouterLogits);
    PlanOp topk;
    topk.kind = OpKind::RouterTopk;
    topk.component = Component::Router;
    topk.name = "moe_router_topk";
    topk.in = Buf::RouterLogits;
    topk.width = m.experts;
    topk.groups = m.expertsPerToken;
    ops->push_back(topk);

    GemvOp gu;
    gu.indirect = true;
    gu.groups = static_cast<uint32_t>(slots);
    gu.poolExperts = m.experts;
    gu.outLd = 2 * mi;
    gu.outGroupStride = o.batch * 2 * mi;
    gemv("mlp.experts.gate_up_proj", Component::RoutedExperts, 2 * mi, h, Buf::Normed, Buf::ExpGateUp, gu);
    PlanOp act;
    act.kind = OpKind::SiluMul;
    act.component = Component::RoutedExperts;
    act.name = "mlp.experts.silu_and_mul";
    act.in = Buf::ExpGateUp;
    act.out = Buf::ExpAct;
    act.width = mi;
    act.groups = static_cast<uint32_t>(slots);
    act.flag = true;
    ops->push_back(act);
    GemvOp dn = gu;
    dn.inLd = mi;
    dn.inGroupStride = o.batch * mi;
    dn.outLd = h;
    dn.outGroupStride = o.batch * h;
    gemv("mlp.experts.down_proj", Component::RoutedExperts, h, mi, Buf::ExpAct, Buf::ExpDown, dn);

    const uint64_t si = m.sharedIntermediate / o.tp;
    if (si > 0) {
        gemv("mlp.shared_experts.gate_up_proj", Component::SharedExperts, 2 * si, h, Buf::Normed, Buf::SharedGateUp);
        PlanOp sact = act;
        sact.component = Component::SharedExperts;
        sact.name = "mlp.shared_experts.silu_and_mul";
        sact.in = Buf::SharedGateUp;
        sact.out = Buf::SharedAct;
        sact.width = si;
        sact.groups = 1;
        sact.flag = false;
        ops->push_back(sact);
        need(Buf::SharedAct, o.batch * si);
        gemv("mlp.shared_experts.down_proj", Component::SharedExperts, h, si, Buf::SharedAct, Buf::SharedDown);
    }
    PlanOp comb;
    comb.kind = OpKind::MoeCombine;
    comb.component = Component::RoutedExperts;
    comb.name = "moe_combine";
    comb.in = Buf::ExpDown;
    comb.aux = si > 0 ? Buf::SharedDown : Buf::None;
    comb.out = Buf::Delta;
    comb.width = h;
    comb.groups = static_cast<uint32_t>(slots);
    ops->push_back(comb);
    need(Buf::ExpAct, slots * o.batch * mi);
    allReduce("mlp_allreduce");
    return error.empty() ? Status::ok() : Status::error(error);
}

Status DecodePlanBuilder::headAndTail()
{
    const uint64_t vl = (m.vocab + o.tp - 1) / o.tp, h = m.hidden;
    ops = &p.m_head;
    PlanOp emb;
    emb.kind = OpKind::Embedding;
    emb.component = Component::Embedding;
    emb.name = "embed_tokens";
    emb.out = Buf::Delta;
    emb.width = h;
    emb.weightBytes = uint64_t(o.batch) * h * 2; // rows looked up (the table itself is not streamed)
    p.m_head.push_back(emb);
    need(Buf::Delta, o.batch * h);
    allReduce("embed_allreduce");

    ops = &p.m_tail;
    norm("norm", Buf::Delta, Buf::Normed, h, 0, true, false);
    gemv("lm_head", Component::LmHead, vl, h, Buf::Normed, Buf::Logits);
    PlanOp s;
    s.kind = OpKind::SampleLocal;
    s.component = Component::Sampling;
    s.name = "sampling_argmax";
    s.in = Buf::Logits;
    s.width = vl;
    p.m_tail.push_back(s);
    if (o.tp > 1) {
        PlanOp g;
        g.kind = OpKind::AllGather;
        g.component = Component::Collectives;
        g.name = "logits_allgather";
        g.messageBytes = uint64_t(o.batch) * 8;
        p.m_tail.push_back(g);
    }
    s.kind = OpKind::SampleFinal;
    s.name = "sampling_final";
    s.width = o.tp;
    p.m_tail.push_back(s);
    return error.empty() ? Status::ok() : Status::error(error);
}

Status DecodePlanBuilder::checkShapes() const
{
    if (m.hidden == 0 || m.layers == 0 || m.vocab == 0 || m.heads == 0)
        return Status::error("model config lacks hidden size, layers, vocab or heads");
    if (o.tp == 0 || o.batch == 0 || o.batch > DecodePlan::kMaxBatch)
        return Status::error("batch must be 1.." + std::to_string(DecodePlan::kMaxBatch) + " and tp >= 1");
    if (o.context == 0)
        return Status::error("context must be at least 1");
    if (m.heads % o.tp != 0)
        return Status::error("tp " + std::to_string(o.tp) + " does not divide " + std::to_string(m.heads) + " heads");
    if (m.intermediate % o.tp != 0 || m.moeIntermediate % o.tp != 0 || m.sharedIntermediate % o.tp != 0)
        return Status::error("tp " + std::to_string(o.tp) + " does not divide the FFN widths");
    const Precision kv = o.precisionOf(Component::KvCache);
    if (kv != Precision::Bf16 && kv != Precision::Fp8)
        return Status::error(std::string("kv_cache precision must be bf16 or fp8, not ") + model::toString(kv));
    if (o.precisionOf(Component::Embedding) != Precision::Bf16)
        return Status::error("the embedding table is stored in bf16 only");
    if (m.indexHeads > 64 || (m.indexHeads && (m.indexHeadDim == 0 || m.indexHeadDim % 16 || m.indexHeadDim > 256)))
        return Status::error("DSA indexer: at most 64 heads of a head dim that is a multiple of 16 up to 256");
    if (m.attention == model::AttentionKind::Gqa) {
        if (m.kvHeads == 0 || m.headDim == 0 || m.heads % m.kvHeads != 0)
            return Status::error("GQA config needs num_key_value_heads dividing num_attention_heads and head_dim");
        if ((m.heads / m.kvHeads) > 64)
            return Status::error("more than 64 query heads per KV head are not supported");
    } else if (m.kvLoraRank == 0 || m.qkRopeHeadDim == 0 || m.vHeadDim == 0) {
        return Status::error("MLA config needs kv_lora_rank, qk_rope_head_dim and v_head_dim");
    }
    return Status::ok();
}

Status DecodePlanBuilder::run()
{
    if (Status s = checkShapes(); !s)
        return s;
    hl = m.heads / o.tp;
    kvhl = m.attention == model::AttentionKind::Gqa ? std::max(1u, m.kvHeads / o.tp) : 1;
    if (m.experts > 0 && m.expertsPerToken > 0) {
        p.m_expertSlots = std::min<uint32_t>(o.batch * m.expertsPerToken, m.experts);
        const double e = m.experts, k = m.expertsPerToken;
        p.m_touched = e * (1.0 - std::pow(1.0 - k / e, static_cast<double>(o.batch)));
    }
    if (Status s = headAndTail(); !s)
        return s;
    const uint32_t n = o.layers ? std::min(o.layers, m.layers) : m.layers;
    for (uint32_t i = 0; i < n; ++i) {
        LayerPlan l;
        l.index = i;
        l.moe = m.isMoe() && m.isMoeLayer(i);
        l.indexer = m.indexHeads > 0 && m.hasIndexer(i);
        ops = &l.ops;
        norm("input_layernorm", Buf::Delta, Buf::Normed, m.hidden, 0, true, i == 0);
        Status s = m.attention == model::AttentionKind::Mla ? attentionMla(l.indexer) : attentionGqa();
        if (s)
            norm("post_attention_layernorm", Buf::Delta, Buf::Normed, m.hidden, 0, true, false);
        if (s)
            s = l.moe ? ffnMoe() : ffnDense();
        if (!s)
            return s.withContext("layer " + std::to_string(i));
        p.m_layers.push_back(std::move(l));
    }
    need(Buf::Residual, o.batch * m.hidden);
    return Status::ok();
}

Expected<DecodePlan> DecodePlan::build(const model::ModelConfig& config, const PlanOptions& options)
{
    DecodePlan plan;
    plan.m_config = config;
    plan.m_options = options;
    DecodePlanBuilder b(plan);
    if (Status s = b.run(); !s)
        return s.withContext("decode plan for " + config.name);
    return plan;
}

std::map<Component, double> DecodePlan::weightBytesByComponent() const
{
    std::map<Component, double> out;
    forEachOp([&](const PlanOp& op) {
        if (op.weightBytes)
            out[op.component] += static_cast<double>(op.weightBytes);
    });
    return out;
}

double DecodePlan::weightBytes() const
{
    double s = 0;
    forEachOp([&](const PlanOp& op) { s += static_cast<double>(op.weightBytes); });
    return s;
}

double DecodePlan::cacheBytes() const
{
    double s = 0;
    forEachOp([&](const PlanOp& op) { s += static_cast<double>(op.cacheBytes); });
    return s;
}

uint64_t DecodePlan::weightStorageBytes(bool allExperts) const
{
    uint64_t s = (m_config.vocab + m_options.tp - 1) / m_options.tp * m_config.hidden * 2; // embedding slice
    forEachOp([&](const PlanOp& op) {
        if (op.kind == OpKind::Gemv) {
            const uint64_t g = op.gemv.indirect ? (allExperts ? op.gemv.poolExperts : m_expertSlots) : op.gemv.groups;
            s += (op.gemv.layout.bytes() + 255) / 256 * 256 * g;
        } else if (op.kind == OpKind::RmsNorm) {
            s += (op.width * 2 + 255) / 256 * 256;
        }
    });
    return s;
}

uint64_t DecodePlan::cacheStorageBytes() const
{
    uint64_t s = 0;
    forEachOp([&](const PlanOp& op) {
        if (op.kind == OpKind::IndexerScan)
            s += op.cacheBytes;
        if (op.kind == OpKind::Attention) {
            const uint64_t rowBytes = op.attn.mla ? op.attn.headDimK : uint64_t(op.attn.kvHeads) * op.attn.headDimK * 2;
            s += rowBytes * op.attn.context * m_options.batch * (op.attn.cache == model::Precision::Fp8 ? 1 : 2);
        }
    });
    return s;
}

size_t DecodePlan::kernelCount() const
{
    size_t n = 0;
    forEachOp([&](const PlanOp&) { ++n; });
    return n;
}

size_t DecodePlan::collectiveCount() const
{
    size_t n = 0;
    forEachOp([&](const PlanOp& op) { n += op.kind == OpKind::AllReduce || op.kind == OpKind::AllGather; });
    return n;
}

} // namespace gapscope::kernels
