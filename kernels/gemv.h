// SPDX-License-Identifier: MIT
#pragma once

// Memory-bound GEMV kernels of the decode step: y[t][n] = sum_k W[n][k] * x[t][k] for up to 8
// tokens t, W stored in one of the weight formats of WeightLayout (bf16, fp16, fp8, fp8-block128,
// nvfp4, mxfp4, int4-g128), x and y bf16, accumulation in fp32. A launch covers `groups` matrices
// (per-head absorbed MLA projections, or routed-expert slots chosen on the device by the router:
// `indirect`). Each warp streams one row in 16-byte loads (8 in flight per lane, 4 for 4-bit
// formats, L1 bypassed); short rows with few rows share a row between up to 8 warps. Whole-warp
// rows run persistent by default: about one wave of resident blocks whose warps stride over all
// rows, so a launch has no block boundaries or partial last wave in its middle. bf16 matrices
// with rows of 2048, 4096, 8192 or 16384 values are read by the sweep schedule instead: the
// resident blocks read the matrix like a copy, in a window of consecutive rows that moves through
// it (the fastest on the H200 from 8 MiB up, with PDL; BENCHMARKS.md).
// Kernel names in traces: gemv_<format>_kernel<TB>, fused_moe_gemv_<format>_kernel<TB> (indirect),
// gemv_bf16_sweep_kernel<TB> and fused_moe_gemv_bf16_sweep_kernel<TB> (sweep); the calibration's
// lean persistent schedule runs as gemv_bf16_lean_kernel<TB>.

#include "kernels/slowtail.h"
#include "model/budget/precision.h"

#include <cstdint>
#include <cuda_runtime_api.h>
#include <vector>

namespace gapscope::kernels {

struct GemvParams {
    const uint8_t* values = nullptr; // group 0 (indirect: pool entry 0)
    const uint8_t* scales = nullptr; // group 0 scales (format dependent, may be null for bf16/fp16)
    uint64_t valueGroupStride = 0; // bytes
    uint64_t scaleGroupStride = 0; // bytes
    uint64_t auxOffset = 0; // WeightLayout::auxOffset (int4-g128 zeros, nvfp4 tensor scale)
    const uint16_t* x = nullptr; // bf16
    uint64_t xLd = 0, xGroupStride = 0;
    uint16_t* y = nullptr; // bf16
    uint64_t yLd = 0, yGroupStride = 0;
    uint32_t rows = 0, cols = 0, tokens = 1, groups = 1;
    const int32_t* slotExpert = nullptr; // indirect: pool index per slot
    const int32_t* slotCount = nullptr; // indirect: number of valid slots
    SlowTail* tail = nullptr;
    uint32_t repeat = 1; // read the weights this many times (calibration of repeated reads)
    uint32_t schedule = 0; // 0: chosen by launchGemv (4 where it applies, else 2 or the split rows),
                           // 1: one warp-row per block slot, 2: persistent,
                           // 3: sweep (bf16, rows of 256-2048 vectors; else the default), 4: sweep with
                           // at most the resident blocks, 5: persistent in a kernel holding only that
                           // path (bf16, not indirect, default or 4 loads in flight; fewer registers,
                           // more blocks per SM)
    uint32_t inflight = 0; // persistent bf16: 16-byte loads in flight per lane (2 or 4; 0: the default 8);
                           // sweep at rows of 512 vectors: 4 makes groups of 4 x 256 vectors
    uint32_t blocksPerSm = 0; // persistent: at most this many blocks per SM (0: as many as fit); fewer
                              // leave room for the next launch's blocks to start early under PDL
    bool pdl = false; // launch with programmatic dependent launch (the kernel may start before the
                      // previous one ends; it waits for it before reading x or writing y)
    uint32_t warpsPerRow = 1; // set by launchGemv
    uint32_t lanesPerRow = 32; // set by launchGemv
    bool persistent = false; // set by launchGemv
    bool sweep = false; // set by launchGemv
};

// Registers per thread and resident blocks of 256 threads per SM of the bf16 GEMV kernels on the
// current device (production `gemv_bf16_kernel<TB>` for 1, 2, 4 and 8 tokens, `gemv_bf16_sweep_kernel<1>`,
// and the calibration's `gemv_bf16_lean_kernel<1>`, default and 4 loads in flight): the occupancy every GEMV figure was
// measured at.
struct GemvKernelInfo {
    const char* name = "";
    int registers = 0;
    int blocksPerSm = 0;
};
cudaError_t gemvKernelInfo(std::vector<GemvKernelInfo>& out);

// Launches the GEMV on `stream`; returns cudaErrorInvalidValue for shapes the kernels do not take
// (tokens > 8, cols not a multiple of the vector width, misaligned pointers or strides).
cudaError_t launchGemv(model::Precision precision, const GemvParams& params, cudaStream_t stream);

} // namespace gapscope::kernels
