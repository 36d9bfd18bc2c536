// SPDX-License-Identifier: MIT
#include "kernels/attentionmma.h"
#include "kernels/attentionnewrow.cuh"
#include "kernels/numerics.h"
#include "kernels/pdl.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace gapscope::kernels {

namespace {

// Lane (g, t) = (lane / 4, lane % 4) in the mma fragments. Per k-step of 16 head-dim elements the
// lane holds elements {2t, 2t+1, 2t+8, 2t+9} of A's rows g, g+8 and of B's column g; the head
// dimension is permuted so that these come from 8-element chunks: k-steps 2j and 2j+1 of lane t
// take chunk c = 4j + t (elements 8c .. 8c+7), in order. Q and K use the same permutation, so the
// dot products are unchanged. S's columns are cache rows; P (S after the softmax) is the A operand
// of O += P V as it stands in S's accumulators. V's columns: output column n of d-tile j is element
// n * D/8 + j, so lane g reads D/8 consecutive elements of each of its four rows.
namespace mma {

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr int kHeads = int(kGqaMmaHeads);
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// D = A B + D (m16n8k16, fp32 accumulators), with fp16 or bf16 operands.
#define GS_MMA16816(TYPE)                                                                                             \
    asm("mma.sync.aligned.m16n8k16.row.col.f32." TYPE "." TYPE ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "        \
        "{%0,%1,%2,%3};\n"                                                                                            \
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                                                              \
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1))

template <bool F16>
__device__ __forceinline__ void mma16816(
    float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0, uint32_t b1)
{
    if constexpr (F16)
        GS_MMA16816("f16");
    else
        GS_MMA16816("bf16");
}
#undef GS_MMA16816

// Two floats as the operand type (lo in the low half).
template <bool F16> __device__ __forceinline__ uint32_t pack2(float lo, float hi)
{
    if constexpr (F16) {
        const __half2 h = __floats2half2_rn(lo, hi);
        return *reinterpret_cast<const uint32_t*>(&h);
    } else {
        const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<const uint32_t*>(&h);
    }
}

// Two E4M3 values (low byte first) as fp16x2: exact.
__device__ __forceinline__ uint32_t e4m3x2(uint32_t bits)
{
    const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(bits & 0xffffu), __NV_E4M3);
    return uint32_t(h.x) | (uint32_t(h.y) << 16);
}

__device__ __forceinline__ float fastExp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

template <int W> __device__ __forceinline__ void loadGlobal(uint32_t (&w)[W], const uint8_t* src)
{
    if constexpr (W % 4 == 0) {
#pragma unroll
        for (int i = 0; i < W / 4; ++i) {
            const uint4 v = __ldg(reinterpret_cast<const uint4*>(src) + i);
            w[4 * i] = v.x;
            w[4 * i + 1] = v.y;
            w[4 * i + 2] = v.z;
            w[4 * i + 3] = v.w;
        }
    } else {
        static_assert(W == 2, "8-byte or 16-byte multiples");
        const uint2 v = __ldg(reinterpret_cast<const uint2*>(src));
        w[0] = v.x;
        w[1] = v.y;
    }
}

template <int W> __device__ __forceinline__ void loadShared(uint32_t (&w)[W], const uint8_t* src)
{
#pragma unroll
    for (int i = 0; i < W; ++i)
        w[i] = reinterpret_cast<const uint32_t*>(src)[i];
}

template <int W> __device__ __forceinline__ void zero(uint32_t (&w)[W])
{
#pragma unroll
    for (int i = 0; i < W; ++i)
        w[i] = 0;
}

template <int D, bool FP8> __device__ void body(const AttentionParams& p)
{
    constexpr uint32_t esz = FP8 ? 1 : 2;
    constexpr int QC = D / 32; // 8-element chunks per lane of a Q or K row
    constexpr int KS = D / 16; // k-steps of S = Q K^T
    constexpr int CW = FP8 ? 2 : 4; // 32-bit words per chunk
    constexpr int VE = D / 8; // V elements per lane and row (= d-tiles of O)
    constexpr int VW = VE * int(esz) / 4; // their words
    const uint32_t group = p.qHeads / p.kvHeads;
    const uint32_t headTiles = (group + kHeads - 1) / kHeads;
    const uint32_t split = blockIdx.x, kvh = blockIdx.y / headTiles, tile = blockIdx.y % headTiles, b = blockIdx.z;
    const uint32_t h0 = kvh * group + tile * kHeads;
    const uint32_t nh = min(uint32_t(kHeads), group - tile * kHeads);
    const uint64_t chunk
        = ((p.rows + gridDim.x - 1) / gridDim.x + kGqaMmaBlockRows - 1) / kGqaMmaBlockRows * kGqaMmaBlockRows;
    const uint64_t r0 = split * chunk, r1 = p.rows < r0 + chunk ? p.rows : r0 + chunk;
    const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;

    __shared__ __align__(16) uint8_t newRow[2][D * 2]; // key, value at position context-1 (cache encoding)
    __shared__ __align__(16) float accS[kWarps][kHeads][D];
    __shared__ float mS[kWarps][kHeads], lS[kWarps][kHeads];

    const bool rope = p.ropeCosSin != nullptr;
    const uint64_t pos = p.context - 1;
    const bool ownsNew = rope && pos >= r0 && pos < r1;
    const uint8_t* kBase = p.kCache + (uint64_t(b) * p.kvHeads + kvh) * p.context * p.kRowStride * esz;
    const uint8_t* vBase = p.vCache + (uint64_t(b) * p.kvHeads + kvh) * p.context * p.vRowStride * esz;

    // 16 rows from `base`: K rows base+g and base+8+g (this lane's chunks), V rows base+2t, +1, +8,
    // +9 (elements g*D/8 ..). Rows past r1 read as zeros; the new row comes from shared memory when
    // `fresh` is set and is left out otherwise (patched in later).
    uint32_t kw[2][QC][CW], vw[4][VW];
    auto load = [&](uint64_t base, bool fresh) {
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const uint64_t row = base + 8 * i + g;
            const bool isNew = ownsNew && row == pos;
#pragma unroll
            for (int j = 0; j < QC; ++j) {
                const uint32_t c = 4 * j + t;
                if (row < r1 && !isNew)
                    loadGlobal(kw[i][j], kBase + (row * p.kRowStride + 8 * c) * esz);
                else if (row < r1 && fresh)
                    loadShared(kw[i][j], newRow[0] + 8 * c * esz);
                else
                    zero(kw[i][j]);
            }
        }
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const uint64_t row = base + 2 * t + (r & 1) + 8 * (r >> 1);
            const bool isNew = ownsNew && row == pos;
            if (row < r1 && !isNew)
                loadGlobal(vw[r], vBase + (row * p.vRowStride + g * VE) * esz);
            else if (row < r1 && fresh)
                loadShared(vw[r], newRow[1] + g * VE * esz);
            else
                zero(vw[r]);
        }
    };

