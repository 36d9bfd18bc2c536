// SPDX-License-Identifier: MIT
#pragma once

// ExportRenderer: the picture of what is on screen, for PNG and SVG files (interactive "Export"
// and the headless `gapscope FILE --export-png OUT.png`). Layout, top to bottom:
//   caption   trace name, step(s), model, hardware, the budget's total and the measured total;
//   body      the timeline (lanes, steps, events, highlight, annotations) on the left and the
//             budget waterfall on the right (when there is one);
//   legend    colour swatches of the components shown.
// The timeline keeps the view's time window (resized to the export width) and vertical scroll.
//
// Threading: any thread that may use QPainter on a QImage / QSvgGenerator (in practice the GUI
// thread, since the waterfall goes through Qt Charts' QGraphicsScene).

#include "model/trace/trace.h"
#include "views/analysis/waterfalldata.h"
#include "views/timeline/timelinerenderer.h"

#include <QRect>
#include <QString>

class EventColors;
class LaneLayout;
class QPainter;
struct TimelineHighlight;

struct ExportCaption {
    QString trace; // file name
    QString steps; // "step 412", "median step (412)", "steps 10-20", "+12.3 ms .. +15.1 ms"
    QString model; // "GLM-5 (nvfp4, TP8)"
    QString hardware; // "8x H200 SXM"
    double budgetMs = -1; // < 0: unknown
    double measuredMs = -1; // < 0: unknown
    QString text() const;
    // Two lines: what (trace, steps) and against what (model, hardware, totals).
    QString firstLine() const;
    QString secondLine() const;
};

struct ExportScene {
    const gapscope::model::Trace* trace = nullptr;
    const gapscope::model::TraceOverview* overview = nullptr; // a large file: drawn where `window` is not
    gapscope::model::TimeWindow window;
    const LaneLayout* layout = nullptr;
    const EventColors* colors = nullptr;
    const TimelineHighlight* highlight = nullptr;
    const gapscope::model::AnnotationSet* annotations = nullptr;
    TimelineView view; // what the timeline shows (mapping.width is adjusted)
    const WaterfallData* waterfall = nullptr;
    int selectedBar = -1;
    ExportCaption caption;
};

class ExportRenderer {
public:
    struct Layout {
        QRect caption;
        QRect timeline;
        QRect waterfall; // empty when there is no waterfall
        QRect legend;
    };
    static Layout layoutFor(const QSize& size, bool withWaterfall);
    // The view as the export's timeline shows it (same time window, export width).
    static TimelineView exportView(const ExportScene& scene, const QSize& size);

    static void render(QPainter& p, const QSize& size, const ExportScene& scene);
    // Writes a PNG or SVG of `size` pixels; returns an error text on failure ("" on success).
    static QString savePng(const QString& path, const QSize& size, const ExportScene& scene);
    static QString saveSvg(const QString& path, const QSize& size, const ExportScene& scene);

private:
    static void paintCaption(QPainter& p, const QRect& r, const ExportCaption& c);
    static void paintWaterfall(QPainter& p, const QRect& r, const ExportScene& scene);
    static void paintLegend(QPainter& p, const QRect& r, const ExportScene& scene);
};
