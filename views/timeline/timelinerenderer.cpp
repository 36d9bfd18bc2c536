// SPDX-License-Identifier: MIT
#include "views/timeline/timelinerenderer.h"

#include "model/trace/kernelname.h"
#include "views/common/eventcolors.h"
#include "views/common/timeformat.h"
#include "views/timeline/lanelayout.h"
#include "views/timeline/timelinehighlight.h"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

using namespace gapscope::model;

namespace {

const QColor kBackground(252, 252, 252);
const QColor kRankBand(244, 246, 250);
const QColor kHeaderBg(236, 239, 244);
const QColor kHostBg(220, 225, 233);
const QColor kGrid(225, 228, 233);
const QColor kText(33, 33, 33);
const QColor kSelection(33, 150, 243, 48);
const QColor kSelectionEdge(21, 101, 192);
const QColor kMatch(255, 214, 0);
const QColor kDim(255, 255, 255, 150);
const QRgb kApiColor = qRgb(144, 164, 174);
const QRgb kSyncColor = qRgb(229, 115, 115);

double clampX(double x, const QRect& plot)
{
    return std::clamp(x, double(plot.left()) - 2, double(plot.right()) + 2);
}

} // namespace

void TimelineRenderer::setTrace(const Trace* trace, const LaneLayout* layout, const EventColors* colors)
{
    m_trace = trace;
    m_layout = layout;
    m_colors = colors;
    m_names.clear();
    m_nameWidth.clear();
    m_flowTarget = {};
    m_flows.clear();
    m_named.clear();
    m_headerLabels.clear();
    m_frameValid = false;
    if (trace) {
        m_names.resize(trace->stringCount());
        m_named.assign(trace->stringCount(), 0);
    }
}

QRect TimelineRenderer::plotRect(const QSize& size, const TimelineView& v)
{
    return QRect(v.headerWidth, kRulerHeight, std::max(0, size.width() - v.headerWidth),
        std::max(0, size.height() - kRulerHeight));
}

QString TimelineRenderer::shortName(const std::string_view& full)
{
    return QString::fromStdString(gapscope::model::shortKernelName(full));
}

const QString& TimelineRenderer::displayName(StringId id) const
{
    static const QString empty;
    if (!m_trace || id >= m_names.size())
        return empty;
    if (!m_named[id]) {
        m_names[id] = shortName(m_trace->str(id));
        m_named[id] = 1;
    }
    return m_names[id];
}

const QString& TimelineRenderer::fittedName(QPainter& p, StringId id, double width)
{
    // Names are measured once per string id (and font); only one too wide for its box is elided,
    // so the cost is per label on screen, not per event.
    if (m_widthFont != p.font()) {
        m_widthFont = p.font();
        m_nameWidth.assign(m_names.size(), -1);
    }
    if (m_nameWidth.size() != m_names.size())
        m_nameWidth.assign(m_names.size(), -1);
    const QString& full = displayName(id);
    if (id >= m_nameWidth.size())
        return full;
    const QFontMetrics fm = p.fontMetrics();
    if (m_nameWidth[id] < 0)
        m_nameWidth[id] = fm.horizontalAdvance(full);
    if (m_nameWidth[id] <= width)
        return full;
    m_elided = fm.elidedText(full, Qt::ElideRight, int(width));
    return m_elided;
}

uint8_t TimelineRenderer::depthOf(LaneId lane, uint32_t index, LaneKind kind) const
{
    const uint32_t nesting = kind == LaneKind::Nvtx ? m_trace->nvtxDepth(lane, index)
        : kind == LaneKind::CpuThread               ? m_trace->hostDepth(lane, index)
                                                    : 0;
    return uint8_t(std::min(255u, nesting));
}

int TimelineRenderer::itemLevelY(const LaneRow& row, uint8_t depth) const
{
    if (!LaneLayout::nested(row.kind))
        return 2;
    const int level = std::min<int>(depth, row.levels - 1);
    return level * m_layout->options().nvtxRowHeight + 1;
}

int TimelineRenderer::itemHeight(const LaneRow& row) const
{
    return LaneLayout::nested(row.kind) ? m_layout->options().nvtxRowHeight - 2 : row.height - 4;
}