    // With the append fused nothing before this kernel writes the cache, so the first rows are read
    // before the PDL wait (the new row is patched in below); otherwise a rope kernel may be writing it.
    uint64_t base = r0 + 16 * warp;
    if (base < r1 && rope)
        load(base, false);
    pdlEnter(); // PDL: the kernel before is done (kernels/pdl.h)
    slowTailBegin(p.tail);
    if (base < r1 && !rope)
        load(base, true);

    // The new row (fused RoPE): rotated key and value, encoded as the cache stores them.
    const bool appends = rope && tile == 0 && (ownsNew || (pos >= p.rows && split == gridDim.x - 1));
    if (ownsNew || appends) {
        ropeNewRow<D>(p, b, kvh, FP8, appends, newRow);
        if (ownsNew && base < r1 && pos >= base && pos < base + 16) {
#pragma unroll
            for (int i = 0; i < 2; ++i)
                if (base + 8 * i + g == pos) {
#pragma unroll
                    for (int j = 0; j < QC; ++j)
                        loadShared(kw[i][j], newRow[0] + 8 * (4 * j + t) * esz);
                }
#pragma unroll
            for (int r = 0; r < 4; ++r)
                if (base + 2 * t + (r & 1) + 8 * (r >> 1) == pos)
                    loadShared(vw[r], newRow[1] + g * VE * esz);
        }
    }

