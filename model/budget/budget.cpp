// SPDX-License-Identifier: MIT
// computeBudget: see budget.h for the contract and README.md for the formulas.
#include "model/budget/budget.h"

#include "model/budget/moeexperts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gapscope::model {

// Defined in budgetassumptions.cpp.
std::vector<std::string> budgetAssumptions(const BudgetInputs& in, const Budget& b);

namespace {

// One item under construction: times are accumulated per kernel group, then folded into the item.
struct Acc {
    BudgetItem item;
    double memUs = 0; // bytes / peak bandwidth
    double computeUs = 0; // flops / peak TFLOPS
    double achUs = 0; // achievable, summed per kernel
};

std::string fmt(const char* f, double a)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, f, a);
    return buf;
}

Precision kvPrecision(const BudgetInputs& in)
{
    Precision p = Precision::Bf16;
    if (in.kvCachePrecision)
        return *in.kvCachePrecision;
    if (!in.model.kvCacheFormat.empty() && parsePrecision(in.model.kvCacheFormat, p))
        return p;
    return Precision::Bf16;
}

bool isWeight(const BudgetItem& it)
{
    switch (it.component) {
    case Component::Attention:
    case Component::DenseFfn:
    case Component::Router:
    case Component::SharedExperts:
    case Component::RoutedExperts:
    case Component::LmHead:
    case Component::Embedding:
        return true;
    case Component::Indexer:
        return it.name != "indexer.key_scan";
    default:
        return false;
    }
}

class BudgetBuilder {
public:
    explicit BudgetBuilder(const BudgetInputs& in)
        : m_in(in)
        , m_m(in.model)
        , m_hw(in.hardware)
    {
    }
    Budget run();

private:
    Acc& acc(const std::string& name, Component c);
    void addKernels(Acc& a, double kernels, double bytesEach, double flopsEach, MathRate rate);
    Precision precisionFor(Component c, const std::string& key) const;
    bool indexerQueryRuns() const;
    void addLayerWeights(uint32_t layer, uint32_t count, uint64_t tokens, const char* draftName);
    void addRoutedExperts(uint32_t moeLayers, uint64_t tokens, const char* draftName);
    void addHeadAndEmbedding(uint64_t tokens, uint64_t logitTokens, const char* draftName);
    void addKvCache(uint32_t layers, uint64_t tokens, const char* draftName);
    void addIndexerScan(uint32_t indexerLayers, uint64_t tokens, const char* draftName);
    void addCollectives(uint64_t tokens);
    void addDraft();
    void addLaunchFloor(Budget& b);
    double collectiveUs(double bytes) const;
    // Tokens whose logits are computed: all in decode, the last of each sequence in prefill.
    uint64_t logitTokens(uint64_t tokens) const { return m_in.phase == BudgetPhase::Prefill ? m_in.batch : tokens; }
    void describe(Budget& b) const;

    const BudgetInputs& m_in;
    const ModelConfig& m_m;
    const HardwareProfile& m_hw;
    std::vector<Acc> m_items;
    double m_experts = 0, m_busiest = 0;
    uint32_t m_collectives = 0;
    std::vector<std::string> m_notes;
};

Acc& BudgetBuilder::acc(const std::string& name, Component c)
{
    for (auto& a : m_items)
        if (a.item.name == name)
            return a;
    m_items.push_back({});
    m_items.back().item.name = name;
    m_items.back().item.component = c;
    return m_items.back();
}

void BudgetBuilder::addKernels(Acc& a, double kernels, double bytesEach, double flopsEach, MathRate rate)
{
    if (kernels <= 0)
        return;
    double bw = m_hw.memoryBandwidthGbs * 1e3; // bytes per us
    double peak = m_hw.tflops(rate) * 1e6; // flops per us
    double eff = m_hw.computeEfficiency;
    if (m_hw.calibrated && m_hw.measuredBf16Tflops > 0 && m_hw.bf16Tflops > 0)
        eff = std::min(1.0, m_hw.measuredBf16Tflops / m_hw.bf16Tflops);
    a.item.bytes += kernels * bytesEach;
    a.item.flops += kernels * flopsEach;
    a.item.kernels += kernels;
    a.memUs += bw > 0 ? kernels * bytesEach / bw : 0;
    a.computeUs += peak > 0 ? kernels * flopsEach / peak : 0;
    double achCompute = peak > 0 ? flopsEach / (peak * eff) : 0;
    a.achUs += kernels * std::max(m_hw.kernelUs(bytesEach), achCompute);
}

