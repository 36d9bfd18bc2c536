// SPDX-License-Identifier: MIT
// The budget's inputs in words: validation, the spelled-out assumption list, and the small parsers
// shared by the CLI, the trace settings and the viewer.
#include "model/budget/budget.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace gapscope::model {

namespace {

std::string num(double v, const char* f = "%.4g")
{
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

std::string describeModel(const ModelConfig& m)
{
    std::string s = "model " + m.name + " (" + (m.modelType.empty() ? "?" : m.modelType)
        + "): " + std::to_string(m.layers) + " layers";
    if (m.isMoe())
        s += " (" + std::to_string(m.layers - m.moeLayerCount()) + " dense, " + std::to_string(m.moeLayerCount())
            + " MoE: " + std::to_string(m.experts) + " experts, top-" + std::to_string(m.expertsPerToken)
            + (m.sharedIntermediate ? ", shared expert " + std::to_string(m.sharedIntermediate) + " wide" : "") + ")";
    s += m.isMla() ? ", MLA (kv_lora " + std::to_string(m.kvLoraRank) + ")"
                   : ", GQA " + std::to_string(m.heads) + "/" + std::to_string(m.kvHeads) + " heads of "
            + std::to_string(m.headDim);
    if (m.indexHeads)
        s += ", DSA indexer (" + std::to_string(m.indexHeads) + " heads, top-k " + std::to_string(m.indexTopk) + ", "
            + std::to_string(m.indexerLayerCount()) + " layers)";
    if (m.mtpLayers)
        s += ", " + std::to_string(m.mtpLayers) + " MTP layer(s) (run only for speculative decoding)";
    return s;
}

std::string describeParallel(const BudgetInputs& in)
{
    std::string s = "parallelism: TP " + std::to_string(in.tp) + ", EP " + std::to_string(in.ep)
        + "; the busiest GPU sets the step time";
    if (in.engine == EngineReplication::Sglang)
        s += "; engine sglang: " + std::string(in.model.isMla() ? "q_a_proj, kv_a_proj_with_mqa, " : "") + "router"
            + (in.model.indexHeads ? " and DSA indexer" : "") + " replicated on every rank, the rest split 1/TP";
    else
        s += "; engine none: every weight split 1/TP (idealised)";
    return s;
}

std::string describePrecision(const BudgetInputs& in)
{
    std::string spec = precisionSpec(in);
    std::string s = "precision: " + (spec.empty() ? std::string("none given") : spec);
    if (!in.allPrecision && !in.model.quantFormat.empty())
        return s + "; other decoder linear layers as stored in the checkpoint (" + in.model.quantFormat
            + "), router, lm_head and embedding BF16 unless given";
    if (!in.allPrecision)
        return s + (spec.empty() ? ": everything BF16" : "; everything else BF16");
    return s;
}

std::string describeIndexer(const BudgetInputs& in, const Budget& b)
{
    const ModelConfig& m = in.model;
    if (!m.indexHeads)
        return {};
    std::string mode = toString(in.indexer);
    if (in.indexer == IndexerMode::Off)
        return "DSA indexer off: its projections and key scan are not counted";
    if (in.indexer == IndexerMode::On)
        return "DSA indexer on: projections and a scan of all " + std::to_string(in.context)
            + " index keys every step (what SGLang and vLLM do in decode)";
    if (in.context > m.indexTopk)
        return "DSA indexer auto: context " + std::to_string(in.context) + " > top-k " + std::to_string(m.indexTopk)
            + ": projections and key scan counted";
    return "DSA indexer auto: context " + std::to_string(in.context) + " <= top-k " + std::to_string(m.indexTopk)
        + " selects every row, so only the key projection (wk, to fill the index-key cache) is counted; SGLang and "
          "vLLM run the whole indexer in every decode step (--indexer on)";
}

std::string describeCollectives(const BudgetInputs& in, const Budget& b)
{
    if (in.tp <= 1)
        return "collectives: none (TP 1)";
    std::string s = "collectives: " + std::to_string(b.collectivesPerStep) + " per step (2 per layer"
        + (in.edgeCollectives.value_or(in.engine == EngineReplication::Sglang)
                ? " + embedding AllReduce + logits gather"
                : "")
        + "), latency-bound, ";
    if (in.allreduceUs >= 0)
        return s + num(in.allreduceUs) + " us each (given)";
    const AllReduceTable* t = in.hardware.allreduceTable(in.allreduceLibrary);
    if (!t)
        return s + "two-shot formula from the interconnect latency (estimate: no table)";
    s += "from the " + t->library + " table";
    if (t->ranks)
        s += " (measured at " + std::to_string(t->ranks) + " ranks"
            + (t->ranks != in.tp ? ", used as is for " + std::to_string(in.tp) : "") + ")";
    if (!t->source.empty())
        s += "; " + t->source;
    return s;
}

std::string describeAchievable(const HardwareProfile& hw, const BudgetInputs& in)
{
    std::string s = "achievable column: ";
    if (hw.calibrated && hw.hbmReadGbs > 0)
        s += "measured " + num(hw.hbmReadGbs) + " GB/s";
    else
        s += num(hw.memoryBandwidthGbs * hw.memoryEfficiency) + " GB/s (" + num(hw.memoryEfficiency * 100, "%.0f")
            + "% of peak, estimate)";
    s += hw.gemv.empty() ? ", kernel floor " + num(hw.kernelFloorUs) + " us" + (hw.calibrated ? "" : " (estimate)")
                         : ", GEMV time from the measured curve (" + std::to_string(hw.gemv.size()) + " points)";
    s += ", compute at " + num(hw.computeEfficiency * 100, "%.0f") + "% of peak";
    s += in.cudaGraphs ? ", CUDA graphs on" : ", eager launches (" + num(hw.launchEagerUs) + " us each)";
    return s;
}

} // namespace

std::vector<std::string> budgetAssumptions(const BudgetInputs& in, const Budget& b)
{
    const ModelConfig& m = in.model;
    const HardwareProfile& hw = in.hardware;
    std::vector<std::string> a;
    a.push_back(describeModel(m));
    a.push_back("hardware " + hw.name + ": " + num(hw.memoryBandwidthGbs) + " GB/s, BF16/FP8/FP4 " + num(hw.bf16Tflops)
        + "/" + num(hw.fp8Tflops) + "/" + num(hw.fp4Tflops) + " dense TFLOPS (ideal column: these peaks)"
        + (hw.interconnectKind.empty() ? "" : ", " + hw.interconnectKind + " " + num(hw.interconnectGbs) + " GB/s"));
    a.push_back(describeParallel(in));
    a.push_back(describePrecision(in));
    if (in.phase == BudgetPhase::Prefill)
        a.push_back("prefill: " + std::to_string(in.promptTokens) + " prompt tokens of " + std::to_string(in.batch)
            + " sequence(s) in one forward: every linear layer does 2 x parameters x prompt tokens FLOPs at the "
              "dense peak of its precision and reads its weights once, each kernel taking the larger of the two; "
              "attention is causal over the prompt; lm_head and the logits gather run on the last token of each "
              "sequence");
    a.push_back("batch " + std::to_string(in.batch) + ", context " + std::to_string(in.context) + " tokens per sequence"
        + (m.isMoe() ? "; " + num(b.expertsPerLayer, "%.2f") + " routed experts touched per MoE layer"
                    + (in.expertHits.empty() ? " (uniform routing: U(B) = E(1-(1-k/E)^B))"
                                             : " (from the measured hit histogram " + in.expertHitsSource + ")")
                     : ""));
    if (std::string s = describeIndexer(in, b); !s.empty())
        a.push_back(s);
    Precision kv = Precision::Bf16;
    if (in.kvCachePrecision)
        kv = *in.kvCachePrecision;
    else if (!m.kvCacheFormat.empty())
        parsePrecision(m.kvCacheFormat, kv);
    a.push_back("KV cache " + std::string(toString(kv))
        + (in.kvCachePrecision            ? " (given)"
                : m.kvCacheFormat.empty() ? ""
                                          : " (as the checkpoint asks)")
        + ": read once per sequence per layer; the new token's write is not counted");
    a.push_back(describeCollectives(in, b));
    if (in.draftTokens > 0)
        a.push_back("speculative decoding: " + std::to_string(in.draftTokens) + " draft tokens verified per step, "
            + (in.acceptanceLength > 0 ? "acceptance length " + num(in.acceptanceLength) + " tokens/step"
                                       : "acceptance length not given: 1 token/step (no gain)"));
    a.push_back("components run back to back: no overlap of communication and compute is assumed");
    a.push_back("ideal column: no kernel floors and no launch cost; activations, norms, rope, residual adds and "
                "sampling are not counted (small at decode)");
    a.push_back(describeAchievable(hw, in) + "; " + num(b.kernelsPerStep, "%.0f")
        + " kernels per step (the items' kernels + " + std::to_string(in.extraKernelsPerLayer)
        + " small kernels per layer" + (m.isMla() ? "" : "; GQA q, k and v projections as one GEMV") + ")");
    for (const auto& n : m.notes)
        a.push_back("config: " + n);
    for (const auto& n : hw.notes)
        a.push_back("hardware: " + n);
    return a;
}

Status validateBudgetInputs(const BudgetInputs& in)
{
    const ModelConfig& m = in.model;
    if (m.layers == 0 || m.hidden == 0 || m.heads == 0 || m.vocab == 0)
        return Status::error("the model config is empty (layers, hidden size, heads, vocabulary)");
    if (in.hardware.memoryBandwidthGbs <= 0 || in.hardware.bf16Tflops <= 0)
        return Status::error("hardware '" + in.hardware.name + "' has no memory bandwidth or BF16 TFLOPS");
    if (in.tp < 1 || in.tp > 4096)
        return Status::error("--tp must be in [1, 4096], got " + std::to_string(in.tp));
    if (in.ep < 1 || in.tp % in.ep != 0)
        return Status::error(
            "--ep must divide --tp (EP " + std::to_string(in.ep) + ", TP " + std::to_string(in.tp) + ")");
    if (in.ep > 1 && (!m.isMoe() || m.experts < in.ep))
        return Status::error("--ep " + std::to_string(in.ep) + " needs a MoE model with at least that many experts");
    if (in.batch < 1 || in.batch > 1000000)
        return Status::error("--batch must be in [1, 1000000], got " + std::to_string(in.batch));
    if (in.context > (uint64_t(1) << 32))
        return Status::error("--context too large: " + std::to_string(in.context));
    if (in.draftTokens > 64)
        return Status::error("--draft-tokens must be at most 64");
    if (in.acceptanceLength < 0
        || (in.acceptanceLength > 0 && (in.acceptanceLength < 1 || in.acceptanceLength > in.draftTokens + 1)))
        return Status::error(
            "--accept-len must be in [1, draft tokens + 1] (" + std::to_string(in.draftTokens + 1) + ")");
    if (in.phase == BudgetPhase::Prefill && (in.promptTokens == 0 || in.promptTokens > (uint64_t(1) << 32)))
        return Status::error("a prefill budget needs the prompt tokens of the step (1 to 2^32), got "
            + std::to_string(in.promptTokens));
    if (in.extraKernelsPerLayer > 10000)
        return Status::error("extra kernels per layer must be at most 10000");
    for (const auto& h : in.expertHits)
        if (h.size() != m.experts)
            return Status::error("the expert-hit histogram has " + std::to_string(h.size()) + " entries, the model "
                + std::to_string(m.experts) + " routed experts");
    return Status::ok();
}

const char* toString(BudgetPhase p)
{
    return p == BudgetPhase::Prefill ? "prefill" : "decode";
}

const char* toString(IndexerMode m)
{
    switch (m) {
    case IndexerMode::Auto:
        return "auto";
    case IndexerMode::On:
        return "on";
    case IndexerMode::Off:
        return "off";
    }
    return "auto";
}

bool parseIndexerMode(const std::string& s, IndexerMode& out)
{
    for (IndexerMode m : { IndexerMode::Auto, IndexerMode::On, IndexerMode::Off })
        if (s == toString(m)) {
            out = m;
            return true;
        }
    return false;
}

const char* toString(EngineReplication e)
{
    return e == EngineReplication::Sglang ? "sglang" : "none";
}

bool parseEngine(const std::string& s, EngineReplication& out)
{
    if (s == "sglang" || s == "vllm") {
        out = EngineReplication::Sglang;
        return true;
    }
    if (s == "none") {
        out = EngineReplication::None;
        return true;
    }
    return false;
}

Status applyPrecisionSpec(const std::string& spec, BudgetInputs& in)
{
    std::stringstream ss(spec);
    std::string entry;
    while (std::getline(ss, entry, ',')) {
        if (entry.empty())
            continue;
        auto eq = entry.find('=');
        if (eq == std::string::npos)
            return Status::error("--precision: '" + entry + "' is not COMPONENT=FORMAT");
        std::string comp = entry.substr(0, eq), format = entry.substr(eq + 1);
        Precision p;
        if (!parsePrecision(format, p))
            return Status::error("--precision: unknown format '" + format
                + "' (bf16, fp16, fp8, fp8-block128, nvfp4, mxfp4, int4-g128)");
        Component c;
        if (comp == "all") {
            in.allPrecision = p;
        } else if (comp == toString(Component::KvCache) || comp == "kv") {
            in.kvCachePrecision = p;
        } else if (parseComponent(comp, c) && componentInfo(c).hasPrecision) {
            in.precision[c] = p;
        } else {
            return Status::error(
                "--precision: unknown component '" + comp + "' (all, " + precisionComponentList() + ")");
        }
    }
    return Status::ok();
}

std::string precisionSpec(const BudgetInputs& in)
{
    std::string s;
    auto add = [&s](const std::string& c, Precision p) { s += (s.empty() ? "" : ",") + c + "=" + toString(p); };
    if (in.allPrecision)
        add("all", *in.allPrecision);
    for (const auto& [c, p] : in.precision)
        add(toString(c), p);
    if (in.kvCachePrecision)
        add(toString(Component::KvCache), *in.kvCachePrecision);
    return s;
}

} // namespace gapscope::model
