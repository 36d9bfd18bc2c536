// SPDX-License-Identifier: MIT
#include "views/timeline/timelinehighlight.h"

#include <algorithm>
#include <limits>

using namespace gapscope::model;

bool TimelineHighlight::empty() const
{
    return eventCount() == 0 && spanCount() == 0;
}

size_t TimelineHighlight::eventCount() const
{
    size_t n = 0;
    for (const auto& v : events)
        n += v.size();
    return n;
}

size_t TimelineHighlight::spanCount() const
{
    size_t n = 0;
    for (const auto& v : spans)
        n += v.size();
    return n;
}

bool TimelineHighlight::containsEvent(LaneId lane, uint32_t index) const
{
    if (lane >= events.size())
        return false;
    return std::binary_search(events[lane].begin(), events[lane].end(), index);
}

void TimelineHighlight::normalize()
{
    for (auto& v : events) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
    }
    for (auto& v : spans)
        std::sort(v.begin(), v.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
}

bool TimelineHighlight::nextAfter(const Trace& trace, TimeNs t, TimeNs& start, TimeNs& end) const
{
    TimeNs best = std::numeric_limits<TimeNs>::max();
    for (LaneId lane = 0; lane < events.size() && lane < trace.laneCount(); ++lane) {
        const auto& idx = events[lane];
        const LaneEvents& ev = trace.lane(lane).events;
        auto it = std::lower_bound(idx.begin(), idx.end(), t, [&](uint32_t i, TimeNs v) { return ev.start(i) < v; });
        if (it != idx.end() && ev.start(*it) < best) {
            best = ev.start(*it);
            start = best;
            end = ev.end(*it);
        }
    }
    for (const auto& v : spans) {
        auto it = std::lower_bound(v.begin(), v.end(), t, [](const Span& s, TimeNs x) { return s.start < x; });
        if (it != v.end() && it->start < best) {
            best = it->start;
            start = it->start;
            end = it->end;
        }
    }
    return best != std::numeric_limits<TimeNs>::max();
}
