// SPDX-License-Identifier: MIT
#pragma once

// StepAlign: gives the steps of all ranks one numbering, so that step i of rank 0 is step i of rank 1.
// Steps of two ranks that hold the same collectives are one step (the k-th collective of a communicator
// is the same operation on every rank: CollectiveKeys), whatever their index on each rank or their
// time: ranks whose captures started seconds apart align, and a step some rank did not capture is
// absent on it. Without collectives shared by two ranks, rank r's first step takes the index of the
// reference rank's (most steps) step that starts nearest to it.
//
// Pure functions of the trace; thread-safe.

#include "model/trace/trace.h"

#include <utility>
#include <vector>

namespace gapscope::model {

class StepAlign {
public:
    using PerRank = std::vector<std::pair<uint32_t, std::vector<Step>>>;
    // Renumbers `perRank` (steps of each rank in start order, numbered 0..n-1).
    static void align(const Trace& trace, PerRank& perRank);

private:
    static void byTime(PerRank& perRank);
    static bool byCollectives(const Trace& trace, PerRank& perRank);
};

} // namespace gapscope::model
