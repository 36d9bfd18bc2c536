// SPDX-License-Identifier: MIT
#pragma once

// SampledStacks: the CPU call-stack samples of one thread (Nsight Systems' COMPOSITE_EVENTS with
// SAMPLING_CALLCHAINS) as nested ranges, one per function for as long as it stays on the stack.
//
// A sample at time t shows the stack then, root first. A function that is on the stack, at the
// same depth under the same callers, in consecutive samples t_i .. t_j gets the range [t_i, t_{j+1})
// when the next sample t_{j+1} comes within twice the sampling interval, else [t_i, t_j + interval):
// a thread not sampled for longer was not running. The interval is the median time between a
// thread's consecutive samples (`fallback` for a thread with fewer than two). The ranges are
// estimates, to the sampling interval; their depth is the frame's (0 = the root).
//
// Threading: a value; one thread's samples at a time.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gapscope::model::importer {

class SampledStacks {
public:
    struct Range {
        int64_t start = 0, end = 0;
        uint32_t name = 0;
        uint32_t depth = 0;
    };
    // One sample: its time (not before the previous one's) and its frames, root first.
    void add(int64_t t, std::vector<uint32_t> frames);
    size_t size() const { return m_times.size(); }
    // The median time between consecutive samples, or 0 with fewer than two.
    int64_t medianInterval() const;
    // The ranges of the samples added (outer frame first where several close together); clears.
    std::vector<Range> finish(int64_t fallbackInterval);

private:
    std::vector<int64_t> m_times;
    std::vector<std::vector<uint32_t>> m_stacks;
};

} // namespace gapscope::model::importer
