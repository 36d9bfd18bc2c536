// SPDX-License-Identifier: MIT
#pragma once

// StepSequence: one rank's GPU work in launch order, as the step rules see it. Each unit is one
// kernel launched on its own, or one graph launch (CUDA or HIP) with all the kernels it replayed (known
// by its launch call, or where the rank has no calls recorded, by the graph id its kernels carry).
// Launch order is the correlation order of the launches when every kernel has one (it does not depend
// on how the GPU overlapped streams), otherwise start order.
//
// A unit's symbol says what it is, so that equal work compares equal: a kernel's name id, or for a
// graph launch an id of its own (kGraphSymbol bit set) shared by launches that replayed the same first
// kernel name the same number of times.
//
// Invariants: units are in launch order; `gpuIdleBefore[i]` is the time the rank's GPU had nothing of
// this sequence running before unit i started (0 when it overlapped earlier work).
//
// Threading: plain values built from a const Trace.

#include "model/trace/trace.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace gapscope::model {

constexpr uint64_t kGraphSymbol = 1ull << 40;

struct StepSequence {
    struct Unit {
        uint64_t symbol = 0;
        TimeNs start = 0;
        TimeNs end = 0;
        uint32_t correlation = 0; // the launch's (0: not recorded)
        uint32_t kernels = 1; // kernels it ran (more than one for a graph launch)
        uint32_t firstKernel = 0; // a graph launch's kernel names: (*graphKernelNames)[firstKernel, +kernels)
        bool wholeReplay = false; // a graph launch recorded as one event, its kernels not (light mode)
        bool graph() const { return symbol & kGraphSymbol; }
    };
    std::vector<Unit> units;
    std::vector<TimeNs> gpuIdleBefore;
    // The kernels of each graph launch, in launch order; shared by the sequence's slices.
    std::shared_ptr<const std::vector<StringId>> graphKernelNames;
    size_t graphLaunches = 0;
    bool byCorrelation = false; // units are in correlation order (every kernel had one)

    // The GPU kernels of `rank`.
    static StepSequence of(const Trace& trace, uint32_t rank);
    // Units [first, last) as a sequence of their own (gaps recomputed from the first).
    StepSequence slice(size_t first, size_t last) const;
    size_t size() const { return units.size(); }
    size_t kernelCount(size_t first, size_t last) const;
    // The kernels a graph launch replayed, as a sequence of their own (names only, no times).
    StepSequence replayed(size_t unit) const;
    StringId graphKernel(const Unit& u, uint32_t k) const { return (*graphKernelNames)[u.firstKernel + k]; }
};

// The median of `v` (the upper one of an even count; T{} when empty), for the rules' spacings and gaps.
template <typename T> T medianOf(std::vector<T> v)
{
    if (v.empty())
        return T {};
    std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
    return v[v.size() / 2];
}

} // namespace gapscope::model
