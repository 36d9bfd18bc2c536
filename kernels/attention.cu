// SPDX-License-Identifier: MIT
#include "kernels/attention.h"
#include "kernels/attentionmma.h"
#include "kernels/attentionnewrow.cuh"
#include "kernels/numerics.h"
#include "kernels/pdl.h"

#include <cuda_fp8.h>

#include <cmath>
#include <vector>

namespace gapscope::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kTile = 32; // cached rows per tile: one score per thread for kHeadTile heads
constexpr int kHeadTile = 8; // query heads per block at most (kTile * kHeadTile == kThreads)
constexpr int kPad = 4; // floats of padding per shared row: float4 reads of 8 rows hit 32 banks
constexpr int kMaxVec = 4; // float4 output groups per thread: kHeadTile * dv / (4 * kThreads) <= 4 (dv <= 512)
constexpr int kLoadBatch = 5; // 16-byte loads in flight per thread while staging a tile (GQA 128: one batch)
constexpr int kQLoads = 3; // 16-byte query loads per thread: kHeadTile * dk / 8 <= 3 * kThreads (dk <= 576)

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
    l.kStride = p.dk + kPad;
    l.vStride = p.dv + kPad;
    return l;
}

__device__ __forceinline__ void storeChunk(float* d, uint4 v, bool fp8)
{
    const uint32_t w[4] = { v.x, v.y, v.z, v.w };
    if (fp8) {
#pragma unroll
        for (int j = 0; j < 4; ++j)
            reinterpret_cast<float4*>(d)[j] = make_float4(num::e4m3ToFloat(static_cast<uint8_t>(w[j])),
                num::e4m3ToFloat(static_cast<uint8_t>(w[j] >> 8)), num::e4m3ToFloat(static_cast<uint8_t>(w[j] >> 16)),
                num::e4m3ToFloat(static_cast<uint8_t>(w[j] >> 24)));
    } else {
#pragma unroll
        for (int j = 0; j < 2; ++j)
            reinterpret_cast<float4*>(d)[j]
                = make_float4(__uint_as_float(w[2 * j] << 16), __uint_as_float(w[2 * j] & 0xffff0000u),
                    __uint_as_float(w[2 * j + 1] << 16), __uint_as_float(w[2 * j + 1] & 0xffff0000u));
    }
}

// Stages nRows cached K rows (widthK elements) and, when vSrc is set, V rows (widthV) into shared
// floats: kLoadBatch 16-byte loads in flight per thread (K and V together) before the first
// conversion.
__device__ __forceinline__ void loadTile(float* kDst, uint32_t kStride, const uint8_t* kSrc, uint64_t kRowStride,
    uint32_t widthK, float* vDst, uint32_t vStride, const uint8_t* vSrc, uint64_t vRowStride, uint32_t widthV,
    uint32_t nRows, bool fp8)
{
    const uint32_t per = fp8 ? 16 : 8, esz = fp8 ? 1 : 2; // elements per 16-byte load
    const uint32_t kChunks = widthK / per, vChunks = vSrc ? widthV / per : 0;
    const uint32_t kTotal = nRows * kChunks, total = kTotal + nRows * vChunks;
    for (uint32_t base = threadIdx.x; base < total; base += kLoadBatch * kThreads) {
        uint4 v[kLoadBatch];
#pragma unroll
        for (int u = 0; u < kLoadBatch; ++u) {
            const uint32_t i = base + u * kThreads;
            if (i < kTotal)
                v[u] = __ldg(reinterpret_cast<const uint4*>(
                    kSrc + (uint64_t(i / kChunks) * kRowStride + (i % kChunks) * per) * esz));
            else if (i < total)
                v[u] = __ldg(reinterpret_cast<const uint4*>(
                    vSrc + (uint64_t((i - kTotal) / vChunks) * vRowStride + ((i - kTotal) % vChunks) * per) * esz));
        }
#pragma unroll
        for (int u = 0; u < kLoadBatch; ++u) {
            const uint32_t i = base + u * kThreads;
            if (i < kTotal)
                storeChunk(kDst + (i / kChunks) * kStride + (i % kChunks) * per, v[u], fp8);
            else if (i < total)
                storeChunk(vDst + ((i - kTotal) / vChunks) * vStride + ((i - kTotal) % vChunks) * per, v[u], fp8);
        }
    }
}

