// SPDX-License-Identifier: MIT
// What finding steps adds to opening a trace: reads FILE whole (every event decoded, no step pass: what
// `info --read full` reads), then times the step pass as openTrace runs it (stored steps kept, their
// kinds found) and as --step-rule auto runs it (every rule on every rank, the stored steps replaced), each
// against the read. Medians of RUNS runs, interleaved. Prints one table.
// Usage: bench_steps FILE [RUNS]
#include "model/io/tracefile.h"
#include "model/open/traceopen.h"
#include "model/steps/stepfinder.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace gapscope::model;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_steps FILE [RUNS]\n");
        return 2;
    }
    const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
    std::vector<double> read, keep, refind;
    uint32_t steps = 0, found = 0;
    uint64_t events = 0;
    for (int r = 0; r < runs; ++r) {
        ReadOptions o;
        o.detectSteps = false;
        const auto t0 = Clock::now();
        auto trace = openTrace({ argv[1] }, o);
        const auto t1 = Clock::now();
        if (!trace) {
            std::fprintf(stderr, "%s\n", trace.error().c_str());
            return 1;
        }
        events = trace->eventCount();
        Trace copy = std::move(*trace);
        const auto t2 = Clock::now();
        StepFinder(StepRule {}, true).find(copy); // openTrace's pass without a rule: stored steps kept
        const auto t3 = Clock::now();
        steps = copy.stepCount();
        StepFinder(*StepRule::parse("auto")).find(copy); // --step-rule auto: found again
        const auto t4 = Clock::now();
        found = copy.stepCount();
        read.push_back(seconds(t0, t1));
        keep.push_back(seconds(t2, t3));
        refind.push_back(seconds(t3, t4));
    }
    const double rd = median(read), kp = median(keep), rf = median(refind);
    std::printf("file: %s, %llu events, %u stored steps, %u found by auto; medians of %d runs\n", argv[1],
        (unsigned long long)events, steps, found, runs);
    std::printf("%-44s %10s %10s\n", "what", "seconds", "of read");
    std::printf("%-44s %10.3f %9.1f%%\n", "read, every event decoded (info --read full)", rd, 100.0);
    std::printf("%-44s %10.3f %9.1f%%\n", "step pass, stored steps kept (their kinds)", kp, 100 * kp / rd);
    std::printf("%-44s %10.3f %9.1f%%\n", "step pass, --step-rule auto (all rules)", rf, 100 * rf / rd);
    return 0;
}
