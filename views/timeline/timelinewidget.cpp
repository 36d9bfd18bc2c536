// SPDX-License-Identifier: MIT
#include "views/timeline/timelinewidget.h"

#include "views/document/tracedocument.h"

#include "model/trace/kernelname.h"
#include "views/common/eventcolors.h"
#include "views/common/timeformat.h"

#include <QElapsedTimer>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QTimer>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <tuple>

using namespace gapscope::model;

TimelineWidget::TimelineWidget(QWidget* parent)
    : QWidget(parent)
    , m_vscroll(new QScrollBar(Qt::Vertical, this))
{
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setContextMenuPolicy(Qt::PreventContextMenu); // right press/release come to the mouse handlers
    setMinimumSize(400, 200);
    connect(m_vscroll, &QScrollBar::valueChanged, this, [this](int v) {
        if (v != m_view.scrollY) {
            m_view.scrollY = v;
            update();
            emit viewChanged();
        }
    });
    m_view.mapping.width = std::max(1, width() - m_view.headerWidth);
    m_windowTimer = new QTimer(this);
    m_windowTimer->setSingleShot(true);
    m_windowTimer->setInterval(60);
    connect(m_windowTimer, &QTimer::timeout, this, &TimelineWidget::requestWindow);
    connect(this, &TimelineWidget::viewChanged, this, [this] {
        if (m_overview)
            m_windowTimer->start();
    });
}

TimelineWidget::~TimelineWidget() = default;

TimeNs TimelineWidget::extentStart() const
{
    return m_overview ? m_overview->startTime() : m_trace ? m_trace->startTime() : 0;
}

TimeNs TimelineWidget::extentEnd() const
{
    return m_overview ? m_overview->endTime() : m_trace ? m_trace->endTime() : 0;
}

void TimelineWidget::setOverview(std::shared_ptr<const TraceOverview> overview, TimeWindow window, bool keepView)
{
    m_overview = std::move(overview);
    m_window = window;
    m_asked = {};
    m_renderer.setOverview(m_overview.get(), window);
    rebuildLayout();
    if (!keepView)
        zoomToAll();
    update();
}

void TimelineWidget::requestWindow()
{
    if (!m_overview)
        return;
    const TimeNs t0 = m_view.mapping.firstVisible(), t1 = m_view.mapping.lastVisible();
    if (m_window.contains(t0, t1) || m_asked.contains(t0, t1))
        return;
    if (auto w = windowFor(*m_overview, t0, t1, TraceDocument::windowEvents())) {
        m_asked = *w;
        emit windowWanted(*w);
    }
}

QSize TimelineWidget::canvasSize() const
{
    return QSize(std::max(1, width() - m_vscroll->sizeHint().width()), height());
}

void TimelineWidget::setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const EventColors> colors)
{
    m_trace = std::move(trace);
    m_colors = std::move(colors);
    m_overview.reset(); // setOverview() follows for a large file
    m_window = {};
    m_renderer.setOverview(nullptr, {});
    m_highlight = {};
    m_matches.clear();
    const int headerWidth = m_view.headerWidth; // the user's choice outlives the trace
    m_view = TimelineView {};
    m_view.headerWidth = headerWidth;
    m_view.mapping.width = std::max(1, canvasSize().width() - m_view.headerWidth);
    rebuildLayout();
    m_renderer.setAnnotations(m_trace ? &m_trace->annotations() : nullptr);
    zoomToAll();
}

void TimelineWidget::setLayoutOptions(const LaneLayoutOptions& options)
{
    m_options = options;
    rebuildLayout();
}

