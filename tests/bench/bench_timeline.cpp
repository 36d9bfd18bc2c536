// SPDX-License-Identifier: MIT
// bench_timeline TRACE: the viewer's targets on a large trace (offscreen, 1920x1080).
//   1. open through the window's path (TraceOpener in the background, then Workspace::setDocument):
//      time to the first timeline paint, and the longest gap between ticks of a 1 ms timer on the GUI
//      thread from the open until the analysis is ready (event-loop stalls);
//   2. TimelineRenderer::paint into a 1920x1080 image: median over repeated frames at full zoom-out
//      and at 1 us/pixel (50 positions across the trace), against a baseline measured in the same run
//      that draws every event in the window without folding.
// Prints a table (check | measured | target | PASS/FAIL) for BENCHMARKS.md.

#include "views/analysisrunner.h"
#include "views/lanelayout.h"
#include "views/timelinerenderer.h"
#include "views/timelinewidget.h"
#include "views/tracedocument.h"
#include "views/workspace.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QImage>
#include <QPainter>
#include <QTimer>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

using namespace gapscope::model;

namespace {

constexpr QSize kScreen(1920, 1080);

double nowMs()
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double percentile(std::vector<double> v, double q)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(q * double(v.size() - 1) + 0.5))];
}

struct OpenResult {
    std::shared_ptr<const TraceDocument> doc;
    double firstPaintMs = -1;
    double analysisMs = -1;
    double maxStallMs = 0;
    double openSeconds = 0;
};

// The window's path: background open, then the workspace shows the document and paints.
OpenResult openLikeTheWindow(const QString& path)
{
    OpenResult r;
    Workspace ws;
    ws.resize(kScreen);
    ws.show();
    QApplication::processEvents();
    TraceOpener opener;
    const double t0 = nowMs();
    double last = t0;
    bool done = false;
    QTimer tick;
    tick.setInterval(1);
    QObject::connect(&tick, &QTimer::timeout, [&] {
        const double now = nowMs();
        r.maxStallMs = std::max(r.maxStallMs, now - last);
        last = now;
    });
    QObject::connect(&opener, &TraceOpener::loaded, [&](std::shared_ptr<LoadedTrace> loaded) {
        r.doc = std::make_shared<const TraceDocument>(TraceDocument::fromLoaded(*loaded));
        r.openSeconds = loaded->openSeconds + loaded->prepareSeconds;
        ws.setDocument(r.doc);
    });
    QObject::connect(&opener, &TraceOpener::failed, [&](const QStringList&, const QString& m) {
        std::fprintf(stderr, "bench_timeline: %s\n", qPrintable(m));
        done = true;
    });
    QObject::connect(ws.timeline(), &TimelineWidget::framePainted, [&](qint64) {
        if (r.doc && r.firstPaintMs < 0)
            r.firstPaintMs = nowMs() - t0;
    });
    QObject::connect(ws.analysis(), &AnalysisRunner::waterfallReady, [&](const WaterfallData&) {
        if (r.analysisMs < 0)
            r.analysisMs = nowMs() - t0;
        done = true;
    });
    tick.start();
    opener.load({ path }, TraceDocument::openFunction({ path }), TraceDocument::prepareFunction());
    while (!done && nowMs() - t0 < 300'000)
        QApplication::processEvents(QEventLoop::WaitForMoreEvents, 5);
    tick.stop();
    return r;
}

// Every event of the visible rows drawn as its own rectangle: what painting costs without folding.
void paintNaive(QPainter& p, const Trace& trace, const LaneLayout& layout, const TimelineView& v, const QSize& size)
{
    p.fillRect(QRect(QPoint(0, 0), size), Qt::white);
    const TimeNs t0 = v.mapping.firstVisible(), t1 = v.mapping.lastVisible();
    const int plotHeight = size.height() - TimelineRenderer::kRulerHeight;
    const auto [first, last] = layout.rowsIn(v.scrollY, v.scrollY + plotHeight);
    for (int r = first; r < last; ++r) {
        const LaneRow& row = layout.rows()[size_t(r)];
        if (row.type != LaneRow::Type::Lane)
            continue;
        const LaneEvents& ev = trace.lane(row.lane).events;
        const auto [a, b] = ev.overlapping(t0, t1);
        const int y = TimelineRenderer::widgetY(row.y, v);
        for (size_t i = a; i < b; ++i) {
            const double x0 = TimelineRenderer::kHeaderWidth + v.mapping.toX(ev.start(i));
            const double x1 = TimelineRenderer::kHeaderWidth + v.mapping.toX(ev.end(i));
            p.fillRect(QRectF(x0, y + 2, std::max(1.0, x1 - x0), row.height - 4), QColor(66, 133, 244));
        }
    }
}

struct PaintStats {
    std::vector<double> ms;
    size_t items = 0;
};

template <typename Paint> PaintStats timeFrames(const std::vector<TimelineView>& views, Paint&& paint)
{
    QImage img(kScreen, QImage::Format_ARGB32_Premultiplied);
    PaintStats s;
    for (const TimelineView& v : views) {
        const double a = nowMs();
        {
            QPainter p(&img);
            s.items += paint(p, v);
        }
        s.ms.push_back(nowMs() - a);
    }
    return s;
}

void row(const char* check, double measured, const char* unit, double target, bool lowerIsBetter = true)
{
    const bool pass = lowerIsBetter ? measured <= target : measured >= target;
    std::printf("%-52s | %10.2f %-3s | %s %7.1f %-3s | %s\n", check, measured, unit,
        lowerIsBetter ? "<=" : ">=", target, unit, pass ? "PASS" : "FAIL");
}

} // namespace