QRgb TimelineRenderer::itemColor(LaneId lane, uint32_t index, LaneKind kind) const
{
    const LaneEvents& ev = m_trace->lane(lane).events;
    switch (kind) {
    case LaneKind::GpuStream: {
        const EventKind k = m_trace->kindOf(lane, index);
        if (k == EventKind::Memcpy || k == EventKind::Memset) {
            static const QRgb mem = EventColors::barColor(BarId::MemoryOps, QString()).rgb();
            return mem;
        }
        return m_colors ? m_colors->color(ev.name(index)) : kApiColor;
    }
    case LaneKind::CpuApi:
        return m_trace->kindOf(lane, index) == EventKind::Sync ? kSyncColor : kApiColor;
    case LaneKind::CpuThread:
        return EventColors::hostColor(m_trace->hostKind(lane, index), ev.name(index));
    default:
        return m_colors ? m_colors->color(ev.name(index)) : kApiColor;
    }
}

void TimelineRenderer::paint(QPainter& p, const QSize& size, const TimelineView& view)
{
    p.save();
    const QRect plot = plotRect(size, view);
    if (!m_trace || !m_layout)
        p.fillRect(QRect(QPoint(0, 0), size), kBackground); // else the rows, headers and ruler cover it all
    if (m_trace && m_layout) {
        prepare(size, view); // reuses the last frame when only overlays changed (hover, selection)
        p.save();
        p.setClipRect(plot);
        paintRowBackgrounds(p, plot, view);
        if (m_showSteps)
            paintSteps(p, plot, view);
        paintItems(p, plot, view);
        paintHighlight(p, plot, view);
        if (view.currentMatch.valid())
            paintEventOutline(p, view.currentMatch, view, QColor(255, 111, 0), 3);
        if (view.selected.valid())
            paintEventOutline(p, view.selected, view, kText, 2);
        if (view.hovered.valid())
            paintEventOutline(p, view.hovered, view, QColor(0, 0, 0, 120), 1);
        if (view.showLaunchArrow)
            paintLaunchArrow(p, plot, view);
        paintAnnotations(p, plot, view);
        paintSelection(p, plot, view);
        p.restore();
        paintHeaders(p, size, view);
    }
    paintRuler(p, size, view);
    p.restore();
}

void TimelineRenderer::prepare(const QSize& size, const TimelineView& view)
{
    if (!m_trace || !m_layout)
        return;
    const int top = view.scrollY, bottom = view.scrollY + plotRect(size, view).height();
    if (m_frameValid && m_frame.mapping() == view.mapping && m_frameTop == top && m_frameBottom == bottom)
        return;
    m_frame.build(*m_trace, *m_layout, view.mapping, top, bottom, 2.0, m_overview, m_window);
    m_frameValid = true;
    m_frameTop = top;
    m_frameBottom = bottom;
}

template <typename Fn>
void TimelineRenderer::forEachWideStep(
    const std::vector<Step>& steps, const QRect& plot, const TimelineView& v, double minPx, Fn&& fn)
{
    // Steps at least minPx wide on screen, in time order. A run of narrower ones is jumped over with a
    // binary search (every step ending within minPx of the last one seen is narrower still), so a
    // zoomed-out frame over 100,000 steps costs O(width / minPx) searches, not a walk of every step.
    const TimeNs t0 = v.mapping.firstVisible(), t1 = v.mapping.lastVisible();
    auto endsBefore = [](const Step& s, TimeNs t) { return s.end <= t; };
    auto it = std::lower_bound(steps.begin(), steps.end(), t0, endsBefore);
    while (it != steps.end() && it->start < t1) {
        const double x0 = clampX(plot.left() + v.mapping.toX(it->start), plot);
        const double x1 = clampX(plot.left() + v.mapping.toX(it->end), plot);
        if (x1 - x0 >= minPx) {
            fn(*it, x0, x1);
            ++it;
            continue;
        }
        const TimeNs skip = std::max(it->end, v.mapping.toTime(x0 - plot.left() + minPx));
        it = std::lower_bound(std::next(it), steps.end(), skip, endsBefore);
    }
}

