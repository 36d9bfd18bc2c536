// SPDX-License-Identifier: MIT
#pragma once

// Test helpers: a random trace with every event kind and awkward values (long durations, equal
// starts, nested NVTX, unicode and very long names), and a column-by-column comparison of traces.

#include "model/trace/trace.h"

#include <cstdint>
#include <string>

namespace gapscope::test {

struct RandomTraceOptions {
    uint32_t ranks = 2;
    uint32_t eventsPerLane = 500;
    uint64_t seed = 1;
    bool sections = true; // annotations, budget settings, classifier table
};

model::Trace randomTrace(const RandomTraceOptions& options);

// Empty when equal; otherwise the first difference, described. Lanes are matched by key, strings by
// content. The writer may fill header start/end and tool version: `ignoreHeaderTimes` skips them.
std::string compareTraces(const model::Trace& a, const model::Trace& b, bool ignoreHeaderTimes = true);

} // namespace gapscope::test
