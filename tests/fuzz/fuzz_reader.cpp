// SPDX-License-Identifier: MIT
// libFuzzer target for the .gapscope reader: any bytes either fail with a message or give a trace whose
// every query (summaries, folds, launch lookup, steps) is safe to run; the same for the file's overview
// (its OVERVIEW frame, or the pass over its chunks) and a window read through it, also with the index
// of a file that has none rebuilt by that pass.
#include "fuzzbudget.h"

#include "model/format/tracereader.h"
#include "model/io/overview.h"
#include "model/io/tracefile.h"
#include "model/io/tracewindow.h"

#include <cstdint>
#include <string>
#include <vector>

using namespace gapscope::model;

namespace {

void overviewOf(const std::string& bytes)
{
    auto reader = gapscope::format::TraceReader::fromBuffer(bytes, "fuzz");
    if (!reader)
        return;
    for (bool frame : { true, false }) {
        OverviewOptions oo;
        oo.useFrame = frame;
        auto o = TraceOverview::open(**reader, oo);
        if (!o) {
            if (o.error().empty())
                __builtin_trap();
            continue;
        }
        (void)o->stats();
        std::vector<TraceOverview::Item> items;
        const TimeNs t0 = o->startTime(), t1 = o->endTime() + 1;
        for (LaneId l = 0; l < o->lanes().size(); ++l)
            o->fold(l, t0, t1, double(t1 - t0) / 1000.0 + 1.0, 3.0, items);
        if (auto w = windowFor(*o, t0, t0 + (t1 - t0) / 4 + 1, 100000)) {
            auto trace = readWindow(**reader, *o, *w);
            if (!trace && trace.error().empty())
                __builtin_trap();
        }
    }
    // A file without an index gets one rebuilt from its chunks; windows are then read through it.
    auto fresh = gapscope::format::TraceReader::fromBuffer(bytes, "fuzz");
    if (!fresh)
        return;
    auto o = TraceOverview::openRebuildingIndex(**fresh, OverviewOptions {});
    if (!o) {
        if (o.error().empty())
            __builtin_trap();
        return;
    }
    const TimeNs t0 = o->startTime(), t1 = o->endTime() + 1;
    if (auto w = windowFor(*o, t0 + (t1 - t0) / 3, t0 + (t1 - t0) / 2 + 1, 100000)) {
        auto trace = readWindow(**fresh, *o, *w);
        if (!trace && trace.error().empty())
            __builtin_trap();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    overviewOf(std::string(reinterpret_cast<const char*>(data), size));
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
