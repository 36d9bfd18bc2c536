// SPDX-License-Identifier: MIT
#include "viewerprobe.h"

#include "views/analysis/analysisrunner.h"
#include "views/document/workspace.h"
#include "views/tables/statspanel.h"
#include "views/timeline/timelinewidget.h"

#include <QApplication>
#include <QTimer>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>

using namespace gapscope::model;

double nowMs()
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU time of the whole process (every thread), in ms.
double cpuMs()
{
    timespec ts {};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

std::string loadAverage()
{
    std::ifstream in("/proc/loadavg");
    std::string a, b, c;
    in >> a >> b >> c;
    return a.empty() ? std::string("?") : a + " " + b + " " + c;
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

// CPU time of the calling thread, in ms.
double threadCpuMs()
{
    timespec ts {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

// The window's path: background open, then the workspace shows the document and paints.
OpenResult openLikeTheWindow(const QString& path, QSize screen, const std::function<void(Workspace&, OpenResult&)>& after)
{
    OpenResult r;
    Workspace ws;
    ws.resize(screen);
    ws.show();
    QApplication::processEvents();
    TraceOpener opener;
    const double t0 = nowMs(), c0 = cpuMs();
    double last = t0, lastCpu = threadCpuMs();
    bool done = false;
    QTimer tick; // the stall probe: a 1 ms timer on the GUI thread; a late tick = the loop was blocked
    tick.setInterval(1);
    tick.setTimerType(Qt::PreciseTimer);
    QObject::connect(&tick, &QTimer::timeout, [&] {
        const double now = nowMs(), cpu = threadCpuMs();
        if (now - last > r.maxStallMs) {
            r.maxStallMs = now - last;
            r.maxStallCpuMs = cpu - lastCpu;
        }
        r.maxBusyMs = std::max(r.maxBusyMs, cpu - lastCpu);
        if (now - last > 30)
            r.stalls.push_back({ now - t0, now - last, cpu - lastCpu });
        last = now;
        lastCpu = cpu;
        ++r.ticks;
    });
    QObject::connect(&opener, &TraceOpener::loaded, [&](std::shared_ptr<LoadedTrace> loaded) {
        r.doc = std::make_shared<const TraceDocument>(TraceDocument::fromLoaded(*loaded));
        r.openSeconds = loaded->openSeconds;
        r.prepareSeconds = loaded->prepareSeconds;
        r.docShownMs = nowMs() - t0;
        ws.setDocument(r.doc);
    });
    QObject::connect(&opener, &TraceOpener::failed, [&](const QStringList&, const QString& m) {
        std::fprintf(stderr, "bench_timeline: %s\n", qPrintable(m));
        done = true;
    });
    QObject::connect(ws.timeline(), &TimelineWidget::framePainted, [&](qint64) {
        if (r.doc && r.firstPaintMs < 0) {
            r.firstPaintMs = nowMs() - t0;
            r.firstPaintCpuMs = cpuMs() - c0;
        }
    });
    QObject::connect(ws.analysis(), &AnalysisRunner::waterfallReady, [&](const WaterfallData&) {
        if (r.analysisMs < 0)
            r.analysisMs = nowMs() - t0;
        done = true;
    });
    tick.start();
    auto [openFn, prepareFn] = TraceDocument::loader({ path });
    opener.load({ path }, std::move(openFn), std::move(prepareFn));
    while (!done && nowMs() - t0 < 300'000)
        QApplication::processEvents(QEventLoop::WaitForMoreEvents, 5);
    // Loading ends when the statistics tables are filled too; probe one more second after that.
    double settled = -1;
    while (nowMs() - t0 < 300'000 && (settled < 0 || nowMs() - settled < 1000)) {
        if (settled < 0 && !ws.statsPanel()->computing())
            settled = nowMs();
        QApplication::processEvents(QEventLoop::WaitForMoreEvents, 5);
    }
    tick.stop();
    if (after && r.doc)
        after(ws, r);
    return r;
}

