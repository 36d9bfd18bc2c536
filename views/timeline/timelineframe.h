// SPDX-License-Identifier: MIT
#pragma once

// TimelineFrame: phase one of painting the timeline (cull + fold). For the rows of a LaneLayout
// that intersect the visible height, it asks each lane's LaneSummary to fold the visible time window
// into FoldItems (single events, or runs of events too narrow to draw apart). Phase two (the
// renderer) only walks these items, so a frame costs what the screen shows, not what the trace holds.
// A large file (TraceDocument::large) whose read window does not hold the visible time folds its
// overview instead (overviewItems: nodes of the file's summary pyramid, no single events).
//
// Invariants after build(): rows() lists the visible Lane rows in layout order; items(k) of
// rows()[k] are sorted by start and lie (at least partly) inside [mapping.firstVisible(),
// mapping.lastVisible()). Buffers are reused across frames: after the first frames, build()
// allocates nothing.
// Threading: pure with respect to its inputs; a frame may be built on any thread while the Trace is
// not being appended to.

#include "model/io/overview.h"
#include "model/io/tracewindow.h"
#include "model/trace/trace.h"
#include "views/timeline/lanelayout.h"
#include "views/timeline/timemapping.h"

#include <vector>

class TimelineFrame {
public:
    struct Row {
        int layoutRow = -1;
        gapscope::model::LaneId lane = gapscope::model::kNoLane;
    };

    // Fold the Lane rows of `layout` that intersect content heights [y0, y1) for `mapping`.
    // Items narrower than minPixels are merged with their neighbours.
    void build(const gapscope::model::Trace& trace, const LaneLayout& layout, const TimeMapping& mapping, int y0,
        int y1, double minPixels = 2.0, const gapscope::model::TraceOverview* overview = nullptr,
        gapscope::model::TimeWindow window = {});

    size_t rowCount() const { return m_count; }
    const Row& row(size_t k) const { return m_rows[k]; }
    const std::vector<gapscope::model::FoldItem>& items(size_t k) const { return m_items[k]; }
    // True when this frame folded the overview (items() empty, overviewItems() filled).
    bool fromOverview() const { return m_fromOverview; }
    const std::vector<gapscope::model::TraceOverview::Item>& overviewItems(size_t k) const { return m_ovItems[k]; }
    // Index k of the frame row showing layout row `layoutRow`, or -1.
    int frameRowOf(int layoutRow) const;
    const TimeMapping& mapping() const { return m_mapping; }
    size_t itemCount() const;

private:
    TimeMapping m_mapping;
    size_t m_count = 0;
    std::vector<Row> m_rows; // size >= m_count (reused)
    std::vector<std::vector<gapscope::model::FoldItem>> m_items; // size >= m_count (reused)
    std::vector<std::vector<gapscope::model::TraceOverview::Item>> m_ovItems; // likewise
    bool m_fromOverview = false;
};
