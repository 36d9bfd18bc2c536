// SPDX-License-Identifier: MIT
// Decode attention alone on the GPU (driven by bench_attention.sh): the split kernel, the combine
// and both, for the tensor-core and the CUDA-core GQA kernels at several split counts, against a
// plain read of the same KV bytes (the floor) measured in the same run. Each figure is the median
// over replays of a CUDA graph of back-to-back launches with PDL, as the sim runs them; the shape
// defaults to one layer of qwen3-30b-a3b at TP2 (16 query heads, 2 KV heads, head dim 128) with a
// 4096-row bf16 cache, RoPE and the append fused. Exits 77 without a GPU.
//   bench_attention [--context N] [--qheads N] [--kvheads N] [--dim 64|128|256] [--fp8] [--tokens N]

#include "kernels/attention.h"
#include "kernels/numerics.h"
#include "kernels/ops.h"
#include "kernels/pdl.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace gk = gapscope::kernels;

namespace {

#define CHECK(x)                                                                                                   \
    do {                                                                                                           \
        const cudaError_t e_ = (x);                                                                                \
        if (e_ != cudaSuccess) {                                                                                   \
            std::fprintf(stderr, "bench_attention: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__);     \
            std::exit(1);                                                                                          \
        }                                                                                                          \
    } while (0)

// The floor: every byte of the cache read once (16-byte loads, 4 in flight per thread), one word
// per block written so the loads stay.
__global__ void read_floor_kernel(const uint4* p, uint64_t n, uint32_t* sink)
{
    gk::pdlEnter();
    uint32_t x = 0;
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += 4 * stride) {
        uint4 v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u)
            v[u] = i + u * stride < n ? __ldg(p + i + u * stride) : make_uint4(0, 0, 0, 0);
#pragma unroll
        for (int u = 0; u < 4; ++u)
            x ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    if (x == 0x9e3779b9u)
        sink[blockIdx.x] = x;
}

constexpr int kLaunches = 20; // per graph
constexpr int kReplays = 11;

// Median microseconds per launch of `body` (kLaunches of it captured in one graph).
template <typename F> double timeGraph(cudaStream_t s, F body)
{
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    {
        gk::PdlScope pdl(true);
        CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < kLaunches; ++i)
            CHECK(body());
        CHECK(cudaStreamEndCapture(s, &graph));
    }
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<double> us;
    for (int r = 0; r < 3 + kReplays; ++r) {
        CHECK(cudaEventRecord(a, s));
        CHECK(cudaGraphLaunch(exec, s));
        CHECK(cudaEventRecord(b, s));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 3)
            us.push_back(1000.0 * ms / kLaunches);
    }
    std::sort(us.begin(), us.end());
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    return us[us.size() / 2];
}

uint32_t argU32(int argc, char** argv, const char* name, uint32_t def)
{
    for (int i = 1; i + 1 < argc; ++i)
        if (!std::strcmp(argv[i], name))
            return static_cast<uint32_t>(std::strtoul(argv[i + 1], nullptr, 10));
    return def;
}

} // namespace

