// SPDX-License-Identifier: MIT
#pragma once

// Exact decimal parsing for trace timestamps. Kineto writes times as microseconds with a fraction
// ("1733301620213914.250", or relative to baseTimeNanoseconds "5154603958091.180"); read as a double,
// an epoch-based microsecond value loses sub-microsecond precision, so the text is parsed as fixed point
// straight to integer nanoseconds. Exponents ("1.5e3") and overlong inputs fall back to strtod.
// Pure functions, thread-safe.

#include <cstdint>
#include <string_view>

namespace gapscope::model::importer {

// Parses a JSON number token holding microseconds into nanoseconds (rounded half away from zero).
bool parseMicrosToNanos(std::string_view text, int64_t& ns);
// Parses a JSON number token as an integer (a fraction is truncated); false if not a number.
bool parseInteger(std::string_view text, int64_t& value);
// Parses a JSON number token as a double.
bool parseDouble(std::string_view text, double& value);

} // namespace gapscope::model::importer