// One block: kv head `kvh`, head tile `tile`, token b, rows [r0, r1) in tiles of kTile with an online
// softmax. Scores: thread (t, h) = (tid / headTile, tid % headTile). Output: thread owns head
// tid / (kThreads / headTile) and float4 column groups spaced 4 * kThreads / headTile apart.
__device__ void attentionBody(const AttentionParams& p)
{
    extern __shared__ float4 smem4[];
    float* smem = reinterpret_cast<float*>(smem4);
    const Layout L = layoutOf(p);
    const uint32_t split = blockIdx.x, kvh = blockIdx.y / L.headTiles, tile = blockIdx.y % L.headTiles;
    const uint32_t b = blockIdx.z;
    const uint32_t h0 = kvh * L.group + tile * L.headTile;
    const uint32_t nh = min(L.headTile, L.group - tile * L.headTile);
    const uint64_t chunk = ((p.rows + gridDim.x - 1) / gridDim.x + kTile - 1) / kTile * kTile;
    const uint64_t r0 = split * chunk, r1 = p.rows < r0 + chunk ? p.rows : r0 + chunk;

    float* qs = smem; // [headTile][kStride]
    float* ks = qs + L.headTile * L.kStride; // [kTile][kStride]
    float* vs = p.mla ? ks : ks + kTile * L.kStride; // [kTile][vStride]
    float* ps = vs + (p.mla ? kTile * L.kStride : kTile * L.vStride); // [headTile][kTile]
    float* mrow = ps + L.headTile * kTile; // running max, sum, rescale per head
    float* lrow = mrow + kHeadTile;
    float* arow = lrow + kHeadTile;
    const uint32_t vStrideS = p.mla ? L.kStride : L.vStride;

    // Query rows in 16-byte loads, issued before the first tile's loads and stored with it.
    const uint32_t qChunks = p.dk / 8;
    uint4 qv[kQLoads];
#pragma unroll
    for (int u = 0; u < kQLoads; ++u) {
        const uint32_t i = threadIdx.x + u * kThreads, h = i / qChunks;
        qv[u] = make_uint4(0, 0, 0, 0);
        if (h < nh)
            qv[u] = __ldg(reinterpret_cast<const uint4*>(
                p.q + b * p.qTokenStride + (h0 + h) * p.qHeadStride + (i % qChunks) * 8));
    }
    if (threadIdx.x < kHeadTile) {
        mrow[threadIdx.x] = -INFINITY;
        lrow[threadIdx.x] = 0.f;
    }
    const uint32_t sh = threadIdx.x % L.headTile, st = threadIdx.x / L.headTile; // score (row st, head sh)
    const uint32_t tph = kThreads / L.headTile, oh = threadIdx.x / tph, oc = 4 * (threadIdx.x % tph);
    const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float4 acc[kMaxVec];
#pragma unroll
    for (int i = 0; i < kMaxVec; ++i)
        acc[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    const uint32_t esz = p.fp8 ? 1 : 2;
    const uint8_t* kBase = p.kCache + (uint64_t(b) * p.kvHeads + kvh) * p.context * p.kRowStride * esz;
    const uint8_t* vBase = p.vCache + (uint64_t(b) * p.kvHeads + kvh) * p.context * p.vRowStride * esz;
    for (uint64_t t0 = r0; t0 < r1; t0 += kTile) {
        const uint32_t nt = static_cast<uint32_t>(r1 - t0 < kTile ? r1 - t0 : kTile);
        __syncthreads(); // the previous tile's rows and probabilities are no longer read
        loadTile(ks, L.kStride, kBase + t0 * p.kRowStride * esz, p.kRowStride, p.dk, vs, L.vStride,
            p.mla ? nullptr : vBase + t0 * p.vRowStride * esz, p.vRowStride, p.dv, nt, p.fp8);
        if (t0 == r0) {
#pragma unroll
            for (int u = 0; u < kQLoads; ++u) {
                const uint32_t i = threadIdx.x + u * kThreads;
                if (i < L.headTile * qChunks) {
                    float* d = qs + (i / qChunks) * L.kStride + (i % qChunks) * 8;
                    storeChunk(d, qv[u], false);
#pragma unroll
                    for (int j = 0; j < 8; ++j)
                        d[j] *= p.scale;
                }
            }
        }
        __syncthreads();
        if (st < kTile) {
            float s = -INFINITY;
            if (sh < nh && st < nt) {
                const float4* qr = reinterpret_cast<const float4*>(qs + sh * L.kStride);
                const float4* kr = reinterpret_cast<const float4*>(ks + st * L.kStride);
                float4 a = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll 4
                for (uint32_t d = 0; d < p.dk / 4; ++d) {
                    const float4 x = qr[d], y = kr[d];
                    a.x += x.x * y.x;
                    a.y += x.y * y.y;
                    a.z += x.z * y.z;
                    a.w += x.w * y.w;
                }
                s = (a.x + a.y) + (a.z + a.w);
            }
            ps[sh * kTile + st] = s;
        }
        __syncthreads();
        if (warp < L.headTile) { // one warp per head: lane = row of the tile
            const uint32_t h = warp;
            const float s = ps[h * kTile + lane];
            float mx = s;
            for (int o = 16; o > 0; o >>= 1)
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
            const float mOld = mrow[h], mNew = fmaxf(mOld, mx);
            const float e = s == -INFINITY ? 0.f : __expf(s - mNew);
            float sum = e;
            for (int o = 16; o > 0; o >>= 1)
                sum += __shfl_xor_sync(0xffffffffu, sum, o);
            ps[h * kTile + lane] = e;
            __syncwarp();
            if (lane == 0) {
                const float alpha = mOld == -INFINITY ? 0.f : __expf(mOld - mNew);
                lrow[h] = lrow[h] * alpha + sum;
                mrow[h] = mNew;
                arow[h] = alpha;
            }
        }
        __syncthreads();
        const float alpha = arow[oh];
#pragma unroll
        for (int i = 0; i < kMaxVec; ++i) {
            acc[i].x *= alpha;
            acc[i].y *= alpha;
            acc[i].z *= alpha;
            acc[i].w *= alpha;
        }
        for (uint32_t t = 0; t < nt; ++t) {
            const float pt = ps[oh * kTile + t];
            const float* vr = vs + t * vStrideS + oc;
#pragma unroll
            for (int i = 0; i < kMaxVec; ++i)
                if (oc + i * 4 * tph < p.dv) {
                    const float4 v = *reinterpret_cast<const float4*>(vr + i * 4 * tph);
                    acc[i].x += pt * v.x;
                    acc[i].y += pt * v.y;
                    acc[i].z += pt * v.z;
                    acc[i].w += pt * v.w;
                }
        }
    }
    // Partial results: O [b][head][split][dv], then (m, l) after all O blocks.
    const uint64_t oBase = ((uint64_t(b) * p.qHeads + h0 + oh) * kAttentionMaxSplits + split) * p.dv;
    if (oh < nh) {
#pragma unroll
        for (int i = 0; i < kMaxVec; ++i) {
            const uint32_t j = oc + i * 4 * tph;
            if (j < p.dv)
                *reinterpret_cast<float4*>(p.workspace + oBase + j) = acc[i];
        }
    }
    __syncthreads();
    if (threadIdx.x < nh) {
        float* ml = p.workspace + uint64_t(p.tokens) * p.qHeads * kAttentionMaxSplits * p.dv;
        const uint64_t i = (uint64_t(b) * p.qHeads + h0 + threadIdx.x) * kAttentionMaxSplits + split;
        ml[2 * i] = r1 > r0 ? mrow[threadIdx.x] : -INFINITY;
        ml[2 * i + 1] = lrow[threadIdx.x];
    }
}

constexpr int kCombineThreads = 512;

// One block per (head, token). Thread (group g, float4 column c) merges splits g, g + groups, ...
// kCombineBatch at a time: their (m, l) and its column of their outputs loaded in one round, then
// an online softmax over the batches; the groups are merged in shared memory. Weights
// exp(m_s - M) / sum_s l_s exp(m_s - M).
constexpr int kCombineBatch = 8;

// exp(m - mx), 0 for a split without rows (m = -inf).
__device__ __forceinline__ float splitWeight(float m, float mx)
{
    return m == -INFINITY ? 0.f : __expf(m - mx);
}

__device__ __forceinline__ void addScaled(float4& acc, float w, const float4& v)
{
    acc.x += w * v.x;
    acc.y += w * v.y;
    acc.z += w * v.z;
    acc.w += w * v.w;
}

__device__ void combineBody(const AttentionParams& p)
{
    __shared__ float4 part[kCombineThreads];
    __shared__ float pm[kCombineThreads], pl[kCombineThreads];
    const uint32_t head = blockIdx.x, b = blockIdx.y;
    const float* ml = p.workspace + uint64_t(p.tokens) * p.qHeads * kAttentionMaxSplits * p.dv;
    const uint64_t base = (uint64_t(b) * p.qHeads + head) * kAttentionMaxSplits;
    const uint32_t cols = p.dv / 4; // float4 columns; dv <= 512 so cols <= 128 and groups >= 4
    const uint32_t groups = kCombineThreads / cols, gi = threadIdx.x / cols, c = threadIdx.x % cols;
    const float4* ws = reinterpret_cast<const float4*>(p.workspace + base * p.dv);
    float m = -INFINITY, l = 0.f;
    float4 o = make_float4(0.f, 0.f, 0.f, 0.f);
    // Every split < p.splits was written (m = -inf, l = 0 when it had no rows).
    for (uint32_t s0 = gi; gi < groups && s0 < p.splits; s0 += groups * kCombineBatch) {
        float ms[kCombineBatch], ls[kCombineBatch];
        float4 v[kCombineBatch];
#pragma unroll
        for (int k = 0; k < kCombineBatch; ++k) { // loads without branches: all in flight at once
            const uint32_t s = s0 + k * groups, si = s < p.splits ? s : s0;
            ms[k] = ml[2 * (base + si)];
            ls[k] = ml[2 * (base + si) + 1];
            v[k] = ws[uint64_t(si) * cols + c];
            if (s >= p.splits)
                ms[k] = -INFINITY;
        }
        float mx = m;
#pragma unroll
        for (int k = 0; k < kCombineBatch; ++k)
            mx = fmaxf(mx, ms[k]);
        if (mx == -INFINITY)
            continue;
        const float a = splitWeight(m, mx);
        l *= a;
        o = make_float4(o.x * a, o.y * a, o.z * a, o.w * a);
#pragma unroll
        for (int k = 0; k < kCombineBatch; ++k) {
            const float w = splitWeight(ms[k], mx);
            l += w * ls[k];
            addScaled(o, w, v[k]);
        }
        m = mx;
    }
    part[threadIdx.x] = o;
    pm[threadIdx.x] = m;
    pl[threadIdx.x] = l;
    __syncthreads();
    if (threadIdx.x < cols) {
        float mx = -INFINITY;
        for (uint32_t g = 0; g < groups; ++g)
            mx = fmaxf(mx, pm[g * cols + threadIdx.x]);
        float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
        float den = 0.f;
        for (uint32_t g = 0; g < groups; ++g) {
            const uint32_t i = g * cols + threadIdx.x;
            const float w = splitWeight(pm[i], mx);
            den += w * pl[i];
            addScaled(sum, w, part[i]);
        }
        const float inv = den > 0.f ? 1.f / den : 0.f;
        uint16_t* out = p.out + (uint64_t(b) * p.qHeads + head) * p.dv + 4 * threadIdx.x;
        out[0] = num::floatToBf16(sum.x * inv);
        out[1] = num::floatToBf16(sum.y * inv);
        out[2] = num::floatToBf16(sum.z * inv);
        out[3] = num::floatToBf16(sum.w * inv);
    }
}

// ---------------------------------------------------------------------------------------------
// GQA decode attention, rows per warp (gqa_flash_decode_attention<D>): head dim D = dk = dv of 64,
// 128 or 256, bf16 or FP8 cache. A row is read by D/8 lanes, 8 elements each, straight into
// registers (no shared-memory staging); each lane keeps its 8 query elements of up to 8 heads. A
// row's 8 dot products are reduced over its lanes by a reduce-scatter (3 halving exchanges, then
// plain adds), after which each lane holds the full score of one head. Each warp runs its own
// online softmax over batches of rows and the block's warps are merged in shared memory at the
// end; the partial results go to the same workspace as the tiled kernel's, for the same combine.
// With `ropeCosSin` set the kernel also applies RoPE: the query on load, and the new key/value row
// at position context-1 (rotated, encoded like the cache) replaces that row for the block reading
// it and is written to the cache by one block per (token, KV head).

namespace gqa {

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr int kHeads = 8; // query heads per block at most
constexpr int kBatch = 32; // rows per block per batch

template <int D> struct Shape {
    static constexpr int kLanes = D / 8; // lanes per row
    static constexpr int kRows = 32 / kLanes; // rows per warp per step
    static constexpr int kSteps = kBatch / (kWarps * kRows); // steps per warp per batch
};

__device__ __forceinline__ uint4 loadChunk(const uint8_t* p, bool fp8)
{
    if (fp8) {
        const uint2 v = *reinterpret_cast<const uint2*>(p);
        return make_uint4(v.x, v.y, 0, 0);
    }
    return *reinterpret_cast<const uint4*>(p);
}

__device__ __forceinline__ void unpack8(uint4 v, bool fp8, float (&x)[8])
{
    if (fp8) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            x[j] = num::e4m3ToFloat(static_cast<uint8_t>(v.x >> (8 * j)));
            x[4 + j] = num::e4m3ToFloat(static_cast<uint8_t>(v.y >> (8 * j)));
        }
        return;
    }
    const uint32_t w[4] = { v.x, v.y, v.z, v.w };
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        x[2 * j] = __uint_as_float(w[j] << 16);
        x[2 * j + 1] = __uint_as_float(w[j] & 0xffff0000u);
    }
}

