// SPDX-License-Identifier: MIT
#pragma once

// TraceWriter: writes a .gapscope file as a stream (see fileformat.h for the layout).
//
// Events go into encoder(); call maybeFlush() after adding some, and a CHUNK frame is written every
// `eventsPerChunk` events, so memory stays bounded whatever the trace length. finish() writes the
// overview (OVERVIEW frame), the final header, the index (with complete dictionaries and per-chunk
// lane counts) and the footer. A
// writer destroyed without finish() finishes the file itself; a process killed before that leaves a
// file that still opens up to its last whole frame.
//
// Not thread-safe: one writer thread.

#include "model/base/status.h"
#include "model/format/chunkencoder.h"
#include "model/format/fileformat.h"
#include "model/format/messagearena.h"
#include "model/format/trace.pb.h"
#include "model/format/zstdcodec.h"

#include <cstdio>
#include <memory>
#include <string>

namespace gapscope::format {

struct WriterOptions {
    int zstdLevel = 3;
    uint32_t eventsPerChunk = 65536;
    bool compress = true;
};

class TraceWriter {
public:
    ~TraceWriter();
    TraceWriter(const TraceWriter&) = delete;
    TraceWriter& operator=(const TraceWriter&) = delete;

    // Creates (truncates) `path` and writes the file header and the HEADER frame.
    static Expected<std::unique_ptr<TraceWriter>> create(
        const std::string& path, const pb::FileHeader& header, const WriterOptions& options = {});

    ChunkEncoder& encoder() { return m_encoder; }
    // Writes a CHUNK frame when at least eventsPerChunk events are pending.
    Status maybeFlush();
    // Writes the pending events (if any) as a CHUNK frame.
    Status flush();

    // A section frame (ANNOTATIONS, BUDGET, CLASSIFIER, HEADER_UPDATE). The last of each kind wins.
    Status writeSection(FrameType type, const google::protobuf::Message& message);
    // Any frame, as given (tests use it to write frame types from the future).
    Status writeRawFrame(uint8_t type, const std::string& payload, uint32_t events = 0);

    // Copies a frame of another file as it is (section rewrites): `stored` is its stored payload;
    // `entry` (optional) is its old index entry, re-pointed at the new offset.
    Status copyFrame(const FrameHeader& header, const std::string& stored, const pb::IndexEntry* entry);
    // Dictionaries for the index when events did not go through encoder() (copied frames).
    void setDictionaries(const pb::Index& dictionaries);
    // The encoder whose overview finish() writes (the OVERVIEW frame) when chunks were encoded
    // elsewhere and copied in (the agent's merge encoder); by default encoder()'s, and none when only
    // frames of another file were copied (that file's OVERVIEW frame is copied with them).
    void setOverviewSource(const ChunkEncoder* encoder) { m_overviewSource = encoder; }

    // Flushes, writes `finalHeader` (or the first header) into the index, the index and the footer.
    Status finish(const pb::FileHeader* finalHeader = nullptr);

    uint64_t bytesWritten() const { return m_offset; }
    uint64_t eventsWritten() const { return m_events; }
    const std::string& path() const { return m_path; }
    // The chunk the last flush() wrote (events, dictionary additions, sequence): the capture agent
    // streams this same chunk to live clients. Valid until the next flush; meaningful only when that
    // flush wrote a frame (bytesWritten() grew).
    const pb::Chunk& lastChunk() const { return m_lastChunk ? *m_lastChunk : pb::Chunk::default_instance(); }

private:
    TraceWriter() = default;
    Status writeFrame(uint8_t type, const std::string& raw, uint32_t events, pb::IndexEntry* entry);
    Status writeBytes(const void* data, size_t size);

    std::string m_path;
    std::FILE* m_file = nullptr;
    WriterOptions m_options;
    ChunkEncoder m_encoder;
    ZstdCompressor m_zstd;
    pb::FileHeader m_header;
    pb::Index m_index;
    MessageArena m_arena { size_t(8) << 20 }; // chunks are built here: no per-flush allocation
    const pb::Chunk* m_lastChunk = nullptr; // in m_arena, until the next flush
    std::string m_raw, m_stored;
    uint64_t m_offset = 0;
    uint64_t m_events = 0;
    bool m_finished = false;
    bool m_ownDictionaries = false;
    const ChunkEncoder* m_overviewSource = nullptr;
    pb::Index m_dictionaries;
    Status m_error;
};

} // namespace gapscope::format