Precision BudgetBuilder::precisionFor(Component c, const std::string& key) const
{
    if (auto it = m_in.precision.find(c); it != m_in.precision.end())
        return it->second;
    if (m_in.allPrecision)
        return *m_in.allPrecision;
    Precision q = Precision::Bf16;
    bool decoderLinear = c == Component::Attention || c == Component::Indexer || c == Component::DenseFfn
        || c == Component::SharedExperts || c == Component::RoutedExperts;
    if (decoderLinear && !m_m.quantFormat.empty() && parsePrecision(m_m.quantFormat, q)
        && std::find(m_m.unquantizedMatrices.begin(), m_m.unquantizedMatrices.end(), key)
            == m_m.unquantizedMatrices.end())
        return q;
    return Precision::Bf16;
}

bool BudgetBuilder::indexerQueryRuns() const
{
    if (m_in.indexer == IndexerMode::On)
        return true;
    if (m_in.indexer == IndexerMode::Off)
        return false;
    return m_in.context > m_m.indexTopk;
}

// Dense weights of `count` layers shaped like `layer` (routed experts are added separately).
void BudgetBuilder::addLayerWeights(uint32_t layer, uint32_t count, uint64_t tokens, const char* draftName)
{
    // GQA's q, k and v projections run as one GEMV (QKVParallelLinear in SGLang and vLLM, the fused
    // QKV GEMM of TensorRT-LLM): one kernel reading all three, each split as its matrix is.
    struct {
        double bytes = 0, flops = 0;
        int parts = 0;
        Precision p = Precision::Bf16;
        std::string note; // "q 1/8, k whole, v whole": each part's split
        bool sameSplit = true;
        uint32_t split = 0;
    } qkv;
    const bool fuseQkv = !m_m.isMla();
    for (const auto& w : layerMatrices(m_m, layer, m_in.engine)) {
        if (w.component == Component::RoutedExperts)
            continue;
        if (w.component == Component::Indexer) {
            if (m_in.indexer == IndexerMode::Off || (!indexerQueryRuns() && w.name != "indexer.wk"))
                continue;
        }
        Precision p = precisionFor(w.component, matrixKey(w.component, w.name));
        double params = double(w.params()) / w.splitWays(m_in.tp);
        if (fuseQkv && w.component == Component::Attention
            && (w.name == "q_proj" || w.name == "k_proj" || w.name == "v_proj")) {
            qkv.bytes += params * bytesPerParam(p);
            qkv.flops += 2.0 * params * tokens;
            if (qkv.parts++ == 0)
                qkv.p = p;
            const uint32_t ways = w.splitWays(m_in.tp);
            qkv.note += std::string(qkv.note.empty() ? "" : ", ") + w.name.substr(0, 1) + " "
                + (ways > 1 ? "1/" + std::to_string(ways) : "whole");
            qkv.sameSplit = qkv.sameSplit && (qkv.parts == 1 || ways == qkv.split);
            qkv.split = ways;
            if (qkv.parts == 3) {
                Acc& a = acc(draftName ? std::string(draftName) : std::string("attention.qkv_proj"),
                    draftName ? Component::Draft : Component::Attention);
                addKernels(a, count, qkv.bytes, qkv.flops, mathRate(qkv.p));
                if (!draftName && a.item.note.empty())
                    a.item.note = std::string(toString(qkv.p)) + ", q, k and v as one GEMV"
                        + (qkv.sameSplit ? (ways > 1 ? ", 1/" + std::to_string(ways) + " per GPU" : "")
                                         : " (" + qkv.note + " per GPU)");
            }
            continue;
        }
        std::string name = draftName            ? std::string(draftName)
            : w.component == Component::Indexer ? w.name
                                                : std::string(toString(w.component)) + "." + w.name;
        Acc& a = acc(name, draftName ? Component::Draft : w.component);
        addKernels(a, count, params * bytesPerParam(p), 2.0 * params * tokens, mathRate(p));
        if (!draftName && a.item.note.empty())
            a.item.note = std::string(toString(p))
                + (w.splitWays(m_in.tp) == 1 && m_in.tp > 1 ? ", whole on every rank" : "")
                + (w.splitWays(m_in.tp) > 1 ? ", 1/" + std::to_string(w.splitWays(m_in.tp)) + " per GPU" : "");
    }
}

