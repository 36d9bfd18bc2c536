// SPDX-License-Identifier: MIT
#include "kernels/gemv.h"
#include "kernels/gemvformat.cuh"
#include "kernels/numerics.h"

#include <algorithm>
#include <map>
#include <mutex>

namespace gapscope::kernels {

using model::Precision;

namespace {

using namespace gemvdetail;

constexpr int kWarps = 8;
// Schedule of whole-warp rows when GemvParams::schedule is 0: 2 persistent, 3 streaming.
constexpr uint32_t kDefaultSchedule = 2;
// Streaming schedule: resident blocks per SM when GemvParams::blocksPerSm is 0.
constexpr uint32_t kStreamBlocksPerSm = 2;

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

// Streaming schedule (whole-warp rows, GemvParams::schedule 3): warp w of W takes the contiguous
// items [w N / W, (w + 1) N / W) of the N = groups x rows flattened rows, and walks them as one
// stream of steps (step j of a row: vector lane + 32 j for each lane). U loads per lane stay in
// flight across row boundaries: slot u of the ring holds step k = u (mod U), refilled with step
// k + U as soon as step k is consumed, so a warp ramps up and drains once per launch, not per row.
// All lanes take the same steps (lanes past the end of a short row skip their vector), so the
// row-end reduction runs on the whole warp.
template <Precision P> struct StreamCursor {
    uint32_t g = 0, row = 0, j = 0;
    const uint8_t* rowStart = nullptr; // this lane's first vector of (g, row)
    const uint8_t* w = nullptr; // this lane's vector of step j

    __device__ static const uint8_t* lanePtr(
        const GemvParams& p, bool indirect, uint32_t g, uint32_t row, uint32_t lane)
    {
        const uint64_t pool = indirect ? static_cast<uint64_t>(__ldg(p.slotExpert + g)) : g;
        return p.values + pool * p.valueGroupStride + uint64_t(row) * rowBytesOf<P>(p.cols) + lane * 16u;
    }
    __device__ StreamCursor(const GemvParams& p, bool indirect, uint64_t item, uint32_t lane)
        : g(static_cast<uint32_t>(item / p.rows))
        , row(static_cast<uint32_t>(item % p.rows))
    {
        rowStart = w = lanePtr(p, indirect, g, row, lane);
    }
    // Issues this lane's load of the current step (nothing past the end of a short row) and moves
    // on; a new group's address is looked up only while it is one of the `groups` valid ones.
    __device__ void loadNext(
        const GemvParams& p, bool indirect, uint32_t groups, uint32_t vecs, uint32_t lane, uint4& v)
    {
        if (lane + 32 * j < vecs)
            v = loadStream(w);
        w += 512;
        if (++j * 32 < vecs)
            return;
        j = 0;
        if (++row < p.rows) {
            rowStart += rowBytesOf<P>(p.cols);
        } else {
            row = 0;
            if (++g < groups)
                rowStart = lanePtr(p, indirect, g, 0, lane);
        }
        w = rowStart;
    }
};

// The warp's sum of acc (one partial per lane and token) for row `row` of group `g`, written by lane 0;
// acc is zeroed for the next row.
template <Precision P, int TB>
__device__ __forceinline__ void storeRow(
    const GemvParams& p, const uint8_t* s, uint32_t g, uint32_t row, uint32_t lane, float (&acc)[TB])
{
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
#pragma unroll
    for (int t = 0; t < TB; ++t)
        acc[t] = 0.f;
}

// One warp's rows [begin, end) as one pipelined stream (see StreamCursor). The weight loads of the
// first U steps are issued before waiting for the previous grid (PDL): weights never depend on it.
template <Precision P, int TB, int U>
__device__ __forceinline__ void streamRows(
    const GemvParams& p, bool indirect, uint32_t groups, uint64_t begin, uint64_t end, uint32_t lane, bool& waited)
{
    using F = Format<P>;
    const uint32_t vecs = p.cols / F::kElems, vpl = (vecs + 31) / 32;
    const uint32_t steps = static_cast<uint32_t>(end - begin) * vpl;
    StreamCursor<P> ld(p, indirect, begin, lane);
    uint32_t g = ld.g, row = ld.row, j = 0; // the step being consumed
    uint4 ring[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
        if (u < static_cast<int>(steps))
            ld.loadNext(p, indirect, groups, vecs, lane, ring[u]);
    if (!waited) {
        gridDependencyWait();
        waited = true;
    }
    const uint64_t pool0 = indirect ? static_cast<uint64_t>(__ldg(p.slotExpert + g)) : g;
    const uint8_t* s = p.scales ? p.scales + pool0 * p.scaleGroupStride : nullptr;
    const uint16_t* x = p.x + g * p.xGroupStride;
    float acc[TB];
#pragma unroll
    for (int t = 0; t < TB; ++t)
        acc[t] = 0.f;
    for (uint32_t k0 = 0; k0 < steps; k0 += U) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const uint32_t k = k0 + u;
            if (k >= steps)
                break;
            const uint32_t v = lane + 32 * j;
            if (v < vecs) {
#pragma unroll
                for (int t = 0; t < TB; ++t)
                    if (t < static_cast<int>(p.tokens))
                        acc[t] += F::dot(ring[u], x + t * p.xLd, uint64_t(v) * F::kElems, p, s, row, t);
            }
            if (k + U < steps)
                ld.loadNext(p, indirect, groups, vecs, lane, ring[u]);
            if (++j < vpl)
                continue;
            storeRow<P, TB>(p, s, g, row, lane, acc);
            j = 0;
            if (++row == p.rows) {
                row = 0;
                if (++g < groups && k + 1 < steps) {
                    const uint64_t pool = indirect ? static_cast<uint64_t>(__ldg(p.slotExpert + g)) : g;
                    s = p.scales ? p.scales + pool * p.scaleGroupStride : nullptr;
                    x = p.x + g * p.xGroupStride;
                }
            }
        }
    }
}

// Resident blocks per SM the register allocation of a streaming kernel must allow (see below).
template <int TB, int U> constexpr int kStreamMinBlocks = U >= (TB >= 8 ? 8 : 16) ? 1 : (TB >= 8 ? 8 : 16) / U;

template <Precision P, int TB, int U> __device__ __forceinline__ void gemvStreamBody(const GemvParams& p, bool indirect)
{
    slowTailBegin(p.tail);
    allowDependentLaunch();
    bool waited = false;
    uint32_t groups = p.groups;
    if (indirect) {
        gridDependencyWait(); // the slots come from the router
        waited = true;
        groups = min(groups, static_cast<uint32_t>(__ldg(p.slotCount)));
    }
    const uint64_t warps = uint64_t(gridDim.x) * kWarps, warp = uint64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5);
    const uint64_t items = uint64_t(groups) * p.rows;
    const uint64_t begin = items * warp / warps, end = items * (warp + 1) / warps;
    if (begin < end)
        streamRows<P, TB, U>(p, indirect, groups, begin, end, threadIdx.x & 31, waited);
    if (!waited)
        gridDependencyWait();
    slowTailEnd(p.tail);
}

} // namespace

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

