// SPDX-License-Identifier: MIT
#include "kernels/gemv.h"
#include "kernels/numerics.h"
#include "kernels/pdl.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <map>
#include <mutex>

namespace gapscope::kernels {

using model::Precision;

namespace {

constexpr int kWarps = 8;

__device__ __forceinline__ uint4 loadStream(const uint8_t* p)
{
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

__device__ __forceinline__ float lo16(uint32_t u)
{
    return __uint_as_float(u << 16);
}
__device__ __forceinline__ float hi16(uint32_t u)
{
    return __uint_as_float(u & 0xffff0000u);
}

__device__ __forceinline__ float2 half2f(uint32_t u)
{
    __half2 h = *reinterpret_cast<__half2*>(&u);
    return __half22float2(h);
}

// x for token t at element k (a multiple of 8): 8 bf16 values.
__device__ __forceinline__ uint4 loadX(const uint16_t* x, uint64_t k)
{
    return __ldg(reinterpret_cast<const uint4*>(x + k));
}

__device__ __forceinline__ float dotBf16(uint32_t w, uint32_t x)
{
    return lo16(w) * lo16(x) + hi16(w) * hi16(x);
}

__device__ __forceinline__ float dotHalf(uint32_t w, uint32_t x)
{
    const float2 f = half2f(w);
    return f.x * lo16(x) + f.y * hi16(x);
}

// Two FP8 E4M3 values (bytes 0/1 of `w16`) against x pair.
__device__ __forceinline__ float dotFp8(uint32_t w16, uint32_t x)
{
    const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(w16 & 0xffffu), __NV_E4M3);
    const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&h));
    return f.x * lo16(x) + f.y * hi16(x);
}

// 8 E2M1 values of one word (element 8j+i in nibble i) against x[8j..8j+7] (x0..x3 words).
// Each pair (i, i+4) is placed into a half2 whose value is 2^-14 times the E2M1 value.
__device__ __forceinline__ float dotE2m1Word(uint32_t w, uint4 x)
{
    float s = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const uint32_t v = w >> (4 * i);
        const float2 f = half2f(((v & 0x00070007u) << 9) | ((v & 0x00080008u) << 12));
        const uint32_t xa = i < 2 ? x.x : x.y; // elements i (0..3) live in words 0..1
        const uint32_t xb = i < 2 ? x.z : x.w; // elements i+4 in words 2..3
        const float a = (i & 1) ? hi16(xa) : lo16(xa);
        const float b = (i & 1) ? hi16(xb) : lo16(xb);
        s += f.x * a + f.y * b;
    }
    return s;
}

// 8 INT4 values of one word against x; returns sum (q - zero) * x.
__device__ __forceinline__ float dotInt4Word(uint32_t w, uint4 x, float zeroPlus1024)
{
    float s = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const uint32_t v = w >> (4 * i);
        const float2 f = half2f((v & 0x000f000fu) | 0x64006400u); // 1024 + q
        const uint32_t xa = i < 2 ? x.x : x.y;
        const uint32_t xb = i < 2 ? x.z : x.w;
        const float a = (i & 1) ? hi16(xa) : lo16(xa);
        const float b = (i & 1) ? hi16(xb) : lo16(xb);
        s += (f.x - zeroPlus1024) * a + (f.y - zeroPlus1024) * b;
    }
    return s;
}

template <Precision P> struct Format;

template <> struct Format<Precision::Bf16> {
    static constexpr int kElems = 8;
    __device__ static float dot(
        uint4 w, const uint16_t* x, uint64_t k, const GemvParams&, const uint8_t*, uint32_t, uint32_t)
    {
        const uint4 xv = loadX(x, k);
        return dotBf16(w.x, xv.x) + dotBf16(w.y, xv.y) + dotBf16(w.z, xv.z) + dotBf16(w.w, xv.w);
    }
};

template <> struct Format<Precision::Fp16> {
    static constexpr int kElems = 8;
    __device__ static float dot(
        uint4 w, const uint16_t* x, uint64_t k, const GemvParams&, const uint8_t*, uint32_t, uint32_t)
    {
        const uint4 xv = loadX(x, k);
        return dotHalf(w.x, xv.x) + dotHalf(w.y, xv.y) + dotHalf(w.z, xv.z) + dotHalf(w.w, xv.w);
    }
};

