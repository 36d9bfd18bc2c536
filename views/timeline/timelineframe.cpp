// SPDX-License-Identifier: MIT
#include "views/timeline/timelineframe.h"

using namespace gapscope::model;

void TimelineFrame::build(const Trace& trace, const LaneLayout& layout, const TimeMapping& mapping, int y0, int y1,
    double minPixels, const TraceOverview* overview, TimeWindow window)
{
    m_mapping = mapping;
    m_count = 0;
    const auto [first, last] = layout.rowsIn(y0, y1);
    const TimeNs t0 = mapping.firstVisible();
    const TimeNs t1 = mapping.lastVisible();
    m_fromOverview = overview && !window.contains(t0, t1);
    const size_t lanes = m_fromOverview ? overview->lanes().size() : trace.laneCount();
    for (int r = first; r < last; ++r) {
        const LaneRow& lr = layout.rows()[size_t(r)];
        if (lr.type != LaneRow::Type::Lane || lr.lane >= lanes)
            continue;
        if (m_rows.size() <= m_count) {
            m_rows.emplace_back();
            m_items.emplace_back();
            m_ovItems.emplace_back();
        }
        m_rows[m_count] = Row { r, lr.lane };
        if (m_fromOverview) {
            m_items[m_count].clear();
            overview->fold(lr.lane, t0, t1, mapping.nsPerPixel, minPixels, m_ovItems[m_count]);
        } else {
            m_ovItems[m_count].clear();
            const Lane& lane = trace.lane(lr.lane);
            lane.summary.fold(lane.events, t0, t1, mapping.nsPerPixel, minPixels, m_items[m_count]);
        }
        ++m_count;
    }
}

int TimelineFrame::frameRowOf(int layoutRow) const
{
    // Rows are in layout order: binary search.
    size_t lo = 0, hi = m_count;
    while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        if (m_rows[mid].layoutRow < layoutRow)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m_count && m_rows[lo].layoutRow == layoutRow ? int(lo) : -1;
}

size_t TimelineFrame::itemCount() const
{
    size_t n = 0;
    for (size_t k = 0; k < m_count; ++k)
        n += m_items[k].size() + m_ovItems[k].size();
    return n;
}