void TimelineRenderer::paintRowBackgrounds(QPainter& p, const QRect& plot, const TimelineView& v)
{
    // Opaque fills only (memfill, no blending): each row's colour, with every other decode step of
    // its rank drawn a shade darker when steps are wide enough to tell apart.
    const auto [first, last] = m_layout->rowsIn(v.scrollY, v.scrollY + plot.height());
    int bottom = plot.top();
    for (int r = first; r < last; ++r) {
        const LaneRow& row = m_layout->rows()[size_t(r)];
        const int y = widgetY(row.y, v);
        bottom = y + row.height;
        const QColor base = row.type == LaneRow::Type::HostHeader ? kHostBg
            : row.type == LaneRow::Type::RankHeader               ? kHeaderBg
            : row.rank % 2 == 1                                   ? kRankBand
                                                                  : kBackground;
        p.fillRect(QRect(plot.left(), y, plot.width(), row.height), base);
        if (m_showSteps && row.type == LaneRow::Type::Lane) {
            const QColor shade = base.darker(106);
            forEachWideStep(stepsOf(row.rank), plot, v, 3, [&](const Step& s, double x0, double x1) {
                if (s.index % 2 == 1)
                    p.fillRect(QRectF(x0, y, x1 - x0, row.height - 1), shade);
            });
        }
        p.fillRect(QRect(plot.left(), y + row.height - 1, plot.width(), 1), kGrid);
    }
    if (bottom < plot.bottom())
        p.fillRect(QRect(plot.left(), bottom, plot.width(), plot.bottom() - bottom + 1), kBackground);
}

void TimelineRenderer::paintSteps(QPainter& p, const QRect& plot, const TimelineView& v)
{
    // Step boundaries and numbers in the rank headers (the lanes are shaded by paintRowBackgrounds).
    const auto [first, last] = m_layout->rowsIn(v.scrollY, v.scrollY + plot.height());
    QFont small = p.font();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.8));
    p.setFont(small);
    const QPen boundary(QColor(120, 130, 150));
    for (int r = first; r < last; ++r) {
        const LaneRow& row = m_layout->rows()[size_t(r)];
        if (row.type != LaneRow::Type::RankHeader)
            continue;
        const int y = widgetY(row.y, v);
        forEachWideStep(stepsOf(row.rank), plot, v, 3, [&](const Step& s, double x0, double x1) {
            p.setPen(boundary);
            p.drawLine(QPointF(x0, y), QPointF(x0, y + row.height));
            if (x1 - x0 >= 28) {
                p.setPen(kText);
                // The step's kind where it is known (prefill, mixed, ... stand out among decode steps).
                const QString label = s.kind == StepKind::Unknown
                    ? QStringLiteral("step %1").arg(s.index)
                    : QStringLiteral("step %1 %2").arg(s.index).arg(QLatin1String(toString(s.kind)));
                p.drawText(QRectF(x0 + 3, y, x1 - x0 - 4, row.height), Qt::AlignVCenter | Qt::AlignLeft, label);
            }
        });
    }
}

void TimelineRenderer::paintItems(QPainter& p, const QRect& plot, const TimelineView& v)
{
    QFont small = p.font();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.8));
    p.setFont(small);
    for (size_t k = 0; k < m_frame.rowCount(); ++k) {
        const LaneRow& row = m_layout->rows()[size_t(m_frame.row(k).layoutRow)];
        paintRowItems(p, k, widgetY(row.y, v), row, plot, v);
    }
}

const std::vector<Step>& TimelineRenderer::stepsOf(uint32_t rank) const
{
    return m_overview && m_frame.fromOverview() ? m_overview->steps(rank) : m_trace->steps(rank);
}

void TimelineRenderer::paintOverviewItems(
    QPainter& p, size_t k, int y, const LaneRow& row, const QRect& plot, const TimelineView& v)
{
    // Nodes of the overview: coloured by their longest event's name; runs of nodes a shade darker.
    const int h = itemHeight(row);
    const int iy = y + itemLevelY(row, 0);
    for (const TraceOverview::Item& it : m_frame.overviewItems(k)) {
        const double x0 = clampX(plot.left() + v.mapping.toX(it.start), plot);
        const double x1 = std::max(x0 + 1, clampX(plot.left() + v.mapping.toX(it.end), plot));
        QRgb rgb = kApiColor;
        if (row.kind == LaneKind::CpuThread)
            rgb = EventColors::hostColor(HostKind::CpuOp, it.longestName);
        else if (row.kind != LaneKind::CpuApi && m_colors)
            rgb = m_colors->color(it.longestName);
        p.fillRect(QRectF(x0, iy, x1 - x0, h), QColor::fromRgb(rgb).darker(it.count > 1 ? 115 : 100));
    }
}

