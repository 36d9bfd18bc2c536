// SPDX-License-Identifier: MIT
#pragma once

// Calibrator: the measurements of gapscope-calibrate on one GPU (copy and read bandwidth, the GEMV
// floor curve from 1 MB to 1 GB at decode shapes, GEMV bandwidth per weight format, eager and
// graph launch cost, bf16 matmul rate through cuBLAS on random data) and, across the ranks of a
// RankGroup, AllReduce latency vs message size through NCCL. Each figure is the median of many
// timed repetitions (CUDA events, or the host clock where the host is part of the cost; the
// host-bound launch figures a low quantile on one pinned core); small
// GEMVs rotate over enough copies of their weights that no launch is served from L2.
// Threading: one rank process, its current device.

#include "kernels/calibrationprofile.h"
#include "model/base/status.h"

#include <nccl.h>
#include <vector>

namespace gapscope::kernels {

struct SingleGpuFigures {
    double copyGbs = 0, readGbs = 0;
    std::vector<CurvePoint> gemv;
    std::vector<FormatPoint> formats;
    std::vector<FormatPoint> variants; // bf16 GEMV per schedule ("format" holds the schedule name)
    std::vector<CurvePoint> copies; // per-launch device-to-device copy at the GEMV sizes
    std::vector<CurvePoint> reads; // per-launch streaming read (no GEMV work) at the same sizes
    double eagerUs = 0, graphFixedUs = 0, graphPerNodeUs = 0;
    double matmulTflops = 0;
};

struct CalibrateOptions {
    uint32_t gpus = 0; // 0: all visible
    uint32_t repeats = 3;
    bool quick = false; // smaller sizes and fewer iterations (smoke tests)
};

class Calibrator {
public:
    // Which single-GPU figures measureSingle takes: the matmul runs at full power, so it is measured
    // after every repeat of the others, not between them (the launch figures follow the clocks).
    enum class Part { MemoryAndLaunch, Matmul };

    static Status deviceInfo(int device, CalibrationProfile::Device& out);
    static Status measureSingle(const CalibrateOptions& o, Part part, SingleGpuFigures& out);
    // Only the launch figures (eagerUs, graphFixedUs, graphPerNodeUs) on the current device.
    static Status measureLaunchOnly(const CalibrateOptions& o, SingleGpuFigures& out);
    static Status measureAllReduce(const CalibrateOptions& o, uint32_t rank, uint32_t ranks, const ncclUniqueId& id,
        std::vector<std::vector<CurvePoint>>& repeats);
};

} // namespace gapscope::kernels