void BudgetBuilder::addRoutedExperts(uint32_t moeLayers, uint64_t tokens, const char* draftName)
{
    if (!m_m.isMoe() || moeLayers == 0)
        return;
    uint32_t moeTp = std::max<uint32_t>(1, m_in.tp / m_in.ep);
    double u, busiest;
    if (!m_in.expertHits.empty()) {
        ExpertLoad load = expertLoadFromHits(m_in.expertHits, m_m.expertsPerToken, tokens, m_in.ep);
        u = load.distinct;
        busiest = load.busiestRank;
    } else {
        u = expectedDistinctExperts(m_m.experts, m_m.expertsPerToken, tokens);
        busiest = expectedBusiestRankExperts(m_m.experts, m_m.expertsPerToken, tokens, m_in.ep);
    }
    double perGpuExperts = m_in.ep > 1 ? busiest : u;
    double expertParams = 3.0 * double(m_m.hidden) * double(m_m.moeIntermediate);
    double tokenShare = m_in.ep > 1 && u > 0 ? busiest / u : 1.0; // share of token-expert pairs on this rank
    Precision p = precisionFor(Component::RoutedExperts, "mlp.experts.gate_up_proj");
    double paramsPerLayer = perGpuExperts * expertParams / moeTp;
    double flopsPerLayer = 2.0 * double(tokens) * m_m.expertsPerToken * tokenShare * expertParams / moeTp;
    Acc& a = acc(draftName ? draftName : "routed_experts", draftName ? Component::Draft : Component::RoutedExperts);
    // Two grouped GEMMs per layer (gate_up, down), 2/3 and 1/3 of the expert's parameters.
    addKernels(a, moeLayers, paramsPerLayer * bytesPerParam(p) * 2 / 3, flopsPerLayer * 2 / 3, mathRate(p));
    addKernels(a, moeLayers, paramsPerLayer * bytesPerParam(p) / 3, flopsPerLayer / 3, mathRate(p));
    if (draftName)
        return;
    m_experts = u;
    m_busiest = busiest;
    a.item.note = std::string(toString(p)) + ", " + fmt("%.2f", u) + " of " + std::to_string(m_m.experts)
        + " experts touched per layer" + (m_in.expertHits.empty() ? " (uniform routing)" : " (measured hits)")
        + (m_in.ep > 1 ? ", EP" + std::to_string(m_in.ep) + ": busiest rank reads " + fmt("%.2f", busiest) + " experts"
                    + (moeTp > 1 ? " split 1/" + std::to_string(moeTp) : "")
                       : (m_in.tp > 1 ? ", each 1/" + std::to_string(m_in.tp) + " per GPU" : ""));
}

// `logitTokens`: the tokens whose logits are computed (every token in decode; in prefill only the last
// of each sequence, as engines sample from it alone).
void BudgetBuilder::addHeadAndEmbedding(uint64_t tokens, uint64_t logitTokens, const char* draftName)
{
    double h = double(m_m.hidden), v = double(m_m.vocab);
    Precision lp = precisionFor(Component::LmHead, "lm_head");
    double params = h * v / m_in.tp;
    Acc& l = acc(draftName ? draftName : "lm_head", draftName ? Component::Draft : Component::LmHead);
    addKernels(l, 1, params * bytesPerParam(lp), 2.0 * params * logitTokens, mathRate(lp));
    if (draftName)
        return;
    l.item.note = std::string(toString(lp)) + (m_in.tp > 1 ? ", vocab split 1/" + std::to_string(m_in.tp) : "")
        + (m_m.tiedEmbeddings ? ", tied to the embedding" : "");
    Precision ep = precisionFor(Component::Embedding, "model.embed_tokens");
    Acc& e = acc("embedding", Component::Embedding);
    addKernels(e, 1, double(tokens) * h * bytesPerParam(ep) / m_in.tp, 0, mathRate(ep));
    e.item.note = "one row per token (vocab-parallel)";
}

