// SPDX-License-Identifier: MIT
#include "kernels/attention.h"
#include "kernels/numerics.h"

#include <cuda_fp8.h>

namespace gapscope::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kTile = 16; // cached rows per tile
constexpr int kHeadTile = 16; // query heads per block at most
constexpr int kMaxOut = 32; // outputs per thread: kHeadTile * dv / kThreads <= 32 (dv <= 512)

struct Layout {
    uint32_t headTile, headTiles, group, kStride, vStride;
};

__host__ __device__ inline uint32_t pow2AtLeast(uint32_t v)
{
    uint32_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

__host__ __device__ inline Layout layoutOf(const AttentionParams& p)
{
    Layout l;
    l.group = p.qHeads / p.kvHeads;
    l.headTile = pow2AtLeast(l.group < kHeadTile ? l.group : kHeadTile);
    l.headTiles = (l.group + l.headTile - 1) / l.headTile;
    l.kStride = p.dk + 1;
    l.vStride = p.dv + 1;
    return l;
}

__device__ __forceinline__ void loadRows(
    float* dst, uint32_t stride, const uint8_t* src, uint64_t rowStride, uint32_t width, uint32_t nRows, bool fp8)
{
    const uint32_t per = fp8 ? 16 : 8; // elements per 16-byte load
    const uint32_t chunks = width / per;
    for (uint32_t i = threadIdx.x; i < nRows * chunks; i += blockDim.x) {
        const uint32_t r = i / chunks, c = (i % chunks) * per;
        const uint8_t* p = src + (uint64_t(r) * rowStride + c) * (fp8 ? 1 : 2);
        const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
        const uint32_t w[4] = { v.x, v.y, v.z, v.w };
        float* d = dst + r * stride + c;
        if (fp8) {
#pragma unroll
            for (int j = 0; j < 16; ++j)
                d[j] = num::e4m3ToFloat(static_cast<uint8_t>(w[j / 4] >> (8 * (j % 4))));
        } else {
#pragma unroll
            for (int j = 0; j < 8; ++j)
                d[j] = num::bf16ToFloat(static_cast<uint16_t>(w[j / 2] >> (16 * (j % 2))));
        }
    }
}

__device__ void attentionBody(const AttentionParams& p)
{
    extern __shared__ float smem[];
    const Layout L = layoutOf(p);
    const uint32_t split = blockIdx.x, kvh = blockIdx.y / L.headTiles, tile = blockIdx.y % L.headTiles;
    const uint32_t b = blockIdx.z;
    const uint32_t h0 = kvh * L.group + tile * L.headTile;
    const uint32_t nh = min(L.headTile, L.group - tile * L.headTile);
    const uint64_t chunk = ((p.rows + gridDim.x - 1) / gridDim.x + kTile - 1) / kTile * kTile;
    const uint64_t r0 = split * chunk, r1 = p.rows < r0 + chunk ? p.rows : r0 + chunk;

    float* qs = smem; // [headTile][dk]
    float* ks = qs + L.headTile * p.dk; // [kTile][dk+1]
    float* vs = p.mla ? ks : ks + kTile * L.kStride; // [kTile][dv+1]
    float* ps = vs + (p.mla ? kTile * L.kStride : kTile * L.vStride); // [headTile][kTile]
    float* mrow = ps + L.headTile * kTile; // running max, sum, rescale per head
    float* lrow = mrow + L.headTile;
    float* arow = lrow + L.headTile;
    const uint32_t vStrideS = p.mla ? L.kStride : L.vStride;

    for (uint32_t i = threadIdx.x; i < L.headTile * p.dk; i += blockDim.x) {
        const uint32_t h = i / p.dk, d = i % p.dk;
        qs[i] = h < nh ? num::bf16ToFloat(p.q[b * p.qTokenStride + (h0 + h) * p.qHeadStride + d]) : 0.f;
    }
    if (threadIdx.x < L.headTile) {
        mrow[threadIdx.x] = -INFINITY;
        lrow[threadIdx.x] = 0.f;
    }
    const uint32_t tph = kThreads / L.headTile, oh = threadIdx.x / tph, oj = threadIdx.x % tph;
    float acc[kMaxOut];
#pragma unroll
    for (int i = 0; i < kMaxOut; ++i)
        acc[i] = 0.f;
    const uint32_t esz = p.fp8 ? 1 : 2;
    const uint8_t* kBase = p.kCache + (uint64_t(b) * p.kvHeads + kvh) * p.context * p.kRowStride * esz;
    const uint8_t* vBase = p.vCache + (uint64_t(b) * p.kvHeads + kvh) * p.context * p.vRowStride * esz;
    __syncthreads();
    for (uint64_t t0 = r0; t0 < r1; t0 += kTile) {
        const uint32_t nt = static_cast<uint32_t>(r1 - t0 < kTile ? r1 - t0 : kTile);
        loadRows(ks, L.kStride, kBase + t0 * p.kRowStride * esz, p.kRowStride, p.dk, nt, p.fp8);
        if (!p.mla)
            loadRows(vs, L.vStride, vBase + t0 * p.vRowStride * esz, p.vRowStride, p.dv, nt, p.fp8);
        __syncthreads();
        for (uint32_t i = threadIdx.x; i < L.headTile * kTile; i += blockDim.x) {
            const uint32_t h = i / kTile, t = i % kTile;
            float s = -INFINITY;
            if (h < nh && t < nt) {
                s = 0.f;
                const float* qr = qs + h * p.dk;
                const float* kr = ks + t * L.kStride;
                for (uint32_t d = 0; d < p.dk; ++d)
                    s += qr[d] * kr[d];
                s *= p.scale;
            }
            ps[i] = s;
        }
        __syncthreads();
        if (threadIdx.x < L.headTile) {
            const uint32_t h = threadIdx.x;
            float mx = mrow[h];
            for (uint32_t t = 0; t < nt; ++t)
                mx = fmaxf(mx, ps[h * kTile + t]);
            const float alpha = mrow[h] == -INFINITY ? 0.f : __expf(mrow[h] - mx);
            float sum = 0.f;
            for (uint32_t t = 0; t < kTile; ++t) {
                const float e = (t < nt && h < nh) ? __expf(ps[h * kTile + t] - mx) : 0.f;
                ps[h * kTile + t] = e;
                sum += e;
            }
            lrow[h] = lrow[h] * alpha + sum;
            mrow[h] = mx;
            arow[h] = alpha;
        }
        __syncthreads();
        const float alpha = arow[oh];
#pragma unroll
        for (int i = 0; i < kMaxOut; ++i)
            acc[i] *= alpha;
        for (uint32_t t = 0; t < nt; ++t) {
            const float pt = ps[oh * kTile + t];
            const float* vr = vs + t * vStrideS + oj;
#pragma unroll
            for (int i = 0; i < kMaxOut; ++i)
                if (oj + i * tph < p.dv)
                    acc[i] += pt * vr[i * tph];
        }
        __syncthreads();
    }
    // Partial results: O [b][head][split][dv], then (m, l) after all O blocks.
    const uint64_t oBase = ((uint64_t(b) * p.qHeads + h0 + oh) * kAttentionMaxSplits + split) * p.dv;
    if (oh < nh) {
#pragma unroll
        for (int i = 0; i < kMaxOut; ++i) {
            const uint32_t j = oj + i * tph;
            if (j < p.dv)
                p.workspace[oBase + j] = acc[i];
        }
    }
    if (threadIdx.x < nh) {
        float* ml = p.workspace + uint64_t(p.tokens) * p.qHeads * kAttentionMaxSplits * p.dv;
        const uint64_t i = (uint64_t(b) * p.qHeads + h0 + threadIdx.x) * kAttentionMaxSplits + split;
        ml[2 * i] = r1 > r0 ? mrow[threadIdx.x] : -INFINITY;
        ml[2 * i + 1] = lrow[threadIdx.x];
    }
}

__device__ void combineBody(const AttentionParams& p)
{
    __shared__ float weight[kAttentionMaxSplits];
    __shared__ float red[2];
    const uint32_t head = blockIdx.x, b = blockIdx.y;
    const float* ml = p.workspace + uint64_t(p.tokens) * p.qHeads * kAttentionMaxSplits * p.dv;
    const uint64_t base = (uint64_t(b) * p.qHeads + head) * kAttentionMaxSplits;
    // Split weights exp(m_s - M) / sum_s l_s exp(m_s - M), computed once by the first warp.
    if (threadIdx.x < 32) {
        float m0 = -INFINITY, m1 = -INFINITY;
        if (threadIdx.x < p.splits)
            m0 = ml[2 * (base + threadIdx.x)];
        if (threadIdx.x + 32 < p.splits)
            m1 = ml[2 * (base + threadIdx.x + 32)];
        float mx = fmaxf(m0, m1);
        for (int o = 16; o > 0; o >>= 1)
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
        const float e0 = m0 == -INFINITY ? 0.f : __expf(m0 - mx), e1 = m1 == -INFINITY ? 0.f : __expf(m1 - mx);
        float den = (threadIdx.x < p.splits ? ml[2 * (base + threadIdx.x) + 1] * e0 : 0.f)
            + (threadIdx.x + 32 < p.splits ? ml[2 * (base + threadIdx.x + 32) + 1] * e1 : 0.f);
        for (int o = 16; o > 0; o >>= 1)
            den += __shfl_xor_sync(0xffffffffu, den, o);
        weight[threadIdx.x] = e0;
        weight[threadIdx.x + 32] = e1;
        if (threadIdx.x == 0)
            red[0] = den > 0.f ? 1.f / den : 0.f;
    }
    __syncthreads();
    const float inv = red[0];
    const float* ws = p.workspace + base * p.dv;
    for (uint32_t j = threadIdx.x; j < p.dv; j += blockDim.x) {
        float o = 0.f;
#pragma unroll 8
        for (uint32_t s = 0; s < p.splits; ++s)
            o += weight[s] * ws[uint64_t(s) * p.dv + j];
        p.out[(uint64_t(b) * p.qHeads + head) * p.dv + j] = num::floatToBf16(o * inv);
    }
}

} // namespace

