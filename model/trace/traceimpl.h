// SPDX-License-Identifier: MIT
#pragma once

// Trace::Impl: the lookup tables behind a Trace (internal to the trace core: trace.cpp,
// tracebuilder.cpp, traceloader.cpp). The launch index is built lazily under a mutex, so const
// queries stay thread-safe.

#include "model/trace/interntable.h"
#include "model/trace/trace.h"

#include <array>
#include <atomic>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace gapscope::model {

struct LaunchEntry {
    uint32_t corr;
    uint32_t rank;
    LaneId lane;
    uint32_t index;
};

struct Trace::Impl {
    InternTable strings;
    std::unordered_map<format::LaneKey, LaneId, format::LaneKeyHash> laneById; // by LaneInfo::identity()
    std::unordered_map<std::string, LaneId> laneByKey; // by LaneInfo::key(): the first lane of that key
    std::unordered_map<KernelConfig, uint32_t, KernelConfigHash> configIndex;
    std::array<uint64_t, 8> counts {}; // by EventKind

    std::mutex launchMutex;
    std::atomic<bool> launchBuilt { false };
    std::vector<LaunchEntry> launches; // API events sorted by (rank, corr, runtime before driver)

    void invalidateLaunches() { launchBuilt.store(false); }
};

} // namespace gapscope::model
