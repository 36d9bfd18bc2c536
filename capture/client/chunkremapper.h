// SPDX-License-Identifier: MIT
#pragma once

// ChunkRemapper: decodes the chunks of ONE source stream (a rank's injection library, an agent's
// merged stream, a file) with format::ChunkDecoder (the one decoder) and hands their events to an
// EventSink with ids re-interned into a target encoder's dictionaries. This is how several streams,
// each with its own dictionaries, become one stream with one global dictionary (agent: ranks -> file;
// client: several agents -> one trace).
//
// Per event it can shift times (clock offsets, replay), override the rank, host and pid of lanes, and
// shift step indices (rank-local step index -> capture-relative index). Dictionary entries are taken
// even from chunks whose events were dropped (applyDictionaries), so a stream survives back-pressure
// drops; a dictionary gap (a chunk lost on the way) is filled with placeholders by the decoder and
// reported in notes(), the stream goes on.
//
// Every chunk is validated before anything is forwarded: ids the stream never defined or columns of
// unequal length are an error naming the chunk and the block, and nothing of that chunk is forwarded.
//
// Threading: not thread-safe; one instance per source stream, used on its target encoder's thread.

#include "capture/client/eventsink.h"
#include "model/base/status.h"
#include "model/format/chunkdecoder.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gapscope::capture {

struct RemapOptions {
    int64_t timeShiftNs = 0;
    int64_t rank = -1; // >= 0: every lane, step and counter gets this rank
    std::string host; // non-empty: every lane gets this host
    int64_t stepIndexShift = 0; // added to step indices; steps that end up negative are dropped
    int64_t pid = -1; // >= 0: lanes get this pid
};

class ChunkRemapper {
public:
    explicit ChunkRemapper(format::ChunkEncoder& target, RemapOptions options = {});
    ~ChunkRemapper();

    void setOptions(const RemapOptions& o) { m_opt = o; }
    const RemapOptions& options() const { return m_opt; }

    // Validates `in`, takes its dictionary entries, then forwards its events to `sink`.
    Status apply(const pb::Chunk& in, EventSink& sink);
    // Only the dictionary entries (the events are dropped by the caller, who counts them).
    Status applyDictionaries(const pb::Chunk& in);

    // Events in a chunk (all blocks; steps and counters excluded).
    static uint64_t eventCount(const pb::Chunk& c);

    uint64_t chunksApplied() const { return m_chunks; }
    // Dictionary gaps and other remarks of the decoder ("string ids 5..9 are missing ...").
    const std::vector<std::string>& notes() const;

private:
    class Forwarder;
    format::ChunkEncoder& m_target;
    RemapOptions m_opt;
    std::unique_ptr<format::ChunkDecoder> m_dec;
    std::vector<uint32_t> m_strings { 0 }; // source string id -> target id (id 0 = "")
    std::vector<uint32_t> m_lanes; // source lane id -> target id
    std::vector<uint32_t> m_configs { 0 }; // source config id -> target id (0 = none)
    uint64_t m_chunks = 0;
};

} // namespace gapscope::capture
