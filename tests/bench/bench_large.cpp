// SPDX-License-Identifier: MIT
// bench_large TRACE large|full [JUMPS]: the viewer on a large .gapscope file (offscreen, 1920x1080).
//   large: as the window opens it (model::kLargeTraceEvents or more: the overview, then windows);
//   full:  every event decoded into memory (TraceDocument::setLargeTraceEvents(max)), the baseline.
// Measured on one open through the window's path (viewerprobe.h):
//   1. first timeline paint after the open, and the resident memory then;
//   2. paint time at six zooms (the whole trace, 1 ms, 100 us, 10 us, 1 us and 100 ns per pixel), 12
//      positions each spread over the trace; in large mode the window around each view is read first
//      (Workspace::readWindowNow, timed apart: what the background read costs), then the frame is timed;
//   3. jump to a step: Workspace::showStep(k) for JUMPS steps picked over the whole trace (seeded), until
//      the window holding it is shown and painted (large) or the view is painted (full);
//   4. the peak resident memory over all of it.
// Prints `key value` lines (for bench_large.sh) and a table (check | measured | target | PASS/FAIL).
// BENCH_JUMPS=1 also prints each jump to stderr: its time until the window was shown, and the paint.

#include "viewerprobe.h"

#include "model/base/memoryuse.h"
#include "views/document/tracedocument.h"
#include "views/document/workspace.h"
#include "views/timeline/timelinerenderer.h"
#include "views/timeline/timelinewidget.h"

#include <QApplication>
#include <QImage>
#include <QPainter>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace gapscope::model;