// Lane (within its row's kLanes lanes) that holds head h's score after the reduce-scatter.
template <int L> __device__ __forceinline__ uint32_t ownerLane(uint32_t h)
{
    return ((h & 4) ? L / 2 : 0) + ((h & 2) ? L / 4 : 0) + ((h & 1) ? L / 8 : 0);
}

template <int D> __device__ void body(const AttentionParams& p)
{
    using S = Shape<D>;
    constexpr int L = S::kLanes;
    const uint32_t headTiles = (p.qHeads / p.kvHeads + kHeads - 1) / kHeads;
    const uint32_t group = p.qHeads / p.kvHeads;
    const uint32_t split = blockIdx.x, kvh = blockIdx.y / headTiles, tile = blockIdx.y % headTiles, b = blockIdx.z;
    const uint32_t h0 = kvh * group + tile * kHeads;
    const uint32_t nh = min(uint32_t(kHeads), group - tile * kHeads);
    const uint64_t chunk = ((p.rows + gridDim.x - 1) / gridDim.x + kBatch - 1) / kBatch * kBatch;
    const uint64_t r0 = split * chunk, r1 = p.rows < r0 + chunk ? p.rows : r0 + chunk;
    const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32, c = lane % L, rg = lane / L;
    const bool fp8 = p.fp8;
    const uint32_t esz = fp8 ? 1 : 2;

    __shared__ __align__(16) uint8_t newRow[2][D * 2]; // key, value at position context-1 (cache encoding)
    __shared__ __align__(16) float accS[kWarps][kHeads][D];
    __shared__ float mS[kWarps][kHeads], lS[kWarps][kHeads];

    const bool rope = p.ropeCosSin != nullptr;
    const uint64_t pos = p.context - 1;
    const bool ownsNew = rope && pos >= r0 && pos < r1;
    const uint8_t* kBase = p.kCache + (uint64_t(b) * p.kvHeads + kvh) * p.context * p.kRowStride * esz;
    const uint8_t* vBase = p.vCache + (uint64_t(b) * p.kvHeads + kvh) * p.context * p.vRowStride * esz;
    // Rows [base, base + kBatch): this lane's K and V chunks; the new row comes from shared memory.
    uint4 kr[S::kSteps], vr[S::kSteps];
    bool valid[S::kSteps];
    auto loadBatch = [&](uint64_t base, bool freshToo) {
#pragma unroll
        for (int t = 0; t < S::kSteps; ++t) {
            const uint64_t row = base + (warp * S::kSteps + t) * S::kRows + rg;
            valid[t] = row < r1;
            kr[t] = vr[t] = make_uint4(0, 0, 0, 0);
            const bool fresh = ownsNew && row == pos;
            if (valid[t] && (freshToo || !fresh)) {
                kr[t] = loadChunk(fresh ? newRow[0] + 8 * c * esz : kBase + (row * p.kRowStride + 8 * c) * esz, fp8);
                vr[t] = loadChunk(fresh ? newRow[1] + 8 * c * esz : vBase + (row * p.vRowStride + 8 * c) * esz, fp8);
            }
        }
    };
    // With the append fused, the first batch is read before the PDL wait, as the GEMVs read their
    // weights: nothing before this kernel writes the cache (its new row is patched in below).
    // Otherwise a rope kernel before may be writing it.
    if (r0 < r1 && rope)
        loadBatch(r0, false);
    pdlEnter(); // PDL: the kernel before is done (kernels/pdl.h)
    slowTailBegin(p.tail);
    if (r0 < r1 && !rope)
        loadBatch(r0, true);

    // The new row (fused RoPE): rotated key and value, encoded as the cache stores them.
    const bool appends = rope && tile == 0 && (ownsNew || (pos >= p.rows && split == gridDim.x - 1));
    if (ownsNew || appends)
        ropeNewRow<D>(p, b, kvh, fp8, appends, newRow);

    // Query: 8 elements per lane for each head, scaled (and rotated with RoPE).
    float qf[kHeads][8];
#pragma unroll
    for (int h = 0; h < kHeads; ++h) {
        float x[8] = { 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f };
        if (uint32_t(h) < nh) {
            const uint16_t* qh = p.q + b * p.qTokenStride + (h0 + h) * p.qHeadStride;
            unpack8(*reinterpret_cast<const uint4*>(qh + 8 * c), false, x);
            if (rope) {
                float y[8];
                unpack8(*reinterpret_cast<const uint4*>(qh + 8 * (c ^ (L / 2))), false, y);
                const bool low = c < L / 2;
                const uint32_t i0 = 8 * (low ? c : c - L / 2);
#pragma unroll
                for (int j = 0; j < 8; ++j) {
                    const float cs = p.ropeCosSin[i0 + j], sn = p.ropeCosSin[D / 2 + i0 + j];
                    x[j] = low ? x[j] * cs - y[j] * sn : x[j] * cs + y[j] * sn;
                }
            }
        }
#pragma unroll
        for (int j = 0; j < 8; ++j)
            qf[h][j] = x[j] * p.scale;
    }

    float acc[kHeads][8];
#pragma unroll
    for (int h = 0; h < kHeads; ++h)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[h][j] = 0.f;
    float mOwn = -INFINITY, lOwn = 0.f;
    const bool up1 = c & (L / 2), up2 = c & (L / 4), up3 = c & (L / 8);
    if (ownsNew && r0 < r1) {
#pragma unroll
        for (int t = 0; t < S::kSteps; ++t)
            if (valid[t] && r0 + (warp * S::kSteps + t) * S::kRows + rg == pos) {
                kr[t] = loadChunk(newRow[0] + 8 * c * esz, fp8);
                vr[t] = loadChunk(newRow[1] + 8 * c * esz, fp8);
            }
    }

    for (uint64_t base = r0; base < r1; base += kBatch) {
        if (base != r0)
            loadBatch(base, true);
        float s[S::kSteps];
#pragma unroll
        for (int t = 0; t < S::kSteps; ++t) {
            float x[8], v[kHeads];
            unpack8(kr[t], fp8, x);
#pragma unroll
            for (int h = 0; h < kHeads; ++h) {
                float a = 0.f;
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    a += qf[h][j] * x[j];
                v[h] = a;
            }
            // Reduce-scatter over the row's lanes: 8 values -> 4 -> 2 -> 1, then plain adds.
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const float send = up1 ? v[i] : v[i + 4], keep = up1 ? v[i + 4] : v[i];
                v[i] = keep + __shfl_xor_sync(0xffffffffu, send, L / 2);
            }
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                const float send = up2 ? v[i] : v[i + 2], keep = up2 ? v[i + 2] : v[i];
                v[i] = keep + __shfl_xor_sync(0xffffffffu, send, L / 4);
            }
            {
                const float send = up3 ? v[0] : v[1], keep = up3 ? v[1] : v[0];
                v[0] = keep + __shfl_xor_sync(0xffffffffu, send, L / 8);
            }
#pragma unroll
            for (int o = L / 16; o >= 1; o /= 2)
                v[0] += __shfl_xor_sync(0xffffffffu, v[0], o);
            s[t] = valid[t] ? v[0] : -INFINITY;
        }
        // Online softmax of the lane's head over the batch (max over the warp's row groups).
        float mx = s[0];
