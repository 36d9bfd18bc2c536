// SPDX-License-Identifier: MIT
#pragma once

// injectLog(): one-line diagnostics of the injection library on stderr, only when
// GAPSCOPE_INJECT_LOG is set (read once). Never called from a per-event callback path.

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace gapscope::capture::inject {

inline bool injectLogEnabled()
{
    static const bool on = [] {
        const char* v = std::getenv("GAPSCOPE_INJECT_LOG");
        return v && *v && *v != '0';
    }();
    return on;
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
inline void
injectLog(const char* fmt, ...)
{
    if (!injectLogEnabled())
        return;
    char line[512];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(line, sizeof(line), fmt, args);
    va_end(args);
    std::fprintf(stderr, "gapscope-inject: %s\n", line);
}

} // namespace gapscope::capture::inject
