// SPDX-License-Identifier: MIT
#include "views/timeline/timemapping.h"

#include <algorithm>
#include <cmath>

using gapscope::model::TimeNs;

TimeNs TimeMapping::toTime(double x) const
{
    return origin + TimeNs(std::floor(offset + x * nsPerPixel));
}

TimeNs TimeMapping::lastVisible() const
{
    return origin + TimeNs(std::ceil(offset + double(width) * nsPerPixel));
}

void TimeMapping::zoomAround(double x, double factor)
{
    if (!(factor > 0) || !std::isfinite(factor))
        return;
    const double anchor = offset + x * nsPerPixel;
    nsPerPixel = std::max(kMinNsPerPixel, nsPerPixel / factor);
    offset = anchor - x * nsPerPixel;
}

void TimeMapping::panPixels(double dx)
{
    offset -= dx * nsPerPixel;
}

void TimeMapping::fit(TimeNs t0, TimeNs t1, double marginFraction)
{
    if (t1 <= t0)
        t1 = t0 + 1;
    const double w = std::max(1, width);
    const double usable = std::max(1.0, w * (1 - 2 * std::clamp(marginFraction, 0.0, 0.45)));
    nsPerPixel = std::max(kMinNsPerPixel, double(t1 - t0) / usable);
    const double margin = (w - usable) / 2;
    offset = double(t0 - origin) - margin * nsPerPixel;
}

void TimeMapping::clampTo(TimeNs t0, TimeNs t1)
{
    if (t1 <= t0 || width <= 0)
        return;
    const double extent = double(t1 - t0);
    const double maxNsPerPixel = std::max(kMinNsPerPixel, extent * 1.1 / double(width));
    if (nsPerPixel > maxNsPerPixel) {
        const double center = offset + width * nsPerPixel / 2;
        nsPerPixel = maxNsPerPixel;
        offset = center - width * nsPerPixel / 2;
    }
    nsPerPixel = std::max(kMinNsPerPixel, nsPerPixel);
    // Keep at least a tenth of the screen on the data.
    const double span = width * nsPerPixel;
    const double lo = double(t0 - origin) - 0.9 * span;
    const double hi = double(t1 - origin) - 0.1 * span;
    offset = std::clamp(offset, lo, std::max(lo, hi));
}

TimeMapping TimeMapping::resized(int newWidth) const
{
    TimeMapping m = *this;
    if (newWidth > 0 && width > 0)
        m.nsPerPixel = nsPerPixel * double(width) / double(newWidth);
    m.width = newWidth;
    return m;
}