int main(int argc, char** argv)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("bench_attention: no GPU, skipped\n");
        return 77;
    }
    const uint32_t context = argU32(argc, argv, "--context", 4096), qHeads = argU32(argc, argv, "--qheads", 16);
    const uint32_t kvHeads = argU32(argc, argv, "--kvheads", 2), d = argU32(argc, argv, "--dim", 128);
    const uint32_t tokens = argU32(argc, argv, "--tokens", 1);
    bool fp8 = false;
    for (int i = 1; i < argc; ++i)
        fp8 = fp8 || !std::strcmp(argv[i], "--fp8");
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    CHECK(gk::prepareAttentionKernels());
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    const uint32_t esz = fp8 ? 1 : 2;
    const uint64_t stride = uint64_t(qHeads + 2 * kvHeads) * d; // q, k, v of one token (the qkv GEMV's output)
    const uint64_t cacheElems = uint64_t(tokens) * kvHeads * context * d;
    uint16_t *qkv = nullptr, *out = nullptr, *outRef = nullptr;
    uint8_t *kc = nullptr, *vc = nullptr;
    float *ws = nullptr, *tab = nullptr;
    uint32_t* sink = nullptr;
    CHECK(cudaMalloc(&qkv, tokens * stride * 2));
    CHECK(cudaMalloc(&kc, cacheElems * esz));
    CHECK(cudaMalloc(&vc, cacheElems * esz));
    CHECK(cudaMalloc(&out, uint64_t(tokens) * qHeads * d * 2));
    CHECK(cudaMalloc(&outRef, uint64_t(tokens) * qHeads * d * 2));
    CHECK(cudaMalloc(&ws, gk::attentionWorkspaceFloats(tokens, qHeads, d) * 4));
    CHECK(cudaMalloc(&sink, 4096 * 4));
    CHECK(gk::launchFillBf16(qkv, tokens * stride, 1.f, 1, s));
    CHECK(fp8 ? gk::launchFillBytes(kc, cacheElems, true, 2, s) : gk::launchFillBf16(
                    reinterpret_cast<uint16_t*>(kc), cacheElems, 1.f, 2, s));
    CHECK(fp8 ? gk::launchFillBytes(vc, cacheElems, true, 3, s) : gk::launchFillBf16(
                    reinterpret_cast<uint16_t*>(vc), cacheElems, 1.f, 3, s));
    const std::vector<float> table = gk::ropeCosSinTable(context - 1, d, gk::kRopeTheta);
    CHECK(cudaMalloc(&tab, table.size() * 4));
    CHECK(cudaMemcpy(tab, table.data(), table.size() * 4, cudaMemcpyHostToDevice));

    gk::AttentionParams p;
    p.fp8 = fp8;
    p.q = qkv;
    p.qHeadStride = d;
    p.qTokenStride = stride;
    p.kCache = kc;
    p.vCache = vc;
    p.kRowStride = p.vRowStride = d;
    p.context = p.rows = context;
    p.qHeads = qHeads;
    p.kvHeads = kvHeads;
    p.dk = p.dv = d;
    p.tokens = tokens;
    p.scale = 1.f / std::sqrt(static_cast<float>(d));
    p.workspace = ws;
    p.ropeCosSin = tab;
    p.newK = qkv + uint64_t(qHeads) * d;
    p.newV = qkv + uint64_t(qHeads + kvHeads) * d;
    p.newTokenStride = stride;

    const uint64_t kvBytes = 2 * cacheElems * esz;
    const uint64_t vec = kvBytes / 32; // uint4s of the K cache, then the V cache
    const uint32_t floorBlocks = 4 * prop.multiProcessorCount;
    auto readFloor = [&]() -> cudaError_t {
        return gk::launchPdl(read_floor_kernel, dim3(floorBlocks), dim3(256), 0, s,
                   reinterpret_cast<const uint4*>(kc), vec, sink) == cudaSuccess
            ? gk::launchPdl(read_floor_kernel, dim3(floorBlocks), dim3(256), 0, s,
                  reinterpret_cast<const uint4*>(vc), vec, sink)
            : cudaErrorUnknown;
    };
    const double floorUs = timeGraph(s, readFloor);

    std::printf("decode attention: %u tokens, %u/%u heads, head dim %u, %u rows, %s cache (%.2f MiB), %s, %d SMs\n",
        tokens, qHeads, kvHeads, d, context, fp8 ? "fp8" : "bf16", kvBytes / 1048576.0, prop.name,
        prop.multiProcessorCount);
    std::printf("read floor (the KV bytes, two read kernels): %.2f us\n\n", floorUs);
    std::printf("%-12s %7s %9s %9s %9s %9s %10s\n", "kernel", "splits", "both_us", "split_us", "combine_us",
        "x_floor", "max_diff");

    // The CUDA-core kernel with its own split choice is the reference output for max_diff.
    gk::AttentionParams ref = p;
    ref.cudaCores = true;
    ref.out = outRef;
    CHECK(gk::launchAttention(ref, prop.multiProcessorCount, s));
    CHECK(cudaStreamSynchronize(s)); // the stream does not synchronise with the legacy one
    std::vector<uint16_t> hostRef(uint64_t(tokens) * qHeads * d), host(hostRef.size());
    CHECK(cudaMemcpy(hostRef.data(), outRef, hostRef.size() * 2, cudaMemcpyDeviceToHost));

    const uint32_t splitList[] = { 0, 32, 64, 128 };
    for (int cores = 0; cores < 2; ++cores)
        for (const uint32_t splits : splitList) {
            gk::AttentionParams q = p;
            q.cudaCores = cores == 1;
            q.splits = splits;
            q.out = out;
            const int sm = prop.multiProcessorCount;
            auto both = [&]() { return gk::launchAttention(q, sm, s); };
            auto split = [&]() { return gk::launchAttention(q, sm, s, gk::AttentionStage::Split); };
            auto combine = [&]() { return gk::launchAttention(q, sm, s, gk::AttentionStage::Combine); };
            CHECK(both());
            CHECK(cudaStreamSynchronize(s));
            CHECK(cudaMemcpy(host.data(), out, host.size() * 2, cudaMemcpyDeviceToHost));
            double diff = 0;
            for (size_t i = 0; i < host.size(); ++i)
                diff = std::max(diff,
                    double(std::fabs(gapscope::kernels::num::bf16ToFloat(host[i])
                        - gapscope::kernels::num::bf16ToFloat(hostRef[i]))));
            const double b = timeGraph(s, both), sp = timeGraph(s, split), c = timeGraph(s, combine);
            std::printf("%-12s %7s %9.2f %9.2f %9.2f %9.2f %10.2e\n", cores ? "cuda_cores" : "tensor_cores",
                splits ? std::to_string(splits).c_str() : "auto", b, sp, c, b / floorUs, diff);
        }
    std::fflush(stdout);
    return 0;
}
