// SPDX-License-Identifier: MIT
// gapscope-fake-rank: a FakeRank as a process (tests that kill ranks, benchmarks, manual demos).
//   gapscope-fake-rank --socket PATH --rank R [--world N] [--step-ms X] [--kernels K] [--first-step S]
//                      [--crash-after N] [--leave-after N] [--flood EVENTS] [--no-steps] [--seconds S]
//                      [--status-baseline MS]
#include "fakerank.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char** argv)
{
    gapscope::capture::test::FakeRankOptions o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
        auto take = [&]() {
            ++i;
            return v;
        };
        if (a == "--socket" && v)
            o.socket = take();
        else if (a == "--rank" && v)
            o.rank = std::atoi(take());
        else if (a == "--world" && v)
            o.worldSize = std::atoi(take());
        else if (a == "--step-ms" && v)
            o.stepMs = std::atof(take());
        else if (a == "--kernels" && v)
            o.kernelsPerStep = std::atoi(take());
        else if (a == "--first-step" && v)
            o.firstLocalStep = std::strtoull(take(), nullptr, 10);
        else if (a == "--crash-after" && v)
            o.crashAfterSteps = std::atoi(take());
        else if (a == "--leave-after" && v)
            o.leaveAfterSteps = std::atoi(take());
        else if (a == "--flood" && v) {
            o.flood = true;
            o.floodEvents = std::atoi(take());
        } else if (a == "--no-steps")
            o.noSteps = true;
        else if (a == "--seconds" && v)
            o.runSeconds = std::atof(take());
        else if (a == "--status-baseline" && v)
            o.statusBaselineMs = std::atof(take());
        else if (a == "--verbose")
            o.verbose = true;
        else {
            std::fprintf(stderr, "gapscope-fake-rank: unknown or incomplete option '%s'\n", a.c_str());
            return 2;
        }
    }
    gapscope::capture::test::FakeRank rank(o);
    rank.run();
    const auto& s = rank.stats();
    std::printf("{\"rank\": %d, \"steps_recorded\": %llu, \"events_sent\": %llu, \"chunks_dropped\": %llu, "
                "\"agent_lost\": %llu, \"registrations\": %llu, \"max_send_us\": %.1f}\n",
        o.rank, (unsigned long long)s.stepsRecorded.load(), (unsigned long long)s.eventsSent.load(),
        (unsigned long long)s.chunksDropped.load(), (unsigned long long)s.agentLost.load(),
        (unsigned long long)s.registrations.load(), double(s.maxSendNs.load()) / 1e3);
    return 0;
}
