// SPDX-License-Identifier: MIT
// The weight matrices of one decoder layer (modelconfig.h: layerMatrices).
#include "model/budget/modelconfig.h"

#include <algorithm>

namespace gapscope::model {

namespace {

WeightMatrix matrix(const char* name, Component c, uint64_t in, uint64_t out, TpSplit split, uint32_t maxSplit = 0)
{
    WeightMatrix w { name, c, in, out };
    w.split = split;
    w.maxSplit = maxSplit;
    return w;
}

void addMla(const ModelConfig& m, uint32_t layer, TpSplit replicated, std::vector<WeightMatrix>& out)
{
    uint64_t h = m.hidden, H = m.heads;
    uint64_t qk = m.qkNopeHeadDim + m.qkRopeHeadDim;
    if (m.qLoraRank > 0) {
        out.push_back(matrix("q_a_proj", Component::Attention, h, m.qLoraRank, replicated));
        out.push_back(matrix("q_b_proj", Component::Attention, m.qLoraRank, H * qk, TpSplit::Column));
    } else {
        out.push_back(matrix("q_proj", Component::Attention, h, H * qk, TpSplit::Column));
    }
    out.push_back(
        matrix("kv_a_proj_with_mqa", Component::Attention, h, uint64_t(m.kvLoraRank) + m.qkRopeHeadDim, replicated));
    out.push_back(
        matrix("kv_b_proj", Component::Attention, m.kvLoraRank, H * (m.qkNopeHeadDim + m.vHeadDim), TpSplit::Column));
    out.push_back(matrix("o_proj", Component::Attention, H * m.vHeadDim, h, TpSplit::Row));
    if (m.hasIndexer(layer)) {
        uint64_t qIn = m.qLoraRank > 0 ? m.qLoraRank : h;
        out.push_back(
            matrix("indexer.wq_b", Component::Indexer, qIn, uint64_t(m.indexHeads) * m.indexHeadDim, replicated));
        out.push_back(matrix("indexer.wk", Component::Indexer, h, m.indexHeadDim, replicated));
        out.push_back(matrix("indexer.weights_proj", Component::Indexer, h, m.indexHeads, replicated));
    }
}

void addGqa(const ModelConfig& m, std::vector<WeightMatrix>& out)
{
    uint64_t h = m.hidden, q = uint64_t(m.heads) * m.headDim, kv = uint64_t(m.kvHeads) * m.headDim;
    out.push_back(matrix("q_proj", Component::Attention, h, q, TpSplit::Column));
    out.push_back(matrix("k_proj", Component::Attention, h, kv, TpSplit::Column, m.kvHeads));
    out.push_back(matrix("v_proj", Component::Attention, h, kv, TpSplit::Column, m.kvHeads));
    out.push_back(matrix("o_proj", Component::Attention, q, h, TpSplit::Row));
}

} // namespace

uint32_t WeightMatrix::splitWays(uint32_t tp) const
{
    if (split == TpSplit::Replicated || tp == 0)
        return 1;
    return maxSplit > 0 ? std::min(tp, maxSplit) : tp;
}

std::string matrixKey(Component component, const std::string& name)
{
    switch (component) {
    case Component::Attention:
    case Component::Indexer:
        return "self_attn." + name;
    case Component::DenseFfn:
        return "mlp." + name;
    case Component::Router:
        return "mlp.gate";
    case Component::SharedExperts:
        return "mlp.shared_experts." + name;
    case Component::RoutedExperts:
        return "mlp.experts." + name;
    case Component::LmHead:
        return "lm_head";
    case Component::Embedding:
        return "model.embed_tokens";
    default:
        return std::string(toString(component)) + "." + name;
    }
}

std::vector<WeightMatrix> layerMatrices(const ModelConfig& m, uint32_t layer, EngineReplication engine)
{
    std::vector<WeightMatrix> out;
    out.reserve(12);
    // Engines replicate the small down-projections feeding MLA's latent, the router and the DSA
    // indexer on every rank (SGLang: fused_qkv_a_proj_with_mqa, ReplicatedLinear gate and indexer).
    TpSplit replicated = engine == EngineReplication::Sglang ? TpSplit::Replicated : TpSplit::Column;
    if (m.isMla())
        addMla(m, layer, replicated, out);
    else
        addGqa(m, out);
    uint64_t h = m.hidden;
    if (m.isMoeLayer(layer)) {
        out.push_back(matrix("gate", Component::Router, h, m.experts, replicated));
        if (m.sharedIntermediate > 0) {
            out.push_back(
                matrix("gate_up_proj", Component::SharedExperts, h, 2 * m.sharedIntermediate, TpSplit::Column));
            out.push_back(matrix("down_proj", Component::SharedExperts, m.sharedIntermediate, h, TpSplit::Row));
        }
        out.push_back(matrix("gate_up_proj", Component::RoutedExperts, h, 2 * m.moeIntermediate, TpSplit::Column));
        out.push_back(matrix("down_proj", Component::RoutedExperts, m.moeIntermediate, h, TpSplit::Row));
    } else if (m.intermediate > 0) {
        out.push_back(matrix("gate_up_proj", Component::DenseFfn, h, 2 * m.intermediate, TpSplit::Column));
        out.push_back(matrix("down_proj", Component::DenseFfn, m.intermediate, h, TpSplit::Row));
    }
    return out;
}

} // namespace gapscope::model
