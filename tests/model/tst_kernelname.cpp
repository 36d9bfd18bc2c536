// SPDX-License-Identifier: MIT
// shortKernelName: the short form of real kernel names (from tests/analysis/kernelnames.tsv and the
// torch.profiler traces of the corpus), with and without namespaces; names that are no C++ signature
// stay as they are; on every name of kernelnames.tsv the short form is stable (applying it twice
// changes nothing) and has no return type left.
#include "model/trace/kernelname.h"

#include <QFile>
#include <QTest>

using namespace gapscope::model;

class TstKernelName : public QObject {
    Q_OBJECT
private slots:
    void realNames_data();
    void realNames();
    void everyTableName();
};

void TstKernelName::realNames_data()
{
    QTest::addColumn<QString>("full");
    QTest::addColumn<QString>("keep");
    QTest::addColumn<QString>("drop");
    auto row = [](const char* full, const char* keep, const char* drop) {
        QTest::newRow(keep) << QString::fromUtf8(full) << QString::fromUtf8(keep) << QString::fromUtf8(drop);
    };
    row("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, "
        "__nv_bfloat16*, int, int)",
        "vllm::cross_device_reduce_1stage<…>(…)", "cross_device_reduce_1stage<…>(…)");
    row("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(…)", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(…)");
    row("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, "
        "at::native::ArgMaxOps<c10::BFloat16>, unsigned int, long, 4, 4> >(at::native::ReduceOp<c10::BFloat16, "
        "at::native::ArgMaxOps<c10::BFloat16>, unsigned int, long, 4, 4>)",
        "at::native::reduce_kernel<…>(…)", "reduce_kernel<…>(…)");
    // Lambdas and operator() inside the template arguments, "(anonymous namespace)" as a namespace.
    row("void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4, "
        "at::native::templates::cuda::exponential_kernel(at::TensorIteratorBase&, double, "
        "at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}>(long, at::PhiloxCudaState)",
        "at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<…>(…)",
        "distribution_elementwise_grid_stride_kernel<…>(…)");
    row("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true, false>(float*, float const*, "
        "int, int, int, bool const*, int, bool)",
        "(anonymous namespace)::softmax_warp_forward<…>(…)", "softmax_warp_forward<…>(…)");
    // One plain identifier as the only template argument names the kernel: it stays.
    row("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>(cutlass_80_tensorop_s1688gemm_"
        "256x64_16x4_nn_align4::Params)",
        "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>(…)",
        "Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>(…)");
    row("void moe_align_block_size_kernel<int>(int const*, int*, int*, int*, int, int, int, int, unsigned long, int*)",
        "moe_align_block_size_kernel<int>(…)", "moe_align_block_size_kernel<int>(…)");
    row("void flashinfer::BatchDecodeWithPagedKVCacheKernel<(flashinfer::PosEncodingMode)0, 2u, 4u, 8u, 16u, 1u, 8u, "
        "__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int, flashinfer::DefaultAttention<false, false, false, false> "
        ">(flashinfer::BatchDecodeParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int>)",
        "flashinfer::BatchDecodeWithPagedKVCacheKernel<…>(…)", "BatchDecodeWithPagedKVCacheKernel<…>(…)");
    row("cask_cudnn::computeOffsetsKernel(cask_cudnn::ComputeOffsetsParams)", "cask_cudnn::computeOffsetsKernel(…)",
        "computeOffsetsKernel(…)");
    row("at::cuda::(anonymous namespace)::spin_kernel()", "at::cuda::(anonymous namespace)::spin_kernel()",
        "spin_kernel()");
    row("void splitKreduce_kernel<float, float, float>(cublasSplitKParams<float>, float const*, float const*, float*, "
        "float const*, float const*)",
        "splitKreduce_kernel<…>(…)", "splitKreduce_kernel<…>(…)");
    // A multi-word return type, a templated return type.
    row("unsigned int foo::bar<int, 2>(int) const", "foo::bar<…>(…)", "bar<…>(…)");
    row("std::enable_if<true, void>::type ns::k<float, 4>(float*)", "ns::k<…>(…)", "k<…>(…)");
    row("gemv<float, 128>(float const*)", "gemv<…>(…)", "gemv<…>(…)");
    // No C++ signature: unchanged.
    row("Memcpy HtoD (Pageable -> Device)", "Memcpy HtoD (Pageable -> Device)", "Memcpy HtoD (Pageable -> Device)");
    row("Memset (Device)", "Memset (Device)", "Memset (Device)");
    row("triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0", "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0",
        "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0");
    row("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64",
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64",
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64");
    row("ProfilerStep#4", "ProfilerStep#4", "ProfilerStep#4");
    row("decode step 3", "decode step 3", "decode step 3");
    row("aten::mm", "aten::mm", "aten::mm");
    row("", "", "");
    // Cut off in the middle (a truncated name): unchanged, never a half-collapsed form.
    row("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float",
        "void at::native::reduce_kernel<512, 1, "
        "at::native::ReduceOp<float",
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float");
}

void TstKernelName::realNames()
{
    QFETCH(QString, full);
    QFETCH(QString, keep);
    QFETCH(QString, drop);
    const std::string f = full.toStdString();
    QCOMPARE(QString::fromStdString(shortKernelName(f)), keep);
    QCOMPARE(QString::fromStdString(shortKernelName(f, KernelNamespaces::Drop)), drop);
}

void TstKernelName::everyTableName()
{
    QFile f(QStringLiteral(GAPSCOPE_TEST_DATA "/analysis/kernelnames.tsv"));
    QVERIFY(f.open(QIODevice::ReadOnly | QIODevice::Text));
    int signatures = 0;
    while (!f.atEnd()) {
        const QString line = QString::fromUtf8(f.readLine()).trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#')))
            continue;
        const std::string full = line.section(QLatin1Char('\t'), 1).toStdString();
        const std::string s = shortKernelName(full);
        QCOMPARE(shortKernelName(s), s);
        QVERIFY2(s.rfind("void ", 0) == std::string::npos, full.c_str());
        if (s != full) {
            ++signatures;
            QVERIFY2(
                s.find(' ') == std::string::npos || s.find("(anonymous namespace)") != std::string::npos, s.c_str());
            QVERIFY2(s.back() == ')', s.c_str());
        }
    }
    QVERIFY(signatures >= 80);
}

QTEST_GUILESS_MAIN(TstKernelName)
#include "tst_kernelname.moc"
