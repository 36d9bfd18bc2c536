// SPDX-License-Identifier: MIT
#pragma once

// OverviewBuilder: the OVERVIEW frame of a file (trace.proto's Overview) built from its events in file
// order: per lane the event counts and summed durations by kind, and one node per kNodeEvents
// consecutive events (earliest start, latest end, summed durations, the longest event and its name);
// and every step, every counter and every graph-node entry. The writer feeds it each chunk as ChunkDecoder would visit
// it (ChunkEncoder::flush), a reader the decoded chunks of a file that has no such frame, in file order: both get the
// same nodes.
//
// Memory: about 40 bytes per node, per lane (0.16 bytes per event), and 48 per step.
// Not thread-safe.

#include "model/format/counterset.h"
#include "model/format/stepcolumns.h"
#include "model/format/trace.pb.h"

#include <cstdint>
#include <vector>

namespace gapscope::format {

class OverviewBuilder {
public:
    static constexpr uint32_t kNodeEvents = 256;
    // Kinds in the order of the model's EventKind and of LaneOverview.kind_count.
    enum Kind : uint8_t { Kernel, Memcpy, Memset, Api, Sync, Nvtx, Collective, Host, KindCount };
    static constexpr size_t kHostKinds = 5; // HostKind values counted (a larger one counts as 0)

    // `depth`: the nesting depth of an NVTX or host range (0 otherwise).
    void event(uint32_t lane, Kind kind, int64_t start, uint64_t duration, uint32_t name, uint32_t hostKind = 0,
        uint32_t depth = 0);
    void step(const StepRecord& step);
    void counter(const pb::Counter& c); // a chunk's counter: summed by (name, rank) (CounterSet)
    void graphNode(const pb::GraphNode& g); // a chunk's graph-node entry, kept in file order

    bool empty() const { return m_lanes.empty() && m_steps.empty() && m_counters.empty() && m_graphNodes.empty(); }
    uint64_t events() const { return m_events; }
    size_t memoryBytes() const;
    void toProto(pb::Overview& out) const;

private:
    struct Node {
        int64_t start = INT64_MAX, end = INT64_MIN;
        uint64_t busy = 0, longest = 0;
        uint32_t longestName = 0;
    };
    struct Lane {
        uint64_t events = 0;
        uint32_t maxDepth = 0;
        uint64_t kindCount[KindCount] = {}, kindNs[KindCount] = {};
        uint64_t hostKindCount[kHostKinds] = {};
        std::vector<Node> nodes;
    };
    std::vector<Lane> m_lanes; // by file lane id
    std::vector<StepRecord> m_steps;
    CounterSet<pb::Counter> m_counters;
    std::vector<pb::GraphNode> m_graphNodes;
    uint64_t m_events = 0;
};

} // namespace gapscope::format