int main(int argc, char** argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_timeline TRACE.gapscope\n");
        return 2;
    }
    const QString path = QString::fromLocal8Bit(argv[1]);
    const OpenResult open = openLikeTheWindow(path);
    if (!open.doc)
        return 3;
    const Trace& trace = *open.doc->trace;
    std::printf("trace: %s, %llu events, %zu ranks, %u steps; opened and prepared in %.2f s\n", argv[1],
        static_cast<unsigned long long>(trace.eventCount()), trace.ranks().size(), trace.stepCount(), open.openSeconds);

    LaneLayout layout;
    layout.build(trace, LaneLayoutOptions {});
    TimelineRenderer renderer;
    renderer.setTrace(&trace, &layout, open.doc->colors.get());
    TimelineView base;
    base.mapping.origin = trace.startTime();
    base.mapping.width = kScreen.width() - TimelineRenderer::kHeaderWidth;
    std::vector<TimelineView> zoomedOut(30, base), microsecond;
    for (size_t i = 0; i < zoomedOut.size(); ++i) {
        zoomedOut[i].mapping.fit(trace.startTime(), trace.endTime(), 0.01);
        zoomedOut[i].mapping.panPixels(double(i % 3)); // a different view every frame: nothing is reused
    }
    for (int i = 0; i < 50; ++i) {
        TimelineView v = base;
        v.mapping.nsPerPixel = 1000;
        v.mapping.offset = double(trace.endTime() - trace.startTime() - 2'000'000) * (i + 0.5) / 50.0;
        microsecond.push_back(v);
    }
    auto ours = [&](QPainter& p, const TimelineView& v) {
        renderer.paint(p, kScreen, v);
        return renderer.frame().itemCount();
    };
    auto naive = [&](QPainter& p, const TimelineView& v) {
        paintNaive(p, trace, layout, v, kScreen);
        return size_t(0);
    };
    const PaintStats outOurs = timeFrames(zoomedOut, ours);
    const PaintStats outNaive = timeFrames(std::vector<TimelineView>(3, zoomedOut.front()), naive);
    const PaintStats usOurs = timeFrames(microsecond, ours);
    const PaintStats usNaive = timeFrames(microsecond, naive);
    std::printf("\nfull zoom-out: %zu fold items per frame; 1 us/px: %zu items per frame on average\n",
        outOurs.items / zoomedOut.size(), usOurs.items / microsecond.size());
    std::printf("paint ms (median / p90 / max): zoom-out %.2f / %.2f / %.2f, naive %.1f (x%.0f); "
                "1 us/px %.2f / %.2f / %.2f, naive %.2f (x%.1f)\n\n",
        median(outOurs.ms), percentile(outOurs.ms, 0.9), percentile(outOurs.ms, 1.0), median(outNaive.ms),
        median(outNaive.ms) / std::max(1e-9, median(outOurs.ms)), median(usOurs.ms), percentile(usOurs.ms, 0.9),
        percentile(usOurs.ms, 1.0), median(usNaive.ms), median(usNaive.ms) / std::max(1e-9, median(usOurs.ms)));
    std::printf("%-52s | %14s | %13s | result\n", "check", "measured", "target");
    row("paint median, full zoom-out, 1920x1080", median(outOurs.ms), "ms", 8);
    row("paint median, 1 us/pixel, 1920x1080", median(usOurs.ms), "ms", 8);
    row("first paint after open", open.firstPaintMs / 1000, "s", 1.5);
    row("longest event-loop stall while loading", open.maxStallMs, "ms", 50);
    std::printf("(analysis ready %.2f s after the open)\n", open.analysisMs / 1000);
    return 0;
}
