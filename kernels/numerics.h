// SPDX-License-Identifier: MIT
#pragma once

// Number formats of the decode-step kernels, shared by the CUDA kernels and the CPU references so
// that both decode the same bytes the same way: bf16/fp16 <-> float, FP8 E4M3, E2M1 (FP4), E8M0
// scales, and the packed INT4 layout. Pure functions; callable from host and device code.
//
// Packing conventions (also documented in kernels/README.md):
// - 4-bit formats store two values per byte, element 2i in the low nibble, 2i+1 in the high nibble.
// - E2M1: sign bit 3, exponent bits 2..1 (bias 1), mantissa bit 0: 0, 0.5, 1, 1.5, 2, 3, 4, 6.
// - INT4 (int4-g128): unsigned nibble q, value = (q - zero) * scale.

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define GS_HD __host__ __device__ __forceinline__
#else
#define GS_HD inline
#endif

namespace gapscope::kernels::num {

GS_HD float bitsToFloat(uint32_t u)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    std::memcpy(&f, &u, 4);
    return f;
#endif
}

GS_HD uint32_t floatToBits(float f)
{
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
#endif
}

GS_HD float bf16ToFloat(uint16_t h)
{
    return bitsToFloat(static_cast<uint32_t>(h) << 16);
}

// Round to nearest even; NaN stays NaN.
GS_HD uint16_t floatToBf16(float f)
{
    uint32_t u = floatToBits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return static_cast<uint16_t>((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
}

GS_HD float fp16ToFloat(uint16_t h)
{
    const uint32_t sign = (h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1f;
    const uint32_t man = h & 0x3ffu;
    if (exp == 0) {
        const float v = static_cast<float>(man) * (1.0f / 16777216.0f); // man * 2^-24
        return sign ? -v : v;
    }
    if (exp == 31)
        return bitsToFloat(sign | 0x7f800000u | (man << 13));
    return bitsToFloat(sign | ((exp + 112) << 23) | (man << 13));
}

// Round to nearest even, for the values the kernels produce (no overflow handling beyond inf).
GS_HD uint16_t floatToFp16(float f)
{
    const uint32_t u = floatToBits(f);
    const uint32_t sign = (u >> 16) & 0x8000u;
    const int32_t exp = static_cast<int32_t>((u >> 23) & 0xff) - 127 + 15;
    uint32_t man = u & 0x7fffffu;
    if (exp >= 31)
        return static_cast<uint16_t>(sign | 0x7c00u);
    if (exp <= 0) {
        if (exp < -10)
            return static_cast<uint16_t>(sign);
        man |= 0x800000u;
        const uint32_t shift = static_cast<uint32_t>(14 - exp);
        uint32_t h = man >> shift;
        const uint32_t rem = man & ((1u << shift) - 1);
        const uint32_t half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            ++h;
        return static_cast<uint16_t>(sign | h);
    }
    uint32_t h = sign | (static_cast<uint32_t>(exp) << 10) | (man >> 13);
    const uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
        ++h;
    return static_cast<uint16_t>(h);
}

// FP8 E4M3 (OCP, "fn": no infinities; S.1111.111 is NaN).
GS_HD float e4m3ToFloat(uint8_t b)
{
    const uint32_t sign = b & 0x80u;
    const uint32_t exp = (b >> 3) & 0xf;
    const uint32_t man = b & 0x7u;
    float v;
    if (exp == 0)
        v = static_cast<float>(man) * (1.0f / 512.0f); // man/8 * 2^-6
    else if (exp == 15 && man == 7)
        v = bitsToFloat(0x7fc00000u);
    else
        v = bitsToFloat(((exp + 120) << 23) | (man << 20));
    return sign ? -v : v;
}

// E2M1 nibble -> float.
GS_HD float e2m1ToFloat(uint32_t n)
{
    const uint32_t e = (n >> 1) & 3u;
    const uint32_t m = n & 1u;
    float v = e == 0 ? 0.5f * static_cast<float>(m) : bitsToFloat(((e + 126u) << 23) | (m << 22));
    return (n & 8u) ? -v : v;
}

// E8M0 scale byte -> 2^(b-127) (255 is NaN; the generators never write it).
GS_HD float e8m0ToFloat(uint8_t b)
{
    if (b == 0)
        return bitsToFloat(0x00400000u); // 2^-127
    return bitsToFloat(static_cast<uint32_t>(b) << 23);
}

// A cheap deterministic hash for filling buffers: the same bytes on host and device.
GS_HD uint32_t hash32(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return static_cast<uint32_t>(x);
}

// Uniform in [-1, 1).
GS_HD float hashUniform(uint64_t seed, uint64_t i)
{
    return static_cast<float>(hash32(seed * 0x9e3779b97f4a7c15ull + i) >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

} // namespace gapscope::kernels::num
