// SPDX-License-Identifier: MIT
// Reading Hugging Face config.json files into ModelConfig. Field names by family:
//   experts:        n_routed_experts (DeepSeek, GLM) | num_experts (Qwen-MoE) | num_local_experts (Mixtral)
//   expert width:   moe_intermediate_size; Mixtral: intermediate_size is the expert width
//   shared experts: n_shared_experts x moe_intermediate_size (DeepSeek, GLM) | shared_expert_intermediate_size
//   (Qwen2-MoE) MoE layers:     first_k_dense_replace + moe_layer_freq (DeepSeek, GLM) | mlp_layer_types (GLM-5)
//                   | decoder_sparse_step + mlp_only_layers (Qwen-MoE) | every layer (Mixtral)
//   MLA:            kv_lora_rank present; q_lora_rank null = q projected from hidden (V2-Lite)
//   DSA indexer:    index_n_heads, index_head_dim, index_topk; indexer_types full/shared (GLM)
//   nested configs: text_config (multimodal wrappers) is read when the top level has no hidden_size.
#include "model/budget/modelconfig.h"

#include "model/budget/fieldreader.h"
#include "model/budget/modelquant.h"
#include "model/budget/resources.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace gapscope::model {

namespace {

constexpr uint64_t kMaxWidth = 1u << 22;

void readMoe(FieldReader& r, ModelConfig& m)
{
    const char* expertKey = r.has("n_routed_experts") ? "n_routed_experts"
        : r.has("num_experts")                        ? "num_experts"
                                                      : "num_local_experts";
    m.experts = r.u32(expertKey, 0, 0, 16384);
    m.expertsPerToken = r.u32("num_experts_per_tok", 0, 0, 1024);
    if (m.experts == 0 || m.expertsPerToken == 0) {
        m.experts = 0;
        m.expertsPerToken = 0;
        return;
    }
    if (m.expertsPerToken > m.experts)
        r.fail("num_experts_per_tok", "larger than the number of experts (" + std::to_string(m.experts) + ")");
    bool mixtralStyle = !r.has("moe_intermediate_size");
    m.moeIntermediate = mixtralStyle ? m.intermediate : r.u64("moe_intermediate_size", 0, 1, kMaxWidth);
    if (mixtralStyle)
        m.notes.push_back("no moe_intermediate_size: intermediate_size is the expert width (Mixtral layout)");
    m.sharedExperts = r.u32("n_shared_experts", 0, 0, 64);
    if (m.sharedExperts > 0) {
        m.sharedIntermediate = uint64_t(m.sharedExperts) * m.moeIntermediate;
    } else if (r.has("shared_expert_intermediate_size")) {
        m.sharedIntermediate = r.u64("shared_expert_intermediate_size", 0, 0, kMaxWidth);
        m.sharedExperts = m.sharedIntermediate > 0 ? 1 : 0;
    }
}

// Which layers are MoE. Sets denseLayers/moeLayerFreq and, when the rule is not expressible that
// way, moeLayerMask.
void readMoeLayers(FieldReader& r, const json::Value& cfg, ModelConfig& m)
{
    m.denseLayers = m.layers;
    if (!m.isMoe())
        return;
    if (r.has("mlp_layer_types")) {
        auto types = r.strings("mlp_layer_types", 4096);
        if (types.size() != m.layers) {
            r.fail("mlp_layer_types",
                std::to_string(types.size()) + " entries for " + std::to_string(m.layers) + " layers");
            return;
        }
        m.moeLayerMask.resize(m.layers);
        for (uint32_t i = 0; i < m.layers; ++i)
            m.moeLayerMask[i] = types[i] == "sparse" || types[i] == "moe";
    } else if (r.has("first_k_dense_replace") || r.has("moe_layer_freq")) {
        m.denseLayers = std::min(m.layers, r.u32("first_k_dense_replace", 0, 0, 4096));
        m.moeLayerFreq = r.u32("moe_layer_freq", 1, 1, 4096);
    } else {
        // Qwen-MoE: layer i is MoE when (i + 1) % decoder_sparse_step == 0 and i not in mlp_only_layers.
        uint32_t step = r.u32("decoder_sparse_step", 1, 1, 4096);
        std::vector<uint8_t> mask(m.layers, 0);
        for (uint32_t i = 0; i < m.layers; ++i)
            mask[i] = (i + 1) % step == 0;
        if (const json::Value* only = r.array("mlp_only_layers"))
            for (const auto& v : only->items()) {
                int64_t i = v.toInt(-1);
                if (v.isInteger() && i >= 0 && i < int64_t(m.layers))
                    mask[size_t(i)] = 0;
            }
        bool allMoe = std::all_of(mask.begin(), mask.end(), [](uint8_t x) { return x != 0; });
        m.denseLayers = 0;
        if (!allMoe)
            m.moeLayerMask = std::move(mask);
    }
    (void)cfg;
}

void readMla(FieldReader& r, ModelConfig& m)
{
    m.attention = AttentionKind::Mla;
    m.qLoraRank = r.u32("q_lora_rank", 0, 0, kMaxWidth);
    m.kvLoraRank = r.u32("kv_lora_rank", 0, 1, kMaxWidth);
    m.qkNopeHeadDim = r.u32("qk_nope_head_dim", 128, 0, 65536);
    m.qkRopeHeadDim = r.u32("qk_rope_head_dim", 64, 0, 65536);
    m.vHeadDim = r.u32("v_head_dim", 128, 1, 65536);
    m.headDim = m.qkNopeHeadDim + m.qkRopeHeadDim;
    if (r.has("head_dim"))
        m.notes.push_back("MLA: head_dim ignored; query/key heads are qk_nope_head_dim + qk_rope_head_dim = "
            + std::to_string(m.headDim));
    if (r.has("index_topk") && r.has("index_n_heads")) {
        m.indexHeads = r.u32("index_n_heads", 0, 0, 4096);
        m.indexHeadDim = r.u32("index_head_dim", 128, 1, 65536);
        m.indexTopk = r.u32("index_topk", 2048, 1, 1u << 30);
    }
    if (m.indexHeads > 0 && r.has("indexer_types")) {
        auto types = r.strings("indexer_types", 4096);
        if (types.size() == m.layers) {
            m.indexerLayerMask.resize(m.layers);
            for (uint32_t i = 0; i < m.layers; ++i)
                m.indexerLayerMask[i] = types[i] != "shared";
        } else if (r.status().isOk()) {
            r.fail(
                "indexer_types", std::to_string(types.size()) + " entries for " + std::to_string(m.layers) + " layers");
        }
    }
}

void readAttention(FieldReader& r, ModelConfig& m)
{
    m.heads = r.u32("num_attention_heads", 0, 1, 65536);
    m.kvHeads = r.u32("num_key_value_heads", m.heads, 1, 65536);
    if (r.has("kv_lora_rank")) {
        readMla(r, m);
        return;
    }
    if (m.heads > 0 && m.kvHeads > m.heads)
        r.fail("num_key_value_heads", "more key/value heads than attention heads");
    if (r.has("head_dim")) {
        m.headDim = r.u32("head_dim", 0, 1, 65536);
    } else if (m.heads > 0) {
        m.headDim = uint32_t(m.hidden / m.heads);
        m.notes.push_back("head_dim derived: hidden_size / num_attention_heads = " + std::to_string(m.hidden) + " / "
            + std::to_string(m.heads) + " = " + std::to_string(m.headDim));
    }
    bool slidingUsed = r.has("use_sliding_window") ? r.boolean("use_sliding_window", false) : m.modelType == "mistral";
    if (slidingUsed)
        m.slidingWindow = r.u32("sliding_window", 0, 0, 1u << 30);
}

// Multimodal wrappers keep the decoder in text_config; quantization stays at the top level.
const json::Value& decoderObject(const json::Value& config)
{
    const json::Value* text = config.isObject() ? config.find("text_config") : nullptr;
    if (text && text->isObject() && !config.contains("hidden_size"))
        return *text;
    return config;
}

} // namespace