__device__ __forceinline__ float dotFp8Vec(uint4 w, const uint16_t* x, uint64_t k)
{
    const uint4 a = loadX(x, k), b = loadX(x, k + 8);
    const uint32_t ww[4] = { w.x, w.y, w.z, w.w };
    const uint32_t xx[8] = { a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w };
    float s = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i)
        s += dotFp8(ww[i], xx[2 * i]) + dotFp8(ww[i] >> 16, xx[2 * i + 1]);
    return s;
}

template <> struct Format<Precision::Fp8> {
    static constexpr int kElems = 16;
    __device__ static float dot(
        uint4 w, const uint16_t* x, uint64_t k, const GemvParams&, const uint8_t*, uint32_t, uint32_t)
    {
        return dotFp8Vec(w, x, k);
    }
};

template <> struct Format<Precision::Fp8Block128> {
    static constexpr int kElems = 16;
    __device__ static float dot(
        uint4 w, const uint16_t* x, uint64_t k, const GemvParams& p, const uint8_t* s, uint32_t row, uint32_t)
    {
        const uint32_t kBlocks = (p.cols + 127) / 128;
        const float scale = __ldg(reinterpret_cast<const float*>(s) + (row / 128) * kBlocks + k / 128);
        return dotFp8Vec(w, x, k) * scale;
    }
};

template <> struct Format<Precision::Nvfp4> {
    static constexpr int kElems = 32;
    __device__ static float dot(
        uint4 w, const uint16_t* x, uint64_t k, const GemvParams& p, const uint8_t* s, uint32_t row, uint32_t)
    {
        const uint16_t sc = __ldg(reinterpret_cast<const unsigned short*>(s + (uint64_t(row) * p.cols + k) / 16));
        const float s0 = num::e4m3ToFloat(sc & 0xff), s1 = num::e4m3ToFloat(sc >> 8);
        const float a = dotE2m1Word(w.x, loadX(x, k)) + dotE2m1Word(w.y, loadX(x, k + 8));
        const float b = dotE2m1Word(w.z, loadX(x, k + 16)) + dotE2m1Word(w.w, loadX(x, k + 24));
        return (a * s0 + b * s1) * 16384.0f;
    }
};

template <> struct Format<Precision::Mxfp4> {
    static constexpr int kElems = 32;
    __device__ static float dot(
        uint4 w, const uint16_t* x, uint64_t k, const GemvParams& p, const uint8_t* s, uint32_t row, uint32_t)
    {
        const float sc = num::e8m0ToFloat(__ldg(s + (uint64_t(row) * p.cols + k) / 32));
        const float a = dotE2m1Word(w.x, loadX(x, k)) + dotE2m1Word(w.y, loadX(x, k + 8));
        const float b = dotE2m1Word(w.z, loadX(x, k + 16)) + dotE2m1Word(w.w, loadX(x, k + 24));
        return (a + b) * sc * 16384.0f;
    }
};

template <> struct Format<Precision::Int4G128> {
    static constexpr int kElems = 32;
    __device__ static float dot(
        uint4 w, const uint16_t* x, uint64_t k, const GemvParams& p, const uint8_t* s, uint32_t row, uint32_t)
    {
        const uint32_t groups = (p.cols + 127) / 128, g = static_cast<uint32_t>(k / 128);
        const float scale
            = num::fp16ToFloat(__ldg(reinterpret_cast<const unsigned short*>(s) + uint64_t(row) * groups + g));
        const uint8_t zb = __ldg(s + p.auxOffset + uint64_t(row) * ((groups + 1) / 2) + g / 2);
        const float z = 1024.0f + static_cast<float>((g & 1) ? (zb >> 4) : (zb & 15));
        const float a = dotInt4Word(w.x, loadX(x, k), z) + dotInt4Word(w.y, loadX(x, k + 8), z);
        const float b = dotInt4Word(w.z, loadX(x, k + 16), z) + dotInt4Word(w.w, loadX(x, k + 24), z);
        return (a + b) * scale;
    }
};