void BudgetBuilder::addKvCache(uint32_t layers, uint64_t tokens, const char* draftName)
{
    Precision kp = kvPrecision(m_in);
    double kb = bytesPerParam(kp), ctx = double(m_in.context), B = m_in.batch;
    double headsPerGpu = double(m_m.heads) / m_in.tp;
    double perQuery = double(tokens) / B; // query tokens per sequence (draft tokens verified together)
    // Query-row pairs of one layer: each query token scores every cached row it may see. Prefill is
    // causal: the i-th prompt token of a sequence also sees the i before it and itself, P (P + 1) / 2
    // pairs per sequence on top of the cached context's; its rows are written once.
    const bool prefill = m_in.phase == BudgetPhase::Prefill && !draftName;
    double bytesPerRow, flopsPerPair, rows;
    std::string note;
    if (m_m.isMla()) {
        rows = m_m.indexHeads > 0 ? std::min(ctx, double(m_m.indexTopk)) : ctx;
        bytesPerRow = double(m_m.kvLoraRank + m_m.qkRopeHeadDim) * kb;
        flopsPerPair = 2.0 * (2.0 * m_m.kvLoraRank + m_m.qkRopeHeadDim);
        note = "MLA latent " + fmt("%.0f", bytesPerRow * m_m.layers) + " B/token, read whole by every rank"
            + (m_m.indexHeads > 0 ? ", DSA: min(context, top-k) rows" : "");
    } else {
        rows = m_m.slidingWindow > 0 ? std::min(ctx, double(m_m.slidingWindow)) : ctx;
        double share = std::min<double>(m_in.tp, m_m.kvHeads);
        bytesPerRow = 2.0 * m_m.kvHeads * m_m.headDim * kb / share;
        flopsPerPair = 4.0 * m_m.headDim;
        note = "GQA K+V " + fmt("%.0f", 2.0 * m_m.kvHeads * m_m.headDim * kb * m_m.layers) + " B/token, 1/"
            + fmt("%.0f", share) + " per GPU";
    }
    double bytesPerLayer = B * rows * bytesPerRow;
    double pairs = B * perQuery * rows;
    if (prefill) {
        bytesPerLayer += double(tokens) * bytesPerRow; // the prompt's rows, written
        pairs += B * perQuery * (perQuery + 1) / 2;
        note += ", causal over " + fmt("%.0f", perQuery) + " prompt tokens per sequence";
    }
    double flopsPerLayer = headsPerGpu * pairs * flopsPerPair;
    Acc& a = acc(draftName ? draftName : "kv_cache", draftName ? Component::Draft : Component::KvCache);
    addKernels(a, layers, bytesPerLayer, flopsPerLayer, MathRate::Bf16);
    if (!draftName)
        a.item.note = std::string(toString(kp)) + ", " + note;
}

void BudgetBuilder::addIndexerScan(uint32_t indexerLayers, uint64_t tokens, const char* draftName)
{
    if (m_m.indexHeads == 0 || indexerLayers == 0 || !indexerQueryRuns())
        return;
    // FP8 index keys with one FP32 scale per 128 values (132 B per token for index_head_dim 128).
    double keyBytes = m_m.indexHeadDim + 4.0 * std::ceil(m_m.indexHeadDim / 128.0);
    double ctx = double(m_in.context);
    Acc& a = acc(draftName ? draftName : "indexer.key_scan", draftName ? Component::Draft : Component::Indexer);
    addKernels(a, indexerLayers, m_in.batch * ctx * keyBytes,
        double(tokens) * m_m.indexHeads * ctx * 2.0 * m_m.indexHeadDim, MathRate::Fp8);
    if (!draftName)
        a.item.note = fmt("%.0f", keyBytes) + " B FP8 key per token per layer, all context, every rank";
}

double BudgetBuilder::collectiveUs(double bytes) const
{
    if (m_in.allreduceUs >= 0)
        return m_in.allreduceUs;
    if (const AllReduceTable* t = m_hw.allreduceTable(m_in.allreduceLibrary))
        return allreduceUs(*t, bytes, m_in.tp, m_hw.interconnectGbs);
    AllReduceTable formula; // two-shot: 2 alpha + 2 (N-1)/N M / B
    formula.alphaUs = 2 * m_hw.interconnectLatencyUs;
    return allreduceUs(formula, bytes, m_in.tp, m_hw.interconnectGbs);
}