Expected<ModelConfig> parseModelConfig(const json::Value& config, const std::string& name)
{
    const json::Value& cfg = decoderObject(config);
    FieldReader r(cfg, name.empty() ? std::string("config.json") : name);
    ModelConfig m;
    m.name = name;
    m.modelType = r.string("model_type");
    m.hidden = r.u64("hidden_size", 0, 1, kMaxWidth);
    m.layers = r.u32("num_hidden_layers", 0, 1, 4096);
    m.intermediate = r.u64("intermediate_size", 0, 0, kMaxWidth);
    m.vocab = r.u64("vocab_size", 0, 1, 1u << 26);
    m.tiedEmbeddings = r.boolean("tie_word_embeddings", false);
    m.mtpLayers = r.u32("num_nextn_predict_layers", 0, 0, 64);
    m.maxPositions = r.u64("max_position_embeddings", 0, 0, uint64_t(1) << 40);
    for (const char* key : { "hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size" })
        if (!r.has(key))
            r.fail(key, "missing");
    if (!r.status().isOk())
        return r.status();
    readAttention(r, m);
    readMoe(r, m);
    if (!m.isMoe() && m.intermediate == 0)
        r.fail("intermediate_size", "missing (needed for a dense feed-forward)");
    readMoeLayers(r, config, m);
    if (!r.status().isOk())
        return r.status();
    Status q = readQuantization(config, m);
    if (!q.isOk())
        return q.withContext(r.what());
    m.sourceJson = json::write(config, -1);
    return m;
}

