// SPDX-License-Identifier: MIT
#include "model/tracewindow.h"

#include <algorithm>

namespace gapscope::model {

std::optional<TimeWindow> windowFor(
    const TraceOverview& overview, TimeNs t0, TimeNs t1, uint64_t maxEvents, double widen)
{
    const TimeNs lo = overview.startTime(), hi = overview.endTime() + 1;
    t0 = std::clamp(t0, lo, hi);
    t1 = std::clamp(t1, t0 + 1, std::max(hi, t0 + 1));
    if (overview.eventsIn(t0, t1) > maxEvents)
        return std::nullopt;
    const double width = double(t1 - t0);
    auto at = [&](double f) {
        const TimeNs pad = TimeNs(f * width);
        return TimeWindow { std::max(lo, t0 - pad), std::min(hi, t1 + pad) };
    };
    double good = 0, bad = widen;
    if (const TimeWindow w = at(widen); overview.eventsIn(w.start, w.end) <= maxEvents)
        return w;
    for (int i = 0; i < 16; ++i) { // the widest that fits, to 1/65536 of `widen`
        const double mid = (good + bad) / 2;
        const TimeWindow w = at(mid);
        (overview.eventsIn(w.start, w.end) <= maxEvents ? good : bad) = mid;
    }
    return at(good);
}

TimeWindow firstWindow(const TraceOverview& overview, uint64_t maxEvents)
{
    const TimeNs lo = overview.startTime(), hi = overview.endTime() + 1;
    if (overview.eventsIn(lo, hi) <= maxEvents)
        return TimeWindow { lo, hi };
    TimeNs good = lo + 1, bad = hi;
    while (bad - good > 1000) { // to a microsecond
        const TimeNs mid = good + (bad - good) / 2;
        (overview.eventsIn(lo, mid) <= maxEvents ? good : bad) = mid;
    }
    return TimeWindow { lo, good };
}

Expected<Trace> readWindow(
    const format::TraceReader& reader, const TraceOverview& overview, TimeWindow window, const ReadOptions& options)
{
    ReadOptions o = options;
    o.windowStart = window.start;
    o.windowEnd = window.end;
    o.detectSteps = false;
    auto trace = readTrace(reader, o);
    if (!trace)
        return trace;
    for (uint32_t rank : overview.ranks()) {
        std::vector<Step> inside;
        for (const Step& s : overview.steps(rank))
            if (s.start >= window.start && s.end <= window.end)
                inside.push_back(s);
        trace->setSteps(rank, std::move(inside));
    }
    return trace;
}

} // namespace gapscope::model
