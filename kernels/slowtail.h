// SPDX-License-Identifier: MIT
#pragma once

// SlowTail: the "slow kernel" pathology. A kernel given a SlowTail finishes its real work, then
// its last block spins until the kernel has run `factor` times as long as its work took (measured
// on the GPU's global timer from the first block's start), and adds the extra nanoseconds it spun
// to *injectedNs. The kernel itself is longer in a trace, as a slow kernel would be.
// The struct lives in device memory; only the kernels of one op use one instance (launches of
// that op are serialised on the stream, and the last block resets it for the next launch).

#include <cstdint>

namespace gapscope::kernels {

struct SlowTail {
    unsigned long long startNs; // start of block 0 in the current launch (~0 between launches)
    unsigned int done; // blocks finished in the current launch
    float factor; // total duration / work duration (> 1)
    unsigned long long* injectedNs; // accumulated extra time, read by the host after each step
};

} // namespace gapscope::kernels

#if defined(__CUDACC__)
namespace gapscope::kernels {

__device__ __forceinline__ unsigned long long globalTimerNs()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ void slowTailBegin(SlowTail* tail)
{
    // One plain store (block 0 starts first); per-block atomics here would slow the kernel itself.
    if (tail && threadIdx.x == 0 && threadIdx.y == 0 && blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0)
        tail->startNs = globalTimerNs();
}

// Every block must reach this (no early return before it). The last block to finish spins until
// the kernel has taken `factor` times its work, and counts everything from the end of its own
// work to just before it leaves (the completion atomic, the spin, the reset), so the truth holds
// the whole extra time of the kernel, not only the spin loop.
__device__ __forceinline__ void slowTailEnd(SlowTail* tail)
{
    if (!tail)
        return;
    __syncthreads();
    if (threadIdx.x != 0 || threadIdx.y != 0)
        return;
    const unsigned long long workEnd = globalTimerNs();
    const unsigned int blocks = gridDim.x * gridDim.y * gridDim.z;
    if (atomicAdd(&tail->done, 1u) != blocks - 1)
        return;
    const unsigned long long start = *static_cast<volatile unsigned long long*>(&tail->startNs);
    const unsigned long long work = start != ~0ull && workEnd > start ? workEnd - start : 0;
    const unsigned long long until
        = workEnd + static_cast<unsigned long long>(static_cast<double>(work) * (tail->factor - 1.0f));
    unsigned long long t = globalTimerNs();
    while (t < until)
        t = globalTimerNs();
    tail->startNs = ~0ull;
    tail->done = 0;
    __threadfence();
    atomicAdd(tail->injectedNs, globalTimerNs() - workEnd);
}

} // namespace gapscope::kernels
#endif
