// SPDX-License-Identifier: MIT
#pragma once

// Plain-text table cells for the CLI's reports (analysis, diff): a cell padded to its column, and a
// number with fixed decimals that never reads "-0.000".
//
// Threading: pure functions.

#include <cmath>
#include <cstdio>
#include <string>

namespace gapscope::text {

// `s` padded with spaces to `width` (right-aligned when `right`); one space after it when it is wider.
inline std::string pad(const std::string& s, size_t width, bool right = false)
{
    if (s.size() >= width)
        return s + " ";
    return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

// `v` with `decimals` decimals, a leading '+' on positive values when `sign`; values that round to
// zero print as zero without a sign.
inline std::string fixed(double v, int decimals = 3, bool sign = false)
{
    if (std::fabs(v) < 0.5 * std::pow(10.0, -decimals))
        v = 0;
    char buf[64];
    std::snprintf(buf, sizeof buf, sign && v != 0 ? "%+.*f" : "%.*f", decimals, v);
    return buf;
}

} // namespace gapscope::text
