// SPDX-License-Identifier: MIT
#pragma once

// The small kernels of a decode step besides GEMV and attention, each behind a host function that
// takes a stream and returns cudaError_t: buffer fill (random data in a weight format), RMSNorm
// with fused residual add, SiLU-and-mul, RoPE + KV-cache append, MoE router top-k, MoE combine,
// vocab-parallel embedding lookup, argmax sampling (local per rank, then over the gathered
// candidates), the straggler spin and an empty kernel for launch calibration.
// All activations are bf16 (uint16_t bit patterns); math in fp32.

#include "kernels/weightlayout.h"

#include <cstdint>
#include <cuda_runtime_api.h>

namespace gapscope::kernels {

struct SamplePair {
    float value;
    int32_t index;
};

// Random but valid contents: bf16 values in [-scale, scale], FP8/FP4/INT4 codes without NaN and
// scales that keep dot products of order one. Deterministic in `seed`.
cudaError_t launchFillWeights(
    const WeightLayout& layout, uint8_t* values, uint8_t* scales, uint64_t seed, cudaStream_t stream);
cudaError_t launchFillBf16(uint16_t* p, uint64_t count, float scale, uint64_t seed, cudaStream_t stream);
cudaError_t launchFillBytes(uint8_t* p, uint64_t bytes, bool fp8Codes, uint64_t seed, cudaStream_t stream);

struct RmsNormParams {
    const uint16_t* in = nullptr; // [tokens][ld]
    uint16_t* residual = nullptr; // [tokens][width], used when add
    uint16_t* out = nullptr; // [tokens][ld]
    const uint16_t* gamma = nullptr;
    uint32_t width = 0, ld = 0, tokens = 1;
    bool add = false; // residual += in (or = in when reset), normalise residual
    bool reset = false;
    float eps = 1e-6f;
};
cudaError_t launchRmsNorm(const RmsNormParams& p, cudaStream_t stream);

// out[r][j] = silu(in[r][j]) * in[r][width + j] for rows r < rows; with slotCount, rows of slots
// >= *slotCount (tokensPerSlot rows each) are skipped.
cudaError_t launchSiluMul(const uint16_t* in, uint16_t* out, uint32_t width, uint32_t rows, const int32_t* slotCount,
    uint32_t tokensPerSlot, cudaStream_t stream);

struct RopeParams {
    bool mla = false;
    bool fp8 = false;
    uint32_t tokens = 1, qHeads = 0, kvHeads = 1, headDim = 0, ropeDim = 0;
    uint64_t context = 0; // the new row goes to position context-1
    // MLA: q [tokens][qHeads][qStride] rope part at qRopeOffset; kv [tokens][kvl+rope] (latent normalised);
    // qLat [tokens][qHeads][kvl+rope] receives the rotated q rope part; cache rows kvl+rope wide.
    // GQA: q [tokens][qHeads][headDim] rotated in place; k, v [tokens][kvHeads][headDim] appended;
    // token b's heads start at q + b*qTokenStride, k + b*kTokenStride, v + b*vTokenStride (the
    // fused qkv_proj output: all three point into one [tokens][(qHeads + 2*kvHeads)*headDim] buffer).
    uint16_t* q = nullptr;
    uint32_t qStride = 0, qRopeOffset = 0, kvLatent = 0;
    // GQA token strides in elements; 0 = packed (qHeads*headDim for q, kvHeads*headDim for k and v).
    uint64_t qTokenStride = 0, kTokenStride = 0, vTokenStride = 0;
    const uint16_t* k = nullptr;
    const uint16_t* v = nullptr;
    uint16_t* qLat = nullptr;
    uint8_t* kCache = nullptr;
    uint8_t* vCache = nullptr;
    float theta = 10000.f;
};
cudaError_t launchRopeAppend(const RopeParams& p, cudaStream_t stream);

struct RouterParams {
    const uint16_t* logits = nullptr; // [tokens][experts]
    uint32_t experts = 0, topk = 0, tokens = 1, slots = 0;
    bool directPool = true; // slotExpert = expert id (all experts stored) or the slot index
    int32_t* slotExpert = nullptr; // [slots] weight-pool index per slot
    int32_t* slotCount = nullptr; // distinct experts touched
    int32_t* slotIds = nullptr; // [slots] expert id per slot (for checks and traces)
    float* slotWeight = nullptr; // [tokens][slots] routing weight, 0 where not routed
};
cudaError_t launchRouterTopk(const RouterParams& p, cudaStream_t stream);

struct CombineParams {
    const uint16_t* expertOut = nullptr; // [slots][tokens][width]
    const float* slotWeight = nullptr; // [tokens][slots]
    const int32_t* slotCount = nullptr;
    const uint16_t* shared = nullptr; // [tokens][width] or null
    uint16_t* out = nullptr; // [tokens][width]
    uint32_t width = 0, tokens = 1, slots = 0;
};
cudaError_t launchMoeCombine(const CombineParams& p, cudaStream_t stream);

cudaError_t launchEmbedding(const int32_t* tokenIds, const uint16_t* table, uint64_t vocabBegin, uint64_t vocabRows,
    uint32_t width, uint32_t tokens, uint16_t* out, cudaStream_t stream);
cudaError_t launchSampleLocal(
    const uint16_t* logits, uint64_t width, uint64_t vocabBegin, uint32_t tokens, SamplePair* out, cudaStream_t stream);
cudaError_t launchSampleFinal(
    const SamplePair* pairs, uint32_t ranks, uint32_t tokens, int32_t* next, cudaStream_t stream);

// DSA indexer key scan: score[t][r] = scale[t][r] * sum_h w[t][h] * relu(q[t][h] . key[t][r]) for every
// cached row r < rows; keys FP8 E4M3 [tokens][context][dim] with an FP32 scale per row.
struct IndexerScanParams {
    const uint16_t* q = nullptr; // [tokens][heads][dim] bf16
    const uint16_t* w = nullptr; // [tokens][heads] bf16
    const uint8_t* keys = nullptr;
    const float* scales = nullptr; // [tokens][context]
    uint16_t* out = nullptr; // [tokens][rows] bf16
    uint32_t heads = 0, dim = 0, tokens = 1;
    uint64_t context = 0, rows = 0;
};
cudaError_t launchIndexerScan(const IndexerScanParams& p, cudaStream_t stream);

// One thread spins for `ns` on the global timer and adds the time it spun to *injected.
cudaError_t launchStragglerDelay(uint64_t ns, unsigned long long* injected, cudaStream_t stream);
cudaError_t launchEmptyKernel(cudaStream_t stream);
// One thread writes the global timer (ns, the clock of CUPTI's kernel timestamps) to *out.
cudaError_t launchClockStamp(unsigned long long* out, cudaStream_t stream);
// Sums `bytes` (a multiple of 16) into *sink: the HBM read-bandwidth probe.
cudaError_t launchReadProbe(
    const uint8_t* p, uint64_t bytes, unsigned long long* sink, int smCount, cudaStream_t stream);

} // namespace gapscope::kernels
