// SPDX-License-Identifier: MIT
#pragma once

// ModelConfig: the architecture facts of a transformer decoder, read from a Hugging Face
// config.json as it is on the Hub (extra fields ignored; head_dim derived when absent, honoured when
// present). Field names of DeepSeek (V2/V3/V3.2), GLM (glm4_moe, glm_moe_dsa), Qwen (2/3, 3-MoE),
// Llama, Mistral and Mixtral are understood. Used by the budget model and by gapscope-decode-sim,
// so the sim and the budget always agree on shapes.
//
// WeightMatrix lists the linear layers of one decoder layer with their component and how tensor
// parallelism splits them, so per-GPU bytes follow from (precision, TP, engine replication).

#include "model/base/json.h"
#include "model/base/status.h"
#include "model/trace/budgetcomponent.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gapscope::model {

enum class AttentionKind { Gqa, Mla }; // Gqa covers MHA (kv heads == heads) and MQA

struct ModelConfig {
    std::string name; // preset name or file stem
    std::string modelType; // config "model_type"
    uint64_t hidden = 0;
    uint32_t layers = 0; // num_hidden_layers (decoder layers run per token, MTP excluded)
    uint32_t denseLayers = 0; // leading dense-FFN layers (first_k_dense_replace); == layers for dense models
    uint64_t intermediate = 0; // dense FFN width
    uint64_t moeIntermediate = 0;
    uint64_t sharedIntermediate = 0; // total width of the shared expert(s); 0 = none
    uint32_t experts = 0; // routed experts; 0 = dense model
    uint32_t expertsPerToken = 0;
    uint32_t sharedExperts = 0;
    uint32_t moeLayerFreq = 1; // every n-th layer after denseLayers is MoE (Qwen decoder_sparse_step)
    uint32_t heads = 0;
    uint32_t kvHeads = 0;
    uint32_t headDim = 0; // GQA
    uint64_t vocab = 0;
    bool tiedEmbeddings = false;
    AttentionKind attention = AttentionKind::Gqa;
    // MLA
    uint32_t qLoraRank = 0; // 0: q projected directly from hidden
    uint32_t kvLoraRank = 0;
    uint32_t qkNopeHeadDim = 0;
    uint32_t qkRopeHeadDim = 0;
    uint32_t vHeadDim = 0;
    // DSA indexer (DeepSeek V3.2 / GLM-5); indexHeads == 0: no indexer
    uint32_t indexHeads = 0;
    uint32_t indexHeadDim = 0;
    uint32_t indexTopk = 0;
    uint32_t mtpLayers = 0; // num_nextn_predict_layers
    uint64_t maxPositions = 0;
    // Modules left unquantized by quantization_config / hf_quant_config.json (module name patterns).
    std::vector<std::string> unquantizedModules;
    std::string quantMethod; // quantization_config.quant_method, "" when none

    // Extensions (all optional; zero/empty means "not given").
    // Per-layer MoE flags when the config lists them (mlp_layer_types, mlp_only_layers, Qwen's
    // decoder_sparse_step); empty: layer >= denseLayers && layer % moeLayerFreq == 0.
    std::vector<uint8_t> moeLayerMask;
    // Per-layer "has its own DSA indexer" flags (GLM's indexer_types full/shared); empty: every layer.
    std::vector<uint8_t> indexerLayerMask;
    uint32_t slidingWindow = 0; // Mistral-style sliding window attention; 0 = full attention
    std::string quantFormat; // precision name the quantized modules are stored in ("fp8-block128", "nvfp4"); "" none
    std::string kvCacheFormat; // KV-cache format the checkpoint asks for ("fp8"); "" = BF16
    std::vector<std::string> unquantizedMatrices; // canonical matrix keys (see matrixKey()) left in BF16
    std::string sourceJson; // the config as parsed (compact JSON), so a trace can store it
    std::vector<std::string> notes; // what the parser derived or assumed ("head_dim derived: 8192/64 = 128")

    bool isMoeLayer(uint32_t layer) const;
    uint32_t moeLayerCount() const;
    bool hasIndexer(uint32_t layer) const; // DSA indexer weights on this layer
    uint32_t indexerLayerCount() const;
    bool isMla() const { return attention == AttentionKind::Mla; }
    bool isMoe() const { return experts > 0 && expertsPerToken > 0; }
};

Expected<ModelConfig> parseModelConfig(const json::Value& config, const std::string& name);
// A path to a config.json (or a folder holding one, plus hf_quant_config.json if present), or a
// preset name from resources/models ("glm-5", "deepseek-v3", ...).
Expected<ModelConfig> loadModelConfig(const std::string& fileOrPreset);

enum class TpSplit {
    Column, // output dim split across TP ranks (q_b, kv_b, gate/up, lm_head)
    Row, // input dim split (o_proj, down) -> AllReduce after
    Replicated, // every rank reads it whole (engine choice: SGLang's q_a/kv_a, router, indexer)
};

struct WeightMatrix {
    std::string name; // "q_a_proj", "kv_b_proj", "experts.gate_up", ...
    Component component;
    uint64_t inFeatures;
    uint64_t outFeatures;
    uint32_t count = 1; // e.g. routed experts touched, as a multiplier (1 for ordinary matrices)
    TpSplit split = TpSplit::Column;
    uint32_t maxSplit = 0; // the matrix splits at most this many ways (GQA k/v: kv heads); 0 = no limit
    uint64_t params() const { return inFeatures * outFeatures * count; }
    // Ranks sharing the matrix for a TP degree: 1 when replicated, else min(tp, maxSplit).
    uint32_t splitWays(uint32_t tp) const;
};

// "self_attn.q_a_proj", "mlp.experts", "lm_head": the module path a matrix has inside its layer,
// used to match quantization ignore-lists. `name` is WeightMatrix::name.
std::string matrixKey(Component component, const std::string& name);

enum class EngineReplication { None, Sglang };

// The matrices one decoder layer reads for a decode step, in execution order. For MoE layers the
// routed-expert entries describe ONE expert (count = 1); the caller multiplies by touched experts.
std::vector<WeightMatrix> layerMatrices(const ModelConfig& m, uint32_t layer, EngineReplication engine);

} // namespace gapscope::model
