// SPDX-License-Identifier: MIT
#pragma once

// Time formatting and ruler ticks shared by the timeline, tables, tooltips and exports.
// Durations are shown with units picked from their magnitude ("850 ns", "12.4 us", "3.21 ms",
// "1.500 s"); ruler ticks step by 1, 2 or 5 times a power of ten nanoseconds so labels stay round.
// Pure functions, safe from any thread.

#include <QString>

#include <cstdint>
#include <vector>

namespace timeformat {

// "12.4 us" with `digits` significant digits (at least 3), picking ns / us / ms / s.
QString duration(double ns, int digits = 3);
// Milliseconds as "3.21 ms" (tables and waterfall numbers), with fixed decimals.
QString ms(double milliseconds, int decimals = 3);
// A time relative to the trace start, with the precision the tick step needs ("+12.345 ms").
QString offset(int64_t ns, int64_t step);

struct Tick {
    int64_t time; // absolute trace time of the tick
    double x; // pixel position
    bool major; // labelled
};

// The tick step (1/2/5 x 10^k ns) such that labelled ticks are at least minPixels apart.
int64_t tickStep(double nsPerPixel, double minPixels);

// Ticks within [0, width) for a mapping given as origin/offset/nsPerPixel (see TimeMapping):
// major ticks every `step`, minor ticks every step / 5 (or / 2 for a 2x step) when they stay 6+ px apart.
void ticks(int64_t origin, double offsetNs, double nsPerPixel, int width, double minPixels, std::vector<Tick>& out,
    int64_t* majorStep = nullptr);

} // namespace timeformat
