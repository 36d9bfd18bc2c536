// SPDX-License-Identifier: MIT
#pragma once

// Programmatic dependent launch (PDL) for the decode step's kernels, as engines launch them: a
// kernel launched with the attribute may be scheduled while the kernel before it on the stream is
// still running, so launch latency and block start-up overlap the previous kernel's tail.
// Correctness rests on every such kernel calling pdlEnter() before it touches global memory
// (GEMVs read their weights first, which nothing writes). Without the attribute pdlEnter() is a
// no-op, so the kernels stay correct when launched plainly.
// PdlScope: while one is alive on a thread with `on`, the sim's launch helpers on that thread add
// the attribute (the sim decides per op: not after NCCL, host nodes or events). Thread-local.

#include <cuda_runtime_api.h>

namespace gapscope::kernels {

class PdlScope {
public:
    explicit PdlScope(bool on);
    ~PdlScope();
    PdlScope(const PdlScope&) = delete;
    PdlScope& operator=(const PdlScope&) = delete;
    static bool active();

private:
    bool m_previous;
};

#ifdef __CUDACC__
// Waits for the kernel before (full completion and memory visibility) and lets the next one be
// scheduled.
__device__ __forceinline__ void pdlEnter()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// kernel<<<grid, block, smem, stream>>>(args...), with the PDL attribute while a PdlScope is on.
template <typename... Params, typename... Args>
cudaError_t launchPdl(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream, Args... args)
{
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    if (PdlScope::active()) {
        attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
    }
    return cudaLaunchKernelEx(&cfg, kernel, static_cast<Params>(args)...);
}
#endif

} // namespace gapscope::kernels
