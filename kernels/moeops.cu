// SPDX-License-Identifier: MIT
// MoE routing (router top-k, combine) and the DSA indexer key scan; declared in ops.h.
#include "kernels/numerics.h"
#include "kernels/pdl.h"
#include "kernels/ops.h"

namespace gapscope::kernels {

// ---------------------------------------------------------------------------------------------
// MoE router and combine

constexpr uint32_t kRouterMaxExperts = 1024;
constexpr uint32_t kRouterMaxTopk = 32;
constexpr uint32_t kRouterRegs = 8; // experts per lane held in registers (up to 256 experts)

// One warp per token: softmax and top-k with warp shuffles only; then warp 0 numbers the distinct
// experts in ascending order (ballot + popc) and every warp writes its token's slot weights.
__global__ void __launch_bounds__(256) moe_router_topk(RouterParams p)
{
    pdlEnter(); // PDL: the kernel before is done (kernels/pdl.h)
    __shared__ float prob[8][kRouterMaxExperts]; // more than 32 * kRouterRegs experts only
    __shared__ int pickId[8][kRouterMaxTopk];
    __shared__ float pickW[8][kRouterMaxTopk];
    __shared__ int slotOf[kRouterMaxExperts];
    const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    for (uint32_t e = threadIdx.x; e < p.experts; e += blockDim.x)
        slotOf[e] = 0;
    __syncthreads();
    if (warp < p.tokens && p.experts <= 32 * kRouterRegs) {
        // Probabilities in registers (expert lane + 32 i); each round: per-lane best, warp argmax.
        float pv[kRouterRegs];
        float mx = -INFINITY;
#pragma unroll
        for (uint32_t i = 0; i < kRouterRegs; ++i) {
            const uint32_t e = lane + 32 * i;
            pv[i] = e < p.experts ? num::bf16ToFloat(p.logits[uint64_t(warp) * p.experts + e]) : -INFINITY;
            mx = fmaxf(mx, pv[i]);
        }
        for (int o = 16; o > 0; o >>= 1)
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
        float sum = 0;
#pragma unroll
        for (uint32_t i = 0; i < kRouterRegs; ++i) {
            pv[i] = lane + 32 * i < p.experts ? __expf(pv[i] - mx) : -1.f;
            sum += pv[i] > 0.f ? pv[i] : 0.f;
        }
        for (int o = 16; o > 0; o >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, o);
        float picked = 0;
        for (uint32_t r = 0; r < p.topk; ++r) {
            float v = -1.f;
            int idx = 0x7fffffff;
#pragma unroll
            for (uint32_t i = 0; i < kRouterRegs; ++i)
                if (pv[i] > v) { // ascending e per lane: the first maximum wins
                    v = pv[i];
                    idx = static_cast<int>(lane + 32 * i);
                }
            for (int o = 16; o > 0; o >>= 1) {
                const float ov = __shfl_xor_sync(0xffffffffu, v, o);
                const int oi = __shfl_xor_sync(0xffffffffu, idx, o);
                if (ov > v || (ov == v && oi < idx)) {
                    v = ov;
                    idx = oi;
                }
            }
#pragma unroll
            for (uint32_t i = 0; i < kRouterRegs; ++i)
                if (static_cast<int>(lane + 32 * i) == idx)
                    pv[i] = -2.f;
            if (lane == 0) {
                pickId[warp][r] = idx;
                pickW[warp][r] = v / sum;
                slotOf[idx] = 1;
            }
            picked += v / sum;
        }
        __syncwarp();
        if (lane < p.topk)
            pickW[warp][lane] /= picked;
    } else if (warp < p.tokens) {
        float* pr = prob[warp];
        float mx = -INFINITY;
        for (uint32_t e = lane; e < p.experts; e += 32) {
            pr[e] = num::bf16ToFloat(p.logits[uint64_t(warp) * p.experts + e]);
            mx = fmaxf(mx, pr[e]);
        }
        for (int o = 16; o > 0; o >>= 1)
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
        float sum = 0;
        for (uint32_t e = lane; e < p.experts; e += 32) {
            pr[e] = __expf(pr[e] - mx);
            sum += pr[e];
        }
        for (int o = 16; o > 0; o >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, o);
        float picked = 0;
        for (uint32_t r = 0; r < p.topk; ++r) {
            float v = -1.f;
            int idx = 0x7fffffff;
            for (uint32_t e = lane; e < p.experts; e += 32)
                if (pr[e] > v) { // ascending e per lane: the first maximum wins
                    v = pr[e];
                    idx = static_cast<int>(e);
                }
            for (int o = 16; o > 0; o >>= 1) {
                const float ov = __shfl_xor_sync(0xffffffffu, v, o);
                const int oi = __shfl_xor_sync(0xffffffffu, idx, o);
                if (ov > v || (ov == v && oi < idx)) {
                    v = ov;
                    idx = oi;
                }
            }
            if (lane == 0) {
                pickId[warp][r] = idx;
                pickW[warp][r] = v / sum;
                pr[idx] = -2.f;
                slotOf[idx] = 1;
            }
            picked += v / sum;
            __syncwarp();
        }
        if (lane < p.topk)
            pickW[warp][lane] /= picked;
    }
    __syncthreads();
    if (warp == 0) {
        int n = 0;
        for (uint32_t base = 0; base < p.experts; base += 32) {
            const uint32_t e = base + lane;
            const bool used = e < p.experts && slotOf[e];
            const unsigned mask = __ballot_sync(0xffffffffu, used);
            if (used) {
                const int slot = n + __popc(mask & ((1u << lane) - 1));
                slotOf[e] = slot + 1;
                p.slotExpert[slot] = p.directPool ? static_cast<int>(e) : slot;
                p.slotIds[slot] = static_cast<int>(e);
            }
            n += __popc(mask);
        }
        if (lane == 0)
            *p.slotCount = n;
    }
    __syncthreads();
    if (warp < p.tokens) {
        for (uint32_t sl = lane; sl < p.slots; sl += 32)
            p.slotWeight[warp * p.slots + sl] = 0.f;
        __syncwarp();
        if (lane < p.topk)
            p.slotWeight[warp * p.slots + slotOf[pickId[warp][lane]] - 1] = pickW[warp][lane];
    }
}

cudaError_t launchRouterTopk(const RouterParams& p, cudaStream_t s)
{
    if (p.experts == 0 || p.experts > kRouterMaxExperts || p.topk == 0 || p.topk > kRouterMaxTopk || p.tokens > 8
        || p.topk > p.experts || p.slots < (p.tokens * p.topk < p.experts ? p.tokens * p.topk : p.experts))
        return cudaErrorInvalidValue;
    return launchPdl(moe_router_topk, dim3(1), dim3(256), 0, s, p);
}

__global__ void moe_combine_kernel(CombineParams p)
{
    pdlEnter(); // PDL: the kernel before is done (kernels/pdl.h)
    const uint32_t t = blockIdx.y;
    const int count = *p.slotCount;
    for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < p.width; j += gridDim.x * blockDim.x) {
        float acc = p.shared ? num::bf16ToFloat(p.shared[uint64_t(t) * p.width + j]) : 0.f;
        for (int sl = 0; sl < count; ++sl) {
            const float w = p.slotWeight[t * p.slots + sl];
            if (w != 0.f)
                acc += w * num::bf16ToFloat(p.expertOut[(uint64_t(sl) * p.tokens + t) * p.width + j]);
        }
        p.out[uint64_t(t) * p.width + j] = num::floatToBf16(acc);
    }
}

