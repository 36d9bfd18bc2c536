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

#include "model/json.h"
#include "model/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gapscope::model {

enum class AttentionKind { Gqa, Mla }; // Gqa covers MHA (kv heads == heads) and MQA

struct ModelConfig {
    std::string name;      // preset name or file stem
    std::string modelType; // config "model_type"
    uint64_t hidden = 0;
    uint32_t layers = 0;        // num_hidden_layers (decoder layers run per token, MTP excluded)
    uint32_t denseLayers = 0;   // leading dense-FFN layers (first_k_dense_replace); == layers for dense models
    uint64_t intermediate = 0;  // dense FFN width
    uint64_t moeIntermediate = 0;
    uint64_t sharedIntermediate = 0; // total width of the shared expert(s); 0 = none
    uint32_t experts = 0;            // routed experts; 0 = dense model
    uint32_t expertsPerToken = 0;
    uint32_t sharedExperts = 0;
    uint32_t moeLayerFreq = 1;       // every n-th layer after denseLayers is MoE (Qwen decoder_sparse_step)
    uint32_t heads = 0;
    uint32_t kvHeads = 0;
    uint32_t headDim = 0;            // GQA
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

    bool isMoeLayer(uint32_t layer) const;
    uint32_t moeLayerCount() const;
};

Expected<ModelConfig> parseModelConfig(const json::Value& config, const std::string& name);
// A path to a config.json (or a folder holding one, plus hf_quant_config.json if present), or a
// preset name from resources/models ("glm-5", "deepseek-v3", ...).
Expected<ModelConfig> loadModelConfig(const std::string& fileOrPreset);

// Budget components (also the names accepted by --precision, except "all").
enum class Component {
    Attention,      // attention projections (MLA: q_a, q_b, kv_a, kv_b, o; GQA: q, k, v, o)
    Indexer,        // DSA indexer projections
    DenseFfn,
    Router,
    SharedExperts,
    RoutedExperts,
    LmHead,
    Embedding,
    KvCache,        // not a weight; listed for completeness
    Collectives,
    LaunchHost,
    Sampling,
    Other,
};
const char* toString(Component c);
bool parseComponent(const std::string& s, Component& out);

enum class TpSplit {
    Column,     // output dim split across TP ranks (q_b, kv_b, gate/up, lm_head)
    Row,        // input dim split (o_proj, down) -> AllReduce after
    Replicated, // every rank reads it whole (engine choice: SGLang's q_a/kv_a, router, indexer)
};

struct WeightMatrix {
    std::string name;   // "q_a_proj", "kv_b_proj", "experts.gate_up", ...
    Component component;
    uint64_t inFeatures;
    uint64_t outFeatures;
    uint32_t count = 1; // e.g. routed experts touched, as a multiplier (1 for ordinary matrices)
    TpSplit split = TpSplit::Column;
    uint64_t params() const { return inFeatures * outFeatures * count; }
};

enum class EngineReplication { None, Sglang };

// The matrices one decoder layer reads for a decode step, in execution order. For MoE layers the
// routed-expert entries describe ONE expert (count = 1); the caller multiplies by touched experts.
std::vector<WeightMatrix> layerMatrices(const ModelConfig& m, uint32_t layer, EngineReplication engine);

} // namespace gapscope::model
