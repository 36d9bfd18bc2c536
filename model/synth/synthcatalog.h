// SPDX-License-Identifier: MIT
#pragma once

// The kernels of a synthetic decode step: an MLA + DSA + MoE model (GLM-5 / DeepSeek-V3.2 shaped)
// served with tensor parallelism, with the kernel names such a server really launches (FlashInfer,
// DeepGEMM, SGLang, Triton fused_moe, cuBLAS nvjet GEMMs, NCCL). Each kernel carries the analysis
// class the default classifier (resources/classifier/default.json) gives its name, so synth can
// write exact ground truth, and a typical duration on an H200 at batch 1.
//
// Pure data; thread-safe.

#include <cstdint>
#include <string>
#include <vector>

namespace gapscope::model::synth {

struct KernelTemplate {
    const char* name;
    const char* cls; // analysis class under the default classifier
    double us; // typical duration
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t registers;
    uint32_t sharedBytes;
    const char* collective; // NCCL op ("AllReduce", "AllGather") for collective kernels, else nullptr
};

// The kernel sequence of one decode step with exactly `kernels` kernels (>= 8): embedding, then
// dense and MoE layers, filler elementwise kernels to reach the count, then the final norm, lm_head,
// logits all-gather and sampling. Entries point into a static table.
std::vector<const KernelTemplate*> stepSequence(uint32_t kernels, uint32_t* layers = nullptr);

// Every distinct template, for documentation and tests.
const std::vector<KernelTemplate>& allTemplates();

} // namespace gapscope::model::synth
