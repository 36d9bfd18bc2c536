// SPDX-License-Identifier: MIT
#include "model/budget/modelquant.h"

#include "model/base/patternmatcher.h"
#include "model/budget/fieldreader.h"
#include "model/budget/precision.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace gapscope::model {

namespace {

std::string lower(std::string s)
{
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// Glob with '*' and '?' (fnmatch without classes), iterative: O(|p| * |s|) worst case.
bool globMatch(const std::string& p, const std::string& s)
{
    size_t pi = 0, si = 0, star = std::string::npos, mark = 0;
    while (si < s.size()) {
        if (pi < p.size() && (p[pi] == '?' || p[pi] == s[si])) {
            ++pi;
            ++si;
        } else if (pi < p.size() && p[pi] == '*') {
            star = pi++;
            mark = si;
        } else if (star != std::string::npos) {
            pi = star + 1;
            si = ++mark;
        } else {
            return false;
        }
    }
    while (pi < p.size() && p[pi] == '*')
        ++pi;
    return pi == p.size();
}

// A compiled ignore-list pattern. "re:" patterns go through the analysis' PatternMatcher: a
// linear-time search (no backtracking), so hostile input cannot make matching run for ever; patterns
// it refuses never match. Matching ignores case.
class ModuleMatcher {
public:
    explicit ModuleMatcher(const std::string& pattern)
        : m_pattern(pattern)
    {
        if (pattern.rfind("re:", 0) != 0)
            return;
        m_isRegex = true;
        auto m = PatternMatcher::compile("^(?:" + pattern.substr(3) + ")");
        if (m)
            m_re = std::move(m.value());
    }
    bool matches(const std::string& path) const
    {
        if (!m_isRegex)
            return plainOrGlob(m_pattern, path);
        return m_re && m_re->search(path);
    }
    static bool plainOrGlob(const std::string& pattern, const std::string& path)
    {
        if (pattern.find_first_of("*?") != std::string::npos)
            return globMatch(pattern, path) || globMatch(pattern, path + ".weight");
        if (pattern.empty())
            return false;
        return ("." + path + ".").find("." + pattern + ".") != std::string::npos;
    }

private:
    std::string m_pattern;
    bool m_isRegex = false;
    std::optional<PatternMatcher> m_re;
};

// Format of the quantized modules from the quantization section; "" when unknown.
std::string formatOf(const json::Value& q, std::vector<std::string>& notes)
{
    std::string method = lower(q["quant_method"].toString());
    std::string algo = lower(q["quant_algo"].toString());
    if (algo.empty() && q["quantization"].isObject())
        algo = lower(q["quantization"]["quant_algo"].toString());
    if (algo == "nvfp4" || algo == "nvfp4_awq")
        return "nvfp4";
    if (algo == "fp8" || algo == "fp8_pb_wo")
        return algo == "fp8" ? "fp8" : "fp8-block128";
    if (algo == "mxfp4" || method == "mxfp4")
        return "mxfp4";
    if (algo.rfind("w4a", 0) == 0 || algo == "int4_awq")
        return "int4-g128";
    if (method == "fp8") {
        const json::Value& block = q["weight_block_size"];
        if (block.isArray() && block.size() == 2 && block.at(0).toInt() == 128 && block.at(1).toInt() == 128)
            return "fp8-block128";
        return "fp8";
    }
    if (method == "awq" || method == "gptq" || method == "awq_marlin" || method == "gptq_marlin") {
        int64_t bits = q["bits"].toInt(q["w_bit"].toInt(0));
        int64_t group = q["group_size"].toInt(q["q_group_size"].toInt(0));
        if (bits == 4 && group == 128)
            return "int4-g128";
        notes.push_back("quantization " + method + " with " + std::to_string(bits) + " bits, group "
            + std::to_string(group) + ": no matching precision, treated as unquantized");
        return "";
    }
    if (method == "compressed-tensors" && q["config_groups"].isObject()) {
        for (const auto& [name, group] : q["config_groups"].members()) {
            const json::Value& w = group["weights"];
            int64_t bits = w["num_bits"].toInt(0);
            std::string type = lower(w["type"].toString());
            int64_t size = w["group_size"].toInt(0);
            if (bits == 4 && type == "float" && size == 16)
                return "nvfp4";
            if (bits == 4 && type == "float" && size == 32)
                return "mxfp4";
            if (bits == 4 && type == "int" && size == 128)
                return "int4-g128";
            if (bits == 8 && type == "float")
                return lower(w["strategy"].toString()) == "block" ? "fp8-block128" : "fp8";
        }
        notes.push_back("compressed-tensors scheme not recognised: treated as unquantized");
        return "";
    }
    if (!method.empty())
        notes.push_back("quant_method '" + method + "' not recognised: treated as unquantized");
    return "";
}

std::vector<std::string> ignoreList(const json::Value& q)
{
    std::vector<std::string> out;
    auto add = [&out](const json::Value& list) {
        if (!list.isArray())
            return;
        for (const auto& v : list.items())
            if (v.isString() && out.size() < 20000)
                out.push_back(v.toString());
    };
    for (const char* key :
        { "ignore", "ignored_layers", "modules_to_not_convert", "exclude_modules", "llm_int8_skip_modules" })
        add(q[key]);
    if (q["quantization"].isObject())
        add(q["quantization"]["exclude_modules"]);
    return out;
}

// The quantization section: config.json's quantization_config, else the merged hf_quant_config.json.
const json::Value* quantSection(const json::Value& config)
{
    if (!config.isObject())
        return nullptr;
    for (const char* key : { "quantization_config", "hf_quant_config" }) {
        const json::Value* q = config.find(key);
        if (q && q->isObject())
            return q;
    }
    if (const json::Value* text = config.find("text_config"); text && text->isObject()) {
        const json::Value* q = text->find("quantization_config");
        if (q && q->isObject())
            return q;
    }
    return nullptr;
}

struct KeyCount {
    std::string key;
    uint32_t layers = 0; // layers the matrix appears in (among those probed)
    uint32_t matched = 0; // of which an ignore pattern names it
};

void countMatrix(const std::vector<ModuleMatcher>& matchers, std::vector<KeyCount>& counts, const std::string& key,
    const std::vector<std::string>& paths)
{
    auto it = std::find_if(counts.begin(), counts.end(), [&](const KeyCount& k) { return k.key == key; });
    if (it == counts.end()) {
        counts.push_back({ key });
        it = counts.end() - 1;
    }
    ++it->layers;
    for (const auto& path : paths)
        for (const auto& m : matchers)
            if (m.matches(path)) {
                ++it->matched;
                return;
            }
}

// Matches the ignore patterns against every layer's matrices (or the first dense and first MoE
// layer when that would be too much work). A matrix kind left unquantized in at least half of its
// layers counts as BF16 everywhere; partial cases are noted.
void resolveUnquantized(ModelConfig& m)
{
    std::vector<ModuleMatcher> matchers;
    for (const auto& p : m.unquantizedModules)
        matchers.emplace_back(p);
    std::vector<uint32_t> probe;
    bool everyLayer = double(m.layers) * double(matchers.size()) <= 2e5;
    for (uint32_t l = 0; l < m.layers; ++l)
        if (everyLayer || probe.empty() || (probe.size() < 2 && m.isMoeLayer(l) != m.isMoeLayer(probe.front())))
            probe.push_back(l);
    std::vector<KeyCount> counts;
    for (uint32_t l : probe)
        for (const auto& w : layerMatrices(m, l, EngineReplication::None))
            countMatrix(matchers, counts, matrixKey(w.component, w.name), modulePaths(m, w, l));
    countMatrix(matchers, counts, "lm_head", { "lm_head" });
    countMatrix(matchers, counts, "model.embed_tokens", { "model.embed_tokens" });
    for (const auto& k : counts) {
        if (k.matched * 2 >= k.layers && k.matched > 0)
            m.unquantizedMatrices.push_back(k.key);
        if (k.matched > 0 && k.matched < k.layers)
            m.notes.push_back(k.key + ": left unquantized in " + std::to_string(k.matched) + " of "
                + std::to_string(k.layers) + " layers; counted as " + (k.matched * 2 >= k.layers ? "BF16" : "quantized")
                + " in all");
    }
}

} // namespace

bool modulePatternMatches(const std::string& pattern, const std::string& path)
{
    return ModuleMatcher(pattern).matches(path);
}

Status readQuantization(const json::Value& config, ModelConfig& m)
{
    const json::Value* q = quantSection(config);
    if (!q)
        return Status::ok();
    m.quantMethod = (*q)["quant_method"].toString();
    if (m.quantMethod.empty() && (*q)["producer"].isObject())
        m.quantMethod = (*q)["producer"]["name"].toString(); // hf_quant_config.json: {"producer": {"name": "modelopt"}}
    m.quantFormat = formatOf(*q, m.notes);
    std::string kvAlgo = lower((*q)["kv_cache_quant_algo"].toString());
    if (kvAlgo.empty() && (*q)["quantization"].isObject())
        kvAlgo = lower((*q)["quantization"]["kv_cache_quant_algo"].toString());
    const json::Value& kvScheme = (*q)["kv_cache_scheme"];
    if (kvAlgo == "fp8"
        || (kvScheme.isObject() && kvScheme["num_bits"].toInt(0) == 8 && lower(kvScheme["type"].toString()) == "float"))
        m.kvCacheFormat = "fp8";
    if (!m.kvCacheFormat.empty())
        m.notes.push_back("checkpoint KV cache: " + m.kvCacheFormat);
    m.unquantizedModules = ignoreList(*q);
    if (!m.quantFormat.empty()) {
        resolveUnquantized(m);
        m.notes.push_back("checkpoint quantized (" + (m.quantMethod.empty() ? std::string("?") : m.quantMethod) + "): "
            + m.quantFormat + "; left in BF16: " + (m.unquantizedMatrices.empty() ? std::string("none listed") : [&] {
                  std::string s;
                  for (const auto& k : m.unquantizedMatrices)
                      s += (s.empty() ? "" : ", ") + k;
                  return s;
              }()));
    }
    return Status::ok();
}

std::vector<std::string> modulePaths(const ModelConfig& m, const WeightMatrix& w, uint32_t layer)
{
    std::string base = "model.layers." + std::to_string(layer) + ".";
    bool mixtral = m.modelType == "mixtral";
    std::string mlp = mixtral ? "block_sparse_moe." : "mlp.";
    auto fused = [&](const std::string& prefix, const char* gate, const char* up, const std::string& fusedName) {
        return std::vector<std::string> { prefix + gate, prefix + up, prefix + fusedName };
    };
    switch (w.component) {
    case Component::Attention:
    case Component::Indexer:
        return { base + "self_attn." + w.name };
    case Component::Router:
        return { base + mlp + "gate" };
    case Component::DenseFfn:
        if (w.name == "gate_up_proj")
            return fused(base + "mlp.", "gate_proj", "up_proj", "gate_up_proj");
        return { base + "mlp." + w.name };
    case Component::SharedExperts: {
        std::string p = base + "mlp."
            + (m.sharedExperts == 1 && m.modelType.rfind("qwen2", 0) == 0 ? "shared_expert." : "shared_experts.");
        return w.name == "gate_up_proj" ? fused(p, "gate_proj", "up_proj", "gate_up_proj")
                                        : std::vector<std::string> { p + w.name };
    }
    case Component::RoutedExperts: {
        std::string p = base + mlp + "experts.0.";
        if (mixtral)
            return w.name == "gate_up_proj" ? fused(p, "w1", "w3", "w13") : std::vector<std::string> { p + "w2" };
        return w.name == "gate_up_proj" ? fused(p, "gate_proj", "up_proj", "gate_up_proj")
                                        : std::vector<std::string> { p + w.name };
    }
    default:
        return {};
    }
}

} // namespace gapscope::model
