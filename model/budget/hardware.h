// SPDX-License-Identifier: MIT
#pragma once

// HardwareProfile: what one GPU of a box can do, for the budget. Loaded from a preset name
// (resources/hardware/<name>.json), a preset-shaped JSON file, or a gapscope-calibrate profile
// ("kind": "gapscope-calibration", schema in kernels/README.md). Datasheet ceilings feed the ideal
// column; efficiencies, the measured GEMV floor curve and launch costs feed the achievable column.
// A calibration profile is laid over the preset whose device_names list its device, so the ideal
// column keeps datasheet figures. Plain value type; thread-safe to read.

#include "model/base/json.h"
#include "model/base/status.h"
#include "model/budget/precision.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gapscope::model {

struct SizePoint {
    double bytes = 0;
    double us = 0;
};

// Latency of one AllReduce as a function of its size, measured (points) or given (alphaUs).
struct AllReduceTable {
    std::string library; // "nccl", "custom-oneshot", ...
    uint32_t ranks = 0; // ranks it was measured with (0 = unknown)
    std::vector<SizePoint> points; // sorted by bytes
    double alphaUs = 0; // used when there are no points
    std::string source;
};

struct HardwareProfile {
    std::string name; // preset name or file stem
    std::string displayName;
    std::string origin; // "preset", "file", "calibration"
    std::vector<std::string> deviceNames; // CUDA device names this preset describes
    uint32_t smCount = 0;
    double memoryGb = 0;
    double memoryBandwidthGbs = 0; // datasheet peak, GB/s (1e9)
    double bf16Tflops = 0, fp8Tflops = 0, fp4Tflops = 0; // dense
    std::string interconnectKind; // "nvlink" | "pcie"
    double interconnectGbs = 0; // per direction, GB/s
    double interconnectLatencyUs = 0;
    std::vector<AllReduceTable> allreduce; // the first is the default
    double launchEagerUs = 5.0, graphFixedUs = 15.0, graphPerNodeUs = 0.6;
    double memoryEfficiency = 0.85, computeEfficiency = 0.7; // achievable / peak without calibration
    double kernelFloorUs = 0; // shortest possible kernel (achievable column)
    bool calibrated = false;
    double hbmReadGbs = 0; // measured streaming read bandwidth
    std::vector<SizePoint> gemv; // measured GEMV time vs weight bytes, sorted
    double measuredBf16Tflops = 0;
    std::vector<std::string> notes; // sources and estimates, shown as assumptions
    std::string sourceJson; // what was parsed (compact), so a trace can store it

    // Peak TFLOPS at a rate, falling back to the next slower rate the GPU has (FP4 -> FP8 -> BF16).
    double tflops(MathRate r) const;
    // Bandwidth the achievable column uses: measured when calibrated, else peak x efficiency.
    double achievableBandwidthGbs() const;
    // Achievable time of one kernel streaming `bytes` (GEMV curve or bandwidth, never below the floor).
    double kernelUs(double bytes) const;
    // The table for a library ("" = default); nullptr when none.
    const AllReduceTable* allreduceTable(const std::string& library) const;
};

// Time of one AllReduce of `bytes` over `ranks` ranks: interpolated in the table, flat below its
// first point (latency-bound), above its last point extended by the bandwidth term of a two-shot
// AllReduce, 2 (N-1)/N x M / B. Tables measured at another rank count are used as they are.
double allreduceUs(const AllReduceTable& table, double bytes, uint32_t ranks, double interconnectGbs);

Expected<HardwareProfile> parseHardwareProfile(const json::Value& doc, const std::string& what);

// Edits named figures of a profile: "memory_bandwidth_gbs=4000,memory_efficiency=0.9". Keys:
// memory_bandwidth_gbs, bf16_tflops, fp8_tflops, fp4_tflops, memory_efficiency, compute_efficiency,
// kernel_floor_us, eager_us, graph_fixed_us, graph_per_node_us, interconnect_gbs, hbm_read_gbs.
// Each edit is added to the profile's notes. Errors name the bad entry.
Status applyHardwareOverrides(HardwareProfile& hw, const std::string& spec);
Expected<HardwareProfile> loadHardwareProfile(const std::string& fileOrPreset);

} // namespace gapscope::model
