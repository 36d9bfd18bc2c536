// SPDX-License-Identifier: MIT
#pragma once

// ChunkEncoder: the one encoder of events into pb::Chunk messages. Used by the file writer, the
// injection library (rank -> agent), the agent (agent -> file and viewers), synth and converters.
//
// It interns strings, lanes and launch configs (ids scoped to this encoder's stream: a decoder
// must see this encoder's chunks in order, or load the dictionaries from a file index) and
// accumulates events column by column. flush() moves the pending events, grouped by lane and
// sorted by start within a lane, and the dictionary entries defined since the previous flush into
// a Chunk. Memory is bounded by the caller flushing every N events.
//
// Ids: strings from 1 (0 = ""), lanes from 0, launch configs from 1 (0 = unknown). Events are
// ordered by (lane, start, longer first) within each block at flush; times are coded as per-lane
// gaps and per-name duration residuals (trace.proto, Columns); all-zero columns are left out.
//
// Not thread-safe. No allocation per event beyond amortised vector growth; the pending columns and
// the Chunk passed to flush() keep their capacity, so a steady stream allocates nothing.

#include "model/format/trace.pb.h"

#include "model/format/overviewbuilder.h"
#include "model/format/stepcolumns.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gapscope::format {

class ChunkEncoder {
public:
    ChunkEncoder();
    ~ChunkEncoder();
    ChunkEncoder(const ChunkEncoder&) = delete;
    ChunkEncoder& operator=(const ChunkEncoder&) = delete;

    // Dictionary. Ids are dense; string id 0 is the empty string.
    uint32_t internString(std::string_view s);
    uint32_t lane(const pb::LaneDef& def); // identity: kind, rank, host, device, stream, pid; def.id ignored
    uint32_t config(const pb::LaunchConfig& c); // c.id ignored

    void addKernel(uint32_t lane, int64_t start, uint64_t duration, uint32_t name, uint32_t correlation,
        uint32_t config, uint64_t graphId = 0, uint64_t graphNodeId = 0);
    void addMemop(uint32_t lane, int64_t start, uint64_t duration, pb::MemopKind kind, pb::CopyKind copyKind,
        uint64_t bytes, uint32_t flags, uint32_t correlation);
    void addApi(uint32_t lane, int64_t start, uint64_t duration, uint32_t name, uint32_t correlation,
        pb::ApiKind kind = pb::API_RUNTIME);
    void addSync(
        uint32_t lane, int64_t start, uint64_t duration, pb::SyncKind kind, uint64_t stream, uint32_t correlation);
    void addNvtx(uint32_t lane, int64_t start, uint64_t duration, uint32_t name, uint32_t depth, uint32_t domain = 0);
    void addHost(uint32_t lane, int64_t start, uint64_t duration, uint32_t name, uint32_t depth, pb::HostKind kind);
    struct Collective {
        uint64_t bytes = 0;
        uint32_t datatype = 0; // string id
        uint32_t algorithm = 0; // string id
        uint32_t protocol = 0; // string id
        uint64_t sequence = 0;
        uint64_t comm = 0;
        uint32_t channels = 0;
        uint32_t root = 0;
    };
    void addCollective(uint32_t lane, int64_t start, uint64_t duration, uint32_t op, const Collective& c);
    void addStep(uint32_t rank, uint32_t index, int64_t start, uint64_t duration, pb::StepSource source);
    // A step with what it did (kind, batch, tokens; its label a string id of internString).
    void addStep(const StepRecord& step);
    void addCounter(const pb::Counter& counter);
    // A graph node's capture-time context (inline strings, no dictionary ids), written with the next flush.
    void addGraphNode(const pb::GraphNode& node);

    size_t pendingEvents() const; // host events included
    // Bytes held by pending columns (for memory bounds).
    size_t pendingBytes() const;

    // Moves pending events and new dictionary entries into `out` (cleared first); sets sequence.
    void flush(pb::Chunk& out);

    // What the last flush() put into its chunk (for the file index).
    struct ChunkStats {
        uint64_t events = 0; // kernels + memops + api + syncs + nvtx + collectives (host events apart)
        uint64_t kernels = 0, memops = 0, syncs = 0, collectives = 0, steps = 0;
        int64_t minTime = 0, maxTime = 0; // earliest start, latest end (0, 0 when empty)
        std::vector<uint32_t> laneIds; // lanes with events, ascending
        std::vector<uint64_t> laneCounts; // events per lane, parallel to laneIds
        std::vector<uint32_t> ranks; // ranks of those lanes (and of steps), ascending, unique
        uint64_t hostEvents = 0; // HostBlock events, in none of the figures above
        std::vector<uint32_t> hostLaneIds; // lanes with host events, ascending
        std::vector<uint64_t> hostLaneCounts; // host events per lane, parallel to hostLaneIds
    };
    const ChunkStats& lastStats() const;
    // Whether `chunk`, filled by the last flush(), holds nothing a reader needs (no event of any kind,
    // step, counter, graph-node entry or dictionary entry): writers leave such a chunk out.
    bool flushedNothing(const pb::Chunk& chunk) const;

    // The file's overview so far (OverviewBuilder), when turned on (the writers of files do; off by
    // default, so the injection library's stream costs nothing for it): every flushed chunk feeds it,
    // in the order a decoder visits the chunk.
    const OverviewBuilder& overview() const;
    void setKeepOverview(bool on);

    // Dictionaries so far (for the index frame).
    const std::vector<std::string>& strings() const; // strings()[i] has id i + 1
    const std::vector<pb::LaneDef>& lanes() const;
    const std::vector<pb::LaunchConfig>& configs() const;

private:
    struct Impl;
    Impl* m_impl;
};

} // namespace gapscope::format