namespace {

constexpr QSize kScreen(1920, 1080);

struct Zoom {
    const char* name;
    double nsPerPixel; // 0: the whole trace
};

void row(const char* check, double measured, const char* unit, double target)
{
    std::printf("%-44s | %10.2f %-3s | <= %7.1f %-3s | %s\n", check, measured, unit, target, unit,
        measured <= target ? "PASS" : "FAIL");
}

double mb(uint64_t bytes)
{
    return double(bytes) / double(1 << 20);
}

// Every step index of the document (the overview's for a large file, else the trace's).
std::vector<uint32_t> stepIndices(const TraceDocument& doc)
{
    std::vector<uint32_t> out;
    if (doc.large()) {
        for (uint32_t r : doc.overview->ranks())
            for (const Step& s : doc.overview->steps(r))
                out.push_back(s.index);
    } else {
        for (uint32_t r : doc.trace->ranks())
            for (const Step& s : doc.trace->steps(r))
                out.push_back(s.index);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

double paintOnce(Workspace& ws, QImage& img)
{
    TimelineWidget* tl = ws.timeline();
    const double t0 = nowMs();
    QPainter p(&img);
    tl->renderer().paint(p, img.size(), tl->view());
    return nowMs() - t0;
}

} // namespace

int main(int argc, char** argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    if (argc < 3 || (std::strcmp(argv[2], "large") != 0 && std::strcmp(argv[2], "full") != 0)) {
        std::fprintf(stderr, "usage: bench_large TRACE.gapscope large|full [JUMPS]\n");
        return 2;
    }
    const bool full = std::strcmp(argv[2], "full") == 0;
    const int jumps = argc > 3 ? std::max(1, std::atoi(argv[3])) : 20;
    if (full)
        TraceDocument::setLargeTraceEvents(UINT64_MAX);
    const QString path = QString::fromLocal8Bit(argv[1]);
    const std::string loadBefore = loadAverage();

    uint64_t rssOpen = 0;
    std::vector<std::pair<const char*, std::vector<double>>> paints;
    std::vector<double> windowReads, jumpMs;
    size_t overviewFrames = 0, frames = 0;
    const OpenResult open = openLikeTheWindow(path, kScreen, [&](Workspace& ws, OpenResult& r) {
        rssOpen = residentBytes();
        TimelineWidget* tl = ws.timeline();
        QImage img(tl->canvasSize(), QImage::Format_ARGB32_Premultiplied);
        const TimeNs a = tl->extentStart(), b = tl->extentEnd();
        const Zoom zooms[] = { { "whole trace", 0 }, { "1 ms/px", 1e6 }, { "100 us/px", 1e5 }, { "10 us/px", 1e4 },
            { "1 us/px", 1e3 }, { "100 ns/px", 100 } };
        for (const Zoom& z : zooms) {
            std::vector<double> ms;
            for (int i = 0; i < 12; ++i) {
                TimelineView v = tl->view();
                v.mapping.origin = a;
                if (z.nsPerPixel == 0) {
                    v.mapping.fit(a, b, 0.01);
                    v.mapping.panPixels(double(i % 3)); // a different view every frame: nothing is reused
                } else {
                    v.mapping.nsPerPixel = z.nsPerPixel;
                    const double span = z.nsPerPixel * v.mapping.width;
                    v.mapping.offset = std::max(0.0, double(b - a) - span) * (i + 0.5) / 12.0;
                }
                tl->setView(v);
                if (r.doc->large()) {
                    const double t0 = nowMs();
                    if (ws.readWindowNow())
                        windowReads.push_back(nowMs() - t0);
                }
                ms.push_back(paintOnce(ws, img));
                overviewFrames += tl->renderer().frame().fromOverview();
                ++frames;
            }
            paints.emplace_back(z.name, std::move(ms));
        }
        // Jumps: steps spread over the whole trace, in a seeded random order.
        std::vector<uint32_t> steps = stepIndices(*ws.document());
        std::mt19937 rng(7);
        std::shuffle(steps.begin(), steps.end(), rng);
        steps.resize(std::min<size_t>(steps.size(), size_t(jumps)));
        for (uint32_t k : steps) {
            const double t0 = nowMs();
            bool shown = false;
            auto c = QObject::connect(&ws, &Workspace::windowShown, [&] { shown = true; });
            ws.showStep(k);
            while (ws.readingWindow() && !shown && nowMs() - t0 < 30'000)
                QApplication::processEvents(QEventLoop::WaitForMoreEvents, 1);
            QObject::disconnect(c);
            const double tShown = nowMs() - t0;
            const double pm = paintOnce(ws, img);
            jumpMs.push_back(nowMs() - t0);
            if (std::getenv("BENCH_JUMPS"))
                std::fprintf(stderr, "jump step %u: %.1f ms (shown %.1f, paint %.1f)\n", k, jumpMs.back(), tShown, pm);
            QApplication::processEvents(); // let the analysis of that window start, as it would
        }
    });
    if (!open.doc)
        return 3;
    const uint64_t rssPeak = peakResidentBytes();
    const TraceDocument& doc = *open.doc;
    const uint64_t events = doc.large() ? doc.overview->eventCount() : doc.trace->eventCount();
    std::printf("trace: %s, %llu events, %s; load average before / after: %s / %s\n", argv[1],
        static_cast<unsigned long long>(events), full ? "read whole (full)" : doc.large() ? "overview + windows (large)" : "read whole (small)",
        loadBefore.c_str(), loadAverage().c_str());
    std::printf("key mode %s\n", full ? "full" : "large");
    std::printf("key events %llu\n", static_cast<unsigned long long>(events));
    std::printf("key first_paint_s %.3f\n", open.firstPaintMs / 1000);
    std::printf("key analysis_s %.3f\n", open.analysisMs / 1000);
    std::printf("key longest_stall_ms %.1f\n", open.maxStallMs);
    std::printf("key rss_open_mb %.0f\n", mb(rssOpen));
    std::printf("key rss_peak_mb %.0f\n", mb(rssPeak));
    double worstPaint = 0;
    for (const auto& [name, ms] : paints) {
        std::printf("key paint_ms[%s] %.2f (p90 %.2f, max %.2f)\n", name, median(ms), percentile(ms, 0.9),
            percentile(ms, 1.0));
        worstPaint = std::max(worstPaint, median(ms));
    }
    std::printf("key frames_from_overview %zu of %zu\n", overviewFrames, frames);
    if (!windowReads.empty())
        std::printf("key window_read_ms %.1f (median of %zu reads, max %.1f)\n", median(windowReads), windowReads.size(),
            percentile(windowReads, 1.0));
    std::printf("key jump_ms %.1f (median of %zu, max %.1f)\n", median(jumpMs), jumpMs.size(), percentile(jumpMs, 1.0));
    std::printf("\n%-44s | %14s | %13s | result\n", "check", "measured", "target");
    row("first paint after open", open.firstPaintMs / 1000, "s", 2);
    row("resident after open", mb(rssOpen), "MB", 1536);
    row("resident peak", mb(rssPeak), "MB", 1536);
    row("paint median, worst zoom", worstPaint, "ms", 16);
    row("jump to a step, median", median(jumpMs), "ms", 100);
    row("jump to a step, max", percentile(jumpMs, 1.0), "ms", 100);
    return 0;
}