// Streaming schedule kernels, U loads in flight per lane. Register caps keep 4, 2 and 1 resident
// blocks per SM possible with U = 4, 8 and 16 (halved for 8 tokens, whose accumulators and decoding
// of 4-bit formats would spill under the cap for 4 blocks).
#define GS_DEFINE_GEMV_STREAM(NAME, PREC)                                                                              \
    template <int TB, int U>                                                                                           \
    __global__ void __launch_bounds__(256, kStreamMinBlocks<TB, U>) gemv_##NAME##_stream_kernel(GemvParams p)          \
    {                                                                                                                  \
        gemvStreamBody<PREC, TB, U>(p, false);                                                                         \
    }                                                                                                                  \
    template <int TB, int U>                                                                                           \
    __global__ void __launch_bounds__(256, kStreamMinBlocks<TB, U>)                                                    \
        fused_moe_gemv_##NAME##_stream_kernel(GemvParams p)                                                            \
    {                                                                                                                  \
        gemvStreamBody<PREC, TB, U>(p, true);                                                                          \
    }

GS_DEFINE_GEMV(bf16, Precision::Bf16)
GS_DEFINE_GEMV(fp16, Precision::Fp16)
GS_DEFINE_GEMV(fp8, Precision::Fp8)
GS_DEFINE_GEMV(fp8_block128, Precision::Fp8Block128)
GS_DEFINE_GEMV(nvfp4, Precision::Nvfp4)
GS_DEFINE_GEMV(mxfp4, Precision::Mxfp4)
GS_DEFINE_GEMV(int4_g128, Precision::Int4G128)
GS_DEFINE_GEMV_STREAM(bf16, Precision::Bf16)
GS_DEFINE_GEMV_STREAM(fp16, Precision::Fp16)
GS_DEFINE_GEMV_STREAM(fp8, Precision::Fp8)
GS_DEFINE_GEMV_STREAM(fp8_block128, Precision::Fp8Block128)
GS_DEFINE_GEMV_STREAM(nvfp4, Precision::Nvfp4)
GS_DEFINE_GEMV_STREAM(mxfp4, Precision::Mxfp4)
GS_DEFINE_GEMV_STREAM(int4_g128, Precision::Int4G128)

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

