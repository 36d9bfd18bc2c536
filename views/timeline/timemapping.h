// SPDX-License-Identifier: MIT
#pragma once

// TimeMapping: the time <-> pixel mapping of a timeline (or an exported image of it).
//
// Trace times are int64 nanoseconds in CLOCK_REALTIME (about 1.8e18), far beyond what a double
// holds exactly, so the mapping keeps an integer `origin` (usually the trace start) and does its
// floating-point arithmetic on times relative to it: x = (t - origin - offset) / nsPerPixel.
//
// Invariants: nsPerPixel > 0 and finite; width >= 0. clampTo() keeps the view inside the trace
// extent (plus a margin) and nsPerPixel within [kMinNsPerPixel, extent / width * 1.1].
// Plain value type, no Qt, no threading concerns.

#include "model/trace/trace.h"

#include <utility>

struct TimeMapping {
    static constexpr double kMinNsPerPixel = 0.01; // 100 pixels per nanosecond: deep enough for any trace

    gapscope::model::TimeNs origin = 0; // integer anchor; relative times are exact in double
    double offset = 0; // ns from origin at pixel 0
    double nsPerPixel = 1000;
    int width = 0;

    double toX(gapscope::model::TimeNs t) const { return (double(t - origin) - offset) / nsPerPixel; }
    double durationToPixels(double ns) const { return ns / nsPerPixel; }
    gapscope::model::TimeNs toTime(double x) const;

    // The visible time window [first, last) (last rounded up, so an event ending at the right edge counts).
    gapscope::model::TimeNs firstVisible() const { return toTime(0); }
    gapscope::model::TimeNs lastVisible() const;

    // Zoom by `factor` (> 1 zooms in) keeping the time under pixel x where it is.
    void zoomAround(double x, double factor);
    // Move the content by dx pixels (dx > 0 moves the content right, i.e. shows earlier times).
    void panPixels(double dx);
    // Show [t0, t1) across the full width, with `marginFraction` of the width left free on each side.
    void fit(gapscope::model::TimeNs t0, gapscope::model::TimeNs t1, double marginFraction = 0);
    // Keep the view within [t0, t1) of the data: never zoomed out past the whole extent (plus 5%) and
    // never scrolled entirely off it.
    void clampTo(gapscope::model::TimeNs t0, gapscope::model::TimeNs t1);

    // A mapping for another width showing the same time window (exports at a requested size).
    TimeMapping resized(int newWidth) const;

    bool operator==(const TimeMapping& o) const
    {
        return origin == o.origin && offset == o.offset && nsPerPixel == o.nsPerPixel && width == o.width;
    }
};
