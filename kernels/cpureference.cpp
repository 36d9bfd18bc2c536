// SPDX-License-Identifier: MIT
#include "kernels/cpureference.h"
#include "kernels/numerics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace gapscope::kernels::ref {

using model::Precision;

namespace {

uint32_t nibble(const uint8_t* p, uint64_t e)
{
    return (e & 1) ? (p[e / 2] >> 4) : (p[e / 2] & 15u);
}

uint16_t u16(const uint8_t* p, uint64_t i)
{
    uint16_t v;
    std::memcpy(&v, p + 2 * i, 2);
    return v;
}

float f32(const uint8_t* p, uint64_t byteOffset)
{
    float v;
    std::memcpy(&v, p + byteOffset, 4);
    return v;
}

double cacheValue(const uint8_t* row, uint32_t j, bool fp8)
{
    return fp8 ? num::e4m3ToFloat(row[j]) : num::bf16ToFloat(u16(row, j));
}

} // namespace

double weight(const WeightLayout& l, const uint8_t* v, const uint8_t* s, uint64_t n, uint64_t k)
{
    const uint64_t e = n * l.cols + k;
    switch (l.precision) {
    case Precision::Bf16:
        return num::bf16ToFloat(u16(v, e));
    case Precision::Fp16:
        return num::fp16ToFloat(u16(v, e));
    case Precision::Fp8:
        return double(num::e4m3ToFloat(v[e])) * f32(s, 0);
    case Precision::Fp8Block128: {
        const uint64_t kb = (l.cols + 127) / 128;
        return double(num::e4m3ToFloat(v[e])) * f32(s, 4 * ((n / 128) * kb + k / 128));
    }
    case Precision::Nvfp4:
        return double(num::e2m1ToFloat(nibble(v, e))) * num::e4m3ToFloat(s[e / 16]) * f32(s, l.auxOffset);
    case Precision::Mxfp4:
        return double(num::e2m1ToFloat(nibble(v, e))) * num::e8m0ToFloat(s[e / 32]);
    case Precision::Int4G128: {
        const uint64_t groups = (l.cols + 127) / 128, g = k / 128;
        const double scale = num::fp16ToFloat(u16(s, n * groups + g));
        const uint8_t zb = s[l.auxOffset + n * ((groups + 1) / 2) + g / 2];
        const int z = (g & 1) ? (zb >> 4) : (zb & 15);
        return (static_cast<int>(nibble(v, e)) - z) * scale;
    }
    }
    return 0;
}

std::vector<double> gemv(const WeightLayout& l, const uint8_t* values, const uint8_t* scales, const uint16_t* x,
    uint64_t xLd, uint32_t tokens)
{
    std::vector<double> y(tokens * l.rows, 0.0);
    for (uint64_t n = 0; n < l.rows; ++n)
        for (uint64_t k = 0; k < l.cols; ++k) {
            const double w = weight(l, values, scales, n, k);
            for (uint32_t t = 0; t < tokens; ++t)
                y[t * l.rows + n] += w * num::bf16ToFloat(x[t * xLd + k]);
        }
    return y;
}

std::vector<double> rmsnorm(const std::vector<double>& in, const uint16_t* gamma, double eps)
{
    double ss = 0;
    for (double v : in)
        ss += v * v;
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(in.size()) + eps);
    std::vector<double> out(in.size());
    for (size_t j = 0; j < in.size(); ++j)
        out[j] = in[j] * inv * num::bf16ToFloat(gamma[j]);
    return out;
}

double silu(double g)
{
    return g / (1.0 + std::exp(-g));
}

std::vector<double> attentionHead(const std::vector<double>& q, const uint8_t* k, uint64_t kStride, const uint8_t* v,
    uint64_t vStride, uint64_t rows, uint32_t dk, uint32_t dv, bool fp8, double scale)
{
    const uint32_t esz = fp8 ? 1 : 2;
    std::vector<double> s(rows);
    double mx = -std::numeric_limits<double>::infinity();
    for (uint64_t r = 0; r < rows; ++r) {
        double acc = 0;
        for (uint32_t d = 0; d < dk; ++d)
            acc += q[d] * cacheValue(k + r * kStride * esz, d, fp8);
        s[r] = acc * scale;
        mx = std::max(mx, s[r]);
    }
    double denom = 0;
    for (auto& x : s) {
        x = std::exp(x - mx);
        denom += x;
    }
    std::vector<double> out(dv, 0.0);
    for (uint64_t r = 0; r < rows; ++r)
        for (uint32_t j = 0; j < dv; ++j)
            out[j] += s[r] / denom * cacheValue(v + r * vStride * esz, j, fp8);
    return out;
}

Routed routeTopk(const std::vector<double>& logits, uint32_t k)
{
    const double mx = *std::max_element(logits.begin(), logits.end());
    std::vector<double> p(logits.size());
    double sum = 0;
    for (size_t e = 0; e < logits.size(); ++e)
        sum += p[e] = std::exp(logits[e] - mx);
    std::vector<int> order(logits.size());
    for (size_t e = 0; e < order.size(); ++e)
        order[e] = static_cast<int>(e);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p[a] > p[b]; });
    Routed r;
    double picked = 0;
    for (uint32_t i = 0; i < k && i < order.size(); ++i) {
        r.experts.push_back(order[i]);
        r.weights.push_back(p[order[i]] / sum);
        picked += p[order[i]] / sum;
    }
    for (auto& w : r.weights)
        w /= picked;
    return r;
}

uint64_t argmax(const std::vector<double>& v)
{
    uint64_t best = 0;
    for (uint64_t i = 1; i < v.size(); ++i)
        if (v[i] > v[best])
            best = i;
    return best;
}

void rotate(double& a, double& b, uint64_t pos, uint32_t i, uint32_t dim, double theta)
{
    const double ang = static_cast<double>(pos) * std::pow(theta, -2.0 * i / dim);
    const double x = a, y = b;
    a = x * std::cos(ang) - y * std::sin(ang);
    b = x * std::sin(ang) + y * std::cos(ang);
}

double relativeError(const std::vector<double>& out, const std::vector<double>& ref)
{
    if (out.size() != ref.size())
        return std::numeric_limits<double>::infinity();
    double num = 0, den = 0;
    for (size_t i = 0; i < out.size(); ++i) {
        if (!std::isfinite(out[i]))
            return std::numeric_limits<double>::infinity();
        num += (out[i] - ref[i]) * (out[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

} // namespace gapscope::kernels::ref
