// SPDX-License-Identifier: MIT
#pragma once

// TimelineRenderer: draws the timeline (lane headers, ruler, decode steps, events, highlights,
// search matches, selection, annotations, the launch -> GPU event arrows of the hovered or selected
// event, LaunchFlows) onto any QPainter: the widget, a PNG
// or an SVG export. Painting has two phases: TimelineFrame::build() culls and folds what is
// visible (phase one), then the renderer walks the fold items (phase two). Colours come from
// EventColors as plain array lookups; labels use display names cached per string id, so nothing
// in paint allocates per event.
//
// Geometry: a header column of TimelineView::headerWidth pixels on the left (kHeaderWidth unless the
// user dragged its edge), a ruler of kRulerHeight on top, the plot in the rest.
// TimelineView::mapping.width must equal the plot width. Lane labels too long for the column elide
// in the middle ("rank 0 · GPU 0 (NVIDIA…Blackwell)"); headerLabelAt gives the whole label.
// Threading: GUI thread (or the thread that owns the QPainter); the inputs must outlive painting.

#include "model/trace/trace.h"
#include "views/common/timeformat.h"
#include "views/timeline/launchflows.h"
#include "views/timeline/timelineframe.h"
#include "views/timeline/timemapping.h"

#include <QColor>
#include <QFont>
#include <QRect>
#include <QString>

#include <vector>

class EventColors;
class LaneLayout;
class QPainter;
struct TimelineHighlight;

constexpr int kDefaultLaneHeaderWidth = 200;

// What the user looks at: a value type shared by the widget and exports.
struct TimelineView {
    TimeMapping mapping;
    int headerWidth = kDefaultLaneHeaderWidth; // the lane label column, in pixels
    int scrollY = 0;
    bool hasSelection = false;
    gapscope::model::TimeNs selStart = 0;
    gapscope::model::TimeNs selEnd = 0;
    gapscope::model::EventRef hovered;
    gapscope::model::EventRef selected;
    gapscope::model::EventRef currentMatch;
    bool showLaunchArrow = true;
};

class TimelineRenderer {
public:
    static constexpr int kHeaderWidth = kDefaultLaneHeaderWidth;
    static constexpr int kMinHeaderWidth = 80;
    static constexpr int kRulerHeight = 26;

    void setTrace(const gapscope::model::Trace* trace, const LaneLayout* layout, const EventColors* colors);
    // A large file: its overview, drawn where `window` (what `trace` holds) does not cover the view.
    void setOverview(const gapscope::model::TraceOverview* overview, gapscope::model::TimeWindow window)
    {
        m_overview = overview;
        m_window = window;
        m_frameValid = false;
    }
    // Forgets the folded frame and the cached header labels (call after the trace or the layout
    // changed in place).
    void invalidate()
    {
        m_frameValid = false;
        m_headerLabels.clear();
    }
    void setHighlight(const TimelineHighlight* highlight) { m_highlight = highlight; }
    void setSearchMatches(const std::vector<uint8_t>* matchesByName) { m_matches = matchesByName; }
    void setAnnotations(const gapscope::model::AnnotationSet* annotations) { m_annotations = annotations; }
    void setShowSteps(bool on) { m_showSteps = on; }

    void paint(QPainter& p, const QSize& size, const TimelineView& view);
    // Phase one only (cull + fold), when the last frame does not match `view` (hit tests between paints).
    void prepare(const QSize& size, const TimelineView& view);

    static QRect plotRect(const QSize& size, const TimelineView& view);
    // The whole label of the lane header under `pos` (widget coordinates), or a null string.
    QString headerLabelAt(const QPoint& pos, const TimelineView& view) const;
    // The lane header text as last painted (elided) for a layout row; null when not painted yet.
    QString paintedHeaderLabel(int layoutRow) const
    {
        return layoutRow >= 0 && size_t(layoutRow) < m_headerLabels.size() ? m_headerLabels[size_t(layoutRow)]
                                                                           : QString();
    }
    // Content y (0 = top of the first lane row) of a widget y, and back.
    static int contentY(int widgetY, const TimelineView& view) { return widgetY - kRulerHeight + view.scrollY; }
    static int widgetY(int contentY, const TimelineView& view) { return contentY + kRulerHeight - view.scrollY; }

    // Hit test against the last painted frame: the event under `pos` (widget coordinates), or an
    // invalid ref. `folded` (optional) receives the fold item hit (count > 1: several events).
    gapscope::model::EventRef eventAt(
        const QPoint& pos, const TimelineView& view, gapscope::model::FoldItem* folded = nullptr) const;
    // Widget rectangle of one event in the current layout (empty if its lane is hidden).
    QRectF eventRect(gapscope::model::EventRef ev, const TimelineView& view) const;
    // The annotation under `pos`, or -1 (index into the AnnotationSet).
    int annotationAt(const QPoint& pos, const TimelineView& view) const;
    // Widget rectangle of an annotation's lane band (full plot height when it has no lane).
    QRectF annotationRect(int index, const TimelineView& view, const QSize& size) const;

