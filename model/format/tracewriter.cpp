// SPDX-License-Identifier: MIT
#include "model/format/tracewriter.h"

#include "model/format/crc32c.h"
#include "model/format/serialize.h"

#include <cerrno>
#include <cstring>

namespace gapscope::format {

TraceWriter::~TraceWriter()
{
    if (m_file && !m_finished)
        (void)finish();
    if (m_file)
        std::fclose(m_file);
}

Expected<std::unique_ptr<TraceWriter>> TraceWriter::create(
    const std::string& path, const pb::FileHeader& header, const WriterOptions& options)
{
    std::unique_ptr<TraceWriter> w(new TraceWriter);
    w->m_path = path;
    w->m_options = options;
    if (w->m_options.eventsPerChunk == 0)
        w->m_options.eventsPerChunk = 65536;
    w->m_zstd.setLevel(options.zstdLevel);
    w->m_header = header;
    w->m_encoder.setKeepOverview(true);
    w->m_file = std::fopen(path.c_str(), "wb");
    if (!w->m_file)
        return Status::error(path + ": cannot create: " + std::strerror(errno));
    std::setvbuf(w->m_file, nullptr, _IOFBF, 1 << 20);
    uint8_t fh[kFileHeaderSize];
    encodeFileHeader(fh);
    if (Status s = w->writeBytes(fh, sizeof fh); !s)
        return s;
    std::string raw;
    serializeDeterministic(header, raw);
    if (Status s = w->writeFrame(uint8_t(FrameType::Header), raw, 0, w->m_index.add_frames()); !s)
        return s;
    return w;
}

Status TraceWriter::writeBytes(const void* data, size_t size)
{
    if (!m_error)
        return m_error;
    if (std::fwrite(data, 1, size, m_file) != size) {
        m_error = Status::error(
            m_path + ": offset " + std::to_string(m_offset) + ": write failed: " + std::strerror(errno));
        return m_error;
    }
    m_offset += size;
    return Status::ok();
}

Status TraceWriter::writeFrame(uint8_t type, const std::string& raw, uint32_t events, pb::IndexEntry* entry)
{
    if (raw.size() > kMaxFrameBytes)
        return Status::error(m_path + ": frame of " + std::to_string(raw.size()) + " bytes exceeds the format limit");
    FrameHeader h;
    h.type = type;
    h.rawBytes = uint32_t(raw.size());
    h.events = events;
    const std::string* stored = &raw;
    if (m_options.compress) {
        if (Status s = m_zstd.compress(raw.data(), raw.size(), m_stored); !s)
            return s.withContext(m_path);
        stored = &m_stored;
        h.codec = uint8_t(Codec::Zstd);
    }
    h.storedBytes = uint32_t(stored->size());
    h.payloadCrc = crc32c(stored->data(), stored->size());
    uint8_t hb[kFrameHeaderSize];
    encodeFrameHeader(h, hb);
    if (entry) {
        entry->set_offset(m_offset);
        entry->set_frame_bytes(uint32_t(kFrameHeaderSize + stored->size()));
        entry->set_type(type);
        entry->set_event_count(events);
    }
    if (Status s = writeBytes(hb, sizeof hb); !s)
        return s;
    return writeBytes(stored->data(), stored->size());
}

Status TraceWriter::maybeFlush()
{
    if (m_encoder.pendingEvents() >= m_options.eventsPerChunk)
        return flush();
    return Status::ok();
}

Status TraceWriter::flush()
{
    if (m_finished)
        return Status::error(m_path + ": write after finish");
    pb::Chunk& chunk = *m_arena.fresh<pb::Chunk>();
    m_lastChunk = &chunk;
    m_encoder.flush(chunk);
    if (m_encoder.flushedNothing(chunk))
        return Status::ok();
    const auto& st = m_encoder.lastStats();
    chunk.SerializeToString(&m_raw);
    pb::IndexEntry* e = m_index.add_frames();
    if (Status s = writeFrame(uint8_t(FrameType::Chunk), m_raw, uint32_t(std::min<uint64_t>(st.events, UINT32_MAX)), e);
        !s)
        return s;
    e->set_min_time_ns(st.minTime);
    e->set_max_time_ns(st.maxTime);
    e->set_event_count(st.events);
    e->set_sequence(chunk.sequence());
    e->mutable_ranks()->Add(st.ranks.begin(), st.ranks.end());
    e->mutable_lane_ids()->Add(st.laneIds.begin(), st.laneIds.end());
    e->mutable_lane_event_counts()->Add(st.laneCounts.begin(), st.laneCounts.end());
    e->mutable_host_lane_ids()->Add(st.hostLaneIds.begin(), st.hostLaneIds.end());
    e->mutable_host_lane_event_counts()->Add(st.hostLaneCounts.begin(), st.hostLaneCounts.end());
    e->set_kernel_count(st.kernels);
    e->set_memop_count(st.memops);
    e->set_sync_count(st.syncs);
    e->set_collective_count(st.collectives);
    e->set_step_count(st.steps);
    m_events += st.events;
    return Status::ok();
}

Status TraceWriter::writeSection(FrameType type, const google::protobuf::Message& message)
{
    if (m_finished)
        return Status::error(m_path + ": write after finish");
    serializeDeterministic(message, m_raw);
    return writeFrame(uint8_t(type), m_raw, 0, m_index.add_frames());
}

Status TraceWriter::writeRawFrame(uint8_t type, const std::string& payload, uint32_t events)
{
    return writeFrame(type, payload, events, m_index.add_frames());
}

Status TraceWriter::copyFrame(const FrameHeader& header, const std::string& stored, const pb::IndexEntry* entry)
{
    if (m_finished)
        return Status::error(m_path + ": write after finish");
    pb::IndexEntry* e = m_index.add_frames();
    if (entry)
        *e = *entry;
    e->set_offset(m_offset);
    e->set_frame_bytes(uint32_t(kFrameHeaderSize + stored.size()));
    e->set_type(header.type);
    if (!entry)
        e->set_event_count(header.events);
    if (header.type == uint8_t(FrameType::Chunk))
        m_events += e->event_count();
    uint8_t hb[kFrameHeaderSize];
    encodeFrameHeader(header, hb);
    if (Status s = writeBytes(hb, sizeof hb); !s)
        return s;
    return writeBytes(stored.data(), stored.size());
}

void TraceWriter::setDictionaries(const pb::Index& dictionaries)
{
    m_ownDictionaries = true;
    m_dictionaries.Clear();
    *m_dictionaries.mutable_strings() = dictionaries.strings();
    *m_dictionaries.mutable_lanes() = dictionaries.lanes();
    *m_dictionaries.mutable_configs() = dictionaries.configs();
}

Status TraceWriter::finish(const pb::FileHeader* finalHeader)
{
    if (m_finished)
        return m_error;
    if (Status s = flush(); !s)
        return s;
    m_finished = true;
    // The overview of what the writer (or the encoder that made the copied chunks) encoded.
    const ChunkEncoder* source = m_overviewSource ? m_overviewSource : m_ownDictionaries ? nullptr : &m_encoder;
    if (source && !source->overview().empty()) {
        pb::Overview overview;
        source->overview().toProto(overview);
        serializeDeterministic(overview, m_raw);
        if (Status s = writeFrame(uint8_t(FrameType::Overview), m_raw, 0, m_index.add_frames()); !s)
            return s;
    }
    *m_index.mutable_header() = finalHeader ? *finalHeader : m_header;
    if (m_ownDictionaries) {
        *m_index.mutable_strings() = m_dictionaries.strings();
        *m_index.mutable_lanes() = m_dictionaries.lanes();
        *m_index.mutable_configs() = m_dictionaries.configs();
    } else {
        for (const auto& s : m_encoder.strings())
            m_index.add_strings(s);
        for (const auto& l : m_encoder.lanes())
            *m_index.add_lanes() = l;
        for (const auto& c : m_encoder.configs())
            *m_index.add_configs() = c;
    }
    m_index.set_total_events(m_events);
    serializeDeterministic(m_index, m_raw);
    Footer f;
    f.indexOffset = m_offset;
    f.totalEvents = m_events;
    if (Status s = writeFrame(uint8_t(FrameType::Index), m_raw, 0, nullptr); !s)
        return s;
    f.indexBytes = uint32_t(m_offset - f.indexOffset);
    uint8_t fb[kFooterSize];
    encodeFooter(f, fb);
    if (Status s = writeBytes(fb, sizeof fb); !s)
        return s;
    if (std::fflush(m_file) != 0)
        m_error = Status::error(m_path + ": write failed: " + std::strerror(errno));
    m_index.Clear();
    return m_error;
}

} // namespace gapscope::format