    // Q as the A operand: qa[ks] = {head g, head g+8} x {elements 0-1, 2-3 of the k-step}, scaled
    // by scale * log2(e) (the softmax runs in base 2), rotated first with RoPE.
    uint32_t qa[KS][4];
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
        const uint32_t h = g + 8 * hh;
        float x[QC][8];
#pragma unroll
        for (int j = 0; j < QC; ++j) {
            uint4 v = make_uint4(0, 0, 0, 0);
            if (h < nh)
                v = *reinterpret_cast<const uint4*>(
                    p.q + b * p.qTokenStride + (h0 + h) * p.qHeadStride + 8 * (4 * j + t));
            const uint32_t w[4] = { v.x, v.y, v.z, v.w };
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                x[j][2 * e] = __uint_as_float(w[e] << 16);
                x[j][2 * e + 1] = __uint_as_float(w[e] & 0xffff0000u);
            }
        }
        if (rope) { // pairs (i, i + D/2): chunk j pairs with chunk j + QC/2 of the same lane
#pragma unroll
            for (int j = 0; j < QC / 2; ++j)
#pragma unroll
                for (int e = 0; e < 8; ++e) {
                    const uint32_t i = 8 * (4 * j + t) + e;
                    const float cs = p.ropeCosSin[i], sn = p.ropeCosSin[D / 2 + i];
                    const float lo = x[j][e], hi = x[j + QC / 2][e];
                    x[j][e] = lo * cs - hi * sn;
                    x[j + QC / 2][e] = lo * sn + hi * cs;
                }
        }
        const float sc = p.scale * kLog2e;
#pragma unroll
        for (int j = 0; j < QC; ++j)
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                qa[2 * j + half][hh] = pack2<FP8>(x[j][4 * half] * sc, x[j][4 * half + 1] * sc);
                qa[2 * j + half][2 + hh] = pack2<FP8>(x[j][4 * half + 2] * sc, x[j][4 * half + 3] * sc);
            }
    }

    float o[VE][4];
#pragma unroll
    for (int j = 0; j < VE; ++j)
        o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
    float m[2] = { -INFINITY, -INFINITY }, l[2] = { 0.f, 0.f }; // heads g, g+8 (l: this lane's part)

    for (bool first = true; base < r1; base += 16 * kWarps, first = false) {
        if (!first)
            load(base, true);
        // S = Q K^T for rows base .. base+7 (s[0]) and base+8 .. base+15 (s[1]).
        float s[2][4] = { { 0.f, 0.f, 0.f, 0.f }, { 0.f, 0.f, 0.f, 0.f } };
#pragma unroll
        for (int j = 0; j < QC; ++j)
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int ks = 2 * j + half;
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    uint32_t b0, b1;
                    if constexpr (FP8) {
                        b0 = e4m3x2(kw[i][j][half]);
                        b1 = e4m3x2(kw[i][j][half] >> 16);
                    } else {
                        b0 = kw[i][j][2 * half];
                        b1 = kw[i][j][2 * half + 1];
                    }
                    mma16816<FP8>(s[i], qa[ks][0], qa[ks][1], qa[ks][2], qa[ks][3], b0, b1);
                }
            }
        // Lane scores: s[i][e] and s[i][2 + e] are heads g and g+8 at row base + 8i + 2t + e.
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int e = 0; e < 2; ++e)
                if (base + 8 * i + 2 * t + e >= r1)
                    s[i][e] = s[i][2 + e] = -INFINITY;
        float alpha[2];
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            float mx = fmaxf(fmaxf(s[0][2 * hh], s[0][2 * hh + 1]), fmaxf(s[1][2 * hh], s[1][2 * hh + 1]));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            const float mNew = fmaxf(m[hh], mx); // finite: row `base` is read
            alpha[hh] = fastExp2(m[hh] - mNew);
            float sum = 0.f;
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    s[i][2 * hh + e] = fastExp2(s[i][2 * hh + e] - mNew);
                    sum += s[i][2 * hh + e];
                }
            l[hh] = l[hh] * alpha[hh] + sum;
            m[hh] = mNew;
        }
        const uint32_t pa0 = pack2<FP8>(s[0][0], s[0][1]), pa1 = pack2<FP8>(s[0][2], s[0][3]);
        const uint32_t pa2 = pack2<FP8>(s[1][0], s[1][1]), pa3 = pack2<FP8>(s[1][2], s[1][3]);
        // O += P V, one mma per d-tile j: B = V rows (2t, 2t+1) and (2t+8, 2t+9) at element j.
