// SPDX-License-Identifier: MIT
#pragma once

// WeightLayout: how a weight matrix of N rows (outputs) by K columns (inputs) in a given precision
// is stored in device memory by gapscope-decode-sim, and so how many bytes a GEMV reads from it.
// Rows are contiguous (row-major values), scales live in a second array after the values:
//   bf16/fp16      N*K*2 value bytes, no scales
//   fp8            N*K value bytes (E4M3) + one FP32 tensor scale
//   fp8-block128   N*K value bytes + FP32 scales [ceil(N/128)][ceil(K/128)]
//   nvfp4          N*K/2 value bytes (E2M1) + E4M3 scales [N][K/16] + one FP32 tensor scale (16-byte aligned)
//   mxfp4          N*K/2 value bytes (E2M1) + E8M0 scales [N][K/32]
//   int4-g128      N*K/2 value bytes (INT4) + FP16 scales [N][G] + 4-bit zero points [N][ceil(G/2)] (16-byte
//                  aligned), G = ceil(K/128)
// Pure value type; thread-safe.

#include "model/budget/precision.h"

#include <cstdint>
#include <string>

namespace gapscope::kernels {

struct WeightLayout {
    model::Precision precision = model::Precision::Bf16;
    uint64_t rows = 0; // N
    uint64_t cols = 0; // K
    uint64_t valueBytes = 0; // packed values
    uint64_t scaleBytes = 0; // scales (and zero points), 0 for bf16/fp16
    uint64_t auxOffset = 0; // inside the scale array: int4-g128 zero points, nvfp4 tensor scale

    uint64_t bytes() const { return valueBytes + scaleBytes; }

    // Elements one 16-byte load holds (8, 16 or 32); K must be a multiple of it.
    static uint32_t elementsPerVector(model::Precision p);
    // Fails with a message naming the matrix when K does not fit the format's vector width.
    static bool make(model::Precision p, uint64_t rows, uint64_t cols, WeightLayout& out, std::string* error);
};

} // namespace gapscope::kernels