void BudgetBuilder::addCollectives(uint64_t tokens)
{
    if (m_in.tp <= 1)
        return;
    double act = double(tokens) * m_m.hidden * 2.0; // BF16 activations
    auto add = [&](const char* name, double count, double bytes, const std::string& note) {
        Acc& a = acc(name, Component::Collectives);
        double us = collectiveUs(bytes);
        a.item.bytes += count * bytes;
        a.item.kernels += count;
        a.memUs += count * us;
        a.achUs += count * us;
        a.item.note = note + ", " + fmt("%.1f", us) + " us each";
        m_collectives += uint32_t(count);
    };
    add("collectives.allreduce", 2.0 * m_m.layers, act,
        std::to_string(2 * m_m.layers) + " AllReduce (attention out, FFN out)");
    bool edge = m_in.edgeCollectives.value_or(m_in.engine == EngineReplication::Sglang);
    if (edge) {
        add("collectives.embedding", 1, act, "vocab-parallel embedding AllReduce");
        add("collectives.logits", 1, double(logitTokens(tokens)) * m_m.vocab * 2.0, "logits all-gather");
    }
}

void BudgetBuilder::addDraft()
{
    if (m_in.draftTokens == 0)
        return;
    if (m_m.mtpLayers == 0) {
        m_notes.push_back(
            "speculative decoding: the config has no MTP layers, so the draft model's cost is not modelled (0)");
        return;
    }
    // Each draft pass runs the MTP block (eh_proj 2h->h, one MoE decoder layer, shared lm_head) on
    // `batch` tokens, once per drafted token.
    uint64_t tokens = m_in.batch;
    const char* name = "draft (MTP)";
    uint32_t moeLayer = 0;
    while (moeLayer + 1 < m_m.layers && !m_m.isMoeLayer(moeLayer))
        ++moeLayer;
    for (uint32_t d = 0; d < m_in.draftTokens; ++d) {
        for (uint32_t i = 0; i < m_m.mtpLayers; ++i) {
            addLayerWeights(moeLayer, 1, tokens, name);
            if (m_m.isMoeLayer(moeLayer))
                addRoutedExperts(1, tokens, name);
            addKvCache(1, tokens, name);
            double eh = 2.0 * m_m.hidden * m_m.hidden / m_in.tp;
            addKernels(acc(name, Component::Draft), 1, eh * 2.0, 2.0 * eh * tokens, MathRate::Bf16);
        }
        addHeadAndEmbedding(tokens, tokens, name);
    }
    Acc& a = acc(name, Component::Draft);
    a.item.note = std::to_string(m_in.draftTokens) + " draft pass(es) of " + std::to_string(m_m.mtpLayers)
        + " MTP layer(s) + lm_head";
    if (m_in.tp > 1) {
        double us = collectiveUs(double(tokens) * m_m.hidden * 2.0);
        double count = double(m_in.draftTokens) * m_m.mtpLayers * 2;
        Acc& c = acc("collectives.draft", Component::Collectives);
        c.item.kernels += count;
        c.memUs += count * us;
        c.achUs += count * us;
        c.item.note = fmt("%.0f", count) + " AllReduce in the draft passes";
        m_collectives += uint32_t(count);
    }
}

void BudgetBuilder::addLaunchFloor(Budget& b)
{
    const double drafts = m_in.phase == BudgetPhase::Prefill ? 0 : double(m_in.draftTokens);
    double kernels = double(m_in.extraKernelsPerLayer) * (m_m.layers + drafts * m_m.mtpLayers);
    double gpuUs = 0;
    for (const auto& it : b.items) {
        kernels += it.kernels;
        gpuUs += it.achievableMs * 1e3;
    }
    b.kernelsPerStep = kernels;
    BudgetItem l;
    l.name = "launch/host floor";
    l.component = Component::LaunchHost;
    l.bound = "latency";
    l.kernels = 0;
    double us;
    if (m_in.cudaGraphs) {
        us = m_hw.graphFixedUs + m_hw.graphPerNodeUs * kernels;
        l.note = "CUDA graph replay: " + fmt("%.1f", m_hw.graphFixedUs) + " us + " + fmt("%.2f", m_hw.graphPerNodeUs)
            + " us x " + fmt("%.0f", kernels) + " kernels";
    } else {
        double host = m_hw.launchEagerUs * kernels;
        us = std::max(0.0, host - gpuUs);
        l.note = "eager: " + fmt("%.0f", kernels) + " launches x " + fmt("%.1f", m_hw.launchEagerUs)
            + " us of CPU, minus the GPU time they hide behind";
    }
    l.achievableMs = us / 1e3;
    b.items.push_back(l);
}

