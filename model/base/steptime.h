// SPDX-License-Identifier: MIT
#pragma once

// The step time of a run of host intervals between consecutive step markers (capture overhead: before,
// while and after a capture; the injection library and the agent both use it): their mean, without
// pauses (an interval over kPauseFactor times the median and over kPauseMs: the process was idle, e.g.
// a server between requests). Not the median: a loop that synchronises every few steps launches several
// steps in a burst and then waits for the GPU, so its typical interval is the host's launch time and only
// the mean is the step time (a CUDA-graph loop that syncs every 20 steps on an H100: median 0.12 ms,
// mean 0.91 ms, the GPU's step). 0 when empty.
//
// Pure functions; thread-safe.

#include <algorithm>
#include <cstddef>
#include <vector>

namespace gapscope::model {

constexpr double kPauseFactor = 10;
constexpr double kPauseMs = 100;

// Median of `v` (the mean of the two middle values for an even count; 0 when empty).
inline double intervalMedian(std::vector<double> v)
{
    if (v.empty())
        return 0;
    const size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + long(mid), v.end());
    double m = v[mid];
    if (v.size() % 2 == 0) {
        const double lower = *std::max_element(v.begin(), v.begin() + long(mid));
        m = (m + lower) / 2;
    }
    return m;
}

inline double stepTimeMs(const std::vector<double>& intervalsMs)
{
    if (intervalsMs.empty())
        return 0;
    const double median = intervalMedian(intervalsMs);
    double sum = 0;
    size_t n = 0;
    for (double v : intervalsMs) {
        if (v > kPauseFactor * median && v > kPauseMs)
            continue;
        sum += v;
        ++n;
    }
    return n ? sum / double(n) : median;
}

} // namespace gapscope::model
