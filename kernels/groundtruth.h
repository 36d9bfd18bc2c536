// SPDX-License-Identifier: MIT
#pragma once

// Ground truth of a gapscope-decode-sim run: what each rank injected in each step and what its
// own CUDA events measured. Ranks fill a RankResult each (serialised to JSON to reach the parent
// process); GroundTruth::build merges them into the truth file documented in kernels/README.md
// ("kind": "gapscope-decode-sim-truth").
// Per step i of a rank, the window is [start_i, start_{i+1}) as in the gap analysis rules.
// Pure value types.

#include "kernels/decodeplan.h"
#include "kernels/simoptions.h"
#include "model/base/json.h"
#include "model/base/status.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gapscope::kernels {

struct StepRecord {
    uint32_t index = 0;
    uint64_t measuredNs = 0; // start_i -> start_{i+1} (last step: start -> end), CUDA events
    uint64_t gpuNs = 0; // start_i -> end_i (step launched until the token was copied back)
    uint64_t hostNs = 0; // host wall time of the step (launch + sync)
    uint64_t hostDelayNs = 0; // host delay spun by the delaying code (host clock)
    uint64_t launchHostNs = 0; // GPU idle across those delays (CUDA events around each delay)
    uint64_t syncStallNs = 0; // GPU idle between layers caused by --sync-every-layer (events)
    std::vector<uint64_t> syncIdleNs; // the same per layer boundary (rank transfer only, not in the truth)
    uint64_t startUnixNs = 0; // host CLOCK_REALTIME when the step's launches began (matches captures)
    uint32_t syncs = 0;
    uint64_t stepGapNs = 0; // host gap injected after this step (inside this step's window)
    // --step-stamps: GPU idle from this step's last copy to the next step's first kernel (GPU clock
    // stamps): the host gap plus the sync's wake-up and the next launch, as a capture sees it.
    uint64_t stepGapIdleNs = 0;
    uint64_t stragglerNs = 0; // this rank's own spin before collectives (straggler rank only)
    uint64_t slowNs = 0; // extra time spun by slowed kernels (device-measured)
};

struct RankResult {
    uint32_t rank = 0;
    std::string device;
    std::vector<StepRecord> steps;
    std::map<std::string, double> cleanComponentsNs; // one eager step timed op by op (warm-up)
    double cleanProfiledStepNs = 0;
    std::map<std::string, double> cleanOpNs; // same step, per op name summed over layers
    std::map<std::string, double> cleanOpBytes; // bytes those ops read (weights, cache, messages)
    std::map<std::string, double> cleanOpCount;
    uint32_t collectivesPerStep = 0;
    uint32_t stragglerCollectivesPerStep = 0;
    uint64_t markerNs = 0; // graph mode: GPU time one event-record node adds past its timestamp
    uint64_t boundaryNs = 0; // graph mode: GPU time a segment boundary adds outside its markers
    std::vector<int32_t> lastTokens;

    json::Value toJson() const;
    static Expected<RankResult> fromJson(const json::Value& v);
};

class GroundTruth {
public:
    // `floorUs` < 0 when no calibration profile was given.
    static json::Value build(
        const SimOptions& options, const DecodePlan& plan, const std::vector<RankResult>& ranks, double floorUs);
    // The extra a step should show over a clean run: host delays + sync gaps (`syncCriticalNs`)
    // + step gap + the straggler spin (every rank waits for it) + slowed kernels.
    static uint64_t expectedExtraNs(const StepRecord& own, uint64_t stragglerSpinNs, uint64_t syncCriticalNs);
    // Per step index, the sync idle that holds all ranks: at each layer boundary the largest
    // rank's idle (the others wait for it at the next collective), summed over the boundaries;
    // the largest rank's total where boundaries were not recorded.
    static std::vector<uint64_t> syncCriticalNs(const std::vector<RankResult>& ranks);
};

} // namespace gapscope::kernels