__global__ void __launch_bounds__(kThreads) mla_decode_attention(AttentionParams p)
{
    slowTailBegin(p.tail);
    attentionBody(p);
    slowTailEnd(p.tail);
}

__global__ void __launch_bounds__(kThreads) gqa_flash_decode_attention(AttentionParams p)
{
    slowTailBegin(p.tail);
    attentionBody(p);
    slowTailEnd(p.tail);
}

__global__ void mla_decode_combine(AttentionParams p)
{
    combineBody(p);
}
__global__ void gqa_flash_decode_combine(AttentionParams p)
{
    combineBody(p);
}

cudaError_t prepareAttentionKernels()
{
    int dev = 0, optin = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(mla_decode_attention, cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(gqa_flash_decode_attention, cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
    return e;
}

uint64_t attentionWorkspaceFloats(uint32_t tokens, uint32_t qHeads, uint32_t dv)
{
    return uint64_t(tokens) * qHeads * kAttentionMaxSplits * (dv + 2);
}

static size_t sharedBytes(const AttentionParams& p, const Layout& L)
{
    size_t f = size_t(L.headTile) * p.dk + size_t(kTile) * L.kStride + (p.mla ? 0 : size_t(kTile) * L.vStride)
        + size_t(L.headTile) * kTile + 3 * L.headTile;
    return f * sizeof(float);
}

cudaError_t launchAttention(const AttentionParams& params, int smCount, cudaStream_t stream)
{
    AttentionParams p = params;
    if (p.kvHeads == 0 || p.qHeads % p.kvHeads != 0 || p.tokens == 0 || p.rows == 0 || p.rows > p.context
        || p.dk % 16 != 0 || p.dv % 16 != 0 || p.dv > 512 || (p.mla && p.dv > p.dk) || !p.workspace)
        return cudaErrorInvalidValue;
    const Layout L = layoutOf(p);
    if (uint64_t(L.headTile) * p.dv > uint64_t(kThreads) * kMaxOut)
        return cudaErrorInvalidValue;
    const uint32_t blocksPerSplit = p.kvHeads * L.headTiles * p.tokens;
    if (p.splits == 0) {
        const uint64_t maxByRows = (p.rows + 63) / 64; // at least 64 rows per split
        uint64_t want = (uint64_t(smCount) + blocksPerSplit - 1) / blocksPerSplit;
        want = want < maxByRows ? want : maxByRows;
        p.splits = static_cast<uint32_t>(want < 1 ? 1 : want > kAttentionMaxSplits ? kAttentionMaxSplits : want);
    }
    if (p.splits > kAttentionMaxSplits)
        return cudaErrorInvalidValue;
    const size_t smem = sharedBytes(p, L);
    auto kernel = p.mla ? mla_decode_attention : gqa_flash_decode_attention;
    cudaError_t e = cudaSuccess;
    kernel<<<dim3(p.splits, p.kvHeads * L.headTiles, p.tokens), kThreads, smem, stream>>>(p);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    auto combine = p.mla ? mla_decode_combine : gqa_flash_decode_combine;
    combine<<<dim3(p.qHeads, p.tokens), p.dv >= 256 ? 256 : 128, 0, stream>>>(p);
    return cudaGetLastError();
}

} // namespace gapscope::kernels
