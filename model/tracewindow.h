// SPDX-License-Identifier: MIT
#pragma once

// The windows of a file too large to hold whole: what the viewer reads around the part of the trace on
// screen (its TraceOverview draws the rest). windowFor() picks the stretch to read for a view: the view
// itself, widened on both sides while the overview counts at most `maxEvents` in it, so panning a
// little needs no new read; readWindow() reads it (the chunks that overlap it, the file's lane and
// string ids) with the overview's steps that lie inside it, so the analysis of a window covers whole
// steps. The events of a window are every event of the file that overlaps it (and others of the same
// chunks).
//
// Threading: pure functions; readWindow() may run on any thread (the reader is shared read-only).

#include "model/overview.h"
#include "model/tracefile.h"

#include <optional>

namespace gapscope::model {

struct TimeWindow {
    TimeNs start = 0, end = 0; // [start, end)
    bool contains(TimeNs t0, TimeNs t1) const { return start <= t0 && t1 <= end && start < end; }
};

// The window to read for a view of [t0, t1): widened by up to `widen` times the view's width on each
// side (clamped to the trace) while at most maxEvents lie in it; none when the view alone holds more.
std::optional<TimeWindow> windowFor(
    const TraceOverview& overview, TimeNs t0, TimeNs t1, uint64_t maxEvents, double widen = 1.0);
// The first window of a file: from its start, as far as maxEvents reach.
TimeWindow firstWindow(const TraceOverview& overview, uint64_t maxEvents);

Expected<Trace> readWindow(const format::TraceReader& reader, const TraceOverview& overview, TimeWindow window,
    const ReadOptions& options = {});

} // namespace gapscope::model