#pragma unroll
        for (int j = 0; j < VE; ++j) {
            o[j][0] *= alpha[0];
            o[j][1] *= alpha[0];
            o[j][2] *= alpha[1];
            o[j][3] *= alpha[1];
            uint32_t b0, b1;
            if constexpr (FP8) {
                const uint32_t sel = (j & 2) ? 0x7362u : 0x5140u, sh = (j & 1) ? 16 : 0;
                b0 = e4m3x2(__byte_perm(vw[0][j / 4], vw[1][j / 4], sel) >> sh);
                b1 = e4m3x2(__byte_perm(vw[2][j / 4], vw[3][j / 4], sel) >> sh);
            } else {
                const uint32_t sel = (j & 1) ? 0x7632u : 0x5410u;
                b0 = __byte_perm(vw[0][j / 2], vw[1][j / 2], sel);
                b1 = __byte_perm(vw[2][j / 2], vw[3][j / 2], sel);
            }
            mma16816<FP8>(o[j], pa0, pa1, pa2, pa3, b0, b1);
        }
    }

    // The warp's part: O[head][column] with column (2t + half) * D/8 + j, then (m, l).
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
        l[hh] += __shfl_xor_sync(0xffffffffu, l[hh], 1);
        l[hh] += __shfl_xor_sync(0xffffffffu, l[hh], 2);
        const uint32_t h = g + 8 * hh;
        if (h < nh) {
#pragma unroll
            for (int half = 0; half < 2; ++half)
#pragma unroll
                for (int j = 0; j < VE; j += 4)
                    *reinterpret_cast<float4*>(&accS[warp][h][(2 * t + half) * VE + j]) = make_float4(
                        o[j][2 * hh + half], o[j + 1][2 * hh + half], o[j + 2][2 * hh + half], o[j + 3][2 * hh + half]);
            if (t == 0) {
                mS[warp][h] = m[hh];
                lS[warp][h] = l[hh];
            }
        }
    }
    __syncthreads();
    // Merge the warps; write O [b][head][split][dv] and (m, l) (m in natural-log units) as the
    // CUDA-core kernels do.
    float* ml = p.workspace + uint64_t(p.tokens) * p.qHeads * kAttentionMaxSplits * p.dv;
    for (uint32_t i = threadIdx.x; i < nh * (D / 8); i += kThreads) {
        const uint32_t h = i / (D / 8), col = 8 * (i % (D / 8));
        float mx = mS[0][h];
#pragma unroll
        for (int w = 1; w < kWarps; ++w)
            mx = fmaxf(mx, mS[w][h]);
        float acc[8] = { 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f }, sum = 0.f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) {
            const float wt = mS[w][h] == -INFINITY ? 0.f : fastExp2(mS[w][h] - mx);
            sum += wt * lS[w][h];
            const float4 u = *reinterpret_cast<const float4*>(&accS[w][h][col]);
            const float4 v = *reinterpret_cast<const float4*>(&accS[w][h][col + 4]);
            acc[0] += wt * u.x;
            acc[1] += wt * u.y;
            acc[2] += wt * u.z;
            acc[3] += wt * u.w;
            acc[4] += wt * v.x;
            acc[5] += wt * v.y;
            acc[6] += wt * v.z;
            acc[7] += wt * v.w;
        }
        const uint64_t oi = (uint64_t(b) * p.qHeads + h0 + h) * kAttentionMaxSplits + split;
        float4* dst = reinterpret_cast<float4*>(p.workspace + oi * p.dv + col);
        dst[0] = make_float4(acc[0], acc[1], acc[2], acc[3]);
        dst[1] = make_float4(acc[4], acc[5], acc[6], acc[7]);
        if (col == 0) {
            ml[2 * oi] = mx * kLn2; // -inf stays -inf (a split without rows)
            ml[2 * oi + 1] = sum;
        }
    }
}

} // namespace mma

} // namespace

template <int D, bool FP8>
__global__ void __launch_bounds__(mma::kThreads) gqa_mma_decode_attention(AttentionParams p)
{
    mma::body<D, FP8>(p); // waits for the kernel before (pdlEnter) after its first cache loads
    slowTailEnd(p.tail);
}

cudaError_t launchGqaMmaAttention(const AttentionParams& p, dim3 grid, cudaStream_t stream)
{
    const dim3 block(mma::kThreads);
    if (p.dk == 64)
        return p.fp8 ? launchPdl(gqa_mma_decode_attention<64, true>, grid, block, 0, stream, p)
                     : launchPdl(gqa_mma_decode_attention<64, false>, grid, block, 0, stream, p);
    if (p.dk == 128)
        return p.fp8 ? launchPdl(gqa_mma_decode_attention<128, true>, grid, block, 0, stream, p)
                     : launchPdl(gqa_mma_decode_attention<128, false>, grid, block, 0, stream, p);
    return cudaErrorInvalidValue;
}

} // namespace gapscope::kernels
