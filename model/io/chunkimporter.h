// SPDX-License-Identifier: MIT
#pragma once

// ChunkImporter: decodes the file format's Chunk messages of one stream (a file read in order, or a live stream
// from the agent) into a TraceBuilder. It owns the stream's ChunkDecoder (dictionaries) and maps
// the stream's string, lane and launch-config ids to the builder's.
//
// Chunks must arrive in stream order (or the dictionaries must be loaded from an index first).
// A malformed chunk is rejected whole with a message; the builder keeps everything before it.
// One of the edges where protobuf messages become model types (with traceloader.h and
// tracemetaproto.h). Not thread-safe.

#include "model/format/chunkdecoder.h"
#include "model/format/counterset.h"
#include "model/trace/trace.h"

namespace gapscope::model {

class ChunkImporter {
public:
    explicit ChunkImporter(TraceBuilder& builder);

    void loadDictionaries(const pb::Index& index) { m_decoder.load(index); }
    Status add(const pb::Chunk& chunk);

    const format::ChunkDecoder& decoder() const { return m_decoder; }
    uint64_t events() const { return m_events; }
    // Loss counters carried by the chunks so far, summed by (name, rank).
    std::vector<Counter> counters() const;

private:
    friend class ChunkVisitor;
    StringId str(uint32_t id);
    LaneId lane(uint32_t id);

    TraceBuilder& m_builder;
    format::ChunkDecoder m_decoder;
    std::vector<StringId> m_strings; // stream id -> builder id (UINT32_MAX: not yet interned)
    std::vector<LaneId> m_lanes;
    uint64_t m_events = 0;
    format::CounterSet<pb::Counter> m_counters;
};

} // namespace gapscope::model
