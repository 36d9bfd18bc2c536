// SPDX-License-Identifier: MIT
#pragma once

// TimelineHighlight: a set of events and idle spans lit up on the timeline, e.g. the kernels and
// gaps behind one waterfall bar. Events are kept per lane as sorted event indices (so they can be
// culled with a binary search on start time); idle spans per rank, sorted by start.
//
// Invariants: events[lane] is sorted ascending and free of duplicates; spans[rank] are sorted by
// start. Plain value type; built on a worker or the GUI thread, read on the GUI thread.

#include "model/trace/trace.h"

#include <QColor>
#include <QString>

#include <vector>

struct TimelineHighlight {
    struct Span {
        gapscope::model::TimeNs start = 0;
        gapscope::model::TimeNs end = 0;
    };

    QString label; // e.g. the bar's name
    QColor color; // overlay colour of the spans
    std::vector<std::vector<uint32_t>> events; // by LaneId
    std::vector<std::vector<Span>> spans; // by rank

    bool empty() const;
    size_t eventCount() const;
    size_t spanCount() const;
    bool containsEvent(gapscope::model::LaneId lane, uint32_t index) const;
    // Sorts and de-duplicates (call after filling in any order).
    void normalize();
    // The first highlighted item (event or span) starting at or after `t`, across lanes and ranks.
    // Returns false when there is none.
    bool nextAfter(const gapscope::model::Trace& trace, gapscope::model::TimeNs t, gapscope::model::TimeNs& start,
        gapscope::model::TimeNs& end) const;
};
