// SPDX-License-Identifier: MIT
#include "model/import/decimal.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace gapscope::model::importer {

namespace {
inline bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}

// Trims the whitespace simdjson's raw tokens may carry.
std::string_view trim(std::string_view t)
{
    while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t'))
        t.remove_suffix(1);
    return t;
}
} // namespace

bool parseDouble(std::string_view text, double& value)
{
    text = trim(text);
    if (text.empty() || text.size() > 64)
        return false;
    char buf[80];
    text.copy(buf, text.size());
    buf[text.size()] = 0;
    char* end = nullptr;
    value = std::strtod(buf, &end);
    return end == buf + text.size() && std::isfinite(value);
}

bool parseMicrosToNanos(std::string_view text, int64_t& ns)
{
    text = trim(text);
    size_t i = 0;
    const bool negative = i < text.size() && text[i] == '-';
    if (negative)
        ++i;
    const size_t intStart = i;
    uint64_t whole = 0;
    while (i < text.size() && isDigit(text[i]) && i - intStart < 16)
        whole = whole * 10 + uint64_t(text[i++] - '0');
    if (i == intStart)
        return false;
    uint64_t frac = 0; // nanoseconds
    int fracDigits = 0;
    bool roundUp = false;
    if (i < text.size() && text[i] == '.') {
        ++i;
        const size_t fracStart = i;
        while (i < text.size() && isDigit(text[i])) {
            if (fracDigits < 3) {
                frac = frac * 10 + uint64_t(text[i] - '0');
                ++fracDigits;
            } else if (i == fracStart + 3) {
                roundUp = text[i] >= '5';
            }
            ++i;
        }
        if (i == fracStart)
            return false;
    }
    if (i != text.size()) { // exponent or more than 16 integer digits: take the slow path
        double us = 0;
        if (!parseDouble(text, us) || std::fabs(us) > 9.0e15)
            return false;
        ns = static_cast<int64_t>(std::llround(us * 1000.0));
        return true;
    }
    if (whole >= 9000000000000000ULL) // beyond +-285 years of nanoseconds in int64
        return false;
    while (fracDigits < 3) {
        frac *= 10;
        ++fracDigits;
    }
    const int64_t v = static_cast<int64_t>(whole * 1000 + frac + (roundUp ? 1 : 0));
    ns = negative ? -v : v;
    return true;
}

bool parseInteger(std::string_view text, int64_t& value)
{
    text = trim(text);
    size_t i = 0;
    const bool negative = i < text.size() && text[i] == '-';
    if (negative)
        ++i;
    const size_t start = i;
    uint64_t v = 0;
    while (i < text.size() && isDigit(text[i]) && i - start < 19)
        v = v * 10 + uint64_t(text[i++] - '0');
    if (i == start)
        return false;
    if (i != text.size()) {
        double d = 0;
        if (!parseDouble(text, d) || std::fabs(d) > 9.2e18)
            return false;
        value = static_cast<int64_t>(d);
        return true;
    }
    value = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    return true;
}

} // namespace gapscope::model::importer
