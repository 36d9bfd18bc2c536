// SPDX-License-Identifier: MIT
#pragma once

// What the viewer benchmarks share: clocks (wall, process and thread CPU), medians, and the window's
// way of opening a trace (TraceOpener in the background, then Workspace::setDocument) with an
// event-loop stall probe: a 1 ms timer on the GUI thread whose late ticks are the loop blocked.

#include "views/document/tracedocument.h"

#include <QSize>
#include <QString>

#include <functional>
#include <memory>
#include <string>
#include <vector>

class Workspace;

double nowMs(); // steady clock
double cpuMs(); // CPU time of the whole process (every thread)
double threadCpuMs(); // CPU time of the calling thread
std::string loadAverage();
double median(std::vector<double> v);
double percentile(std::vector<double> v, double q);

struct Stall {
    double endMs; // after the open
    double wallMs; // gap between two probe ticks
    double guiCpuMs; // GUI-thread CPU time spent inside it (the rest: waiting for a core)
};

struct OpenResult {
    std::shared_ptr<const TraceDocument> doc;
    double firstPaintMs = -1;
    double analysisMs = -1;
    double maxStallMs = 0;
    double maxStallCpuMs = 0; // GUI-thread CPU inside the longest stall
    double maxBusyMs = 0; // the most GUI-thread CPU time between two probe ticks (work that blocks the loop)
    double openSeconds = 0, prepareSeconds = 0;
    double firstPaintCpuMs = -1; // process CPU time (all threads) from the open to the first paint
    int ticks = 0; // stall-probe ticks seen
    double docShownMs = -1; // when the loaded document reached the GUI thread
    std::vector<Stall> stalls; // those > 30 ms
};

// Opens `path` in a shown Workspace of `screen` size as the window does and waits until the analysis
// and the statistics tables are done (plus a second of probing); `after`, when given, runs on the
// still-open workspace before it closes.
OpenResult openLikeTheWindow(
    const QString& path, QSize screen, const std::function<void(Workspace&, OpenResult&)>& after = {});
