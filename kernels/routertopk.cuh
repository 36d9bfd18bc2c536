// SPDX-License-Identifier: MIT
#pragma once

// The router's softmax + top-k as a block body (256 threads), for moe_router_topk (moeops.cu) and
// for the router GEMV that runs it in its last block (gemv.cu). Internal to kernels/; device code.
// Logits are read through L2 (ld.global.cg): in the fused kernel other blocks of the same grid
// wrote them.

#include "kernels/numerics.h"
#include "kernels/ops.h"

namespace gapscope::kernels {

constexpr uint32_t kRouterMaxExperts = 1024;
constexpr uint32_t kRouterMaxTopk = 32;
constexpr uint32_t kRouterRegs = 8; // experts per lane held in registers (up to 256 experts)

// The shapes routerTopkBody takes (launchRouterTopk's checks).
inline bool routerParamsValid(const RouterParams& p)
{
    return p.experts > 0 && p.experts <= kRouterMaxExperts && p.topk > 0 && p.topk <= kRouterMaxTopk && p.tokens >= 1
        && p.tokens <= 8 && p.topk <= p.experts
        && p.slots >= (p.tokens * p.topk < p.experts ? p.tokens * p.topk : p.experts) && p.logits && p.slotExpert
        && p.slotCount && p.slotIds && p.slotWeight;
}

// One warp per token: softmax and top-k with warp shuffles only; then warp 0 numbers the distinct
// experts in ascending order (ballot + popc) and every warp writes its token's slot weights.
__device__ __forceinline__ void routerTopkBody(const RouterParams& p)
{
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
            pv[i] = e < p.experts ? num::bf16ToFloat(__ldcg(p.logits + uint64_t(warp) * p.experts + e)) : -INFINITY;
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
            pr[e] = num::bf16ToFloat(__ldcg(p.logits + uint64_t(warp) * p.experts + e));
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


} // namespace gapscope::kernels