void TimelineRenderer::paintRowItems(
    QPainter& p, size_t k, int y, const LaneRow& row, const QRect& plot, const TimelineView& v)
{
    if (m_frame.fromOverview()) {
        paintOverviewItems(p, k, y, row, plot, v);
        return;
    }
    const LaneId lane = m_frame.row(k).lane;
    const LaneEvents& ev = m_trace->lane(lane).events;
    const int h = itemHeight(row);
    const bool search = m_matches && !m_matches->empty();
    const QPen matchPen(kMatch, 2);
    for (const FoldItem& it : m_frame.items(k)) {
        const double x0 = clampX(plot.left() + v.mapping.toX(it.start), plot);
        const double x1 = std::max(x0 + 1, clampX(plot.left() + v.mapping.toX(it.end), plot));
        const int iy = y + itemLevelY(row, it.depth);
        const uint32_t rep = it.count == 1 ? it.first : it.longest;
        QColor c = QColor::fromRgb(itemColor(lane, rep, row.kind));
        if (it.count > 1)
            c = c.darker(115);
        const QRectF r(x0, iy, x1 - x0, h);
        p.fillRect(r, c);
        const StringId name = ev.name(rep);
        if (search && name < m_matches->size() && (*m_matches)[name]) {
            p.setPen(matchPen);
            p.drawRect(r.adjusted(0, -1, 0, 1));
        }
        if (it.count == 1 && x1 - x0 >= 36 && name != 0) {
            p.setPen(c.lightness() > 140 ? kText : Qt::white);
            p.drawText(r.adjusted(2, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft, fittedName(p, name, x1 - x0 - 4));
        }
    }
}

void TimelineRenderer::paintHighlight(QPainter& p, const QRect& plot, const TimelineView& v)
{
    if (!m_highlight || m_highlight->empty())
        return;
    p.fillRect(plot, kDim); // fade what is not part of the highlighted set
    const TimeNs t0 = v.mapping.firstVisible();
    const TimeNs t1 = v.mapping.lastVisible();
    const QPen outline(m_highlight->color.isValid() ? m_highlight->color.darker(160) : QColor(213, 0, 0), 1);
    for (size_t k = 0; k < m_frame.rowCount(); ++k) {
        const LaneId lane = m_frame.row(k).lane;
        const LaneRow& row = m_layout->rows()[size_t(m_frame.row(k).layoutRow)];
        const int y = widgetY(row.y, v);
        if (lane < m_highlight->events.size() && !m_highlight->events[lane].empty()) {
            const auto& idx = m_highlight->events[lane];
            const LaneEvents& ev = m_trace->lane(lane).events;
            const auto [a, b] = ev.overlapping(t0, t1);
            auto it = std::lower_bound(idx.begin(), idx.end(), uint32_t(a));
            // Walk one pixel at a time: after drawing at x, skip to the first event starting past x + 1.
            while (it != idx.end() && *it < b) {
                const double x0 = clampX(plot.left() + v.mapping.toX(ev.start(*it)), plot);
                const double x1 = std::max(x0 + 1, clampX(plot.left() + v.mapping.toX(ev.end(*it)), plot));
                const QRectF r(x0, y + itemLevelY(row, depthOf(lane, *it, row.kind)), x1 - x0, itemHeight(row));
                p.fillRect(r, QColor::fromRgb(itemColor(lane, *it, row.kind)));
                p.setPen(outline);
                p.drawRect(r);
                const TimeNs next = v.mapping.toTime(std::ceil(x1 + 1 - plot.left()));
                auto skip
                    = std::lower_bound(it + 1, idx.end(), next, [&](uint32_t i, TimeNs t) { return ev.start(i) < t; });
                it = skip == it + 1 || skip == idx.end() ? it + 1 : skip;
            }
        }
        if (row.kind != LaneKind::GpuStream || row.rank >= m_highlight->spans.size())
            continue;
        const auto& spans = m_highlight->spans[row.rank];
        auto s = std::lower_bound(
            spans.begin(), spans.end(), t0, [](const TimelineHighlight::Span& sp, TimeNs t) { return sp.end <= t; });
        QColor fill = m_highlight->color.isValid() ? m_highlight->color : QColor(213, 0, 0);
        fill.setAlpha(150);
        for (; s != spans.end() && s->start < t1; ++s) {
            const double x0 = clampX(plot.left() + v.mapping.toX(s->start), plot);
            const double x1 = std::max(x0 + 1, clampX(plot.left() + v.mapping.toX(s->end), plot));
            p.fillRect(QRectF(x0, y + 1, x1 - x0, row.height - 2), fill);
        }
    }
}

void TimelineRenderer::paintSelection(QPainter& p, const QRect& plot, const TimelineView& v)
{
    if (!v.hasSelection)
        return;
    const double x0 = clampX(plot.left() + v.mapping.toX(std::min(v.selStart, v.selEnd)), plot);
    const double x1 = clampX(plot.left() + v.mapping.toX(std::max(v.selStart, v.selEnd)), plot);
    p.fillRect(QRectF(x0, plot.top(), x1 - x0, plot.height()), kSelection);
    p.setPen(QPen(kSelectionEdge, 1));
    p.drawLine(QPointF(x0, plot.top()), QPointF(x0, plot.bottom()));
    p.drawLine(QPointF(x1, plot.top()), QPointF(x1, plot.bottom()));
}

void TimelineRenderer::paintEventOutline(QPainter& p, EventRef ev, const TimelineView& v, const QColor& c, int w)
{
    const QRectF r = eventRect(ev, v);
    if (r.isEmpty())
        return;
    p.setPen(QPen(c, w));
    p.setBrush(Qt::NoBrush);
    p.drawRect(r.adjusted(-1, -1, 1, 1));
}

QRectF TimelineRenderer::eventRect(EventRef ev, const TimelineView& v) const
{
    if (!m_trace || !m_layout || !ev.valid() || ev.lane >= m_trace->laneCount())
        return {};
    const int r = m_layout->rowOfLane(ev.lane);
    const LaneEvents& events = m_trace->lane(ev.lane).events;
    if (r < 0 || ev.index >= events.size())
        return {};
    const LaneRow& row = m_layout->rows()[size_t(r)];
    const uint8_t depth = depthOf(ev.lane, ev.index, row.kind);
    const double x0 = v.headerWidth + v.mapping.toX(events.start(ev.index));
    const double x1 = std::max(x0 + 1, v.headerWidth + v.mapping.toX(events.end(ev.index)));
    return QRectF(x0, widgetY(row.y, v) + itemLevelY(row, depth), x1 - x0, itemHeight(row));
}

const std::vector<LaunchFlows::Flow>& TimelineRenderer::flowsFor(EventRef target)
{
    // Asked per paint, recomputed only when the hovered or selected event changes.
    if (target.lane != m_flowTarget.lane || target.index != m_flowTarget.index) {
        m_flowTarget = target;
        m_flows = LaunchFlows::of(*m_trace, target);
    }
    return m_flows;
}

QRectF TimelineRenderer::flowEndRect(EventRef ev, const TimelineView& v) const
{
    const QRectF r = eventRect(ev, v);
    if (!r.isEmpty() || !ev.valid())
        return r;
    // A launch inside a closed "CPU threads" group: the group's row at the launch's time.
    const LaneInfo& info = m_trace->lane(ev.lane).info;
    const int g = m_layout->rowOfCpuGroup(info.rank);
    if (g < 0)
        return r;
    const LaneRow& row = m_layout->rows()[size_t(g)];
    const LaneEvents& events = m_trace->lane(ev.lane).events;
    const double x0 = v.headerWidth + v.mapping.toX(events.start(ev.index));
    const double x1 = std::max(x0 + 1, v.headerWidth + v.mapping.toX(events.end(ev.index)));
    return QRectF(x0, widgetY(row.y, v) + 2, x1 - x0, row.height - 4);
}

void TimelineRenderer::paintLaunchArrow(QPainter& p, const QRect& plot, const TimelineView& v)
{
    const EventRef target = v.hovered.valid() ? v.hovered : v.selected;
    const auto& flows = flowsFor(target);
    if (flows.empty())
        return;
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setPen(QPen(QColor(30, 30, 30), 1.5));
    for (const LaunchFlows::Flow& f : flows) {
        const QRectF from = flowEndRect(f.launch, v);
        const QRectF to = eventRect(f.gpu, v);
        if (from.isEmpty() || to.isEmpty() || std::max(from.left(), to.left()) < plot.left() - 2000
            || std::min(from.left(), to.left()) > plot.right() + 2000)
            continue;
        const QPointF a(from.left(), to.top() < from.top() ? from.top() : from.bottom());
        const QPointF b(to.left(), to.top() < from.top() ? to.bottom() : to.top());
        p.drawLine(a, b);
        const double ang = std::atan2(b.y() - a.y(), b.x() - a.x());
        QPainterPath head;
        head.moveTo(b);
        head.lineTo(b - QPointF(8 * std::cos(ang - 0.4), 8 * std::sin(ang - 0.4)));
        head.lineTo(b - QPointF(8 * std::cos(ang + 0.4), 8 * std::sin(ang + 0.4)));
        head.closeSubpath();
        p.fillPath(head, QColor(30, 30, 30));
    }
    p.setRenderHint(QPainter::Antialiasing, false);
}

QRectF TimelineRenderer::annotationRect(int index, const TimelineView& v, const QSize& size) const
{
    if (!m_annotations || index < 0 || index >= int(m_annotations->notes.size()))
        return {};
    const auto& a = m_annotations->notes[size_t(index)];
    const QRect plot = plotRect(size, v);
    const double x0 = v.headerWidth + v.mapping.toX(a.startNs);
    const double x1 = std::max(x0 + 2, v.headerWidth + v.mapping.toX(std::max(a.startNs, a.endNs)));
    if (a.laneKey.empty() || !m_trace || !m_layout)
        return QRectF(x0, plot.top(), x1 - x0, plot.height());
    const auto lane = m_trace->findLane(a.laneKey);
    const int r = lane ? m_layout->rowOfLane(*lane) : -1;
    if (r < 0)
        return {};
    const LaneRow& row = m_layout->rows()[size_t(r)];
    return QRectF(x0, widgetY(row.y, v), x1 - x0, row.height);
}

QColor TimelineRenderer::annotationColor(uint32_t rgba)
{
    if (rgba == 0)
        return QColor(255, 160, 0);
    return QColor(int(rgba >> 24), int((rgba >> 16) & 0xff), int((rgba >> 8) & 0xff), int(rgba & 0xff));
}

uint32_t TimelineRenderer::annotationRgba(const QColor& c)
{
    return uint32_t(c.red()) << 24 | uint32_t(c.green()) << 16 | uint32_t(c.blue()) << 8 | uint32_t(c.alpha());
}

void TimelineRenderer::paintAnnotations(QPainter& p, const QRect& plot, const TimelineView& v)
{
    if (!m_annotations)
        return;
    const QSize size(plot.right() + 1, plot.bottom() + 1);
    const QFontMetrics fm(p.font());
    for (int i = 0; i < int(m_annotations->notes.size()); ++i) {
        const auto& a = m_annotations->notes[size_t(i)];
        const QRectF r = annotationRect(i, v, size);
        if (r.isEmpty() || r.right() < plot.left() || r.left() > plot.right())
            continue;
        QColor c = annotationColor(a.colorRgba);
        c.setAlpha(255);
        QColor fill = c;
        fill.setAlpha(60);
        const bool point = a.endNs <= a.startNs;
        if (!point)
            p.fillRect(r, fill);
        p.setPen(QPen(c, 2));
        p.drawLine(r.topLeft(), r.bottomLeft());
        if (!point)
            p.drawLine(r.topRight(), r.bottomRight());
        const QString text = fm.elidedText(QString::fromStdString(a.text), Qt::ElideRight, 260);
        const QRectF box(r.left() + 3, r.top() + 1, fm.horizontalAdvance(text) + 8, fm.height() + 2);
        p.fillRect(box, QColor(255, 255, 255, 235));
        p.setPen(QPen(c, 1));
        p.drawRect(box);
        p.setPen(kText);
        p.drawText(box, Qt::AlignCenter, text);
    }
}

int TimelineRenderer::annotationAt(const QPoint& pos, const TimelineView& v) const
{
    if (!m_annotations)
        return -1;
    const QSize size(v.headerWidth + v.mapping.width, 1 << 20);
    for (int i = int(m_annotations->notes.size()) - 1; i >= 0; --i) {
        const QRectF r = annotationRect(i, v, size).adjusted(-3, 0, 3, 0);
        // Only the flag at the top and the edges are hot, so events under a range stay clickable.
        const bool onFlag
            = pos.y() >= r.top() && pos.y() <= r.top() + 18 && pos.x() >= r.left() && pos.x() <= r.left() + 200;
        const bool onEdge
            = r.contains(pos) && (std::abs(pos.x() - r.left()) <= 4 || std::abs(pos.x() - r.right()) <= 4);
        if (!r.isEmpty() && (onFlag || onEdge))
            return i;
    }
    return -1;
}

const QString& TimelineRenderer::headerLabel(QPainter& p, int r, int width)
{
    // Eliding measures the text: cache the result per row (the layout and the font rarely change;
    // paintHeaders drops the cache when the base font does, header rows are drawn in its bold form).
    if (m_headerLabels.size() != m_layout->rows().size())
        m_headerLabels.assign(m_layout->rows().size(), QString());
    QString& label = m_headerLabels[size_t(r)];
    if (label.isNull()) {
        const LaneRow& row = m_layout->rows()[size_t(r)];
        label = row.label;
        if (row.type == LaneRow::Type::RankHeader)
            label = (m_layout->options().collapsedRanks.count(row.rank) ? QStringLiteral("▸ ") : QStringLiteral("▾ "))
                + label;
        if (row.type == LaneRow::Type::CpuHeader)
            label = (m_layout->options().openCpuRanks.count(row.rank) ? QStringLiteral("▾ ") : QStringLiteral("▸ "))
                + label;
        // The middle goes: both the kind ("rank 0 · GPU 0") and the end (the GPU model) stay.
        label = p.fontMetrics().elidedText(label, Qt::ElideMiddle, width);
        if (label.isNull())
            label = QStringLiteral("");
    }
    return label;
}

QString TimelineRenderer::headerLabelAt(const QPoint& pos, const TimelineView& v) const
{
    if (!m_layout || pos.x() < 0 || pos.x() >= v.headerWidth || pos.y() < kRulerHeight)
        return {};
    const int r = m_layout->rowAt(contentY(pos.y(), v));
    return r < 0 ? QString() : m_layout->rows()[size_t(r)].label;
}

void TimelineRenderer::paintHeaders(QPainter& p, const QSize& size, const TimelineView& v)
{
    const QRect column(0, kRulerHeight, v.headerWidth, size.height() - kRulerHeight);
    if (m_headerLabelWidth != v.headerWidth) {
        m_headerLabels.clear(); // elided for another column width
        m_headerLabelWidth = v.headerWidth;
    }
    p.save();
    p.setClipRect(column);
    p.fillRect(column, kHeaderBg);
    const auto [first, last] = m_layout->rowsIn(v.scrollY, v.scrollY + column.height());
    QFont bold = p.font();
    bold.setBold(true);
    const QFont normal = p.font();
    if (m_headerFont != normal) {
        m_headerFont = normal;
        m_headerLabels.clear();
    }
    for (int r = first; r < last; ++r) {
        const LaneRow& row = m_layout->rows()[size_t(r)];
        const QRect box(0, widgetY(row.y, v), v.headerWidth - 4, row.height);
        if (row.type == LaneRow::Type::HostHeader)
            p.fillRect(box.adjusted(0, 0, 4, 0), kHostBg);
        p.setFont(row.type == LaneRow::Type::Lane || row.type == LaneRow::Type::CpuHeader ? normal : bold);
        p.setPen(kText);
        const int indent = row.type == LaneRow::Type::HostHeader ? 4
            : row.type == LaneRow::Type::RankHeader              ? 8
            : row.type == LaneRow::Type::CpuHeader               ? 14
                                                                 : 22;
        p.drawText(
            box.adjusted(indent, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft, headerLabel(p, r, box.width() - indent));
        p.setPen(kGrid);
        p.drawLine(0, box.bottom(), v.headerWidth, box.bottom());
    }
    p.setPen(QColor(190, 195, 205));
    p.drawLine(v.headerWidth - 1, column.top(), v.headerWidth - 1, column.bottom());
    p.restore();
}

void TimelineRenderer::paintRuler(QPainter& p, const QSize& size, const TimelineView& v)
{
    const QRect ruler(0, 0, size.width(), kRulerHeight);
    p.fillRect(ruler, QColor(245, 246, 248));
    p.setPen(QColor(190, 195, 205));
    p.drawLine(0, kRulerHeight - 1, size.width(), kRulerHeight - 1);
    const TimeNs origin = m_overview ? m_overview->startTime() : m_trace ? m_trace->startTime() : v.mapping.origin;
    int64_t step = 1;
    std::vector<timeformat::Tick>& ticks = m_tickBuffer;
    timeformat::ticks(v.mapping.origin, v.mapping.offset, v.mapping.nsPerPixel, v.mapping.width, 110, ticks, &step);
    p.save();
    p.setClipRect(QRect(v.headerWidth, 0, size.width() - v.headerWidth, kRulerHeight));
    for (const auto& t : ticks) {
        const double x = v.headerWidth + t.x;
        p.setPen(QColor(120, 125, 135));
        p.drawLine(QPointF(x, t.major ? 8 : 17), QPointF(x, kRulerHeight - 1));
        if (t.major) {
            p.setPen(kText);
            p.drawText(
                QRectF(x + 3, 0, 110, 16), Qt::AlignLeft | Qt::AlignVCenter, timeformat::offset(t.time - origin, step));
        }
    }
    if (v.hasSelection) {
        const double x0 = v.headerWidth + v.mapping.toX(std::min(v.selStart, v.selEnd));
        const double x1 = v.headerWidth + v.mapping.toX(std::max(v.selStart, v.selEnd));
        const QString len = timeformat::duration(double(std::llabs(v.selEnd - v.selStart)));
        const QRectF box((x0 + x1) / 2 - 45, 2, 90, 16);
        p.fillRect(box, kSelectionEdge);
        p.setPen(Qt::white);
        p.drawText(box, Qt::AlignCenter, len);
    }
    p.restore();
    p.setPen(kText);
    p.drawText(QRect(6, 0, v.headerWidth - 10, kRulerHeight), Qt::AlignVCenter | Qt::AlignLeft,
        QStringLiteral("%1 / px").arg(timeformat::duration(v.mapping.nsPerPixel)));
}

EventRef TimelineRenderer::eventAt(const QPoint& pos, const TimelineView& v, FoldItem* folded) const
{
    if (!m_trace || !m_layout || pos.x() < v.headerWidth || pos.y() < kRulerHeight)
        return {};
    const int cy = contentY(pos.y(), v);
    const int r = m_layout->rowAt(cy);
    const int k = r < 0 ? -1 : m_frame.frameRowOf(r);
    if (k < 0)
        return {};
    const LaneRow& row = m_layout->rows()[size_t(r)];
    const bool nested = LaneLayout::nested(row.kind);
    const int level = nested ? (cy - row.y) / m_layout->options().nvtxRowHeight : 0;
    const double px = pos.x() - v.headerWidth;
    const FoldItem* best = nullptr;
    double bestDist = 3; // pixels of tolerance around thin items
    for (const FoldItem& it : m_frame.items(size_t(k))) {
        if (nested && std::min<int>(it.depth, row.levels - 1) != level)
            continue;
        const double x0 = v.mapping.toX(it.start);
        const double x1 = std::max(x0 + 1, v.mapping.toX(it.end));
        const double d = px < x0 ? x0 - px : px > x1 ? px - x1 : 0;
        if (d < bestDist || (d == 0 && best && it.depth > best->depth)) {
            best = &it;
            bestDist = d;
        }
    }
    if (!best)
        return {};
    if (folded)
        *folded = *best;
    return EventRef { m_frame.row(size_t(k)).lane, best->count == 1 ? best->first : best->longest };
}
