// SPDX-License-Identifier: MIT
#pragma once

// Which decode attention kernel serves a shape (attention.h), for the plan (decodeplan.cpp, plain
// C++) and the launcher alike: GQA with dk == dv of 64, 128 or 256 runs on the rows kernel, which
// can also apply RoPE over the whole head and append the new cache row (fused into attention).

#include <cstdint>

namespace gapscope::kernels {

constexpr bool gqaRowsKernel(bool mla, uint32_t dk, uint32_t dv)
{
    return !mla && dk == dv && (dk == 64 || dk == 128 || dk == 256);
}

} // namespace gapscope::kernels