void TimelineWidget::rebuildLayout(bool remeasure)
{
    // Measuring the lanes reads every event of the nested ones (their depths): done when the trace or
    // its lanes change, not when a header click opens or closes a group.
    if (m_overview) { // a large file: every lane of the file, as deep as it nests anywhere
        m_entries = LaneLayout::entriesOf(*m_overview);
        m_rankLabels = LaneLayout::rankLabelsOf(m_overview->header());
    } else if (remeasure || m_entries.size() != (m_trace ? m_trace->laneCount() : 0)) {
        m_entries = m_trace ? LaneLayout::entriesOf(*m_trace) : std::vector<LaneEntry> {};
        m_rankLabels = m_trace ? LaneLayout::rankLabelsOf(*m_trace) : std::vector<QString> {};
    }
    if (m_trace)
        m_layout.build(m_entries, m_rankLabels, m_options);
    else
        m_layout = LaneLayout {};
    m_renderer.setTrace(m_trace.get(), &m_layout, m_colors.get());
    m_renderer.setHighlight(&m_highlight);
    m_renderer.setSearchMatches(&m_matches);
    syncScrollBar();
    update();
}

void TimelineWidget::setAnnotations(const gapscope::model::AnnotationSet* annotations)
{
    m_renderer.setAnnotations(annotations);
    update();
}

void TimelineWidget::setView(const TimelineView& view)
{
    m_view = view;
    m_view.mapping.width = std::max(1, canvasSize().width() - m_view.headerWidth);
    clampView();
    syncScrollBar();
    update();
    emit viewChanged();
}

void TimelineWidget::clampView()
{
    if (m_trace && extentEnd() > extentStart())
        m_view.mapping.clampTo(extentStart(), extentEnd());
    const int maxScroll = std::max(0, m_layout.totalHeight() - (height() - TimelineRenderer::kRulerHeight));
    m_view.scrollY = std::clamp(m_view.scrollY, 0, maxScroll);
}

void TimelineWidget::syncScrollBar()
{
    const int page = std::max(1, height() - TimelineRenderer::kRulerHeight);
    const int maxScroll = std::max(0, m_layout.totalHeight() - page);
    const QSignalBlocker block(m_vscroll);
    m_vscroll->setRange(0, maxScroll);
    m_vscroll->setPageStep(page);
    m_vscroll->setSingleStep(20);
    m_vscroll->setValue(std::min(m_view.scrollY, maxScroll));
    m_view.scrollY = m_vscroll->value();
}

void TimelineWidget::zoomToRange(TimeNs t0, TimeNs t1, double margin)
{
    if (m_trace)
        m_view.mapping.origin = extentStart();
    m_view.mapping.fit(t0, t1, margin);
    clampView();
    update();
    emit viewChanged();
}

void TimelineWidget::zoomToAll()
{
    if (!m_trace)
        return;
    zoomToRange(extentStart(), extentEnd(), 0.01);
}

void TimelineWidget::zoomBy(double factor, double x)
{
    if (x < 0)
        x = m_view.mapping.width / 2.0;
    m_view.mapping.zoomAround(x, factor);
    clampView();
    update();
    emit viewChanged();
}

void TimelineWidget::panBy(double fractionOfWidth)
{
    m_view.mapping.panPixels(-fractionOfWidth * m_view.mapping.width);
    clampView();
    update();
    emit viewChanged();
}

void TimelineWidget::scrollToLane(LaneId lane)
{
    const int r = m_layout.rowOfLane(lane);
    if (r < 0)
        return;
    const LaneRow& row = m_layout.rows()[size_t(r)];
    const int page = height() - TimelineRenderer::kRulerHeight;
    if (row.y < m_view.scrollY || row.y + row.height > m_view.scrollY + page)
        m_vscroll->setValue(std::max(0, row.y - page / 3));
}

void TimelineWidget::selectEvent(EventRef ev, bool reveal)
{
    m_view.selected = ev;
    if (reveal && ev.valid() && m_trace) {
        const LaneEvents& events = m_trace->lane(ev.lane).events;
        const TimeNs s = events.start(ev.index), e = events.end(ev.index);
        if (s < m_view.mapping.firstVisible() || e > m_view.mapping.lastVisible()) {
            const double span = m_view.mapping.width * m_view.mapping.nsPerPixel;
            if (double(e - s) < span * 0.8)
                m_view.mapping.offset = double(s - m_view.mapping.origin) - span / 2 + double(e - s) / 2;
            else
                m_view.mapping.fit(s, e, 0.1);
            clampView();
        }
        scrollToLane(ev.lane);
        emit viewChanged();
    }
    update();
    emit eventSelected(ev);
}

