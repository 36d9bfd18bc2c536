// SPDX-License-Identifier: MIT
#include "model/budget/budgetsettings.h"

#include "model/budget/moeexperts.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace gapscope::model {

namespace {

json::Value hitsToJson(const std::vector<std::vector<double>>& hits)
{
    json::Value layers = json::Value::array();
    for (const auto& h : hits) {
        json::Value l = json::Value::array();
        for (double x : h)
            l.push(x);
        layers.push(std::move(l));
    }
    json::Value doc = json::Value::object();
    doc.set("layers", std::move(layers));
    return doc;
}

std::string extra(const BudgetSettings& s, const char* key)
{
    auto it = s.extra.find(key);
    return it == s.extra.end() ? std::string() : it->second;
}

Status readSources(const BudgetSettings& s, BudgetInputs& in)
{
    in.modelSource = s.model;
    in.hardwareSource = s.hardware;
    if (!s.modelConfigJson.empty()) {
        auto doc = json::parse(s.modelConfigJson, "budget settings: model config");
        if (!doc)
            return doc.status();
        auto m = parseModelConfig(doc.value(), s.model);
        if (!m)
            return m.status();
        in.model = std::move(m.value());
    } else {
        auto m = loadModelConfig(s.model);
        if (!m)
            return m.status();
        in.model = std::move(m.value());
    }
    if (!s.hardwareJson.empty()) {
        auto doc = json::parse(s.hardwareJson, "budget settings: hardware");
        if (!doc)
            return doc.status();
        auto hw = parseHardwareProfile(doc.value(), s.hardware);
        if (!hw)
            return hw.status();
        in.hardware = std::move(hw.value());
    } else {
        auto hw = loadHardwareProfile(s.hardware);
        if (!hw)
            return hw.status();
        in.hardware = std::move(hw.value());
    }
    in.hardwareOverrides = extra(s, "hw_set");
    if (!in.hardwareOverrides.empty())
        return applyHardwareOverrides(in.hardware, in.hardwareOverrides).withContext("budget settings");
    return Status::ok();
}

Status readExtras(const BudgetSettings& s, BudgetInputs& in)
{
    if (std::string v = extra(s, "indexer"); !v.empty() && !parseIndexerMode(v, in.indexer))
        return Status::error("budget settings: indexer '" + v + "' is not auto, on or off");
    in.allreduceLibrary = extra(s, "allreduce_lib");
    if (std::string v = extra(s, "edge_collectives"); !v.empty())
        in.edgeCollectives = v == "1" || v == "true";
    if (std::string v = extra(s, "extra_kernels_per_layer"); !v.empty())
        in.extraKernelsPerLayer = uint32_t(std::strtoul(v.c_str(), nullptr, 10));
    in.expertHitsSource = extra(s, "expert_hits_source");
    if (std::string v = extra(s, "expert_hits"); !v.empty()) {
        auto doc = json::parse(v, "budget settings: expert_hits");
        if (!doc)
            return doc.status();
        auto hits = parseExpertHits(doc.value(), in.model.experts, "budget settings: expert_hits");
        if (!hits)
            return hits.status();
        in.expertHits = std::move(hits.value());
    }
    return Status::ok();
}

} // namespace

BudgetSettings toBudgetSettings(const BudgetInputs& in)
{
    BudgetSettings out;
    out.model = in.modelSource.empty() ? in.model.name : in.modelSource;
    out.modelConfigJson = in.model.sourceJson;
    out.hardware = in.hardwareSource.empty() ? in.hardware.name : in.hardwareSource;
    out.hardwareJson = in.hardware.sourceJson;
    auto& prec = out.precision;
    if (in.allPrecision)
        prec["all"] = toString(*in.allPrecision);
    for (const auto& [c, p] : in.precision)
        prec[toString(c)] = toString(p);
    if (in.kvCachePrecision)
        prec[toString(Component::KvCache)] = toString(*in.kvCachePrecision);
    out.tp = in.tp;
    out.ep = in.ep;
    out.batch = in.batch;
    out.context = in.context;
    out.engine = toString(in.engine);
    out.allreduceUs = in.allreduceUs;
    out.cudaGraphs = in.cudaGraphs;
    out.draftTokens = in.draftTokens;
    out.acceptanceLength = in.acceptanceLength;
    out.promptTokens = uint32_t(std::min<uint64_t>(in.promptTokens, UINT32_MAX));
    auto& extra = out.extra;
    extra["indexer"] = toString(in.indexer);
    extra["allreduce_fixed"] = in.allreduceUs >= 0 ? "1" : "0";
    if (!in.allreduceLibrary.empty())
        extra["allreduce_lib"] = in.allreduceLibrary;
    if (in.edgeCollectives)
        extra["edge_collectives"] = *in.edgeCollectives ? "1" : "0";
    extra["extra_kernels_per_layer"] = std::to_string(in.extraKernelsPerLayer);
    if (!in.hardwareOverrides.empty())
        extra["hw_set"] = in.hardwareOverrides;
    if (!in.expertHits.empty()) {
        extra["expert_hits"] = json::write(hitsToJson(in.expertHits), -1);
        extra["expert_hits_source"] = in.expertHitsSource;
    }
    return out;
}

Expected<BudgetInputs> fromBudgetSettings(const BudgetSettings& s)
{
    BudgetInputs in;
    Status st = readSources(s, in);
    if (!st.isOk())
        return st;
    std::string spec;
    for (const auto& [c, p] : s.precision)
        spec += (spec.empty() ? "" : ",") + c + "=" + p;
    st = applyPrecisionSpec(spec, in);
    if (!st.isOk())
        return st.withContext("budget settings");
    in.tp = s.tp ? s.tp : 1;
    in.ep = s.ep ? s.ep : 1;
    in.batch = s.batch ? s.batch : 1;
    in.context = s.context;
    if (!s.engine.empty() && !parseEngine(s.engine, in.engine))
        return Status::error("budget settings: engine '" + s.engine + "' is not sglang or none");
    bool fixed = extra(s, "allreduce_fixed") == "1" || s.allreduceUs > 0;
    in.allreduceUs = fixed ? s.allreduceUs : -1;
    in.cudaGraphs = s.cudaGraphs;
    in.draftTokens = s.draftTokens;
    in.acceptanceLength = s.acceptanceLength;
    in.promptTokens = s.promptTokens; // the setting; the phase is the analysis' choice, not stored
    st = readExtras(s, in);
    if (!st.isOk())
        return st;
    st = validateBudgetInputs(in);
    if (!st.isOk())
        return st;
    return in;
}

} // namespace gapscope::model
