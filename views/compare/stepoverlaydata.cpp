// SPDX-License-Identifier: MIT
#include "views/compare/stepoverlaydata.h"

#include <algorithm>

using namespace gapscope::model;

namespace {

// The rows of one side: each GPU stream of `rank`, its events inside the window.
TimeNs addRows(const TraceDocument& doc, const GapAnalyzer& an, uint32_t rank, uint32_t step, bool b,
    std::vector<OverlayRow>& rows)
{
    const GapAnalyzer::StepRecord* rec = an.step(rank, step);
    if (!rec)
        return -1;
    const Trace& t = *doc.trace;
    for (LaneId id : t.lanesOf(rank, LaneKind::GpuStream)) {
        const LaneEvents& ev = t.lane(id).events;
        OverlayRow row;
        row.b = b;
        row.label = QStringLiteral("%1 r%2 s%3").arg(b ? "B" : "A").arg(rank).arg(qulonglong(t.lane(id).info.stream));
        auto [first, last] = ev.overlapping(rec->start, rec->end);
        for (size_t i = first; i < last; ++i) {
            const TimeNs s = std::max(ev.start(i), rec->start), e = std::min(ev.end(i), rec->end);
            if (e <= s)
                continue;
            row.boxes.push_back({ s - rec->start, e - rec->start, ev.name(i), doc.colors->color(ev.name(i)) });
        }
        rows.push_back(std::move(row));
    }
    return rec->measured();
}

} // namespace

StepOverlayData StepOverlayData::make(const Comparison& c, size_t rankPair, uint32_t step)
{
    StepOverlayData d;
    d.step = step;
    const auto& ranks = c.diff->ranks();
    if (rankPair >= ranks.size() || !ranks[rankPair].a.present || !ranks[rankPair].b.present)
        return d;
    d.rankA = ranks[rankPair].a.rank;
    d.rankB = ranks[rankPair].b.rank;
    d.aStepNs = addRows(*c.a, *c.analyzerA, d.rankA, step, false, d.rows);
    d.bStepNs = addRows(*c.b, *c.analyzerB, d.rankB, step, true, d.rows);
    d.valid = d.aStepNs >= 0 && d.bStepNs >= 0;
    if (!d.valid)
        d.rows.clear();
    return d;
}
