// SPDX-License-Identifier: MIT
#pragma once

// Which decode attention kernel serves a shape (attention.h), for the plan (decodeplan.cpp, plain
// C++), the self-check and the launcher alike: GQA with dk == dv of 64, 128 or 256 runs on a kernel
// that can also apply RoPE over the whole head and append the new cache row (fused into attention):
// the tensor-core kernel for 64 and 128 (attentionmma.h), the CUDA-core rows kernel for 256 (and
// for any of them when asked). Other shapes run on the tiled kernel.

#include <cstdint>

namespace gapscope::kernels {

constexpr bool gqaRowsKernel(bool mla, uint32_t dk, uint32_t dv)
{
    return !mla && dk == dv && (dk == 64 || dk == 128 || dk == 256);
}

constexpr bool gqaMmaKernel(uint32_t d)
{
    return d == 64 || d == 128;
}

// The split kernel's name as traces show it (template arguments left out).
constexpr const char* attentionKernelName(bool mla, uint32_t dk, uint32_t dv, bool cudaCores = false)
{
    return mla                             ? "mla_decode_attention"
        : !gqaRowsKernel(false, dk, dv)    ? "gqa_tiled_decode_attention"
        : !cudaCores && gqaMmaKernel(dk) ? "gqa_mma_decode_attention"
                                           : "gqa_flash_decode_attention";
}

} // namespace gapscope::kernels
