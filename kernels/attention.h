// SPDX-License-Identifier: MIT
#pragma once

// Decode attention over a KV cache, split over cached rows (flash-decoding) and then combined.
// Layouts:
//   MLA (absorbed): one latent "KV head" of width dk = kv_lora + rope shared by all local query
//   heads; V is the first dv = kv_lora elements of the same cached row (vCache == kCache).
//   GQA: kvHeads heads with separate K and V caches, qHeads/kvHeads query heads per KV head.
// Cache layout: [token][kvHead][context][row], rows bf16 or FP8 E4M3; the first `rows` rows are
// read. Which split kernel serves a shape is attentionrows.h's rule:
//   tensor-core kernel (GQA with dk == dv of 64/128, gqa_mma_decode_attention<D, FP8>,
//   attentionmma.h): mma.sync with up to 16 query heads as M, K/V straight into operand registers;
//   rows kernel (GQA with dk == dv of 256, or 64/128 with cudaCores, gqa_flash_decode_attention<D>):
//   fp32 on CUDA cores, each row read by D/8 lanes straight into registers, each warp an online
//   softmax over its rows, warps merged in shared memory;
//   both optionally apply RoPE to the query and append the new row (fused, as TensorRT-LLM's
//   decoder attention does), and then read their first rows before the PDL wait;
//   tiled kernel (MLA, other GQA head sizes: mla_decode_attention, gqa_tiled_decode_attention):
//   fp32, rows staged in shared memory as fp32 in tiles of 32, one score per thread for up to 8 heads.
// The launcher picks about two blocks per SM; the partial results of each split go to a float
// workspace, and the combine kernel (an online softmax over each thread group's splits, 8 of them
// loaded in one round at a time, then the groups merged) writes bf16 outputs [token][qHead][dv]:
// mla_decode_combine / gqa_flash_decode_combine.

#include "kernels/attentionrows.h"
#include "kernels/slowtail.h"

#include <cstdint>
#include <cuda_runtime_api.h>
#include <vector>

namespace gapscope::kernels {

struct AttentionParams {
    bool mla = false;
    bool fp8 = false;
    const uint16_t* q = nullptr; // bf16, head h of token b at q + b*qTokenStride + h*qHeadStride
    uint64_t qTokenStride = 0, qHeadStride = 0;
    const uint8_t* kCache = nullptr;
    const uint8_t* vCache = nullptr; // == kCache for MLA
    uint64_t kRowStride = 0, vRowStride = 0; // elements
    uint64_t context = 0; // rows allocated per (token, kv head)
    uint64_t rows = 0; // rows read
    uint32_t qHeads = 0, kvHeads = 1, dk = 0, dv = 0, tokens = 1;
    float scale = 1.0f;
    uint32_t splits = 0; // 0: chosen by the launcher
    float* workspace = nullptr; // attentionWorkspaceFloats() floats
    uint16_t* out = nullptr; // bf16 [token][qHead][dv]
    SlowTail* tail = nullptr;
    // Fused RoPE and cache append (GQA with dk == dv of 64/128/256 only, rotary over the whole head): cos[dk/2] then
    // sin[dk/2] for position context-1 (ropeCosSinTable). The query is rotated on load; the new key
    // (rotated) and value of KV head h for token b, at newK/newV + b*newTokenStride + h*dk, become
    // cache row context-1 (written through kCache/vCache, which must then be writable).
    const float* ropeCosSin = nullptr;
    const uint16_t* newK = nullptr;
    const uint16_t* newV = nullptr;
    uint64_t newTokenStride = 0;
    // GQA: the CUDA-core rows kernel even where the tensor-core kernel serves (a baseline for the
    // benchmark and the self-check).
    bool cudaCores = false;
};

constexpr uint32_t kAttentionMaxSplits = 256;
uint64_t attentionWorkspaceFloats(uint32_t tokens, uint32_t qHeads, uint32_t dv);

// The RoPE base the sim uses everywhere (RopeParams::theta's default): the value does not change
// what is read or computed, only the angles.
constexpr double kRopeTheta = 10000.0;

// cos then sin of pos * theta^(-2i/ropeDim), i < ropeDim/2 (angles reduced in double), as floats.
std::vector<float> ropeCosSinTable(uint64_t pos, uint32_t ropeDim, double theta);

// Raises the attention kernels' dynamic shared-memory limit to the device's opt-in maximum. Call
// once per device before the first launch (and before any stream capture).
cudaError_t prepareAttentionKernels();

// Launches the split kernel and the combine kernel on `stream`, or one of them (a benchmark times
// them apart; the split count is chosen the same way for the same parameters).
enum class AttentionStage { Both, Split, Combine };
cudaError_t launchAttention(
    const AttentionParams& params, int smCount, cudaStream_t stream, AttentionStage stage = AttentionStage::Both);

} // namespace gapscope::kernels