#pragma unroll
        for (int t = 1; t < S::kSteps; ++t)
            mx = fmaxf(mx, s[t]);
#pragma unroll
        for (int o = L; o < 32; o *= 2)
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
        const float mNew = fmaxf(mOwn, mx);
        const float alpha = mOwn == -INFINITY ? 0.f : __expf(mOwn - mNew);
        float pr[S::kSteps], sum = 0.f;
#pragma unroll
        for (int t = 0; t < S::kSteps; ++t) {
            pr[t] = s[t] == -INFINITY ? 0.f : __expf(s[t] - mNew);
            sum += pr[t];
        }
        lOwn = lOwn * alpha + sum;
        mOwn = mNew;
#pragma unroll
        for (int h = 0; h < kHeads; ++h) {
            const float a = __shfl_sync(0xffffffffu, alpha, ownerLane<L>(h));
#pragma unroll
            for (int j = 0; j < 8; ++j)
                acc[h][j] *= a;
        }
#pragma unroll
        for (int t = 0; t < S::kSteps; ++t) {
            float y[8];
            unpack8(vr[t], fp8, y);
#pragma unroll
            for (int h = 0; h < kHeads; ++h) {
                const float ph = __shfl_sync(0xffffffffu, pr[t], rg * L + ownerLane<L>(h));
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    acc[h][j] += ph * y[j];
            }
        }
    }
    // The warp's row groups hold partial sums of the same heads and columns.
