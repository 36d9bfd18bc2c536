// SPDX-License-Identifier: MIT
#pragma once

// A small, exactly known trace for the viewer tests, built with TraceBuilder.
//
// Per rank r (host "node0", device r): one GPU stream lane (stream 7), a collectives lane, an NVTX
// lane and a CPU API lane (thread 1000 + r). Step i of every rank starts at
// kT0 + i * stepNs and ends stepNs later. Inside a step, kernel k starts at
// stepStart + k * (kernelNs + gapNs) and lasts kernelNs; names cycle through kKernelNames (the
// last one is an AllReduce, mirrored on the collectives lane). Each kernel is launched by a
// cudaLaunchKernel call starting launchLeadNs before it (correlation ids 1, 2, ... per rank).
// An NVTX range "decode step i" covers each step.

#include "model/trace/trace.h"

#include <string>
#include <vector>

namespace testtrace {

using gapscope::model::TimeNs;

constexpr TimeNs kT0 = 1'764'460'800'000'000'000LL; // CLOCK_REALTIME-like, beyond double precision

inline const std::vector<std::string>& kernelNames()
{
    static const std::vector<std::string> names = {
        "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4>, true>(Flash_fwd_params)",
        "cutlass_moe_fp4_grouped_gemm_kernel",
        "void rmsnorm_kernel<float>(float*, float const*, int)",
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    };
    return names;
}

struct Options {
    uint32_t ranks = 2;
    uint32_t steps = 4;
    uint32_t kernelsPerStep = 8;
    TimeNs kernelNs = 10'000;
    TimeNs gapNs = 2'000;
    TimeNs stepNs = 120'000;
    TimeNs launchLeadNs = 5'000;
    double overheadBeforeMs = 0; // > 0: rank 0 records the capture's own cost (before/while capturing)
    double overheadDuringMs = 0;
};

inline TimeNs kernelStart(const Options& o, uint32_t step, uint32_t k)
{
    return kT0 + TimeNs(step) * o.stepNs + TimeNs(k) * (o.kernelNs + o.gapNs);
}

inline gapscope::model::Trace make(const Options& o = {})
{
    using namespace gapscope::model;
    TraceBuilder b;
    b.header().source = "test";
    std::vector<StringId> names;
    for (const auto& n : kernelNames())
        names.push_back(b.intern(n));
    const StringId launch = b.intern("cudaLaunchKernel");
    const StringId allreduce = b.intern("AllReduce");
    for (uint32_t r = 0; r < o.ranks; ++r) {
        RankInfo& rank = b.header().ranks.emplace_back();
        rank.rank = r;
        rank.worldSize = o.ranks;
        rank.host = "node0";
        rank.deviceIndex = r;
        if (r == 0 && o.overheadBeforeMs > 0) {
            rank.hasOverhead = true;
            OverheadEvidence& e = rank.overhead;
            e.stepsBefore = 8;
            e.stepMsMedianBefore = o.overheadBeforeMs;
            e.stepsDuring = o.steps;
            e.stepMsMedianDuring = o.overheadDuringMs;
        }
        LaneInfo gpu { LaneKind::GpuStream, r, "node0", r, 7, "stream 7", 100 + r };
        LaneInfo coll { LaneKind::Collective, r, "node0", r, 0, "NCCL", 100 + r };
        LaneInfo nvtx { LaneKind::Nvtx, r, "node0", r, 1000 + r, "", 100 + r };
        LaneInfo api { LaneKind::CpuApi, r, "node0", r, 1000 + r, "", 100 + r };
        const LaneId g = b.lane(gpu), c = b.lane(coll), n = b.lane(nvtx), a = b.lane(api);
        uint32_t corr = 1;
        KernelConfig cfg;
        cfg.grid[0] = 132;
        cfg.block[0] = 256;
        for (uint32_t s = 0; s < o.steps; ++s) {
            const TimeNs stepStart = kT0 + TimeNs(s) * o.stepNs;
            b.addNvtx(n, stepStart, o.stepNs, b.intern("decode step " + std::to_string(s)), 0);
            for (uint32_t k = 0; k < o.kernelsPerStep; ++k) {
                const TimeNs t = kernelStart(o, s, k);
                const size_t which = k % names.size();
                b.addApi(a, t - o.launchLeadNs, 3'000, launch, corr);
                b.addKernel(g, t, o.kernelNs, names[which], corr, cfg);
                if (which == names.size() - 1)
                    b.addCollective(c, t, o.kernelNs, allreduce, CollectiveInfo { 4096, 0, 0, 0, corr, 1, 1, 0 });
                ++corr;
            }
            Step st;
            st.index = s;
            st.start = stepStart;
            st.end = stepStart + o.stepNs;
            st.source = gapscope::model::StepSource::File;
            b.addStep(r, st);
        }
    }
    return b.finish();
}

} // namespace testtrace
