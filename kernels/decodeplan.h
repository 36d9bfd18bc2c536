// SPDX-License-Identifier: MIT
#pragma once

// DecodePlan: the kernels one decode step of a model runs on ONE tensor-parallel rank, in launch
// order, with every shape and byte count — what gapscope-decode-sim executes and what its tests
// check against the budget model. Derived from the same ModelConfig the budget uses.
//
// The layout follows SGLang's TP decode path: q_a / kv_a_proj_with_mqa, the MoE router and the DSA
// indexer projections are replicated on every rank; every other matrix is split 1/TP (column split
// for q_b, kv_b, q/k/v, gate_up, lm_head; row split with an AllReduce after for o_proj and down);
// GQA k/v split at most n_kv_heads ways. GQA's q, k and v projections run as ONE GEMV (`qkv_proj`,
// SGLang's and vLLM's QKVParallelLinear: rows q | k | v) into Buf::Qkv, whose parts the rope and
// attention ops read in place at a token stride of (Hl + 2*kvHl)*hd (AttentionOp's offsets); MLA's
// q_a and kv_a_proj_with_mqa stay two GEMVs, and its kv_b is absorbed (two batched per-head GEMVs
// around the latent attention). Per layer: RMSNorm, attention projections, RoPE + cache append
// (for GQA with head dim 64/128/256, attentionrows.h, inside the attention op: AttentionOp::ropeInAttention),
// decode attention over `context` cached rows, output projection, AllReduce, RMSNorm, dense FFN or
// router + touched experts + shared expert, AllReduce. Head: vocab-parallel embedding + AllReduce.
// Tail: final norm, lm_head, local argmax, AllGather of (value, index), final argmax. DSA indexer
// (as the budget's "auto"): the key projection always runs; the query side and the key scan over
// all cached index keys (FP8 + FP32 scale per row) only when context > index_topk.
//
// Invariants: activation buffers are bf16 and sized by bufferElems(); every GEMV's K is a multiple
// of its format's vector width; batch <= kMaxBatch. Routed-expert GEMVs run over `expertSlots`
// slots filled on the device by the router; their bytes are counted for the expected number of
// distinct experts under uniform routing, E*(1-(1-k/E)^B).
// Pure value type; building is deterministic; thread-safe once built.

#include "kernels/weightlayout.h"
#include "model/base/status.h"
#include "model/budget/modelconfig.h"
#include "model/budget/precision.h"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gapscope::kernels {

enum class OpKind : uint8_t {
    Embedding, // next-token ids -> rows of this rank's vocab slice (zero elsewhere)
    RmsNorm, // optional residual add, then RMSNorm
    Gemv, // y = W x over `groups` (heads or expert slots)
    RopeAppend, // rotary embedding + KV-cache append at position context-1
    Attention, // decode attention over the KV cache (split over rows, then combined)
    SiluMul, // SiLU(gate) * up
    RouterTopk, // softmax + top-k over router logits, distinct experts -> slots
    MoeCombine, // weighted sum of the expert outputs (+ shared expert) -> Delta
    AllReduce, // NCCL sum over the TP ranks (bf16)
    SampleLocal, // argmax over this rank's logits -> (value, global index)
    AllGather, // NCCL gather of the (value, index) pairs
    SampleFinal, // argmax over all ranks' pairs -> next token id
    IndexerScan, // DSA indexer: score every cached index key (FP8) against the indexer heads
};
const char* toString(OpKind k);

// Activation buffers (bf16 unless noted).
enum class Buf : uint8_t {
    None,
    Residual, // [B][h] residual stream
    Delta, // [B][h] block output / AllReduce payload
    Normed, // [B][h]
    QA, // [B][q_lora]
    Q, // MLA: [B][Hl][qk head dim]
    Kv, // MLA: [B][kv_lora+rope] (kv_a output)
    Qkv, // GQA: [B][(Hl + 2*kvHl)*hd] fused projection output, per token q heads | new keys | new values
    QLat, // MLA: [B][Hl][kv_lora+rope] absorbed query
    AttnOut, // MLA: [B][Hl][kv_lora]; GQA: [B][Hl][hd]
    VOut, // MLA: [B][Hl][v]
    GateUp, // [B][2*inter]
    Act, // [B][inter]
    RouterLogits, // [B][E]
    ExpGateUp, // [slots][B][2*mi]
    ExpAct, // [slots][B][mi]
    ExpDown, // [slots][B][h]
    SharedGateUp,
    SharedAct,
    SharedDown, // [B][h]
    IndexQ,
    IndexK,
    IndexW,
    Logits, // [B][vocab/TP]
    IndexScores, // [B][context]
    Count
};
const char* toString(Buf b);

struct GemvOp {
    WeightLayout layout; // of one group
    uint32_t groups = 1; // per-head (absorbed MLA) or expert slots
    bool indirect = false; // groups are routed-expert slots, valid count known on the device
    uint32_t poolExperts = 0; // indirect: expert weight buffers in the layer (E)
    Buf in = Buf::None, out = Buf::None;
    uint64_t inOffset = 0, inLd = 0, inGroupStride = 0; // elements
    uint64_t outOffset = 0, outLd = 0, outGroupStride = 0; // elements
};