#pragma unroll
    for (int o = L; o < 32; o *= 2) {
        lOwn += __shfl_xor_sync(0xffffffffu, lOwn, o);
#pragma unroll
        for (int h = 0; h < kHeads; ++h)
#pragma unroll
            for (int j = 0; j < 8; ++j)
                acc[h][j] += __shfl_xor_sync(0xffffffffu, acc[h][j], o);
    }
    if (rg == 0) {
#pragma unroll
        for (int h = 0; h < kHeads; ++h) {
            *reinterpret_cast<float4*>(&accS[warp][h][8 * c]) = make_float4(acc[h][0], acc[h][1], acc[h][2], acc[h][3]);
            *reinterpret_cast<float4*>(&accS[warp][h][8 * c + 4])
                = make_float4(acc[h][4], acc[h][5], acc[h][6], acc[h][7]);
        }
#pragma unroll
        for (int h = 0; h < kHeads; ++h)
            if (c == ownerLane<L>(h)) {
                mS[warp][h] = mOwn;
                lS[warp][h] = lOwn;
            }
    }
    __syncthreads();
    // Merge the warps; write O [b][head][split][dv] and (m, l) as the tiled kernel does.
    float* ml = p.workspace + uint64_t(p.tokens) * p.qHeads * kAttentionMaxSplits * p.dv;
    for (uint32_t i = threadIdx.x; i < nh * L; i += kThreads) {
        const uint32_t h = i / L, col = 8 * (i % L);
        float m = mS[0][h];
#pragma unroll
        for (int w = 1; w < kWarps; ++w)
            m = fmaxf(m, mS[w][h]);
        float o[8] = { 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f }, l = 0.f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) {
            const float wt = mS[w][h] == -INFINITY ? 0.f : __expf(mS[w][h] - m);
            l += wt * lS[w][h];
#pragma unroll
            for (int j = 0; j < 8; ++j)
                o[j] += wt * accS[w][h][col + j];
        }
        const uint64_t oi = (uint64_t(b) * p.qHeads + h0 + h) * kAttentionMaxSplits + split;
        float4* dst = reinterpret_cast<float4*>(p.workspace + oi * p.dv + col);
        dst[0] = make_float4(o[0], o[1], o[2], o[3]);
        dst[1] = make_float4(o[4], o[5], o[6], o[7]);
        if (col == 0) {
            ml[2 * oi] = m;
            ml[2 * oi + 1] = l;
        }
    }
}

} // namespace gqa

} // namespace

