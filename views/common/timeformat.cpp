// SPDX-License-Identifier: MIT
#include "views/common/timeformat.h"

#include <cmath>

namespace timeformat {

QString duration(double ns, int digits)
{
    digits = std::max(3, digits);
    const double a = std::fabs(ns);
    const char* unit = "ns";
    double v = ns;
    if (a >= 1e9) {
        v = ns / 1e9;
        unit = "s";
    } else if (a >= 1e6) {
        v = ns / 1e6;
        unit = "ms";
    } else if (a >= 1e3) {
        v = ns / 1e3;
        unit = "us";
    }
    if (unit[0] == 'n' && unit[1] == 's' && std::fabs(v - std::round(v)) < 1e-9)
        return QStringLiteral("%1 ns").arg(qint64(std::llround(v)));
    const double av = std::fabs(v);
    const int intDigits = av < 1 ? 1 : int(std::floor(std::log10(av))) + 1;
    const int decimals = std::max(0, digits - intDigits);
    return QStringLiteral("%1 %2").arg(v, 0, 'f', decimals).arg(QLatin1String(unit));
}

QString ms(double milliseconds, int decimals)
{
    return QStringLiteral("%1 ms").arg(milliseconds, 0, 'f', decimals);
}

int64_t tickStep(double nsPerPixel, double minPixels)
{
    const double want = std::max(1.0, nsPerPixel * minPixels);
    int64_t base = 1;
    while (true) {
        for (int m : { 1, 2, 5 }) {
            if (double(base * m) >= want)
                return base * m;
        }
        if (base > INT64_MAX / 100)
            return base * 10;
        base *= 10;
    }
}

QString offset(int64_t ns, int64_t step)
{
    // Enough decimals that consecutive ticks differ.
    const char* unit = step < 1000 ? "us" : step < 1000000000 ? "ms" : "s";
    const double div = step < 1000 ? 1e3 : step < 1000000000 ? 1e6 : 1e9;
    int decimals = 0;
    for (double s = double(step) / div; s < 1 - 1e-12 && decimals < 9; s *= 10)
        ++decimals;
    return QStringLiteral("%1 %2").arg(double(ns) / div, 0, 'f', decimals).arg(QLatin1String(unit));
}

static int64_t leadingDigit(int64_t v)
{
    while (v >= 10)
        v /= 10;
    return v;
}

void ticks(int64_t origin, double offsetNs, double nsPerPixel, int width, double minPixels, std::vector<Tick>& out,
    int64_t* majorStep)
{
    out.clear();
    if (width <= 0 || !(nsPerPixel > 0))
        return;
    const int64_t step = tickStep(nsPerPixel, minPixels);
    if (majorStep)
        *majorStep = step;
    int64_t minor = step / (leadingDigit(step) == 2 ? 4 : 5); // 1 -> 0.2, 2 -> 0.5, 5 -> 1
    if (minor < 1 || double(minor) / nsPerPixel < 6)
        minor = step;
    const int64_t first = int64_t(std::floor(offsetNs / double(minor))) * minor;
    const double span = double(width) * nsPerPixel;
    for (int64_t rel = first; double(rel) <= offsetNs + span; rel += minor) {
        const double x = (double(rel) - offsetNs) / nsPerPixel;
        if (x < 0)
            continue;
        out.push_back({ origin + rel, x, rel % step == 0 });
    }
}

} // namespace timeformat