// Per-tensor scale applied at the end (fp8 per tensor, nvfp4 global scale); 1 otherwise.
template <Precision P> __device__ __forceinline__ float tensorScale(const GemvParams& p, const uint8_t* s)
{
    if constexpr (P == Precision::Fp8)
        return __ldg(reinterpret_cast<const float*>(s));
    if constexpr (P == Precision::Nvfp4)
        return __ldg(reinterpret_cast<const float*>(s + p.auxOffset));
    return 1.0f;
}

// Programmatic dependent launch: let the next kernel of the stream start its blocks now (they
// wait in gridDependencyWait before reading what this one writes); no-ops without the attribute.
__device__ __forceinline__ void allowDependentLaunch()
{
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}
__device__ __forceinline__ void gridDependencyWait()
{
    asm volatile("griddepcontrol.wait;" ::: "memory");
}

template <Precision P> __host__ __device__ constexpr uint64_t rowBytesOf(uint32_t cols)
{
    return uint64_t(cols) * (P == Precision::Bf16 || P == Precision::Fp16 ? 2 : 1) / (Format<P>::kElems == 32 ? 2 : 1);
}

// Partial dot products of one row (vectors first, first + step, ...) into acc; kUnroll 16-byte
// weight loads in flight per lane. The first call of a thread waits for the previous grid (PDL)
// after issuing its first weight loads: weights never depend on it, x and y do.
template <Precision P, int TB, int U = 0>
__device__ __forceinline__ void rowDot(const GemvParams& p, const uint8_t* w, const uint8_t* s, const uint16_t* x,
    uint32_t row, int first, int step, float (&acc)[TB], bool& waited)
{
    using F = Format<P>;
    // 8 x 16 B in flight per lane (4 for 4-bit: decode-bound), or U
    constexpr int kUnroll = U ? U : F::kElems == 32 ? 4 : 8;
    const int vecs = static_cast<int>(p.cols / F::kElems);
    for (uint32_t rep = 0; rep < p.repeat; ++rep) {
        for (int v0 = first; v0 < vecs; v0 += step * kUnroll) {
            uint4 wv[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u)
                if (v0 + u * step < vecs)
                    wv[u] = loadStream(w + uint64_t(v0 + u * step) * 16);
            if (!waited) {
                gridDependencyWait();
                waited = true;
            }
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const int v = v0 + u * step;
                if (v < vecs) {
#pragma unroll
                    for (int t = 0; t < TB; ++t)
                        if (t < static_cast<int>(p.tokens))
                            acc[t] += F::dot(wv[u], x + t * p.xLd, uint64_t(v) * F::kElems, p, s, row, t);
                }
            }
        }
    }
}

// Lanes per row `lpr` (8, 16 or 32: several short rows per warp) and warps per row `wpr` (long rows
// with few rows: several warps per row, reduced through shared memory); lpr < 32 implies wpr == 1.
template <Precision P, int TB> __device__ __forceinline__ void gemvBody(const GemvParams& p, bool indirect)
{
    __shared__ float partial[kWarps][TB];
    slowTailBegin(p.tail);
    allowDependentLaunch();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int wpr = static_cast<int>(p.warpsPerRow), lpr = static_cast<int>(p.lanesPerRow);
    const int rowsPerWarp = 32 / lpr, sub = lane / lpr, sl = lane % lpr;
    const int part = warp % wpr;
    const uint32_t row = blockIdx.x * ((kWarps / wpr) * rowsPerWarp) + (warp / wpr) * rowsPerWarp + sub;
    const uint32_t g = blockIdx.y;
    bool waited = false;
    if (indirect) {
        gridDependencyWait(); // the slots come from the router
        waited = true;
    }
    const bool active = row < p.rows && (!indirect || static_cast<int>(g) < __ldg(p.slotCount));
    float acc[TB];
#pragma unroll
    for (int t = 0; t < TB; ++t)
        acc[t] = 0.f;
    if (active) {
        const uint64_t pool = indirect ? static_cast<uint64_t>(__ldg(p.slotExpert + g)) : g;
        const uint8_t* w = p.values + pool * p.valueGroupStride + row * rowBytesOf<P>(p.cols);
        const uint8_t* s = p.scales ? p.scales + pool * p.scaleGroupStride : nullptr;
        rowDot<P, TB>(p, w, s, p.x + g * p.xGroupStride, row, part * lpr + sl, lpr * wpr, acc, waited);
    }
    if (!waited)
        gridDependencyWait();
#pragma unroll
    for (int t = 0; t < TB; ++t)
        for (int o = lpr / 2; o > 0; o >>= 1)
            acc[t] += __shfl_xor_sync(0xffffffffu, acc[t], o);
    const uint8_t* s
        = active && p.scales ? p.scales + (indirect ? __ldg(p.slotExpert + g) : g) * p.scaleGroupStride : nullptr;
    if (wpr == 1) {
        if (active && sl == 0) {
            const float ts = tensorScale<P>(p, s);
#pragma unroll
            for (int t = 0; t < TB; ++t)
                if (t < static_cast<int>(p.tokens))
                    p.y[g * p.yGroupStride + t * p.yLd + row] = num::floatToBf16(acc[t] * ts);
        }
    } else {
        if (lane == 0) {
#pragma unroll
            for (int t = 0; t < TB; ++t)
                partial[warp][t] = acc[t];
        }
        __syncthreads();
        if (active && part == 0 && lane < TB && lane < static_cast<int>(p.tokens)) {
            float sum = 0;
            for (int j = 0; j < wpr; ++j)
                sum += partial[warp + j][lane];
            p.y[g * p.yGroupStride + lane * p.yLd + row] = num::floatToBf16(sum * tensorScale<P>(p, s));
        }
    }
    slowTailEnd(p.tail);
}

