// SPDX-License-Identifier: MIT
#pragma once

// KV-cache writes (internal to kernels/, device code): a value encoded as the cache stores it
// (bf16, or FP8 E4M3 saturated; rope_kv_append in ops.cu and the kernels below), and the new cache
// row of GQA decode attention with RoPE fused (the tensor-core kernel in attentionmma.cu and the
// rows kernel in attention.cu): the key at position context-1 rotated over the whole head, and the
// value.

#include "kernels/attention.h"
#include "kernels/numerics.h"

#include <cuda_fp8.h>

namespace gapscope::kernels {

__device__ __forceinline__ void encodeCacheValue(uint8_t* row, uint32_t j, float v, bool fp8)
{
    if (fp8)
        row[j] = static_cast<uint8_t>(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3));
    else
        reinterpret_cast<uint16_t*>(row)[j] = num::floatToBf16(v);
}

// Fills newRow (key, value) for token b and KV head kvh from p.newK / p.newV, then, with `appends`,
// writes it to the cache at row context-1. Block-wide (one barrier): every thread of the block
// calls it with the same arguments.
template <int D>
__device__ __forceinline__ void ropeNewRow(
    const AttentionParams& p, uint32_t b, uint32_t kvh, bool fp8, bool appends, uint8_t (&newRow)[2][D * 2])
{
    const uint32_t esz = fp8 ? 1 : 2;
    const uint16_t* nk = p.newK + b * p.newTokenStride + uint64_t(kvh) * D;
    const uint16_t* nv = p.newV + b * p.newTokenStride + uint64_t(kvh) * D;
    for (uint32_t i = threadIdx.x; i < D / 2; i += blockDim.x) {
        const float a = num::bf16ToFloat(nk[i]), e = num::bf16ToFloat(nk[i + D / 2]);
        const float cs = p.ropeCosSin[i], sn = p.ropeCosSin[D / 2 + i];
        encodeCacheValue(newRow[0], i, a * cs - e * sn, fp8);
        encodeCacheValue(newRow[0], i + D / 2, a * sn + e * cs, fp8);
        encodeCacheValue(newRow[1], i, num::bf16ToFloat(nv[i]), fp8);
        encodeCacheValue(newRow[1], i + D / 2, num::bf16ToFloat(nv[i + D / 2]), fp8);
    }
    __syncthreads();
    if (!appends)
        return;
    const uint64_t row = (uint64_t(b) * p.kvHeads + kvh) * p.context + p.context - 1;
    uint32_t* kd = reinterpret_cast<uint32_t*>(const_cast<uint8_t*>(p.kCache) + row * p.kRowStride * esz);
    uint32_t* vd = reinterpret_cast<uint32_t*>(const_cast<uint8_t*>(p.vCache) + row * p.vRowStride * esz);
    for (uint32_t i = threadIdx.x; i < D * esz / 4; i += blockDim.x) {
        kd[i] = reinterpret_cast<const uint32_t*>(newRow[0])[i];
        vd[i] = reinterpret_cast<const uint32_t*>(newRow[1])[i];
    }
}

} // namespace gapscope::kernels
