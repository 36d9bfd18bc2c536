// SPDX-License-Identifier: MIT
#pragma once

// OwnTime: the one-stream rule for the time an event of a GPU stream has to itself. Work of one stream
// runs in order, so an event launched before the one before it ended (programmatic dependent launch)
// waits: it counts from max(its start, the latest end of every earlier event of its stream) to its end,
// never before its start and never after its end. Without overlap on a stream an event's own time is
// its duration. The CLI summary (tracesummary.h), the viewer's kernel tables and the gap analysis all
// go through this one rule.
//
// Use: one OwnTime per stream, fed the stream's events in order (by start). An event earlier than the
// first one fed that may still run into it is told with seed().
//
// Cost: O(1) per event, inline (it sits in the analysis sweep). Threading: a value; one per thread.

#include "model/trace/trace.h"

#include <algorithm>
#include <limits>

namespace gapscope::model {

class OwnTime {
public:
    // The own start of the next event of the stream, in [start, end]; advances past it.
    TimeNs start(TimeNs start, TimeNs end)
    {
        const TimeNs own = std::min(std::max(start, m_laneEnd), end);
        m_laneEnd = std::max(m_laneEnd, end);
        return own;
    }
    // The own time (>= 0) of the next event of the stream; advances past it.
    TimeNs duration(TimeNs start, TimeNs end) { return end - this->start(start, end); }
    // An earlier event of the stream, not fed, that ends at `end`.
    void seed(TimeNs end) { m_laneEnd = std::max(m_laneEnd, end); }

private:
    TimeNs m_laneEnd = std::numeric_limits<TimeNs>::min();
};

} // namespace gapscope::model