template <int D> __global__ void __launch_bounds__(gqa::kThreads) gqa_flash_decode_attention(AttentionParams p)
{
    gqa::body<D>(p); // waits for the kernel before (pdlEnter) after its first cache loads
    slowTailEnd(p.tail);
}

__global__ void __launch_bounds__(kThreads) mla_decode_attention(AttentionParams p)
{
    pdlEnter(); // PDL: the kernel before is done (kernels/pdl.h)
    slowTailBegin(p.tail);
    attentionBody(p);
    slowTailEnd(p.tail);
}

__global__ void __launch_bounds__(kThreads) gqa_tiled_decode_attention(AttentionParams p)
{
    pdlEnter(); // PDL: the kernel before is done (kernels/pdl.h)
    slowTailBegin(p.tail);
    attentionBody(p);
    slowTailEnd(p.tail);
}

__global__ void mla_decode_combine(AttentionParams p)
{
    pdlEnter(); // PDL: the kernel before is done (kernels/pdl.h)
    combineBody(p);
}
__global__ void gqa_flash_decode_combine(AttentionParams p)
{
    pdlEnter(); // PDL: the kernel before is done (kernels/pdl.h)
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
        e = cudaFuncSetAttribute(gqa_tiled_decode_attention, cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
    return e;
}

uint64_t attentionWorkspaceFloats(uint32_t tokens, uint32_t qHeads, uint32_t dv)
{
    return uint64_t(tokens) * qHeads * kAttentionMaxSplits * (dv + 2);
}

std::vector<float> ropeCosSinTable(uint64_t pos, uint32_t ropeDim, double theta)
{
    const uint32_t half = ropeDim / 2;
    std::vector<float> t(2 * size_t(half));
    for (uint32_t i = 0; i < half; ++i) {
        const double ang = std::fmod(static_cast<double>(pos) * std::pow(theta, -2.0 * i / ropeDim), 6.283185307179586);
        t[i] = static_cast<float>(std::cos(ang));
        t[half + i] = static_cast<float>(std::sin(ang));
    }
    return t;
}

static size_t sharedBytes(const AttentionParams& p, const Layout& L)
{
    size_t f = size_t(L.headTile) * L.kStride + size_t(kTile) * L.kStride + (p.mla ? 0 : size_t(kTile) * L.vStride)
        + size_t(L.headTile) * kTile + 3 * kHeadTile;
    return f * sizeof(float);
}

static uint32_t chooseSplits(uint64_t rows, uint32_t rowsPerUnit, uint32_t blocksPerSplit, int smCount)
{
    // About two blocks per SM, each at least one unit of rows.
    const uint64_t maxByRows = (rows + rowsPerUnit - 1) / rowsPerUnit;
    uint64_t want = (2 * uint64_t(smCount) + blocksPerSplit - 1) / blocksPerSplit;
    want = want < maxByRows ? want : maxByRows;
    return static_cast<uint32_t>(want < 1 ? 1 : want > kAttentionMaxSplits ? kAttentionMaxSplits : want);
}

cudaError_t launchAttention(const AttentionParams& params, int smCount, cudaStream_t stream, AttentionStage stage)
{
    AttentionParams p = params;
    if (p.kvHeads == 0 || p.qHeads % p.kvHeads != 0 || p.tokens == 0 || p.rows == 0 || p.rows > p.context
        || p.dk % 16 != 0 || p.dv % 16 != 0 || p.dv > 512 || (p.mla && p.dv > p.dk) || !p.workspace)
        return cudaErrorInvalidValue;
    if (p.splits > kAttentionMaxSplits)
        return cudaErrorInvalidValue;
    const bool rows = gqaRowsKernel(p.mla, p.dk, p.dv);
    if (rows && (p.qHeadStride % 8 || p.qTokenStride % 8 || p.kRowStride % 8 || p.vRowStride % 8))
        return cudaErrorInvalidValue; // 16-byte query loads, row chunks of 8 elements
    if (p.ropeCosSin && (!rows || !p.newK || !p.newV || p.newTokenStride % 8))
        return cudaErrorInvalidValue;
    const bool split = stage != AttentionStage::Combine, combine = stage != AttentionStage::Split;
    cudaError_t e = cudaSuccess;
    // Tensor cores where they serve (FP8 rows of 128 are read in 16-byte pieces), else CUDA cores.
    if (rows && !p.cudaCores && gqaMmaKernel(p.dk) && !(p.fp8 && p.dk == 128 && p.vRowStride % 16)) {
        const uint32_t headTiles = (p.qHeads / p.kvHeads + kGqaMmaHeads - 1) / kGqaMmaHeads;
        if (p.splits == 0)
            p.splits = chooseSplits(p.rows, kGqaMmaBlockRows, p.kvHeads * headTiles * p.tokens, smCount);
        if (split)
            e = launchGqaMmaAttention(p, dim3(p.splits, p.kvHeads * headTiles, p.tokens), stream);
    } else if (rows) {
        const uint32_t headTiles = (p.qHeads / p.kvHeads + gqa::kHeads - 1) / gqa::kHeads;
        if (p.splits == 0)
            p.splits = chooseSplits(p.rows, gqa::kBatch, p.kvHeads * headTiles * p.tokens, smCount);
        const dim3 grid(p.splits, p.kvHeads * headTiles, p.tokens);
        if (!split)
            ;
        else if (p.dk == 64)
            e = launchPdl(gqa_flash_decode_attention<64>, grid, dim3(gqa::kThreads), 0, stream, p);
        else if (p.dk == 128)
            e = launchPdl(gqa_flash_decode_attention<128>, grid, dim3(gqa::kThreads), 0, stream, p);
        else
            e = launchPdl(gqa_flash_decode_attention<256>, grid, dim3(gqa::kThreads), 0, stream, p);
    } else {
        const Layout L = layoutOf(p);
        if (uint64_t(L.headTile) * p.dv > uint64_t(kThreads) * 4 * kMaxVec
            || uint64_t(L.headTile) * p.dk / 8 > uint64_t(kThreads) * kQLoads)
            return cudaErrorInvalidValue;
        if (p.splits == 0)
            p.splits = chooseSplits(p.rows, kTile, p.kvHeads * L.headTiles * p.tokens, smCount);
        if (split)
            e = launchPdl(p.mla ? mla_decode_attention : gqa_tiled_decode_attention,
                dim3(p.splits, p.kvHeads * L.headTiles, p.tokens), dim3(kThreads), sharedBytes(p, L), stream, p);
    }
    if (e != cudaSuccess || !combine)
        return e;
    return launchPdl(p.mla ? mla_decode_combine : gqa_flash_decode_combine, dim3(p.qHeads, p.tokens),
        dim3(kCombineThreads), 0, stream, p);
}

} // namespace gapscope::kernels
