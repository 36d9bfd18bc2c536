// SPDX-License-Identifier: MIT
#pragma once

// TimelineWidget: the interactive per-GPU timeline. Draws through TimelineRenderer (cull + fold,
// then draw) and turns input into view changes.
//
// Mouse and keys (Perfetto-like; also listed in views/README.md):
//   wheel                zoom around the cursor        shift+wheel / scroll bar   scroll lanes
//   left drag            pan (time and lanes)          shift+left drag or right drag   select a range
//   drag on the ruler    select a range                click                      select an event
//   double-click         zoom to the event             click a rank header        collapse / expand it
//   click "CPU threads"  open / close the rank's CPU thread flames
//   W / S                zoom in / out                 A / D                      pan left / right
//   Esc                  clear selection / highlight   right click               context menu (annotate, zoom)
// Selecting a range emits rangeSelected (the main window shows its statistics).
//
// A large file (setOverview): the timeline spans the whole file and draws its overview wherever the
// window the trace holds does not cover the view; once the view shows few enough events to read
// (TraceDocument::windowEvents()), windowWanted asks for the window around it (60 ms after the view
// last moved, at once after a jump: requestWindow()); the old picture stays until the new window comes.
//
// Threading: GUI thread only. The Trace is shared (read-only) and must not be appended to while
// the widget paints.

#include "model/trace/trace.h"
#include "views/timeline/lanelayout.h"
#include "views/timeline/timelinehighlight.h"
#include "views/timeline/timelinerenderer.h"

#include <QWidget>

#include <memory>

class EventColors;
class QScrollBar;

class TimelineWidget : public QWidget {
    Q_OBJECT
public:
    explicit TimelineWidget(QWidget* parent = nullptr);
    ~TimelineWidget() override;

    void setTrace(std::shared_ptr<const gapscope::model::Trace> trace, std::shared_ptr<const EventColors> colors);
    // A large file: its overview, and the window `trace` holds (call after setTrace; a null overview
    // turns it off). `keepView`: a new window of the same file, the view stays.
    void setOverview(std::shared_ptr<const gapscope::model::TraceOverview> overview, gapscope::model::TimeWindow window,
        bool keepView = false);
    const gapscope::model::TraceOverview* overview() const { return m_overview.get(); }
    gapscope::model::TimeWindow window() const { return m_window; }
    // Asks for the window around the view now (after a jump), when the view shows few enough events.
    void requestWindow();
    // What the timeline spans: the whole file (the overview) or the trace.
    gapscope::model::TimeNs extentStart() const;
    gapscope::model::TimeNs extentEnd() const;
    const gapscope::model::Trace* trace() const { return m_trace.get(); }
    void setLayoutOptions(const LaneLayoutOptions& options);
    const LaneLayoutOptions& layoutOptions() const { return m_options; }
    const LaneLayout& laneLayout() const { return m_layout; }
    TimelineRenderer& renderer() { return m_renderer; }
    const TimelineView& view() const { return m_view; }
    void setView(const TimelineView& view);
    // Plot size (where events are drawn) and the size the renderer paints into.
    QSize canvasSize() const;
    // Width of the lane label column (dragging its right edge sets it too); the time window on screen
    // stays. Clamped to [kMinHeaderWidth, the canvas width less 100 px].
    void setHeaderWidth(int px);
    int headerWidth() const { return m_view.headerWidth; }
    // True when `pos` is on the label column's edge (the drag handle).
    bool onHeaderEdge(const QPoint& pos) const;

    void zoomToRange(gapscope::model::TimeNs t0, gapscope::model::TimeNs t1, double margin = 0.05);
    void zoomToAll();
    void zoomBy(double factor, double x = -1); // x: plot pixel to keep fixed; -1 = the centre
    void panBy(double fractionOfWidth); // > 0: towards later times
    void scrollToLane(gapscope::model::LaneId lane);
    void selectEvent(gapscope::model::EventRef ev, bool reveal);

    void setSelection(gapscope::model::TimeNs t0, gapscope::model::TimeNs t1);
    void clearSelection();
    void setHighlight(TimelineHighlight highlight);
    void clearHighlight();
    const TimelineHighlight& highlight() const { return m_highlight; }
    void setAnnotations(const gapscope::model::AnnotationSet* annotations);

    // Search by substring of the full name (case-insensitive). Returns the number of names matching.
    int setSearch(const QString& text);
    // Jumps to the next (or previous) matching event after the current one; false when none.
    bool findNext(bool backwards = false);
    gapscope::model::EventRef currentMatch() const { return m_view.currentMatch; }

signals:
    void eventHovered(gapscope::model::EventRef ev);
    void eventSelected(gapscope::model::EventRef ev);
    void rangeSelected(gapscope::model::TimeNs t0, gapscope::model::TimeNs t1);
    void selectionCleared();
    void highlightCleared();
    void viewChanged();
    void annotationActivated(int index);
    void annotationMoved(int index, gapscope::model::TimeNs delta);
    // The user asked to annotate [t0, t1] (t0 == t1: a point) on the lane `laneKey` ("" = whole trace).
    void annotateRequested(gapscope::model::TimeNs t0, gapscope::model::TimeNs t1, const QString& laneKey);
    // Emitted at the end of every paint with the time it took (first-paint and frame-time measurements).
    void framePainted(qint64 nanoseconds);
    // A large file: the window to read for the view (TraceDocument::readWindow).
    void windowWanted(gapscope::model::TimeWindow window);
    void headerWidthChanged(int px);

protected:
    void paintEvent(QPaintEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;
    void mouseDoubleClickEvent(QMouseEvent* e) override;
    void wheelEvent(QWheelEvent* e) override;
    void keyPressEvent(QKeyEvent* e) override;
    void leaveEvent(QEvent* e) override;

private:
    enum class Drag { None, Pan, Select, MoveAnnotation, ResizeHeader };
    // remeasure: the trace or its lanes changed (else only the options did).
    void rebuildLayout(bool remeasure = true);
    void clampView();
    void syncScrollBar();
    void updateHover(const QPoint& pos);
    void showContextMenu(const QPoint& pos);
    void showTooltip(const QPoint& globalPos, gapscope::model::EventRef ev, const gapscope::model::FoldItem& item);
    QString laneKeyAt(const QPoint& pos) const;
    bool toggleRankAt(const QPoint& pos); // rank and "CPU threads" headers
    gapscope::model::TimeNs timeAt(double widgetX) const;
    gapscope::model::EventRef hitTest(const QPoint& pos, gapscope::model::FoldItem* item);

    std::shared_ptr<const gapscope::model::Trace> m_trace;
    std::shared_ptr<const EventColors> m_colors;
    std::shared_ptr<const gapscope::model::TraceOverview> m_overview;
    gapscope::model::TimeWindow m_window;
    class QTimer* m_windowTimer = nullptr;
    gapscope::model::TimeWindow m_asked; // the last window asked for (not asked again while it comes)
    LaneLayoutOptions m_options;
    LaneLayout m_layout;
    std::vector<LaneEntry> m_entries; // the lanes as last measured (LaneLayout::entriesOf)
    std::vector<QString> m_rankLabels;
    TimelineRenderer m_renderer;
    TimelineView m_view;
    TimelineHighlight m_highlight;
    std::vector<uint8_t> m_matches;
    QScrollBar* m_vscroll = nullptr;

    Drag m_drag = Drag::None;
    QPoint m_pressPos;
    QPoint m_lastPos;
    bool m_moved = false;
    int m_dragAnnotation = -1;
    gapscope::model::TimeNs m_dragStartTime = 0;
};