// Persistent schedule (whole-warp rows): a grid of about one wave of resident blocks; warp i takes
// the rows (groups x rows flattened) i, i + warps, ... so every warp streams until the matrix is
// done: no block boundaries in the middle of a launch and no partly filled last wave.
template <Precision P, int TB, int U = 0>
__device__ __forceinline__ void gemvPersistentBody(const GemvParams& p, bool indirect)
{
    slowTailBegin(p.tail);
    allowDependentLaunch();
    const uint32_t lane = threadIdx.x & 31;
    const uint32_t warps = gridDim.x * kWarps;
    const uint64_t items = uint64_t(p.groups) * p.rows;
    bool waited = false;
    uint32_t groups = p.groups;
    if (indirect) {
        gridDependencyWait(); // the slots come from the router
        waited = true;
        groups = min(groups, static_cast<uint32_t>(__ldg(p.slotCount)));
    }
    for (uint64_t item = blockIdx.x * kWarps + (threadIdx.x >> 5); item < items; item += warps) {
        const uint32_t g = static_cast<uint32_t>(item / p.rows), row = static_cast<uint32_t>(item % p.rows);
        if (g >= groups)
            break;
        const uint64_t pool = indirect ? static_cast<uint64_t>(__ldg(p.slotExpert + g)) : g;
        const uint8_t* w = p.values + pool * p.valueGroupStride + row * rowBytesOf<P>(p.cols);
        const uint8_t* s = p.scales ? p.scales + pool * p.scaleGroupStride : nullptr;
        float acc[TB];
#pragma unroll
        for (int t = 0; t < TB; ++t)
            acc[t] = 0.f;
        rowDot<P, TB, U>(p, w, s, p.x + g * p.xGroupStride, row, static_cast<int>(lane), 32, acc, waited);
#pragma unroll
        for (int t = 0; t < TB; ++t)
            for (int o = 16; o > 0; o >>= 1)
                acc[t] += __shfl_xor_sync(0xffffffffu, acc[t], o);
        if (lane == 0) {
            const float ts = tensorScale<P>(p, s);
#pragma unroll
            for (int t = 0; t < TB; ++t)
                if (t < static_cast<int>(p.tokens))
                    p.y[g * p.yGroupStride + t * p.yLd + row] = num::floatToBf16(acc[t] * ts);
        }
    }
    if (!waited)
        gridDependencyWait();
    slowTailEnd(p.tail);
}