bool ModelConfig::isMoeLayer(uint32_t layer) const
{
    if (!isMoe() || layer >= layers)
        return false;
    if (!moeLayerMask.empty())
        return layer < moeLayerMask.size() && moeLayerMask[layer];
    return layer >= denseLayers && layer % std::max<uint32_t>(1, moeLayerFreq) == 0;
}

uint32_t ModelConfig::moeLayerCount() const
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < layers; ++i)
        n += isMoeLayer(i);
    return n;
}

bool ModelConfig::hasIndexer(uint32_t layer) const
{
    if (indexHeads == 0 || layer >= layers)
        return false;
    return indexerLayerMask.empty() || (layer < indexerLayerMask.size() && indexerLayerMask[layer]);
}

uint32_t ModelConfig::indexerLayerCount() const
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < layers; ++i)
        n += hasIndexer(i);
    return n;
}

namespace {

bool isDirectory(const std::string& path)
{
    struct stat st { };
    return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool isFile(const std::string& path)
{
    struct stat st { };
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string stem(const std::string& path)
{
    std::string base = path.substr(path.find_last_of('/') + 1);
    if (base == "config.json") {
        std::string dir = path.substr(0, path.find_last_of('/'));
        return dir.substr(dir.find_last_of('/') + 1);
    }
    auto dot = base.rfind(".json");
    return dot == std::string::npos ? base : base.substr(0, dot);
}

} // namespace

Expected<ModelConfig> loadModelConfig(const std::string& fileOrPreset)
{
    std::string path = fileOrPreset;
    std::string quantPath;
    if (isDirectory(path)) {
        quantPath = path + "/hf_quant_config.json";
        path += "/config.json";
    } else if (!isFile(path)) {
        std::string preset = presetPath("models", fileOrPreset);
        if (preset.empty())
            return Status::error("model '" + fileOrPreset
                + "': no such file and no such preset (presets: " + joinNames(listPresets("models")) + ")");
        path = preset;
    }
    auto doc = json::parseFile(path);
    if (!doc)
        return doc.status();
    json::Value config = std::move(doc.value());
    if (!quantPath.empty() && isFile(quantPath) && config.isObject()) {
        auto quant = json::parseFile(quantPath);
        if (!quant)
            return quant.status();
        config.set("hf_quant_config", std::move(quant.value()));
    }
    bool preset = path != fileOrPreset && quantPath.empty();
    return parseModelConfig(config, preset ? fileOrPreset : stem(path));
}

} // namespace gapscope::model