Budget BudgetBuilder::run()
{
    m_items.reserve(32);
    const bool prefill = m_in.phase == BudgetPhase::Prefill;
    uint64_t tokens = prefill ? m_in.promptTokens : uint64_t(m_in.batch) * (1 + m_in.draftTokens);
    // Layers grouped by shape: (MoE?, indexer?) -> first layer and count.
    struct Group {
        uint32_t first = 0, count = 0;
    } groups[4];
    for (uint32_t l = 0; l < m_m.layers; ++l) {
        Group& g = groups[(m_m.isMoeLayer(l) ? 2 : 0) + (m_m.hasIndexer(l) ? 1 : 0)];
        if (g.count++ == 0)
            g.first = l;
    }
    for (const auto& g : groups)
        if (g.count > 0)
            addLayerWeights(g.first, g.count, tokens, nullptr);
    addRoutedExperts(m_m.moeLayerCount(), tokens, nullptr);
    addHeadAndEmbedding(tokens, logitTokens(tokens), nullptr);
    addIndexerScan(m_m.indexerLayerCount(), tokens, nullptr);
    addKvCache(m_m.layers, tokens, nullptr);
    addCollectives(tokens);
    if (!prefill)
        addDraft();

    Budget b;
    b.items.reserve(m_items.size() + 1);
    for (auto& a : m_items) {
        BudgetItem it = std::move(a.item);
        bool collective = it.component == Component::Collectives;
        it.idealMs = (collective ? a.memUs : std::max(a.memUs, a.computeUs)) / 1e3;
        it.achievableMs = a.achUs / 1e3;
        it.bound = collective ? "latency" : (a.computeUs > a.memUs ? "compute" : "memory");
        if (isWeight(it))
            b.weightBytesPerGpu += it.bytes;
        b.items.push_back(std::move(it));
    }
    addLaunchFloor(b);
    for (const auto& it : b.items) {
        b.idealMs += it.idealMs;
        b.achievableMs += it.achievableMs;
    }
    double accept = m_in.acceptanceLength > 0 ? m_in.acceptanceLength : 1.0;
    b.tokensPerStep = prefill ? double(m_in.promptTokens) : m_in.batch * accept;
    b.tokPerSecIdeal = b.idealMs > 0 ? b.tokensPerStep * 1e3 / b.idealMs : 0;
    b.tokPerSecAchievable = b.achievableMs > 0 ? b.tokensPerStep * 1e3 / b.achievableMs : 0;
    b.expertsPerLayer = m_experts;
    b.busiestRankExperts = m_in.ep > 1 ? m_busiest : 0;
    b.collectivesPerStep = m_collectives;
    describe(b);
    return b;
}

} // namespace

void BudgetBuilder::describe(Budget& b) const
{
    b.assumptions = budgetAssumptions(m_in, b);
    for (const auto& n : m_notes)
        b.assumptions.push_back(n);
}

Expected<Budget> computeBudget(const BudgetInputs& in)
{
    Status st = validateBudgetInputs(in);
    if (!st.isOk())
        return st;
    return BudgetBuilder(in).run();
}

double Budget::componentMs(Component c, bool achievable) const
{
    double ms = 0;
    for (const auto& it : items)
        if (it.component == c)
            ms += achievable ? it.achievableMs : it.idealMs;
    return ms;
}

double Budget::componentBytes(Component c) const
{
    double bytes = 0;
    for (const auto& it : items)
        if (it.component == c)
            bytes += it.bytes;
    return bytes;
}

} // namespace gapscope::model
