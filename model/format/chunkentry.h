// SPDX-License-Identifier: MIT
#pragma once

// ChunkEntryBuilder: the index entry of a chunk made from its events, as the writer makes it from
// ChunkEncoder::ChunkStats (event and per-lane counts, host events apart; earliest start and latest
// end; the ranks of its lanes and steps): what it takes to rebuild the index of a file cut before its
// end (TraceReader::adoptIndex), so that a window of it can be read without decoding the rest.
//
// Use: decoder.forEach(chunk, builder), then builder.finish(...). Not thread-safe.

#include "model/format/chunkdecoder.h"
#include "model/format/tracereader.h"

#include <vector>

namespace gapscope::format {

class ChunkEntryBuilder : public ChunkDecoder::Visitor {
public:
    // The entry of `frame` (a CHUNK frame of `chunk`, whose events were visited since the last
    // finish), with the ranks `decoder` gives its lanes. Resets for the next chunk.
    void finish(const FrameInfo& frame, const pb::Chunk& chunk, const ChunkDecoder& decoder, pb::IndexEntry& out);
    // The entry of any other frame: where it is, its type and its header's event count.
    static void frameEntry(const FrameInfo& frame, pb::IndexEntry& out);

    void kernel(uint32_t lane, int64_t start, uint64_t dur, uint32_t, uint32_t, uint32_t, uint64_t, uint64_t) override;
    void memop(uint32_t lane, int64_t start, uint64_t dur, pb::MemopKind, pb::CopyKind, uint64_t, uint32_t,
        uint32_t) override;
    void api(uint32_t lane, int64_t start, uint64_t dur, uint32_t, uint32_t, pb::ApiKind) override;
    void sync(uint32_t lane, int64_t start, uint64_t dur, pb::SyncKind, uint64_t, uint32_t) override;
    void nvtx(uint32_t lane, int64_t start, uint64_t dur, uint32_t, uint32_t, uint32_t) override;
    void host(uint32_t lane, int64_t start, uint64_t dur, uint32_t, uint32_t, pb::HostKind) override;
    void collective(uint32_t lane, int64_t start, uint64_t dur, uint32_t, uint64_t, uint32_t, uint32_t, uint32_t,
        uint64_t, uint64_t, uint32_t, uint32_t) override;
    void step(uint32_t rank, uint32_t, int64_t, uint64_t, pb::StepSource) override;

private:
    void event(uint32_t lane, int64_t start, uint64_t dur, std::vector<uint64_t>& counts);
    std::vector<uint64_t> m_laneCount, m_hostLaneCount; // by lane id
    std::vector<uint32_t> m_stepRanks;
    uint64_t m_kernels = 0, m_memops = 0, m_syncs = 0, m_collectives = 0;
    bool m_any = false;
    int64_t m_min = 0, m_max = 0;
};

} // namespace gapscope::format
