// SPDX-License-Identifier: MIT
// bench_inject: what libgapscope-inject.so costs an application's threads while it is idle (loaded,
// not armed). Idle, the library holds no CUPTI subscriber (CUDA launches and syncs run none of its
// code) and sets NCCL's activation mask to 0 (NCCL skips the plugin); what is left on the
// application's threads are its NVTX handlers, one range push and one pop per step in the decode
// loops of tests/gpu. Measured here, through a function table filled the way nvtx3 fills it from
// NVTX_INJECTION64_PATH: the handlers' cost per push + pop pair idle, against an empty handler
// called the same way (what any NVTX tool costs) in the same run, and the handlers while a capture
// records the ranges (for scale). Median of 7 rounds of 10^7 pairs. Also checked: a communicator
// that NCCL initialises while idle gets the mask 0.
#include "capture/inject/channels.h"
#include "capture/inject/nvtxhooks.h"
#include "tests/capture/inject/fakenvtxtable.h"

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using PushFn = int(NVTX_API*)(const char*);
using PopFn = int(NVTX_API*)();

int g_emptyDepth = 0;
int NVTX_API emptyPush(const char*)
{
    return g_emptyDepth++;
}
int NVTX_API emptyPop()
{
    return --g_emptyDepth;
}

// The table slots as nvtx3's inline functions read them: a volatile load, then an indirect call.
PushFn volatile g_push = nullptr;
PopFn volatile g_pop = nullptr;

double medianNsPerPair(long pairs)
{
    std::vector<double> rounds;
    for (int r = 0; r < 7; ++r) {
        const auto t0 = Clock::now();
        for (long i = 0; i < pairs; ++i) {
            g_push("decode_step");
            g_pop();
        }
        rounds.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / double(pairs));
    }
    std::sort(rounds.begin(), rounds.end());
    return rounds[3];
}

} // namespace

int main()
{
    using namespace gapscope::capture::inject;
    if (fakenvtx::install() != 1 || !nvtxHooksInstalled()) {
        std::fprintf(stderr, "bench_inject: the NVTX handlers did not install\n");
        return 1;
    }
    const long pairs = 10000000;
    Channels& ch = channels();
    ch.allocate(1 << 16, 2);

    g_push = emptyPush;
    g_pop = emptyPop;
    const double empty = medianNsPerPair(pairs);

    g_push = reinterpret_cast<PushFn>(fakenvtx::core()[NVTX_CBID_CORE_RangePushA]);
    g_pop = reinterpret_cast<PopFn>(fakenvtx::core()[NVTX_CBID_CORE_RangePop]);
    ch.nvtxMode.store(0);
    const double idle = medianNsPerPair(pairs);

    ch.nvtxMode.store(2); // recording: each pair queues two records (the queue fills, then drops count)
    const double recording = medianNsPerPair(pairs / 10);
    ch.nvtxMode.store(0);

    std::printf("%-52s %10s\n", "NVTX range push + pop, through the function table", "ns / pair");
    std::printf("%-52s %10.2f\n", "empty handler (any NVTX tool)", empty);
    std::printf("%-52s %10.2f\n", "gapscope, idle", idle);
    std::printf("%-52s %10.2f\n", "gapscope, recording", recording);
    const double extra = std::max(0.0, idle - empty);
    std::printf("idle, over the empty handler: %.2f ns per pair\n", idle - empty);
    for (double stepMs : { 0.45, 3.5, 8.0, 11.9 })
        std::printf("  one pair per step of %5.2f ms: %.6f %% of the step (bound with the empty handler: %.6f %%)\n",
            stepMs, 100.0 * extra / (stepMs * 1e6), 100.0 * idle / (stepMs * 1e6));
    return 0;
}