// Sweep schedule (bf16, rows of 256, 512, 1024 or 2048 16-byte vectors): the matrix is read like a
// copy. A group is L x 256 consecutive vectors (R = L / S whole rows, S = vectors per row / 256);
// thread t of a block loads vectors t, t + 256, ... of its group, so the blocks in flight read one
// contiguous window that sweeps through the matrix instead of every row of it at once. In a kernel
// of its own (60 registers, 4 blocks per SM) and with PDL it was the fastest bf16 schedule on the
// H200 from 8 MiB to 1 GiB (BENCHMARKS.md). I: the groups are expert slots chosen on the device.
// Grid: one block per group (blocks start in order), or at most the resident blocks looping over
// the groups, each with an equal share (GemvParams::schedule 3, and 4 or the default).
template <Precision P, int TB, int L, int S, bool I>
__device__ __forceinline__ void gemvSweepBody(const GemvParams& p)
{
    using F = Format<P>;
    constexpr int kThreads = 32 * kWarps;
    constexpr int R = L / S;
    __shared__ float partial[kWarps][R][TB];
    slowTailBegin(p.tail);
    allowDependentLaunch();
    const int t = static_cast<int>(threadIdx.x), warp = t >> 5, lane = t & 31;
    const uint64_t rowBytes = rowBytesOf<P>(p.cols);
    const uint32_t perMatrix = (p.rows + R - 1) / R;
    bool waited = false;
    uint32_t groups = p.groups;
    if (I) {
        gridDependencyWait(); // the slots come from the router
        waited = true;
        groups = min(groups, static_cast<uint32_t>(__ldg(p.slotCount)));
    }
    const uint64_t items = uint64_t(perMatrix) * groups;
    for (uint64_t item = blockIdx.x; item < items; item += gridDim.x) {
        const uint32_t g = static_cast<uint32_t>(item / perMatrix);
        const uint32_t row0 = static_cast<uint32_t>(item % perMatrix) * R;
        const int rowsHere = static_cast<int>(min(static_cast<uint32_t>(R), p.rows - row0));
        const uint64_t pool = I ? static_cast<uint64_t>(__ldg(p.slotExpert + g)) : g;
        const uint8_t* base = p.values + pool * p.valueGroupStride + row0 * rowBytes;
        uint4 wv[L];
#pragma unroll
        for (int i = 0; i < L; ++i)
            if (i / S < rowsHere)
                wv[i] = loadStream(base + (uint64_t(i) * kThreads + t) * 16);
        if (!waited) {
            gridDependencyWait();
            waited = true;
        }
        const uint16_t* x = p.x + g * p.xGroupStride;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            float acc[TB];
#pragma unroll
            for (int tt = 0; tt < TB; ++tt)
                acc[tt] = 0.f;
            if (r < rowsHere) {
#pragma unroll
                for (int s = 0; s < S; ++s) {
                    const uint64_t k = (uint64_t(s) * kThreads + t) * F::kElems;
#pragma unroll
                    for (int tt = 0; tt < TB; ++tt)
                        if (tt < static_cast<int>(p.tokens))
                            acc[tt] += F::dot(wv[r * S + s], x + tt * p.xLd, k, p, nullptr, row0 + r, tt);
                }
            }
#pragma unroll
            for (int tt = 0; tt < TB; ++tt) {
                for (int o = 16; o > 0; o >>= 1)
                    acc[tt] += __shfl_xor_sync(0xffffffffu, acc[tt], o);
                if (lane == 0)
                    partial[warp][r][tt] = acc[tt];
            }
        }
        __syncthreads();
        if (t < R * TB) {
            const int r = t / TB, tt = t % TB;
            if (r < rowsHere && tt < static_cast<int>(p.tokens)) {
                float sum = 0;
#pragma unroll
                for (int w = 0; w < kWarps; ++w)
                    sum += partial[w][r][tt];
                p.y[g * p.yGroupStride + tt * p.yLd + row0 + r] = num::floatToBf16(sum);
            }
        }
        __syncthreads();
    }
    if (!waited)
        gridDependencyWait();
    slowTailEnd(p.tail);
}

// Loads per thread per group L (GemvParams::inflight 4 at rows of 512 vectors, else 8) and vectors
// per row S as template arguments.
template <Precision P, int TB, bool I> __device__ __forceinline__ void sweepDispatch(const GemvParams& p)
{
    if constexpr (P == Precision::Bf16) {
        switch (p.cols / Format<P>::kElems) {
        case 256:
            return gemvSweepBody<P, TB, 8, 1, I>(p);
        case 512:
            if (p.inflight == 4)
                return gemvSweepBody<P, TB, 4, 2, I>(p);
            return gemvSweepBody<P, TB, 8, 2, I>(p);
        case 1024:
            return gemvSweepBody<P, TB, 8, 4, I>(p);
        case 2048:
            return gemvSweepBody<P, TB, 8, 8, I>(p);
        default:
            return;
        }
    }
}