cudaError_t launchMoeCombine(const CombineParams& p, cudaStream_t s)
{
    if (p.width == 0 || p.slots == 0 || !p.slotCount)
        return cudaErrorInvalidValue;
    return launchPdl(moe_combine_kernel, dim3((p.width + 255) / 256, p.tokens), dim3(256), 0, s, p);
}

// ---------------------------------------------------------------------------------------------
// DSA indexer key scan: one warp per cached row at a time, one lane per indexer head (two above 32).

constexpr uint32_t kIndexMaxDim = 256;

__global__ void __launch_bounds__(256) dsa_indexer_scores_kernel(IndexerScanParams p)
{
    pdlEnter(); // PDL: the kernel before is done (kernels/pdl.h)
    extern __shared__ float qs[]; // [heads][dim]
    __shared__ float rowBuf[8][kIndexMaxDim];
    const uint32_t t = blockIdx.y, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    for (uint32_t i = threadIdx.x; i < p.heads * p.dim; i += blockDim.x)
        qs[i] = num::bf16ToFloat(p.q[uint64_t(t) * p.heads * p.dim + i]);
    __syncthreads();
    const float w0 = lane < p.heads ? num::bf16ToFloat(p.w[t * p.heads + lane]) : 0.f;
    const float w1 = lane + 32 < p.heads ? num::bf16ToFloat(p.w[t * p.heads + lane + 32]) : 0.f;
    const uint32_t rowsPerBlock = 8 * 16;
    const uint64_t r0 = uint64_t(blockIdx.x) * rowsPerBlock;
    for (uint64_t r = r0 + warp; r < p.rows && r < r0 + rowsPerBlock; r += 8) {
        const uint8_t* key = p.keys + (uint64_t(t) * p.context + r) * p.dim;
        for (uint32_t j = lane * 4; j < p.dim; j += 128) {
            const uint32_t v = *reinterpret_cast<const uint32_t*>(key + j);
            for (int b = 0; b < 4; ++b)
                rowBuf[warp][j + b] = num::e4m3ToFloat(static_cast<uint8_t>(v >> (8 * b)));
        }
        __syncwarp();
        float d0 = 0.f, d1 = 0.f;
        const float* q0 = qs + lane * p.dim;
        for (uint32_t j = 0; j < p.dim; ++j) {
            const float k = rowBuf[warp][j];
            d0 += lane < p.heads ? q0[j] * k : 0.f;
            d1 += lane + 32 < p.heads ? q0[32 * p.dim + j] * k : 0.f;
        }
        float s = w0 * fmaxf(d0, 0.f) + w1 * fmaxf(d1, 0.f);
        for (int o = 16; o > 0; o >>= 1)
            s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0)
            p.out[uint64_t(t) * p.rows + r] = num::floatToBf16(s * p.scales[uint64_t(t) * p.context + r]);
        __syncwarp();
    }
}

cudaError_t launchIndexerScan(const IndexerScanParams& p, cudaStream_t s)
{
    if (p.heads == 0 || p.heads > 64 || p.dim == 0 || p.dim % 16 || p.dim > kIndexMaxDim || p.rows == 0
        || p.rows > p.context || size_t(p.heads) * p.dim * 4 > 40 * 1024)
        return cudaErrorInvalidValue;
    const size_t smem = size_t(p.heads) * p.dim * 4;
    const unsigned blocks = static_cast<unsigned>((p.rows + 127) / 128);
    return launchPdl(dsa_indexer_scores_kernel, dim3(blocks, p.tokens), dim3(256), smem, s, p);
}

} // namespace gapscope::kernels
