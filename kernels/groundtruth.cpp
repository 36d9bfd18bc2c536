// SPDX-License-Identifier: MIT
#include "kernels/groundtruth.h"
#include "kernels/calibrationprofile.h"

#include <algorithm>

#ifndef GAPSCOPE_VERSION
#define GAPSCOPE_VERSION "0.0.0"
#endif

namespace gapscope::kernels {

namespace {

// `boundaries`: also the per-boundary sync idle (the transfer from a rank to the parent process).
json::Value stepJson(const StepRecord& s, bool boundaries)
{
    json::Value j = json::Value::object();
    j.set("index", s.index);
    j.set("start_unix_ns", s.startUnixNs);
    j.set("measured_ns", s.measuredNs);
    j.set("gpu_ns", s.gpuNs);
    j.set("host_ns", s.hostNs);
    j.set("host_delay_ns", s.hostDelayNs);
    j.set("launch_host_ns", s.launchHostNs);
    j.set("sync_stall_ns", s.syncStallNs);
    j.set("syncs", s.syncs);
    if (boundaries && !s.syncIdleNs.empty()) {
        json::Value b = json::Value::array();
        for (uint64_t v : s.syncIdleNs)
            b.push(v);
        j.set("sync_idle_ns", std::move(b));
    }
    j.set("step_gap_ns", s.stepGapNs);
    j.set("step_gap_idle_ns", s.stepGapIdleNs);
    j.set("straggler_ns", s.stragglerNs);
    j.set("slow_ns", s.slowNs);
    return j;
}

StepRecord stepFrom(const json::Value& j)
{
    StepRecord s;
    s.index = static_cast<uint32_t>(j["index"].toInt());
    s.measuredNs = static_cast<uint64_t>(j["measured_ns"].toInt());
    s.gpuNs = static_cast<uint64_t>(j["gpu_ns"].toInt());
    s.hostNs = static_cast<uint64_t>(j["host_ns"].toInt());
    s.hostDelayNs = static_cast<uint64_t>(j["host_delay_ns"].toInt());
    s.launchHostNs = static_cast<uint64_t>(j["launch_host_ns"].toInt());
    s.syncStallNs = static_cast<uint64_t>(j["sync_stall_ns"].toInt());
    s.syncs = static_cast<uint32_t>(j["syncs"].toInt());
    for (const auto& v : j["sync_idle_ns"].items())
        s.syncIdleNs.push_back(static_cast<uint64_t>(v.toInt()));
    s.startUnixNs = static_cast<uint64_t>(j["start_unix_ns"].toInt());
    s.stepGapNs = static_cast<uint64_t>(j["step_gap_ns"].toInt());
    s.stepGapIdleNs = static_cast<uint64_t>(j["step_gap_idle_ns"].toInt());
    s.stragglerNs = static_cast<uint64_t>(j["straggler_ns"].toInt());
    s.slowNs = static_cast<uint64_t>(j["slow_ns"].toInt());
    return s;
}

} // namespace

json::Value RankResult::toJson() const
{
    json::Value j = json::Value::object();
    j.set("rank", rank);
    j.set("device", device);
    json::Value st = json::Value::array();
    for (const auto& s : steps)
        st.push(stepJson(s, true));
    j.set("steps", std::move(st));
    json::Value c = json::Value::object();
    for (const auto& [k, v] : cleanComponentsNs)
        c.set(k, v);
    j.set("clean_components_ns", std::move(c));
    j.set("clean_profiled_step_ns", cleanProfiledStepNs);
    json::Value ops = json::Value::object();
    for (const auto& [name, ns] : cleanOpNs) {
        json::Value o = json::Value::object();
        o.set("ns", ns);
        o.set("bytes", cleanOpBytes.count(name) ? cleanOpBytes.at(name) : 0.0);
        o.set("count", cleanOpCount.count(name) ? cleanOpCount.at(name) : 0.0);
        ops.set(name, std::move(o));
    }
    j.set("clean_ops", std::move(ops));
    j.set("collectives_per_step", collectivesPerStep);
    j.set("straggler_collectives_per_step", stragglerCollectivesPerStep);
    j.set("marker_ns", markerNs);
    j.set("boundary_ns", boundaryNs);
    json::Value t = json::Value::array();
    for (int32_t id : lastTokens)
        t.push(id);
    j.set("last_tokens", std::move(t));
    return j;
}

Expected<RankResult> RankResult::fromJson(const json::Value& j)
{
    if (!j.isObject() || !j["steps"].isArray())
        return Status::error("rank result: expected an object with \"steps\"");
    RankResult r;
    r.rank = static_cast<uint32_t>(j["rank"].toInt());
    r.device = j["device"].toString();
    for (const auto& s : j["steps"].items())
        r.steps.push_back(stepFrom(s));
    for (const auto& [k, v] : j["clean_components_ns"].members())
        r.cleanComponentsNs[k] = v.toDouble();
    r.cleanProfiledStepNs = j["clean_profiled_step_ns"].toDouble();
    for (const auto& [name, o] : j["clean_ops"].members()) {
        r.cleanOpNs[name] = o["ns"].toDouble();
        r.cleanOpBytes[name] = o["bytes"].toDouble();
        r.cleanOpCount[name] = o["count"].toDouble();
    }
    r.collectivesPerStep = static_cast<uint32_t>(j["collectives_per_step"].toInt());
    r.stragglerCollectivesPerStep = static_cast<uint32_t>(j["straggler_collectives_per_step"].toInt());
    r.markerNs = static_cast<uint64_t>(j["marker_ns"].toInt());
    r.boundaryNs = static_cast<uint64_t>(j["boundary_ns"].toInt());
    for (const auto& t : j["last_tokens"].items())
        r.lastTokens.push_back(static_cast<int32_t>(t.toInt()));
    return r;
}

uint64_t GroundTruth::expectedExtraNs(const StepRecord& own, uint64_t stragglerSpinNs, uint64_t syncCriticalNs)
{
    return own.launchHostNs + syncCriticalNs + own.stepGapNs + stragglerSpinNs + own.slowNs;
}

std::vector<uint64_t> GroundTruth::syncCriticalNs(const std::vector<RankResult>& ranks)
{
    std::vector<uint64_t> out;
    for (const auto& r : ranks)
        for (const auto& s : r.steps) {
            if (s.index >= out.size())
                out.resize(s.index + 1, 0);
            out[s.index] = std::max(out[s.index], s.syncStallNs);
        }
    // Per boundary, the rank that resumed last holds every rank at the next collective.
    std::vector<std::vector<uint64_t>> perBoundary(out.size());
    for (const auto& r : ranks)
        for (const auto& s : r.steps) {
            auto& b = perBoundary[s.index];
            if (b.size() < s.syncIdleNs.size())
                b.resize(s.syncIdleNs.size(), 0);
            for (size_t i = 0; i < s.syncIdleNs.size(); ++i)
                b[i] = std::max(b[i], s.syncIdleNs[i]);
        }
    for (size_t i = 0; i < out.size(); ++i)
        if (!perBoundary[i].empty()) {
            uint64_t sum = 0;
            for (uint64_t v : perBoundary[i])
                sum += v;
            out[i] = sum;
        }
    return out;
}

static json::Value configJson(const SimOptions& o, const DecodePlan& plan)
{
    json::Value c = json::Value::object();
    c.set("model", plan.config().name);
    c.set("model_type", plan.config().modelType);
    c.set("tp", o.plan.tp);
    c.set("batch", o.plan.batch);
    c.set("context", o.plan.context);
    c.set("layers", static_cast<uint64_t>(plan.layers().size()));
    c.set("mode", toString(o.mode));
    c.set("steps", o.steps);
    c.set("warmup", o.warmup);
    c.set("attention_splits", o.attentionSplits);
    json::Value prec = json::Value::object();
    prec.set("all", model::toString(o.plan.defaultPrecision));
    for (const auto& [comp, p] : o.plan.precision)
        prec.set(model::toString(comp), model::toString(p));
    c.set("precision", std::move(prec));
    c.set("kernels_per_step", static_cast<uint64_t>(plan.kernelCount()));
    c.set("collectives_per_step", static_cast<uint64_t>(plan.collectiveCount()));
    c.set("weight_bytes_per_gpu", plan.weightBytes());
    c.set("kv_bytes_per_gpu", plan.cacheBytes());
    json::Value wb = json::Value::object();
    for (const auto& [comp, b] : plan.weightBytesByComponent())
        wb.set(model::toString(comp), b);
    c.set("weight_bytes_by_component", std::move(wb));
    return c;
}

json::Value GroundTruth::build(
    const SimOptions& o, const DecodePlan& plan, const std::vector<RankResult>& ranks, double floorUs)
{
    json::Value t = json::Value::object();
    t.set("kind", "gapscope-decode-sim-truth");
    t.set("version", 1);
    t.set("tool_version", GAPSCOPE_VERSION);
    t.set("config", configJson(o, plan));
    t.set("injected", o.path.toJson());
    if (floorUs >= 0)
        t.set("floor_ns", floorUs * 1e3);
    // The straggler's own spin per step, which every other rank waits for at its collectives.
    std::vector<uint64_t> spin;
    for (const auto& r : ranks)
        if (static_cast<int32_t>(r.rank) == o.path.stragglerRank)
            for (const auto& s : r.steps)
                spin.push_back(s.stragglerNs);
    const std::vector<uint64_t> syncCritical = syncCriticalNs(ranks);
    json::Value rs = json::Value::array();
    for (const auto& r : ranks) {
        json::Value rj = r.toJson();
        json::Value steps = json::Value::array();
        std::vector<double> measured;
        for (const auto& s : r.steps) {
            json::Value sj = stepJson(s, false);
            const uint64_t sp = s.index < spin.size() ? spin[s.index] : 0;
            const bool straggler = static_cast<int32_t>(r.rank) == o.path.stragglerRank;
            sj.set("collective_wait_ns", straggler ? 0 : sp);
            json::Value comps = json::Value::object();
            if (o.path.slow)
                comps.set(model::toString(o.path.slowComponent), s.slowNs);
            sj.set("components_ns", std::move(comps));
            const uint64_t sync = s.index < syncCritical.size() ? syncCritical[s.index] : s.syncStallNs;
            sj.set("sync_critical_ns", sync);
            sj.set("expected_extra_ns", expectedExtraNs(s, sp, sync));
            steps.push(std::move(sj));
            measured.push_back(static_cast<double>(s.measuredNs));
        }
        rj.set("steps", std::move(steps));
        rj.set("median_measured_ns", median(measured));
        rs.push(std::move(rj));
    }
    t.set("ranks", std::move(rs));
    json::Value st = json::Value::array();
    if (o.path.stragglerRank >= 0) {
        json::Value s = json::Value::object();
        s.set("rank", o.path.stragglerRank);
        s.set("delay_ns", o.path.stragglerNs);
        uint32_t n = 0;
        for (const auto& r : ranks)
            if (static_cast<int32_t>(r.rank) == o.path.stragglerRank)
                n = r.stragglerCollectivesPerStep;
        s.set("collectives", n);
        st.push(std::move(s));
    }
    t.set("stragglers", std::move(st));
    return t;
}

} // namespace gapscope::kernels