// Persistent bf16 GEMVs may keep fewer loads in flight per lane (GemvParams::inflight): with the
// whole device streaming, fewer bytes queued mean a shorter drain at the end of a launch.
template <Precision P, int TB> __device__ __forceinline__ void persistentDispatch(const GemvParams& p, bool indirect)
{
    if constexpr (P == Precision::Bf16) {
        if (p.inflight == 2)
            return gemvPersistentBody<P, TB, 2>(p, indirect);
        if (p.inflight == 4)
            return gemvPersistentBody<P, TB, 4>(p, indirect);
    }
    gemvPersistentBody<P, TB>(p, indirect);
}

} // namespace

// Every code path in a kernel counts towards its register allocation, which sets how many blocks
// fit on an SM (nvcc -Xptxas -v): gemv_bf16_kernel<1> takes 80 registers (3 blocks of 256 threads
// per SM), 128 (2 blocks) while a 16-in-flight path was compiled in, and the default persistent
// path alone fits 64 (4 blocks). The calibration's extra schedules therefore live in kernels of
// their own (below), and one of them is that lean kernel, so its effect can be measured.
#define GS_DEFINE_GEMV(NAME, PREC)                                                                                     \
    template <int TB> __global__ void __launch_bounds__(256) gemv_##NAME##_kernel(GemvParams p)                        \
    {                                                                                                                  \
        if (p.persistent)                                                                                              \
            persistentDispatch<PREC, TB>(p, false);                                                                    \
        else                                                                                                           \
            gemvBody<PREC, TB>(p, false);                                                                              \
    }                                                                                                                  \
    template <int TB> __global__ void __launch_bounds__(256) fused_moe_gemv_##NAME##_kernel(GemvParams p)              \
    {                                                                                                                  \
        if (p.persistent)                                                                                              \
            persistentDispatch<PREC, TB>(p, true);                                                                     \
        else                                                                                                           \
            gemvBody<PREC, TB>(p, true);                                                                               \
    }

GS_DEFINE_GEMV(bf16, Precision::Bf16)
GS_DEFINE_GEMV(fp16, Precision::Fp16)
GS_DEFINE_GEMV(fp8, Precision::Fp8)
GS_DEFINE_GEMV(fp8_block128, Precision::Fp8Block128)
GS_DEFINE_GEMV(nvfp4, Precision::Nvfp4)
GS_DEFINE_GEMV(mxfp4, Precision::Mxfp4)
GS_DEFINE_GEMV(int4_g128, Precision::Int4G128)

// Calibration schedules of bf16 GEMVs: the sweep (GemvParams::schedule 3/4), and the default
// persistent path alone (schedule 5: the production kernel without its other paths).
template <int TB> __global__ void __launch_bounds__(256) gemv_bf16_sweep_kernel(GemvParams p)
{
    sweepDispatch<Precision::Bf16, TB, false>(p);
}
template <int TB> __global__ void __launch_bounds__(256) fused_moe_gemv_bf16_sweep_kernel(GemvParams p)
{
    sweepDispatch<Precision::Bf16, TB, true>(p);
}
template <int TB, int U = 0> __global__ void __launch_bounds__(256) gemv_bf16_lean_kernel(GemvParams p)
{
    gemvPersistentBody<Precision::Bf16, TB, U>(p, false);
}