// The streaming kernel of a format: bf16 keeps 4, 8 (default) or 16 loads in flight per lane
// (GemvParams::inflight), 8- and 16-bit formats 8, 4-bit formats 4 (decode-bound).
#define GS_STREAM_PICK(NAME, U)                                                                                        \
    (indirect ? fused_moe_gemv_##NAME##_stream_kernel<TB, U> : gemv_##NAME##_stream_kernel<TB, U>)
template <int TB> GemvFn pickStream(Precision p, bool indirect, uint32_t inflight)
{
    switch (p) {
    case Precision::Bf16:
        return inflight == 4 ? GS_STREAM_PICK(bf16, 4)
            : inflight == 16 ? GS_STREAM_PICK(bf16, 16)
                             : GS_STREAM_PICK(bf16, 8);
    case Precision::Fp16:
        return GS_STREAM_PICK(fp16, 8);
    case Precision::Fp8:
        return GS_STREAM_PICK(fp8, 8);
    case Precision::Fp8Block128:
        return GS_STREAM_PICK(fp8_block128, 8);
    case Precision::Nvfp4:
        return GS_STREAM_PICK(nvfp4, 4);
    case Precision::Mxfp4:
        return GS_STREAM_PICK(mxfp4, 4);
    case Precision::Int4G128:
        return GS_STREAM_PICK(int4_g128, 4);
    }
    return nullptr;
}
#undef GS_STREAM_PICK

// Blocks of `fn` resident per SM at once (at least 1) and the device's SM count, cached per kernel.
cudaError_t residency(GemvFn fn, int& perSm, int& sms)
{
    static std::mutex mutex;
    static std::map<std::pair<int, const void*>, std::pair<int, int>> cache;
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find({ dev, reinterpret_cast<const void*>(fn) });
    if (it != cache.end()) {
        perSm = it->second.first;
        sms = it->second.second;
        return cudaSuccess;
    }
    if ((e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, fn, 32 * kWarps, 0)) != cudaSuccess
        || (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess)
        return e;
    perSm = std::max(1, perSm);
    cache[{ dev, reinterpret_cast<const void*>(fn) }] = { perSm, sms };
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

// The kernel and grid of a validated launch: persistent and streaming schedules get (up to) one
// wave of resident blocks, the grid schedule a block per kWarps / wpr whole-warp rows (or more short rows).
cudaError_t chooseLaunch(Precision precision, GemvParams& p, bool indirect, GemvFn& fn, dim3& grid)
{
    const uint32_t tb = p.tokens <= 1 ? 1 : p.tokens <= 2 ? 2 : p.tokens <= 4 ? 4 : 8;
    const uint32_t schedule = p.schedule ? p.schedule : kDefaultSchedule;
    const bool wholeWarp = p.lanesPerRow == 32 && p.warpsPerRow == 1;
    const bool stream = wholeWarp && schedule == 3 && p.repeat == 1;
    p.persistent = wholeWarp && schedule != 1 && !stream;
    if (stream)
        fn = tb == 1  ? pickStream<1>(precision, indirect, p.inflight)
            : tb == 2 ? pickStream<2>(precision, indirect, p.inflight)
            : tb == 4 ? pickStream<4>(precision, indirect, p.inflight)
                      : pickStream<8>(precision, indirect, p.inflight);
    else
        fn = tb == 1  ? pick<1>(precision, indirect)
            : tb == 2 ? pick<2>(precision, indirect)
            : tb == 4 ? pick<4>(precision, indirect)
                      : pick<8>(precision, indirect);
    if (!fn)
        return cudaErrorInvalidValue;
    const uint32_t rowsPerBlock = kWarps / p.warpsPerRow * (32 / p.lanesPerRow);
    grid = dim3((p.rows + rowsPerBlock - 1) / rowsPerBlock, p.groups);
    if (!p.persistent && !stream)
        return cudaSuccess;
    int perSm = 0, sms = 0;
    const cudaError_t e = residency(fn, perSm, sms);
    if (e != cudaSuccess)
        return e;
    // Streaming: fewer resident blocks than fit (rows split evenly over fewer warps) when asked.
    const uint32_t want = stream ? (p.blocksPerSm ? p.blocksPerSm : kStreamBlocksPerSm) : uint32_t(perSm);
    const uint64_t blocks = uint64_t(std::min(want, uint32_t(perSm))) * uint32_t(sms);
    const uint64_t need = (uint64_t(p.rows) * p.groups + kWarps - 1) / kWarps;
    grid = dim3(static_cast<uint32_t>(std::min(need, blocks)), 1);
    return cudaSuccess;
}

} // namespace

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
    // Lanes per row: about three or more 16-byte vectors per lane. Warps per row (whole-warp rows
    // only): enough warps in flight to cover the memory latency when there are few rows.
    const uint32_t vecs = p.cols / vec;
    const uint32_t lpr = vecs >= 96 ? 32 : vecs >= 48 ? 16 : 8;
    uint32_t wpr = 1;
    while (lpr == 32 && wpr < kWarps && uint64_t(p.rows) * p.groups * wpr < 4096 && vecs >= 64 * wpr * 2)
        wpr *= 2;
    p.warpsPerRow = wpr;
    p.lanesPerRow = lpr;
    GemvFn fn = nullptr;
    dim3 grid;
    const cudaError_t e = chooseLaunch(precision, p, indirect, fn, grid);
    if (e != cudaSuccess)
        return e;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.gridDim = grid;
    cfg.blockDim = dim3(32 * kWarps);
    cfg.stream = stream;
    if (p.pdl) {
        attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
    }
    return cudaLaunchKernelEx(&cfg, fn, p);
}

} // namespace gapscope::kernels
