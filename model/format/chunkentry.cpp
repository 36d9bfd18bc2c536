// SPDX-License-Identifier: MIT
#include "model/format/chunkentry.h"

#include <algorithm>
#include <cstdint>

namespace gapscope::format {

void ChunkEntryBuilder::event(uint32_t lane, int64_t start, uint64_t dur, std::vector<uint64_t>& counts)
{
    if (lane >= counts.size())
        counts.resize(size_t(lane) + 1, 0);
    ++counts[lane];
    // The encoder's rule (ChunkEncoder::Impl::account): durations capped so that the end cannot overflow.
    const int64_t end = start + int64_t(std::min<uint64_t>(dur, uint64_t(INT64_MAX / 2)));
    if (!m_any) {
        m_min = start;
        m_max = end;
        m_any = true;
    }
    m_min = std::min(m_min, start);
    m_max = std::max(m_max, end);
}

void ChunkEntryBuilder::kernel(uint32_t lane, int64_t start, uint64_t dur, uint32_t, uint32_t, uint32_t, uint64_t, uint64_t)
{
    ++m_kernels;
    event(lane, start, dur, m_laneCount);
}

void ChunkEntryBuilder::memop(
    uint32_t lane, int64_t start, uint64_t dur, pb::MemopKind, pb::CopyKind, uint64_t, uint32_t, uint32_t)
{
    ++m_memops;
    event(lane, start, dur, m_laneCount);
}

void ChunkEntryBuilder::api(uint32_t lane, int64_t start, uint64_t dur, uint32_t, uint32_t, pb::ApiKind)
{
    event(lane, start, dur, m_laneCount);
}

void ChunkEntryBuilder::sync(uint32_t lane, int64_t start, uint64_t dur, pb::SyncKind, uint64_t, uint32_t)
{
    ++m_syncs;
    event(lane, start, dur, m_laneCount);
}

void ChunkEntryBuilder::nvtx(uint32_t lane, int64_t start, uint64_t dur, uint32_t, uint32_t, uint32_t)
{
    event(lane, start, dur, m_laneCount);
}

void ChunkEntryBuilder::host(uint32_t lane, int64_t start, uint64_t dur, uint32_t, uint32_t, pb::HostKind)
{
    event(lane, start, dur, m_hostLaneCount);
}

void ChunkEntryBuilder::collective(uint32_t lane, int64_t start, uint64_t dur, uint32_t, uint64_t, uint32_t, uint32_t,
    uint32_t, uint64_t, uint64_t, uint32_t, uint32_t)
{
    ++m_collectives;
    event(lane, start, dur, m_laneCount);
}

void ChunkEntryBuilder::step(uint32_t rank, uint32_t, int64_t, uint64_t, pb::StepSource)
{
    m_stepRanks.push_back(rank);
}

void ChunkEntryBuilder::frameEntry(const FrameInfo& frame, pb::IndexEntry& out)
{
    out.Clear();
    out.set_offset(frame.offset);
    out.set_frame_bytes(uint32_t(kFrameHeaderSize + frame.header.storedBytes));
    out.set_type(frame.header.type);
    out.set_event_count(frame.header.events);
}

void ChunkEntryBuilder::finish(const FrameInfo& frame, const pb::Chunk& chunk, const ChunkDecoder& decoder, pb::IndexEntry& out)
{
    frameEntry(frame, out);
    uint64_t events = 0;
    std::vector<uint32_t> ranks = m_stepRanks;
    auto lanes = [&](std::vector<uint64_t>& counts, auto* ids, auto* perLane, uint64_t* total) {
        for (uint32_t l = 0; l < counts.size(); ++l) {
            if (!counts[l])
                continue;
            ids->Add(l);
            perLane->Add(counts[l]);
            if (total)
                *total += counts[l];
            if (const pb::LaneDef* def = decoder.laneDef(l))
                ranks.push_back(def->rank());
        }
    };
    lanes(m_laneCount, out.mutable_lane_ids(), out.mutable_lane_event_counts(), &events);
    lanes(m_hostLaneCount, out.mutable_host_lane_ids(), out.mutable_host_lane_event_counts(), nullptr);
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    out.mutable_ranks()->Add(ranks.begin(), ranks.end());
    out.set_min_time_ns(m_any ? m_min : 0);
    out.set_max_time_ns(m_any ? m_max : 0);
    out.set_event_count(events);
    out.set_sequence(chunk.sequence());
    out.set_kernel_count(m_kernels);
    out.set_memop_count(m_memops);
    out.set_sync_count(m_syncs);
    out.set_collective_count(m_collectives);
    out.set_step_count(m_stepRanks.size());
    *this = ChunkEntryBuilder {};
}

} // namespace gapscope::format