namespace {

using GemvFn = void (*)(GemvParams);

template <int TB> GemvFn pick(Precision p, bool indirect)
{
    switch (p) {
    case Precision::Bf16:
        return indirect ? fused_moe_gemv_bf16_kernel<TB> : gemv_bf16_kernel<TB>;
    case Precision::Fp16:
        return indirect ? fused_moe_gemv_fp16_kernel<TB> : gemv_fp16_kernel<TB>;
    case Precision::Fp8:
        return indirect ? fused_moe_gemv_fp8_kernel<TB> : gemv_fp8_kernel<TB>;
    case Precision::Fp8Block128:
        return indirect ? fused_moe_gemv_fp8_block128_kernel<TB> : gemv_fp8_block128_kernel<TB>;
    case Precision::Nvfp4:
        return indirect ? fused_moe_gemv_nvfp4_kernel<TB> : gemv_nvfp4_kernel<TB>;
    case Precision::Mxfp4:
        return indirect ? fused_moe_gemv_mxfp4_kernel<TB> : gemv_mxfp4_kernel<TB>;
    case Precision::Int4G128:
        return indirect ? fused_moe_gemv_int4_g128_kernel<TB> : gemv_int4_g128_kernel<TB>;
    }
    return nullptr;
}

// The kernel for a token bucket (1, 2, 4 or 8 tokens).
GemvFn byTokens(uint32_t tb, GemvFn f1, GemvFn f2, GemvFn f4, GemvFn f8)
{
    return tb == 1 ? f1 : tb == 2 ? f2 : tb == 4 ? f4 : f8;
}

// Blocks of `fn` resident on the whole device at once (occupancy x SMs), cached per kernel.
cudaError_t residentBlocks(GemvFn fn, int& blocks)
{
    static std::mutex mutex;
    static std::map<std::pair<int, const void*>, int> cache;
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find({ dev, reinterpret_cast<const void*>(fn) });
    if (it != cache.end()) {
        blocks = it->second;
        return cudaSuccess;
    }
    int perSm = 0, sms = 0;
    if ((e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, fn, 32 * kWarps, 0)) != cudaSuccess
        || (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess)
        return e;
    blocks = std::max(1, perSm) * sms;
    cache[{ dev, reinterpret_cast<const void*>(fn) }] = blocks;
    return cudaSuccess;
}

uint32_t elemsPerVector(Precision p)
{
    switch (p) {
    case Precision::Bf16:
    case Precision::Fp16:
        return 8;
    case Precision::Fp8:
    case Precision::Fp8Block128:
        return 16;
    default:
        return 32;
    }
}

} // namespace

cudaError_t gemvKernelInfo(std::vector<GemvKernelInfo>& out)
{
    const struct {
        const char* name;
        GemvFn fn;
    } kernels[] = { { "gemv_bf16_kernel<1>", gemv_bf16_kernel<1> }, { "gemv_bf16_kernel<2>", gemv_bf16_kernel<2> },
        { "gemv_bf16_kernel<4>", gemv_bf16_kernel<4> }, { "gemv_bf16_kernel<8>", gemv_bf16_kernel<8> },
        { "gemv_bf16_sweep_kernel<1>", gemv_bf16_sweep_kernel<1> },
        { "gemv_bf16_lean_kernel<1>", gemv_bf16_lean_kernel<1> },
        { "gemv_bf16_lean_kernel<1> (4 in flight)", gemv_bf16_lean_kernel<1, 4> } };
    out.clear();
    for (const auto& k : kernels) {
        cudaFuncAttributes a {};
        GemvKernelInfo info;
        info.name = k.name;
        cudaError_t e = cudaFuncGetAttributes(&a, k.fn);
        if (e == cudaSuccess)
            e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&info.blocksPerSm, k.fn, 32 * kWarps, 0);
        if (e != cudaSuccess)
            return e;
        info.registers = a.numRegs;
        out.push_back(info);
    }
    return cudaSuccess;
}

