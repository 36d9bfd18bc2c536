// SPDX-License-Identifier: MIT
#pragma once

// SimOptions: the command line of gapscope-decode-sim, parsed and validated without touching a
// GPU (so it is unit-tested on CPU machines). Durations are taken in microseconds on the command
// line and kept in nanoseconds. Every pathology is off by default; a clean run injects nothing.
// Pure value type.

#include "kernels/decodeplan.h"
#include "model/base/json.h"
#include "model/base/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gapscope::kernels {

enum class LaunchMode { Eager, Graph };
enum class HostDelayScope { Layer, Kernel };
enum class HostDelayMode { Callback, Thread };
enum class ExpertPool { Auto, All, Touched };

struct Pathologies {
    uint64_t hostDelayNs = 0;
    HostDelayScope hostDelayScope = HostDelayScope::Layer;
    HostDelayMode hostDelayMode = HostDelayMode::Callback;
    bool syncEveryLayer = false;
    bool syncStamps = false; // time each sync's idle by clock-stamp kernels on both sides (GPU clock)
    int32_t stragglerRank = -1;
    uint64_t stragglerNs = 0;
    uint32_t stragglerEvery = 1; // delay before every n-th collective of a step
    bool slow = false;
    model::Component slowComponent = model::Component::Attention;
    double slowFactor = 1.0;
    uint64_t stepGapNs = 0;
    // Time the GPU idle between steps by clock-stamp kernels (GPU clock): one after the step's last
    // copy, one as the first kernel of the next step (inside its first graph in graph mode).
    bool stepStamps = false;

    bool any() const
    {
        return hostDelayNs || syncEveryLayer || (stragglerRank >= 0 && stragglerNs) || slow || stepGapNs;
    }
    json::Value toJson() const;
};

struct SimOptions {
    std::string model = "glm-5";
    PlanOptions plan;
    uint32_t steps = 20;
    uint32_t warmup = 5;
    LaunchMode mode = LaunchMode::Graph;
    bool nvtx = false;
    bool check = false;
    bool profileOps = true; // one eager step with events around every op (per-component times)
    ExpertPool expertPool = ExpertPool::Auto;
    uint32_t attentionSplits = 0; // KV splits of decode attention (0: about two blocks per SM)
    static constexpr uint32_t kMaxAttentionSplits = 256; // kAttentionMaxSplits (attention.h, checked there)
    uint64_t seed = 1;
    std::string truthPath;
    std::string profilePath; // calibration profile for the floor estimate
    std::string readyFile;   // rank 0 creates it when the measured steps begin (for capture scripts)
    bool json = false;
    Pathologies path;

    // Returns the options, or an error naming the offending argument. "--help" yields an error
    // whose message is the usage text and helpRequested = true.
    static Expected<SimOptions> parse(const std::vector<std::string>& args, bool* helpRequested = nullptr);
    static std::string usage();
    Expected<SimOptions> validate() const; // cross-option checks
};

const char* toString(LaunchMode m);

// "attention=bf16,routed_experts=nvfp4,all=fp8" -> overrides (all= sets the default).
Status parsePrecisionList(const std::string& text, PlanOptions& plan);

} // namespace gapscope::kernels
