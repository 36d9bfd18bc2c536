// SPDX-License-Identifier: MIT
// bench_budget: the cost of computeBudget, which the viewer calls on every edit of a budget value.
// For each preset (TP8 on h200-sxm, EP8 for MoE models, context 4096): the median over 7 rounds of
// the time per call, (a) with the batch alternating between two values (the busiest-EP-rank memo
// hits), (b) with a new batch every call (memo misses: the exact busiest-rank sum runs), and the
// baseline (c) loading the model and hardware presets from disk once, measured in the same run.
#include "model/budget/budget.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

using namespace gapscope::model;
using Clock = std::chrono::steady_clock;

namespace {

template <typename F> double medianUs(int calls, F&& f)
{
    std::vector<double> rounds;
    for (int r = 0; r < 7; ++r) {
        auto t0 = Clock::now();
        for (int i = 0; i < calls; ++i)
            f(i);
        rounds.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls);
    }
    std::sort(rounds.begin(), rounds.end());
    return rounds[3];
}

} // namespace

int main()
{
    std::printf("%-18s %14s %16s %16s\n", "model", "memo hit us", "memo miss us", "load presets us");
    for (const char* name : { "glm-5", "deepseek-v3", "qwen3-235b-a22b", "llama-3.1-70b", "qwen3-30b-a3b" }) {
        BudgetInputs in;
        double loadUs = medianUs(20, [&](int) {
            in.model = loadModelConfig(name).value();
            in.hardware = loadHardwareProfile("h200-sxm").value();
        });
        in.tp = 8;
        in.ep = in.model.isMoe() ? 8 : 1;
        in.context = 4096;
        double sink = 0;
        double hit = medianUs(2000, [&](int i) {
            in.batch = 1 + (i & 1);
            sink += computeBudget(in)->idealMs;
        });
        int next = 0;
        double miss = medianUs(100, [&](int) {
            in.batch = uint32_t(3 + (next++ % 4000)); // never repeats within the memo's 32 entries
            sink += computeBudget(in)->idealMs;
        });
        std::printf("%-18s %14.1f %16.1f %16.1f\n", name, hit, miss, loadUs);
        if (sink < 0)
            return 1;
    }
    return 0;
}
