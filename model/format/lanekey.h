// SPDX-License-Identifier: MIT
#pragma once

// LaneKey: the identity of a lane, everywhere a lane is looked up (the chunk encoder's lane table,
// TraceBuilder, Trace): kind, rank, host, pid, device and stream (or thread) id. Two lanes are the
// same lane exactly when all six are equal, so lanes of two hosts (or two processes) that happen to
// share rank, device and stream ids stay apart. LaneKeyHash hashes it for unordered maps.
//
// Threading: a value.

#include <cstdint>
#include <functional>
#include <string>

namespace gapscope::format {

struct LaneKey {
    uint32_t kind = 0; // the file format's LaneKind (trace.proto), as model::LaneKind
    uint32_t rank = 0;
    std::string host;
    uint32_t pid = 0;
    uint32_t device = 0;
    uint64_t stream = 0;

    bool operator==(const LaneKey& o) const
    {
        return kind == o.kind && rank == o.rank && pid == o.pid && device == o.device && stream == o.stream
            && host == o.host;
    }
};

struct LaneKeyHash {
    size_t operator()(const LaneKey& k) const
    {
        uint64_t h = 1469598103934665603ull;
        auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
        mix(k.kind);
        mix(k.rank);
        mix(std::hash<std::string>()(k.host));
        mix(k.pid);
        mix(k.device);
        mix(k.stream);
        return size_t(h ^ (h >> 31));
    }
};

} // namespace gapscope::format
