// SPDX-License-Identifier: MIT
#pragma once

// GQA decode attention on tensor cores (internal to kernels/, launched by launchAttention): the
// split kernel gqa_mma_decode_attention<D, FP8> for head dims 64 and 128. Per KV head and split, a
// block of 4 warps takes 16 cached rows per warp at a time; S = Q K^T and O += P V run as
// mma.sync m16n8k16 with up to 16 query heads as the M dimension (bf16 operands for a bf16 cache,
// fp16 for an FP8 one, fp32 accumulators), so one mma covers 8 rows x 16 head-dim elements of
// 16 heads. K and V are read straight from global memory into the operand registers: the head
// dimension is permuted per lane so that each lane loads whole 16-byte chunks, and the output
// columns are permuted back when written. Online softmax per warp; the warps are merged in shared
// memory; partial results go to the workspace of the CUDA-core kernels, for the same combine. With
// ropeCosSin set it rotates the query on load and appends the new row, as the rows kernel does.

#include "kernels/attention.h"

namespace gapscope::kernels {

constexpr uint32_t kGqaMmaHeads = 16; // query heads per block at most (the mma's M)
constexpr uint32_t kGqaMmaBlockRows = 64; // rows per block per round: 4 warps x 16

// grid: (splits, kvHeads * headTiles, tokens), headTiles = ceil(group / kGqaMmaHeads).
cudaError_t launchGqaMmaAttention(const AttentionParams& p, dim3 grid, cudaStream_t stream);

} // namespace gapscope::kernels