void TimelineWidget::setSelection(TimeNs t0, TimeNs t1)
{
    m_view.hasSelection = true;
    m_view.selStart = std::min(t0, t1);
    m_view.selEnd = std::max(t0, t1);
    update();
    emit rangeSelected(m_view.selStart, m_view.selEnd);
}

void TimelineWidget::clearSelection()
{
    if (!m_view.hasSelection)
        return;
    m_view.hasSelection = false;
    update();
    emit selectionCleared();
}

void TimelineWidget::setHighlight(TimelineHighlight highlight)
{
    m_highlight = std::move(highlight);
    m_highlight.normalize();
    update();
}

void TimelineWidget::clearHighlight()
{
    if (m_highlight.empty() && m_highlight.label.isEmpty())
        return;
    m_highlight = {};
    update();
    emit highlightCleared();
}

int TimelineWidget::setSearch(const QString& text)
{
    m_matches.clear();
    m_view.currentMatch = {};
    int names = 0;
    if (m_trace && !text.isEmpty()) {
        const std::string needle = text.toLower().toStdString();
        m_matches.assign(m_trace->stringCount(), 0);
        std::string lower;
        for (StringId id = 1; id < m_trace->stringCount(); ++id) {
            const std::string_view s = m_trace->str(id);
            lower.assign(s.begin(), s.end());
            std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
            bool hit = lower.find(needle) != std::string::npos;
            if (!hit) {
                // The short form shown on the lanes matches too ("gemv<…>(…)").
                lower = shortKernelName(s);
                std::transform(
                    lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
                hit = lower.find(needle) != std::string::npos;
            }
            if (hit) {
                m_matches[id] = 1;
                ++names;
            }
        }
        if (names == 0)
            m_matches.clear();
    }
    update();
    return names;
}

bool TimelineWidget::findNext(bool backwards)
{
    if (!m_trace || m_matches.empty())
        return false;
    // Matches are ordered by (start, lane, index); take the nearest one after (or before) the
    // current match, or after the left (before the right) edge of the view when there is none.
    using Key = std::tuple<TimeNs, LaneId, uint32_t>;
    const EventRef cur = m_view.currentMatch;
    Key curKey = backwards ? Key { m_view.mapping.lastVisible(), kNoLane, UINT32_MAX }
                           : Key { m_view.mapping.firstVisible() - 1, kNoLane, UINT32_MAX };
    if (cur.valid())
        curKey = Key { m_trace->lane(cur.lane).events.start(cur.index), cur.lane, cur.index };
    bool found = false;
    Key best {};
    auto matches = [this](StringId name) { return name < m_matches.size() && m_matches[name]; };
    for (const LaneRow& row : m_layout.rows()) {
        if (row.type != LaneRow::Type::Lane)
            continue;
        const LaneEvents& ev = m_trace->lane(row.lane).events;
        const auto& starts = ev.starts();
        if (!backwards) {
            for (size_t i
                 = size_t(std::lower_bound(starts.begin(), starts.end(), std::get<0>(curKey)) - starts.begin());
                 i < ev.size() && !(found && ev.start(i) > std::get<0>(best)); ++i) {
                const Key k { ev.start(i), row.lane, uint32_t(i) };
                if (k > curKey && matches(ev.name(i))) {
                    if (!found || k < best)
                        best = k;
                    found = true;
                    break;
                }
            }
        } else {
            size_t i = size_t(std::upper_bound(starts.begin(), starts.end(), std::get<0>(curKey)) - starts.begin());
            while (i-- > 0 && !(found && ev.start(i) < std::get<0>(best))) {
                const Key k { ev.start(i), row.lane, uint32_t(i) };
                if (k < curKey && matches(ev.name(i))) {
                    if (!found || k > best)
                        best = k;
                    found = true;
                    break;
                }
            }
        }
    }
    if (!found)
        return false;
    m_view.currentMatch = EventRef { std::get<1>(best), std::get<2>(best) };
    selectEvent(m_view.currentMatch, true);
    return true;
}

EventRef TimelineWidget::hitTest(const QPoint& pos, FoldItem* item)
{
    m_renderer.prepare(canvasSize(), m_view); // the view may have changed since the last paint
    return m_renderer.eventAt(pos, m_view, item);
}

TimeNs TimelineWidget::timeAt(double widgetX) const
{
    return m_view.mapping.toTime(widgetX - m_view.headerWidth);
}

void TimelineWidget::paintEvent(QPaintEvent*)
{
    QElapsedTimer timer;
    timer.start();
    {
        QPainter p(this);
        m_renderer.paint(p, canvasSize(), m_view);
    }
    emit framePainted(timer.nsecsElapsed());
}

void TimelineWidget::resizeEvent(QResizeEvent*)
{
    const int sw = m_vscroll->sizeHint().width();
    m_vscroll->setGeometry(width() - sw, TimelineRenderer::kRulerHeight, sw, height() - TimelineRenderer::kRulerHeight);
    const int newWidth = std::max(1, canvasSize().width() - m_view.headerWidth);
    // Keep the same time window on screen when the widget is resized.
    if (m_view.mapping.width > 0 && newWidth != m_view.mapping.width)
        m_view.mapping = m_view.mapping.resized(newWidth);
    m_view.mapping.width = newWidth;
    clampView();
    syncScrollBar();
}

void TimelineWidget::setHeaderWidth(int px)
{
    const int w = std::clamp(
        px, TimelineRenderer::kMinHeaderWidth, std::max(TimelineRenderer::kMinHeaderWidth, canvasSize().width() - 100));
    if (w == m_view.headerWidth)
        return;
    m_view.headerWidth = w;
    const int newWidth = std::max(1, canvasSize().width() - w);
    m_view.mapping = m_view.mapping.resized(newWidth);
    m_view.mapping.width = newWidth;
    clampView();
    update();
    emit headerWidthChanged(w);
    emit viewChanged();
}

bool TimelineWidget::onHeaderEdge(const QPoint& pos) const
{
    return pos.y() >= TimelineRenderer::kRulerHeight && std::abs(pos.x() - m_view.headerWidth) <= 4;
}

QString TimelineWidget::laneKeyAt(const QPoint& pos) const
{
    const int r = m_layout.rowAt(TimelineRenderer::contentY(pos.y(), m_view));
    if (r < 0 || !m_trace)
        return {};
    const LaneRow& row = m_layout.rows()[size_t(r)];
    return row.type == LaneRow::Type::Lane ? QString::fromStdString(m_trace->lane(row.lane).info.key()) : QString();
}

bool TimelineWidget::toggleRankAt(const QPoint& pos)
{
    if (pos.y() < TimelineRenderer::kRulerHeight)
        return false;
    const int r = m_layout.rowAt(TimelineRenderer::contentY(pos.y(), m_view));
    if (r < 0)
        return false;
    const LaneRow& row = m_layout.rows()[size_t(r)];
    // A rank header collapses or expands the rank, a "CPU threads" header opens or closes the group.
    std::set<uint32_t>* set = row.type == LaneRow::Type::RankHeader ? &m_options.collapsedRanks
        : row.type == LaneRow::Type::CpuHeader                      ? &m_options.openCpuRanks
                                                                    : nullptr;
    if (!set)
        return false;
    if (!set->erase(row.rank))
        set->insert(row.rank);
    rebuildLayout(false);
    emit viewChanged();
    return true;
}

void TimelineWidget::mousePressEvent(QMouseEvent* e)
{
    const QPoint pos = e->position().toPoint();
    m_pressPos = m_lastPos = pos;
    m_moved = false;
    const bool inRuler = pos.y() < TimelineRenderer::kRulerHeight && pos.x() >= m_view.headerWidth;
    const bool select = inRuler || (e->button() == Qt::LeftButton && (e->modifiers() & Qt::ShiftModifier));
    if (e->button() == Qt::LeftButton && onHeaderEdge(pos)) {
        m_drag = Drag::ResizeHeader;
    } else if (select) {
        m_drag = Drag::Select;
        m_dragStartTime = timeAt(pos.x());
    } else if (e->button() == Qt::LeftButton) {
        m_dragAnnotation = m_renderer.annotationAt(pos, m_view);
        m_drag = m_dragAnnotation >= 0 ? Drag::MoveAnnotation : Drag::Pan;
        m_dragStartTime = timeAt(pos.x());
    } else if (e->button() == Qt::RightButton) {
        m_drag = Drag::Select; // a right drag selects; a right click opens the context menu (on release)
        m_dragStartTime = timeAt(pos.x());
    }
    e->accept();
}

void TimelineWidget::mouseMoveEvent(QMouseEvent* e)
{
    const QPoint pos = e->position().toPoint();
    if (m_drag == Drag::None) {
        updateHover(pos);
        return;
    }
    if (m_drag == Drag::ResizeHeader) {
        setHeaderWidth(pos.x());
        return;
    }
    if ((pos - m_pressPos).manhattanLength() >= 3)
        m_moved = true;
    if (!m_moved)
        return;
    if (m_drag == Drag::Pan) {
        m_view.mapping.panPixels(pos.x() - m_lastPos.x());
        m_view.scrollY -= pos.y() - m_lastPos.y();
        clampView();
        syncScrollBar();
        emit viewChanged();
    } else if (m_drag == Drag::Select) {
        m_view.hasSelection = true;
        m_view.selStart = std::min(m_dragStartTime, timeAt(pos.x()));
        m_view.selEnd = std::max(m_dragStartTime, timeAt(pos.x()));
    }
    m_lastPos = pos;
    update();
}

void TimelineWidget::mouseReleaseEvent(QMouseEvent* e)
{
    const QPoint pos = e->position().toPoint();
    const Drag drag = std::exchange(m_drag, Drag::None);
    if (drag == Drag::ResizeHeader)
        return;
    if (drag == Drag::Select && m_moved) {
        setSelection(m_view.selStart, m_view.selEnd);
        return;
    }
    if (drag == Drag::MoveAnnotation && m_moved) {
        emit annotationMoved(m_dragAnnotation, timeAt(pos.x()) - m_dragStartTime);
        return;
    }
    if (!m_moved && e->button() == Qt::RightButton) {
        showContextMenu(pos); // a right drag selects a range; a right click opens the menu
        return;
    }
    if (m_moved || e->button() != Qt::LeftButton)
        return;
    if (drag == Drag::MoveAnnotation) {
        emit annotationActivated(m_dragAnnotation);
        return;
    }
    if (toggleRankAt(pos))
        return;
    if (pos.y() >= TimelineRenderer::kRulerHeight)
        selectEvent(hitTest(pos, nullptr), false);
}

void TimelineWidget::mouseDoubleClickEvent(QMouseEvent* e)
{
    const EventRef ev = hitTest(e->position().toPoint(), nullptr);
    if (!ev.valid() || !m_trace)
        return;
    const LaneEvents& events = m_trace->lane(ev.lane).events;
    zoomToRange(events.start(ev.index), events.end(ev.index), 0.1);
    selectEvent(ev, false);
}

void TimelineWidget::wheelEvent(QWheelEvent* e)
{
    const QPoint delta = e->angleDelta();
    if (e->modifiers() & Qt::ShiftModifier) {
        m_vscroll->setValue(m_vscroll->value() - (delta.y() != 0 ? delta.y() : delta.x()) / 2);
    } else if (delta.y() != 0) {
        const double x = e->position().x() - m_view.headerWidth;
        zoomBy(std::pow(1.0015, delta.y()), std::clamp(x, 0.0, double(m_view.mapping.width)));
    } else if (delta.x() != 0) {
        panBy(-delta.x() / 1200.0); // horizontal wheel / touchpad: pan
    }
    e->accept();
}

void TimelineWidget::keyPressEvent(QKeyEvent* e)
{
    const QPoint cursor = mapFromGlobal(QCursor::pos());
    const double x = rect().contains(cursor) ? cursor.x() - m_view.headerWidth : -1;
    switch (e->key()) {
    case Qt::Key_W:
        zoomBy(1.25, x);
        break;
    case Qt::Key_S:
        zoomBy(1 / 1.25, x);
        break;
    case Qt::Key_A:
        panBy(-0.15);
        break;
    case Qt::Key_D:
        panBy(0.15);
        break;
    case Qt::Key_Escape:
        clearSelection();
        clearHighlight();
        break;
    default:
        QWidget::keyPressEvent(e);
        return;
    }
    e->accept();
}

void TimelineWidget::leaveEvent(QEvent*)
{
    if (m_view.hovered.valid()) {
        m_view.hovered = {};
        update();
        emit eventHovered({});
    }
}

void TimelineWidget::updateHover(const QPoint& pos)
{
    FoldItem item;
    const EventRef ev = hitTest(pos, &item);
    if (ev.lane != m_view.hovered.lane || ev.index != m_view.hovered.index) {
        m_view.hovered = ev;
        update();
        emit eventHovered(ev);
    }
    if (onHeaderEdge(pos))
        setCursor(Qt::SplitHCursor);
    else
        unsetCursor();
    const QString label = m_renderer.headerLabelAt(pos, m_view);
    if (ev.valid())
        showTooltip(mapToGlobal(pos), ev, item);
    else if (!label.isEmpty())
        QToolTip::showText(mapToGlobal(pos) + QPoint(12, 12), label, this); // the whole, however narrow the column
    else
        QToolTip::hideText();
}

void TimelineWidget::showTooltip(const QPoint& globalPos, EventRef ev, const FoldItem& item)
{
    const LaneEvents& events = m_trace->lane(ev.lane).events;
    const QString name = QString::fromStdString(std::string(m_trace->str(events.name(ev.index))));
    QString text;
    if (item.count > 1) {
        text = QStringLiteral("<b>%1 events</b> (zoom in to separate)<br>busy %2 of %3<br>longest: %4 (%5)")
                   .arg(item.count)
                   .arg(timeformat::duration(double(item.busy)), timeformat::duration(double(item.end - item.start)),
                       TimelineRenderer::shortName(m_trace->str(events.name(ev.index))).toHtmlEscaped(),
                       timeformat::duration(double(events.duration(ev.index))));
    } else {
        text = QStringLiteral("<b>%1</b><br>%2 at +%3")
                   .arg(TimelineRenderer::shortName(m_trace->str(events.name(ev.index))).toHtmlEscaped(),
                       timeformat::duration(double(events.duration(ev.index))),
                       timeformat::duration(double(events.start(ev.index) - extentStart()), 6));
        if (TimelineRenderer::shortName(m_trace->str(events.name(ev.index))) != name)
            text += QStringLiteral("<br><small>%1</small>").arg(name.left(300).toHtmlEscaped());
        if (m_trace->lane(ev.lane).info.kind == LaneKind::CpuThread)
            text += QStringLiteral("<br>%1, depth %2")
                        .arg(QLatin1String(toString(m_trace->hostKind(ev.lane, ev.index))))
                        .arg(m_trace->hostDepth(ev.lane, ev.index));
    }
    QToolTip::showText(globalPos + QPoint(12, 12), text, this);
}

void TimelineWidget::showContextMenu(const QPoint& pos)
{
    const TimeNs t = timeAt(pos.x());
    const QString lane = laneKeyAt(pos);
    QMenu menu(this);
    if (m_view.hasSelection) {
        const TimeNs a = m_view.selStart, b = m_view.selEnd;
        menu.addAction(tr("Annotate selection on this lane..."), this, [=] { emit annotateRequested(a, b, lane); });
        menu.addAction(
            tr("Annotate selection on all lanes..."), this, [=] { emit annotateRequested(a, b, QString()); });
        menu.addAction(tr("Zoom to selection"), this, [=] { zoomToRange(a, b, 0.02); });
        menu.addAction(tr("Clear selection"), this, [this] { clearSelection(); });
        menu.addSeparator();
    }
    menu.addAction(tr("Annotate this point..."), this, [=] { emit annotateRequested(t, t, lane); });
    menu.addAction(tr("Zoom to whole trace"), this, [this] { zoomToAll(); });
    if (!m_highlight.empty())
        menu.addAction(tr("Clear highlight"), this, [this] { clearHighlight(); });
    menu.exec(mapToGlobal(pos));
}
