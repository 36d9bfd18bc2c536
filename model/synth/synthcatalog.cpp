// SPDX-License-Identifier: MIT
#include "model/synth/synthcatalog.h"

#include <algorithm>

namespace gapscope::model::synth {
namespace {

// Index into the table below.
enum T {
    Embed,
    AddNorm,
    Norm,
    QkvA,
    QB,
    KvB,
    Rope,
    IdxLogits,
    KvWrite,
    MlaAttn,
    OProj,
    AllReduce,
    Router,
    Gate,
    SharedUp,
    Act,
    SharedDown,
    Align,
    MoeUp,
    MoeDown,
    MoeSum,
    DenseUp,
    DenseDown,
    Fill,
    LmHead,
    AllGather,
    Sampling,
    Softmax
};

const std::vector<KernelTemplate>& table()
{
    static const std::vector<KernelTemplate> t = {
        { "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, "
          "true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 "
          "const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, "
          "unsigned int, long)",
            "embedding", 3.1, { 96, 1, 1 }, { 128, 4, 1 }, 32, 0, nullptr },
        { "void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, "
          "__nv_bfloat16*, unsigned int, unsigned int, unsigned int, float, float)",
            "other", 2.6, { 1, 1, 1 }, { 768, 1, 1 }, 40, 24576, nullptr },
        { "void flashinfer::norm::RMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, "
          "unsigned int, unsigned int, unsigned int, unsigned int, float, float)",
            "other", 2.1, { 1, 1, 1 }, { 256, 1, 1 }, 32, 0, nullptr },
        { "nvjet_tst_64x8_64x16_4x1_v_bz_splitK_TNT", "linear", 8.3, { 41, 4, 1 }, { 384, 1, 1 }, 168, 213248,
            nullptr },
        { "nvjet_tst_128x16_64x8_2x1_v_bz_TNN", "linear", 5.2, { 64, 1, 1 }, { 384, 1, 1 }, 168, 197632, nullptr },
        { "nvjet_tst_64x32_64x16_2x1_v_bz_bias_TNT", "linear", 4.1, { 128, 1, 1 }, { 384, 1, 1 }, 168, 180224,
            nullptr },
        { "void flashinfer::BatchQKApplyRotaryPosIdsCosSinCacheKernel<true, 64u, 8u, 16u, __nv_bfloat16, "
          "long>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, float*, long*, unsigned int, "
          "unsigned int, unsigned int, unsigned int, unsigned long, unsigned long, unsigned long, unsigned long, "
          "unsigned long, unsigned long, unsigned long, unsigned long)",
            "other", 2.4, { 1, 1, 1 }, { 8, 16, 1 }, 38, 0, nullptr },
        { "void deep_gemm::sm90_fp8_paged_mqa_logits<64u, 128u, 2u, 4u, 3u, 128u, 256u, 512u>(unsigned int, unsigned "
          "int, unsigned long, unsigned int*, unsigned int, unsigned int*, CUtensorMap_st, CUtensorMap_st, "
          "CUtensorMap_st, CUtensorMap_st, float*, unsigned int*)",
            "attention_core", 6.2, { 132, 1, 1 }, { 384, 1, 1 }, 128, 196608, nullptr },
        { "void sglang::set_mla_kv_buffer_kernel<__nv_bfloat16, 576>(__nv_bfloat16*, __nv_bfloat16 const*, "
          "__nv_bfloat16 const*, long const*, int, int, int, int)",
            "attention_core", 2.0, { 1, 1, 1 }, { 128, 1, 1 }, 24, 0, nullptr },
        { "void flashinfer::mla::BatchMLAPagedAttentionKernel<flashinfer::mla::KernelTraits<false, 512u, 64u, 64u, "
          "64u, "
          "2u, 2u, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int>, "
          "flashinfer::mla::Params<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, "
          "int>>(flashinfer::mla::Params<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int>)",
            "attention_core", 15.4, { 132, 1, 1 }, { 128, 2, 1 }, 168, 229376, nullptr },
        { "nvjet_tst_128x8_64x12_2x1_v_bz_splitK_TNT", "linear", 7.1, { 48, 2, 1 }, { 384, 1, 1 }, 168, 221184,
            nullptr },
        { "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "collectives", 10.2,
            { 16, 1, 1 }, { 512, 1, 1 }, 96, 0, "AllReduce" },
        { "void router_gemm_kernel_float_output<__nv_bfloat16, 128, 8, 256, 6144>(float*, __nv_bfloat16 const*, "
          "__nv_bfloat16 const*)",
            "linear", 3.3, { 256, 1, 1 }, { 128, 1, 1 }, 64, 0, nullptr },
        { "void moe_fused_gate_kernel<float, 256, 8, 8, 32, 4>(void*, void*, float*, int*, long, long, long, long, "
          "double)",
            "routed_experts", 2.9, { 1, 1, 1 }, { 32, 8, 1 }, 64, 0, nullptr },
        { "nvjet_tst_64x8_64x16_4x1_v_bz_TNT", "linear", 4.0, { 16, 1, 1 }, { 384, 1, 1 }, 168, 213248, nullptr },
        { "void flashinfer::activation::act_and_mul_kernel<__nv_bfloat16, &(float silu<float>(float "
          "const&))>(__nv_bfloat16*, __nv_bfloat16 const*, int)",
            "other", 2.0, { 1, 1, 1 }, { 128, 1, 1 }, 30, 0, nullptr },
        { "nvjet_tst_64x8_64x16_2x1_v_bz_splitK_TNN", "linear", 3.1, { 24, 2, 1 }, { 384, 1, 1 }, 168, 213248,
            nullptr },
        { "void moe_align_block_size_kernel<int>(int const*, int*, int*, int*, int, int, int, int, unsigned long, "
          "int*)",
            "routed_experts", 3.4, { 2, 1, 1 }, { 1024, 1, 1 }, 32, 4096, nullptr },
        { "fused_moe_kernel", "routed_experts", 22.3, { 256, 1, 1 }, { 128, 1, 1 }, 255, 65536, nullptr },
        { "fused_moe_kernel", "routed_experts", 14.1, { 96, 1, 1 }, { 128, 1, 1 }, 255, 65536, nullptr },
        { "void moe_sum_reduce_kernel<__nv_bfloat16, 8>(__nv_bfloat16 const*, __nv_bfloat16*, int, int, int, float)",
            "routed_experts", 2.5, { 24, 1, 1 }, { 256, 1, 1 }, 32, 0, nullptr },
        { "nvjet_tst_128x16_64x8_4x1_v_bz_TNT", "linear", 20.4, { 96, 2, 1 }, { 384, 1, 1 }, 168, 221184, nullptr },
        { "nvjet_tst_128x8_64x16_2x1_v_bz_splitK_TNN", "linear", 12.2, { 48, 4, 1 }, { 384, 1, 1 }, 168, 221184,
            nullptr },
        { "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::BFloat16>, std::array<char*, "
          "1ul> >(int, at::native::FillFunctor<c10::BFloat16>, std::array<char*, 1ul>)",
            "other", 1.8, { 2, 1, 1 }, { 128, 1, 1 }, 16, 0, nullptr },
        { "nvjet_tst_256x128_64x4_2x1_v_bz_TNT", "linear", 18.3, { 76, 1, 1 }, { 384, 1, 1 }, 168, 229376, nullptr },
        { "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "collectives", 8.8, { 8, 1, 1 },
            { 512, 1, 1 }, 96, 0, "AllGather" },
        { "void flashinfer::sampling::TopKTopPSamplingFromProbKernel<1024u, "
          "(cub::CUB_200200_800_900_NS::BlockScanAlgorithm)2, (cub::CUB_200200_800_900_NS::BlockReduceAlgorithm)2, 4u, "
          "false, float, int>(float*, int*, float*, int*, float*, unsigned int, float, unsigned long, unsigned long, "
          "unsigned long*)",
            "sampling", 11.7, { 1, 1, 1 }, { 1024, 1, 1 }, 64, 8192, nullptr },
        { "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous "
          "namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
            "other", 4.6, { 1, 1, 1 }, { 1024, 1, 1 }, 40, 0, nullptr },
    };
    return t;
}

const T kDenseLayer[] = { AddNorm, QkvA, Norm, Norm, QB, KvB, Rope, IdxLogits, KvWrite, MlaAttn, OProj, AllReduce,
    AddNorm, DenseUp, Act, DenseDown, AllReduce };
const T kMoeLayer[] = { AddNorm, QkvA, Norm, Norm, QB, KvB, Rope, IdxLogits, KvWrite, MlaAttn, OProj, AllReduce,
    AddNorm, Router, Gate, SharedUp, Act, SharedDown, Align, MoeUp, Act, MoeDown, MoeSum, AllReduce };
const T kTail[] = { AddNorm, LmHead, AllGather, Softmax, Sampling };
constexpr uint32_t kDenseLayers = 3;

} // namespace

const std::vector<KernelTemplate>& allTemplates()
{
    return table();
}

std::vector<const KernelTemplate*> stepSequence(uint32_t kernels, uint32_t* layersOut)
{
    static_assert(sizeof(kDenseLayer) / sizeof(T) == 17 && sizeof(kMoeLayer) / sizeof(T) == 24, "layer sizes");
    const auto& t = table();
    const uint32_t fixed = 1 + uint32_t(sizeof(kTail) / sizeof(T));
    kernels = std::max<uint32_t>(kernels, fixed + 1);
    uint32_t budget = kernels - fixed, layers = 0;
    std::vector<const KernelTemplate*> seq;
    seq.reserve(kernels);
    seq.push_back(&t[Embed]);
    for (;; ++layers) {
        const bool dense = layers < kDenseLayers;
        const uint32_t n = dense ? 17 : 24;
        if (n > budget)
            break;
        if (dense)
            for (T k : kDenseLayer)
                seq.push_back(&t[k]);
        else
            for (T k : kMoeLayer)
                seq.push_back(&t[k]);
        budget -= n;
    }
    for (; budget > 0; --budget)
        seq.push_back(&t[Fill]);
    for (T k : kTail)
        seq.push_back(&t[k]);
    if (layersOut)
        *layersOut = layers;
    return seq;
}

} // namespace gapscope::model::synth
