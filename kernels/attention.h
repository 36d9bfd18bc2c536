// SPDX-License-Identifier: MIT
#pragma once

// Decode attention over a KV cache, split over cached rows (flash-decoding) and then combined.
// One kernel serves both layouts:
//   MLA (absorbed): one latent "KV head" of width dk = kv_lora + rope shared by all local query
//   heads; V is the first dv = kv_lora elements of the same cached row (vCache == kCache).
//   GQA: kvHeads heads with separate K and V caches, qHeads/kvHeads query heads per KV head.
// Cache layout: [token][kvHead][context][row], rows bf16 or FP8 E4M3; the first `rows` rows are
// read. Rows are staged into shared memory as fp32 in tiles of 32 (a batch of 16-byte loads in
// flight per thread); scores, online softmax and P*V in fp32 on CUDA cores, one score per thread
// for up to 8 heads of a KV head. The launcher picks about two blocks per SM (splits of whole
// tiles); the partial results of each split go to a float workspace, and the combine kernel
// (splits shared among thread groups) writes bf16 outputs [token][qHead][dv].
// Kernel names: mla_decode_attention / mla_decode_combine, gqa_flash_decode_attention /
// gqa_flash_decode_combine.

#include "kernels/slowtail.h"

#include <cstdint>
#include <cuda_runtime_api.h>

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
};

constexpr uint32_t kAttentionMaxSplits = 256;
uint64_t attentionWorkspaceFloats(uint32_t tokens, uint32_t qHeads, uint32_t dv);

// Raises the attention kernels' dynamic shared-memory limit to the device's opt-in maximum. Call
// once per device before the first launch (and before any stream capture).
cudaError_t prepareAttentionKernels();

// Launches the split kernel and the combine kernel on `stream`.
cudaError_t launchAttention(const AttentionParams& params, int smCount, cudaStream_t stream);

} // namespace gapscope::kernels