struct AttentionOp {
    bool mla = false;
    // GQA: where the RopeAppend op finds q, the new k and the new v, and where the Attention op
    // reads q, inside the op's `in` buffer (Buf::Qkv): element offsets in token 0's row, and the
    // elements between two tokens' rows. MLA leaves them 0 (its q, kv and latent q have buffers of
    // their own, packed per token).
    uint64_t qOffset = 0, kOffset = 0, vOffset = 0;
    uint64_t tokenStride = 0;
    // GQA with head dim 64/128/256 (attentionrows.h): the Attention op itself rotates q and appends the
    // new row (no RopeAppend op), RoPE over ropeDim == head dim at position context-1.
    bool ropeInAttention = false;
    uint32_t qHeads = 0; // local query heads
    uint32_t kvHeads = 0; // local KV heads (1 for MLA)
    uint32_t headDimK = 0; // MLA: kv_lora + rope
    uint32_t headDimV = 0; // MLA: kv_lora
    uint32_t ropeDim = 0;
    uint64_t rows = 0; // cached rows read per step (context, or DSA top-k)
    uint64_t context = 0; // rows held in the cache
    model::Precision cache = model::Precision::Bf16;
    float scale = 1.0f; // softmax scale
};

struct PlanOp {
    OpKind kind = OpKind::Gemv;
    model::Component component = model::Component::Other;
    std::string name; // "q_a_proj", "input_layernorm", ...
    GemvOp gemv; // kind == Gemv
    AttentionOp attn; // kind == Attention / RopeAppend
    Buf in = Buf::None, out = Buf::None, aux = Buf::None;
    uint64_t width = 0; // norm / act / combine width (elements); AllReduce elements
    uint64_t ld = 0; // row stride of `in` where it differs from width
    uint32_t groups = 1; // SiluMul / combine: slots
    bool flag = false; // RmsNorm: add `in` into Residual first; SiluMul: over expert slots
    bool resetResidual = false; // RmsNorm: Residual = in (first layer)
    uint64_t weightBytes = 0; // bytes of weights (or norm gammas, embedding rows) read per step
    uint64_t cacheBytes = 0; // KV-cache bytes read per step
    uint64_t messageBytes = 0; // collective payload per rank
};

struct LayerPlan {
    uint32_t index = 0;
    bool moe = false;
    bool indexer = false;
    std::vector<PlanOp> ops;
};

struct PlanOptions {
    uint32_t tp = 1;
    uint32_t rank = 0; // only used for naming; shapes are the same on every rank
    uint32_t batch = 1;
    uint64_t context = 1024;
    uint32_t layers = 0; // run only the first N decoder layers (0 = all)
    model::Precision defaultPrecision = model::Precision::Bf16;
    std::map<model::Component, model::Precision> precision; // overrides per component
    model::Precision precisionOf(model::Component c) const;
};

class DecodePlan {
public:
    static constexpr uint32_t kMaxBatch = 8;
    static constexpr uint32_t kMaxHeadTile = 16;

    static Expected<DecodePlan> build(const model::ModelConfig& config, const PlanOptions& options);

    const model::ModelConfig& config() const { return m_config; }
    const PlanOptions& options() const { return m_options; }
    const std::vector<PlanOp>& head() const { return m_head; }
    const std::vector<LayerPlan>& layers() const { return m_layers; }
    const std::vector<PlanOp>& tail() const { return m_tail; }
    uint64_t bufferElems(Buf b) const { return m_bufferElems[static_cast<size_t>(b)]; }
    uint32_t expertSlots() const { return m_expertSlots; }
    double expectedTouchedExperts() const { return m_touched; }

    // Calls f(op) for every op of a step in launch order.
    template <typename F> void forEachOp(F&& f) const
    {
        for (const auto& op : m_head)
            f(op);
        for (const auto& l : m_layers)
            for (const auto& op : l.ops)
                f(op);
        for (const auto& op : m_tail)
            f(op);
    }

    // Per-GPU bytes read per step: weights (incl. norms and embedding rows) by component, and the cache.
    std::map<model::Component, double> weightBytesByComponent() const;
    double weightBytes() const;
    double cacheBytes() const;
    // Weight storage to allocate per rank (all experts when `allExperts`, else only `expertSlots` per layer).
    uint64_t weightStorageBytes(bool allExperts) const;
    uint64_t cacheStorageBytes() const;
    size_t kernelCount() const; // ops that launch a kernel (collectives counted as one each)
    size_t collectiveCount() const;

private:
    model::ModelConfig m_config;
    PlanOptions m_options;
    std::vector<PlanOp> m_head, m_tail;
    std::vector<LayerPlan> m_layers;
    std::array<uint64_t, static_cast<size_t>(Buf::Count)> m_bufferElems {};
    uint32_t m_expertSlots = 0;
    double m_touched = 0;
    friend class DecodePlanBuilder;
};

} // namespace gapscope::kernels
