// SPDX-License-Identifier: MIT
// bench_timeline TRACE [REPEATS]: the viewer's targets on a large trace (offscreen, 1920x1080).
//   1. open through the window's path (TraceOpener in the background, then Workspace::setDocument):
//      time to the first timeline paint, and the longest gap between ticks of a 1 ms timer on the GUI
//      thread from the open until the analysis is ready (event-loop stalls);
//   2. TimelineRenderer::paint into a 1920x1080 image: median over repeated frames at full zoom-out
//      and at 1 us/pixel (50 positions across the trace), against a baseline measured in the same run
//      that draws every event in the window without folding;
//   3. baseline for 1: the same file opened synchronously on the GUI thread (TraceDocument::open), which
//      is how long the event loop would stall without the background open.
// With OPEN_CPU_LANES=1 in the environment, every rank's "CPU threads" group is open in the frames of
// 2 (host-range flames and CUDA API rows drawn; a trace from `synth --mode eager --host-ops`).
// Wall time is printed beside process CPU time (all threads) and the load average, since the machine
// may be shared. Prints a table (check | measured | target | PASS/FAIL) for BENCHMARKS.md.

#include "viewerprobe.h"
#include "views/analysis/analysisrunner.h"
#include "views/document/tracedocument.h"
#include "views/document/workspace.h"
#include "views/tables/statspanel.h"
#include "views/timeline/lanelayout.h"
#include "views/timeline/timelinerenderer.h"
#include "views/timeline/timelinewidget.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QImage>
#include <QPainter>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

using namespace gapscope::model;

