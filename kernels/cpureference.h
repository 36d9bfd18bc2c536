// SPDX-License-Identifier: MIT
#pragma once

// CPU references for the decode-step kernels, in double precision, reading the same bytes in the
// same layouts as the CUDA kernels (WeightLayout, numerics.h). gapscope-decode-sim --check runs
// every kernel on small random shapes and compares with these; the unit tests check these against
// hand-computed values. Pure functions; thread-safe.

#include "kernels/weightlayout.h"

#include <cstdint>
#include <vector>

namespace gapscope::kernels::ref {

// Dequantised weight W[n][k].
double weight(const WeightLayout& l, const uint8_t* values, const uint8_t* scales, uint64_t n, uint64_t k);

// y[t][n] = sum_k W[n][k] * x[t*xLd + k], for t < tokens.
std::vector<double> gemv(const WeightLayout& l, const uint8_t* values, const uint8_t* scales, const uint16_t* x,
    uint64_t xLd, uint32_t tokens);

// RMSNorm of `in` (width values) with gamma; eps as the kernel's.
std::vector<double> rmsnorm(const std::vector<double>& in, const uint16_t* gamma, double eps);

double silu(double g);

// One query head against `rows` cached rows: softmax(q . k_r * scale) weighted sum of v_r.
// k rows are dk wide, v rows dv wide (row strides in elements), bf16 or FP8 E4M3 bytes.
std::vector<double> attentionHead(const std::vector<double>& q, const uint8_t* k, uint64_t kStride, const uint8_t* v,
    uint64_t vStride, uint64_t rows, uint32_t dk, uint32_t dv, bool fp8, double scale);

// Softmax over logits, top-k (ties: lower index), weights renormalised over the chosen experts.
struct Routed {
    std::vector<int> experts;
    std::vector<double> weights;
};
Routed routeTopk(const std::vector<double>& logits, uint32_t k);

// Index of the largest value (ties: lower index).
uint64_t argmax(const std::vector<double>& v);

// Rotates (a, b) by pos * theta^(-2i/dim).
void rotate(double& a, double& b, uint64_t pos, uint32_t i, uint32_t dim, double theta);

// Relative error ||out - ref|| / ||ref|| (NaN in out gives infinity).
double relativeError(const std::vector<double>& out, const std::vector<double>& ref);

} // namespace gapscope::kernels::ref
