// SPDX-License-Identifier: MIT
#include "views/timeline/launchflows.h"

#include <algorithm>

using namespace gapscope::model;

std::vector<LaunchFlows::Flow> LaunchFlows::of(const Trace& trace, EventRef ev, size_t limit)
{
    std::vector<Flow> out;
    if (!ev.valid() || ev.lane >= trace.laneCount() || ev.index >= trace.lane(ev.lane).events.size())
        return out;
    switch (trace.lane(ev.lane).info.kind) {
    case LaneKind::GpuStream:
        if (const EventRef launch = trace.launchOf(ev.lane, ev.index); launch.valid())
            out.push_back(Flow { launch, ev });
        break;
    case LaneKind::CpuApi: {
        std::vector<EventRef> gpu = trace.launchedBy(ev.lane, ev.index);
        auto start = [&](const EventRef& e) { return trace.lane(e.lane).events.start(e.index); };
        std::sort(gpu.begin(), gpu.end(), [&](const EventRef& a, const EventRef& b) { return start(a) < start(b); });
        for (size_t i = 0; i < gpu.size() && i < limit; ++i)
            out.push_back(Flow { ev, gpu[i] });
        break;
    }
    default:
        break;
    }
    return out;
}