cudaError_t launchGemv(Precision precision, const GemvParams& params, cudaStream_t stream)
{
    GemvParams p = params;
    const bool indirect = p.slotExpert != nullptr;
    const uint32_t vec = elemsPerVector(precision);
    if (p.tokens == 0 || p.tokens > 8 || p.rows == 0 || p.cols == 0 || p.cols % vec != 0 || p.groups == 0)
        return cudaErrorInvalidValue;
    if ((p.xLd | p.xGroupStride) % 8 != 0 || reinterpret_cast<uintptr_t>(p.x) % 16 != 0
        || reinterpret_cast<uintptr_t>(p.values) % 16 != 0 || (indirect && !p.slotCount))
        return cudaErrorInvalidValue;
    // Lanes per row: whole warps from 96 16-byte vectors a row (3 or more per lane), else 8 lanes,
    // which keeps up to 8 loads in flight per lane (the routed experts' down projection, rows of 384
    // values at TP2 of qwen3-30b-a3b: 6 per lane instead of 3, in half the blocks). Warps per row
    // (whole-warp rows only): enough warps in flight to cover the memory latency when there are few
    // rows.
    const uint32_t vecs = p.cols / vec;
    const uint32_t lpr = vecs >= 96 ? 32 : 8;
    uint32_t wpr = 1;
    while (lpr == 32 && wpr < kWarps && uint64_t(p.rows) * p.groups * wpr < 4096 && vecs >= 64 * wpr * 2)
        wpr *= 2;
    p.warpsPerRow = wpr;
    p.lanesPerRow = lpr;
    const uint32_t tb = p.tokens <= 1 ? 1 : p.tokens <= 2 ? 2 : p.tokens <= 4 ? 4 : 8;
    GemvFn fn = byTokens(tb, pick<1>(precision, indirect), pick<2>(precision, indirect),
        pick<4>(precision, indirect), pick<8>(precision, indirect));
    if (!fn)
        return cudaErrorInvalidValue;
    p.sweep = (p.schedule == 0 || p.schedule == 3 || p.schedule == 4) && precision == Precision::Bf16
        && (vecs == 256 || vecs == 512 || vecs == 1024 || vecs == 2048);
    p.persistent = !p.sweep && lpr == 32 && wpr == 1 && p.schedule != 1;
    const bool lean = p.persistent && p.schedule == 5 && precision == Precision::Bf16 && !indirect;
    if (p.sweep && indirect)
        fn = byTokens(tb, fused_moe_gemv_bf16_sweep_kernel<1>, fused_moe_gemv_bf16_sweep_kernel<2>,
            fused_moe_gemv_bf16_sweep_kernel<4>, fused_moe_gemv_bf16_sweep_kernel<8>);
    else if (p.sweep)
        fn = byTokens(tb, gemv_bf16_sweep_kernel<1>, gemv_bf16_sweep_kernel<2>, gemv_bf16_sweep_kernel<4>,
            gemv_bf16_sweep_kernel<8>);
    else if (lean && p.inflight == 4)
        fn = byTokens(tb, gemv_bf16_lean_kernel<1, 4>, gemv_bf16_lean_kernel<2, 4>, gemv_bf16_lean_kernel<4, 4>,
            gemv_bf16_lean_kernel<8, 4>);
    else if (lean)
        fn = byTokens(tb, gemv_bf16_lean_kernel<1>, gemv_bf16_lean_kernel<2>, gemv_bf16_lean_kernel<4>,
            gemv_bf16_lean_kernel<8>);
    const uint32_t rowsPerBlock = kWarps / wpr * (32 / lpr);
    dim3 grid((p.rows + rowsPerBlock - 1) / rowsPerBlock, p.groups);
    if (p.sweep) {
        // Groups of L x 256 vectors: R whole rows each (gemvSweepBody).
        const uint32_t loads = vecs == 512 && p.inflight == 4 ? 4 : 8;
        const uint32_t rowsPerGroup = loads * 256 / vecs;
        const uint64_t items = uint64_t((p.rows + rowsPerGroup - 1) / rowsPerGroup) * p.groups;
        uint64_t blocks = items;
        if (p.schedule != 3) {
            int resident = 0;
            const cudaError_t e = residentBlocks(fn, resident);
            if (e != cudaSuccess)
                return e;
            const uint64_t each = (items + resident - 1) / resident;
            blocks = (items + each - 1) / each;
        }
        grid = dim3(static_cast<uint32_t>(std::min<uint64_t>(blocks, 0x7fffffffu)), 1);
    } else if (p.persistent) {
        int resident = 0;
        const cudaError_t e = residentBlocks(fn, resident);
        if (e != cudaSuccess)
            return e;
        if (p.blocksPerSm) {
            int dev = 0, sms = 0;
            cudaError_t ae = cudaGetDevice(&dev);
            if (ae == cudaSuccess)
                ae = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
            if (ae != cudaSuccess)
                return ae;
            resident = std::min<int>(resident, static_cast<int>(p.blocksPerSm) * sms);
        }
        const uint64_t need = (uint64_t(p.rows) * p.groups + kWarps - 1) / kWarps;
        grid = dim3(static_cast<uint32_t>(need < uint64_t(resident) ? need : resident), 1);
    }
    const PdlScope scope(p.pdl || PdlScope::active());
    return launchPdl(fn, grid, dim3(32 * kWarps), 0, stream, p);
}

} // namespace gapscope::kernels
