// SPDX-License-Identifier: MIT
// libFuzzer target for the .gapscope reader: any bytes either fail with a message or give a trace whose
// every query (summaries, folds, launch lookup, steps) is safe to run.
#include "fuzzbudget.h"

#include "model/tracefile.h"

#include <cstdint>
#include <string>
#include <vector>

using namespace gapscope::model;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    ReadOptions options;
    options.threads = 2;
    auto trace = readTraceBuffer(std::string(reinterpret_cast<const char*>(data), size), "fuzz", options);
    if (!trace) {
        if (trace.error().empty())
            __builtin_trap(); // errors must say what is wrong
        return 0;
    }
    const Trace& t = *trace;
    std::vector<FoldItem> items;
    for (const Lane& lane : t.lanes()) {
        const LaneEvents& ev = lane.events;
        if (ev.empty())
            continue;
        const TimeNs t0 = ev.start(0), t1 = ev.end(ev.size() - 1) + 1;
        lane.summary.fold(ev, t0, t1, double(t1 - t0) / 1000.0 + 1.0, 3.0, items);
        (void)lane.summary.totals(ev, t0, t1);
        for (size_t i = 0; i < ev.size() && i < 64; ++i) {
            (void)t.launchOf(lane.id, i);
            (void)t.kernelConfig(lane.id, i);
            (void)t.collective(lane.id, i);
            (void)t.str(ev.name(i));
        }
    }
    for (uint32_t r : t.ranks())
        (void)t.steps(r).size();
    return 0;
}
