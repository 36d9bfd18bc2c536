// SPDX-License-Identifier: MIT
#pragma once

// CalibrationProfile: what gapscope-calibrate measured on a box, in the JSON shape of
// kernels/README.md ("kind": "gapscope-calibration"), plus the lookups the decode sim uses to sum
// per-kernel floors: GEMV time vs bytes and AllReduce time vs bytes, interpolated log-log between
// measured points and extrapolated at the measured bandwidth (GEMV) or linearly (AllReduce).
// Pure value type.

#include "model/base/json.h"
#include "model/base/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gapscope::kernels {

struct CurvePoint {
    double bytes = 0;
    double us = 0;
};

struct FormatPoint {
    std::string format;
    double bytes = 0;
    double us = 0;
};

struct CalibrationProfile {
    std::string created;
    std::string toolVersion;
    struct Device {
        std::string name, uuid, interconnect;
        int smCount = 0, smClockMhz = 0, memoryClockMhz = 0, count = 0;
        uint64_t memoryBytes = 0;
        uint64_t l2Bytes = 0;
    } device;
    double hbmCopyGbs = 0;
    double hbmReadGbs = 0;
    std::vector<CurvePoint> gemv; // bf16 GEMV, batch 1
    std::vector<FormatPoint> gemvFormats; // every weight format at one large size
    std::vector<FormatPoint> gemvVariants; // bf16 GEMV per launch schedule ("format" = schedule name)
    std::vector<CurvePoint> copyPerLaunch; // D2D copy of `bytes` per launch, measured like the GEMV
    std::vector<CurvePoint> readPerLaunch; // streaming read of `bytes` per launch, measured like the GEMV
    struct GemvKernel {
        std::string kernel;
        int registers = 0;
        int blocksPerSm = 0; // of 256 threads
    };
    std::vector<GemvKernel> gemvKernels; // the occupancy the GEMV figures were measured at
    double launchEagerUs = 0;
    double graphFixedUs = 0;
    double graphPerNodeUs = 0;
    int allreduceRanks = 0;
    std::vector<CurvePoint> allreduce;
    double bf16MatmulTflops = 0;
    int repeats = 0;
    double maxSpreadPct = 0;

    json::Value toJson() const;
    static Expected<CalibrationProfile> fromJson(const json::Value& v, const std::string& what);
    static Expected<CalibrationProfile> load(const std::string& path);

    double gemvUs(double bytes) const; // per-launch floor of a GEMV reading `bytes`
    double allreduceUs(double bytes) const; // 0 when no table
    double kernelFloorUs() const; // the smallest GEMV point
};

// Interpolation on a curve sorted by bytes (log-log inside, clamped ratios outside).
double interpolateUs(const std::vector<CurvePoint>& curve, double bytes);

// (max - min) / median * 100 over samples; 0 for fewer than two.
double spreadPct(std::vector<double> samples);
double median(std::vector<double> samples);

} // namespace gapscope::kernels