namespace {

constexpr QSize kScreen(1920, 1080);

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

// Baseline: the synchronous open on the GUI thread (the event loop would stall this long).
double openOnGuiThreadMs(const QString& path, double* cpu)
{
    const double t0 = nowMs(), c0 = cpuMs();
    QString error;
    auto doc = TraceDocument::open({ path }, &error);
    const double ms = nowMs() - t0;
    *cpu = cpuMs() - c0;
    if (!doc)
        std::fprintf(stderr, "bench_timeline: %s\n", qPrintable(error));
    return ms;
}

struct PaintStats {
    std::vector<double> ms;
    std::vector<double> cpu;
    size_t items = 0;
};

template <typename Paint> PaintStats timeFrames(const std::vector<TimelineView>& views, Paint&& paint)
{
    QImage img(kScreen, QImage::Format_ARGB32_Premultiplied);
    PaintStats s;
    for (const TimelineView& v : views) {
        const double a = nowMs(), c = cpuMs();
        {
            QPainter p(&img);
            s.items += paint(p, v);
        }
        s.ms.push_back(nowMs() - a);
        s.cpu.push_back(cpuMs() - c);
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
        std::fprintf(stderr, "usage: bench_timeline TRACE.gapscope [REPEATS]\n");
        return 2;
    }
    const QString path = QString::fromLocal8Bit(argv[1]);
    const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
    const std::string loadBefore = loadAverage();
    std::vector<OpenResult> opens;
    for (int i = 0; i < repeats; ++i) {
        opens.push_back(openLikeTheWindow(path, kScreen));
        if (!opens.back().doc)
            return 3;
        if (i + 1 < repeats)
            opens.back().doc.reset(); // one trace in memory at a time
    }
    const OpenResult& open = opens.back();
    auto med = [&](double OpenResult::*field) {
        std::vector<double> v;
        for (const auto& o : opens)
            v.push_back(o.*field);
        return median(v);
    };
    auto worst = [&](double OpenResult::*field) {
        double m = 0;
        for (const auto& o : opens)
            m = std::max(m, o.*field);
        return m;
    };
    const Trace& trace = *open.doc->trace;
    std::printf("trace: %s, %llu events, %zu ranks, %u steps; read %.2f s + prepared %.2f s (wall, last open)\n",
        argv[1], static_cast<unsigned long long>(trace.eventCount()), trace.ranks().size(), trace.stepCount(),
        open.openSeconds, open.prepareSeconds);

    LaneLayout layout;
    LaneLayoutOptions lanes;
    if (qEnvironmentVariableIntValue("OPEN_CPU_LANES") == 1)
        for (uint32_t r : trace.ranks())
            lanes.openCpuRanks.insert(r);
    layout.build(trace, lanes);
    size_t cpuRows = 0;
    for (const LaneRow& r : layout.rows())
        cpuRows += r.type == LaneRow::Type::Lane && r.kind == LaneKind::CpuThread;
    std::printf("layout: %zu rows, %zu of them CPU thread flames\n", layout.rows().size(), cpuRows);
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
    const PaintStats outNaive = timeFrames(std::vector<TimelineView>(1, zoomedOut.front()), naive); // seconds each
    const PaintStats usOurs = timeFrames(microsecond, ours);
    const PaintStats usNaive = timeFrames(microsecond, naive);
    double syncCpu = 0;
    const double syncMs = openOnGuiThreadMs(path, &syncCpu);
    std::printf("\nfull zoom-out: %zu fold items per frame; 1 us/px: %zu items per frame on average\n",
        outOurs.items / zoomedOut.size(), usOurs.items / microsecond.size());
    std::printf("paint ms, wall median / p90 / max (CPU median): zoom-out %.2f / %.2f / %.2f (%.2f), naive %.1f "
                "(x%.0f); 1 us/px %.2f / %.2f / %.2f (%.2f), naive %.2f (x%.1f)\n",
        median(outOurs.ms), percentile(outOurs.ms, 0.9), percentile(outOurs.ms, 1.0), median(outOurs.cpu),
        median(outNaive.ms), median(outNaive.ms) / std::max(1e-9, median(outOurs.ms)), median(usOurs.ms),
        percentile(usOurs.ms, 0.9), percentile(usOurs.ms, 1.0), median(usOurs.cpu), median(usNaive.ms),
        median(usNaive.ms) / std::max(1e-9, median(usOurs.ms)));
    for (size_t i = 0; i < opens.size(); ++i) {
        const OpenResult& o = opens[i];
        std::printf("open %zu: first paint %.3f s wall, %.3f s CPU (all threads; read %.2f s + prepare %.2f s, "
                    "document on the GUI thread at %.3f s); analysis ready %.2f s; longest stall %.1f ms (GUI-thread "
                    "CPU in it %.1f ms); most GUI-thread CPU between ticks %.1f ms; %d probe ticks; stalls > 30 ms "
                    "(end s: wall ms / GUI CPU ms):",
            i + 1, o.firstPaintMs / 1000, o.firstPaintCpuMs / 1000, o.openSeconds, o.prepareSeconds,
            o.docShownMs / 1000, o.analysisMs / 1000, o.maxStallMs, o.maxStallCpuMs, o.maxBusyMs, o.ticks);
        for (const Stall& st : o.stalls)
            std::printf(" %.2f: %.0f/%.0f", st.endMs / 1000, st.wallMs, st.guiCpuMs);
        std::printf("\n");
    }
    std::printf("baseline, open on the GUI thread: %.3f s wall, %.3f s CPU = a %.0f ms stall (x%.0f the median "
                "longest stall)\n",
        syncMs / 1000, syncCpu / 1000, syncMs, syncMs / std::max(1e-9, med(&OpenResult::maxStallMs)));
    std::printf("load average before / after: %s / %s; %d CPUs\n\n", loadBefore.c_str(), loadAverage().c_str(),
        QThread::idealThreadCount());
    std::printf("%-52s | %14s | %13s | result\n", "check", "measured", "target");
    row("paint median, full zoom-out, 1920x1080", median(outOurs.ms), "ms", 8);
    row("paint median, 1 us/pixel, 1920x1080", median(usOurs.ms), "ms", 8);
    std::printf("(open figures: medians of %d opens)\n", repeats);
    row("first paint after open", med(&OpenResult::firstPaintMs) / 1000, "s", 1.5);
    row("longest event-loop stall while loading", med(&OpenResult::maxStallMs), "ms", 50);
    row("  same, worst of the opens", worst(&OpenResult::maxStallMs), "ms", 50);
    row("  GUI-thread CPU between two probe ticks (max)", med(&OpenResult::maxBusyMs), "ms", 50);
    return 0;
}
