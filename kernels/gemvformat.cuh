// SPDX-License-Identifier: MIT
#pragma once

// Device-side pieces of the GEMV kernels (included by gemv.cu only): the streaming 16-byte weight
// load, the per-format dot product of one 16-byte weight vector against x (Format<P>), the
// per-tensor scale, programmatic dependent launch controls and the bytes of a row per format.
// Stateless device functions; no threading concerns beyond the calling warp.

#include "kernels/gemv.h"
#include "kernels/numerics.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace gapscope::kernels::gemvdetail {

using model::Precision;

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

} // namespace gapscope::kernels::gemvdetail
