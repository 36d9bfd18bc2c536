// SPDX-License-Identifier: MIT
#include "budgetoptions.h"

#include "model/budget/moeexperts.h"

namespace gapscope::cli {

void BudgetOptions::addTo(ArgParser& p)
{
    p.option("--model", "FILE|NAME", "HF config.json (or its folder), or a preset (budget --list)", m_model);
    p.option("--hw", "FILE|NAME", "hardware preset, preset JSON or gapscope-calibrate profile", m_hw);
    p.option("--tp", "N", "tensor-parallel ranks (default 1)", m_tp);
    p.option("--ep", "N", "expert-parallel ranks inside the TP group (default 1)", m_ep);
    p.option("--batch", "N", "sequences decoded together (default 1)", m_batch);
    p.option("--context", "N", "tokens already in each sequence's KV cache (default 0)", m_context);
    p.option("--precision", "C=F,...",
        "formats per component: all, " + model::precisionComponentList()
            + " = bf16|fp16|fp8|fp8-block128|nvfp4|mxfp4|int4-g128",
        m_precision);
    p.option("--engine", "sglang|none", "which tensors every rank reads whole (default sglang)", m_engine);
    p.option("--allreduce-us", "X", "fixed latency per collective in us (default: the hardware table)", m_allreduceUs);
    p.option("--allreduce-lib", "NAME", "which AllReduce table of the hardware profile (default: its first)",
        m_allreduceLib);
    p.option("--graphs", "on|off", "CUDA graphs (default on) or eager launches", m_graphs);
    p.option("--draft-tokens", "N", "speculative decoding: tokens drafted per step (default 0)", m_draftTokens);
    p.option("--accept-len", "X", "speculative decoding: tokens accepted per step incl. the bonus token", m_acceptLen);
    p.option("--prompt-tokens", "N",
        "prefill budget: prompt tokens of a prefill step whose annotation does not say (SGLang toks=, vLLM context "
        "tokens say it)",
        m_promptTokens);
    p.option("--expert-hits", "FILE",
        "measured expert-hit histogram JSON ({\"counts\": [...]} or {\"layers\": [[...]]})", m_expertHits);
    p.option(
        "--indexer", "auto|on|off", "DSA indexer: auto skips it while context <= index_topk (default auto)", m_indexer);
    p.option("--edge-collectives", "on|off", "count the embedding AllReduce and logits gather (default: on for sglang)",
        m_edge);
    p.option("--extra-kernels", "N", "small kernels per layer for the launch floor (default 8)", m_extraKernels);
    p.option("--hw-set", "FIGURE=V,...",
        "edit hardware figures: memory_bandwidth_gbs, bf16_tflops, fp8_tflops, fp4_tflops, memory_efficiency, "
        "compute_efficiency, kernel_floor_us, eager_us, graph_fixed_us, graph_per_node_us, interconnect_gbs, "
        "hbm_read_gbs",
        m_hwSet);
}

Status BudgetOptions::applyNumbers(model::BudgetInputs& in) const
{
    auto range = [](const char* flag, int64_t v, int64_t lo, int64_t hi) {
        return v >= lo && v <= hi ? Status::ok()
                                  : Status::error(std::string(flag) + " must be in [" + std::to_string(lo) + ", "
                                      + std::to_string(hi) + "], got " + std::to_string(v));
    };
    for (Status s : { range("--tp", m_tp, 1, 4096), range("--ep", m_ep, 1, 4096), range("--batch", m_batch, 1, 1000000),
             range("--context", m_context, 0, int64_t(1) << 32), range("--draft-tokens", m_draftTokens, 0, 64),
             range("--extra-kernels", m_extraKernels, 0, 10000),
             range("--prompt-tokens", m_promptTokens, 0, int64_t(UINT32_MAX)) })
        if (!s.isOk())
            return s;
    in.tp = uint32_t(m_tp);
    in.ep = uint32_t(m_ep);
    in.batch = uint32_t(m_batch);
    in.context = uint64_t(m_context);
    in.draftTokens = uint32_t(m_draftTokens);
    in.promptTokens = uint64_t(m_promptTokens);
    in.extraKernelsPerLayer = uint32_t(m_extraKernels);
    in.acceptanceLength = m_acceptLen;
    if (m_allreduceUs >= 0 && m_allreduceUs > 1e6)
        return Status::error("--allreduce-us must be at most 1e6");
    in.allreduceUs = m_allreduceUs >= 0 ? m_allreduceUs : -1;
    return Status::ok();
}

Status BudgetOptions::applyChoices(model::BudgetInputs& in) const
{
    if (!model::parseEngine(m_engine, in.engine))
        return Status::error("--engine must be sglang or none, got '" + m_engine + "'");
    if (!model::parseIndexerMode(m_indexer, in.indexer))
        return Status::error("--indexer must be auto, on or off, got '" + m_indexer + "'");
    if (m_graphs != "on" && m_graphs != "off")
        return Status::error("--graphs must be on or off, got '" + m_graphs + "'");
    in.cudaGraphs = m_graphs == "on";
    if (!m_edge.empty()) {
        if (m_edge != "on" && m_edge != "off")
            return Status::error("--edge-collectives must be on or off, got '" + m_edge + "'");
        in.edgeCollectives = m_edge == "on";
    }
    if (!m_allreduceLib.empty()) {
        if (!in.hardware.allreduceTable(m_allreduceLib)) {
            std::string libs;
            for (const auto& t : in.hardware.allreduce)
                libs += (libs.empty() ? "" : ", ") + t.library;
            return Status::error("--allreduce-lib: hardware '" + in.hardware.name + "' has no '" + m_allreduceLib
                + "' table (" + (libs.empty() ? std::string("none") : libs) + ")");
        }
        in.allreduceLibrary = m_allreduceLib;
    }
    return model::applyPrecisionSpec(m_precision, in);
}

Expected<model::BudgetInputs> BudgetOptions::resolve() const
{
    if (m_model.empty() || m_hw.empty())
        return Status::error("--model and --hw are required (see 'gapscope-cli budget --list' for presets)");
    model::BudgetInputs in;
    auto m = model::loadModelConfig(m_model);
    if (!m)
        return m.status();
    in.model = std::move(m.value());
    in.modelSource = m_model;
    auto hw = model::loadHardwareProfile(m_hw);
    if (!hw)
        return hw.status();
    in.hardware = std::move(hw.value());
    in.hardwareSource = m_hw;
    Status st = model::applyHardwareOverrides(in.hardware, m_hwSet);
    in.hardwareOverrides = m_hwSet;
    if (st.isOk())
        st = applyNumbers(in);
    if (st.isOk())
        st = applyChoices(in);
    if (!st.isOk())
        return st;
    if (!m_expertHits.empty()) {
        auto doc = json::parseFile(m_expertHits);
        if (!doc)
            return doc.status();
        auto hits = model::parseExpertHits(doc.value(), in.model.experts, m_expertHits);
        if (!hits)
            return hits.status();
        in.expertHits = std::move(hits.value());
        in.expertHitsSource = m_expertHits;
    }
    st = model::validateBudgetInputs(in);
    if (!st.isOk())
        return st;
    return in;
}

} // namespace gapscope::cli