    const TimelineFrame& frame() const { return m_frame; }
    // Annotation colours are stored as 0xRRGGBBAA (0: the default amber).
    static QColor annotationColor(uint32_t rgba);
    static uint32_t annotationRgba(const QColor& c);
    const QString& displayName(gapscope::model::StringId id) const;
    // model::shortKernelName as a QString ("void ns::foo<int, 2>(float*)" -> "ns::foo<…>(…)").
    static QString shortName(const std::string_view& full);

private:
    void paintRowBackgrounds(QPainter& p, const QRect& plot, const TimelineView& v);
    template <typename Fn>
    static void forEachWideStep(const std::vector<gapscope::model::Step>& steps, const QRect& plot,
        const TimelineView& v, double minPx, Fn&& fn);
    void paintSteps(QPainter& p, const QRect& plot, const TimelineView& v);
    void paintItems(QPainter& p, const QRect& plot, const TimelineView& v);
    void paintRowItems(QPainter& p, size_t k, int y, const LaneRow& row, const QRect& plot, const TimelineView& v);
    void paintOverviewItems(QPainter& p, size_t k, int y, const LaneRow& row, const QRect& plot, const TimelineView& v);
    const std::vector<gapscope::model::Step>& stepsOf(uint32_t rank) const; // the overview's when drawing it
    void paintHighlight(QPainter& p, const QRect& plot, const TimelineView& v);
    void paintSelection(QPainter& p, const QRect& plot, const TimelineView& v);
    void paintAnnotations(QPainter& p, const QRect& plot, const TimelineView& v);
    void paintEventOutline(QPainter& p, gapscope::model::EventRef ev, const TimelineView& v, const QColor& c, int w);
    void paintLaunchArrow(QPainter& p, const QRect& plot, const TimelineView& v);
    const std::vector<LaunchFlows::Flow>& flowsFor(gapscope::model::EventRef target);
    // eventRect, or for a launch hidden in a closed "CPU threads" group, that group's row.
    QRectF flowEndRect(gapscope::model::EventRef ev, const TimelineView& v) const;
    void paintHeaders(QPainter& p, const QSize& size, const TimelineView& v);
    const QString& headerLabel(QPainter& p, int layoutRow, int width);
    void paintRuler(QPainter& p, const QSize& size, const TimelineView& v);
    // displayName(id), elided at the right to `width` pixels when wider.
    const QString& fittedName(QPainter& p, gapscope::model::StringId id, double width);
    // Nesting depth of an event of a nested lane (LaneLayout::nested), as FoldItem::depth has it.
    uint8_t depthOf(gapscope::model::LaneId lane, uint32_t index, gapscope::model::LaneKind kind) const;
    int itemLevelY(const LaneRow& row, uint8_t depth) const;
    int itemHeight(const LaneRow& row) const;
    QRgb itemColor(gapscope::model::LaneId lane, uint32_t index, gapscope::model::LaneKind kind) const;

    const gapscope::model::Trace* m_trace = nullptr;
    const gapscope::model::TraceOverview* m_overview = nullptr;
    gapscope::model::TimeWindow m_window;
    const LaneLayout* m_layout = nullptr;
    const EventColors* m_colors = nullptr;
    const TimelineHighlight* m_highlight = nullptr;
    const std::vector<uint8_t>* m_matches = nullptr;
    const gapscope::model::AnnotationSet* m_annotations = nullptr;
    bool m_showSteps = true;
    TimelineFrame m_frame;
    bool m_frameValid = false;
    int m_frameTop = 0, m_frameBottom = 0; // content y range the frame was built for
    mutable std::vector<QString> m_names; // display names by string id, filled lazily
    mutable std::vector<uint8_t> m_named; // 1 when m_names[id] is filled
    std::vector<int> m_nameWidth; // pixel width of m_names[id] in m_widthFont (-1: not measured)
    QFont m_widthFont;
    QString m_elided; // the last elided label (drawn at once)
    std::vector<timeformat::Tick> m_tickBuffer; // reused by the ruler
    gapscope::model::EventRef m_flowTarget; // the event m_flows were computed for
    std::vector<LaunchFlows::Flow> m_flows;
    std::vector<QString> m_headerLabels; // elided lane header text per layout row (null: not yet)
    QFont m_headerFont; // the base font m_headerLabels were elided with (headers: its bold form)
    int m_headerLabelWidth = 0; // the header column width they were elided for
};
