// SPDX-License-Identifier: MIT
#pragma once

// TraceReader: opens a .gapscope file (read with pread) or a byte buffer and finds its frames: through
// the index when the footer and index are intact, else by scanning frame headers from the start.
//
// A file cut anywhere opens up to its last whole frame, with a warning that says how much is missing.
// Damage in the middle (bad frame header) is skipped by searching for the next valid frame header,
// with a warning naming the offset and the bytes skipped. Frames of unknown types are listed with a
// note and otherwise ignored. Lengths are capped by the file size and kMaxFrameBytes, so no input
// makes the reader allocate without bound: a frame may expand at most kMaxCompressionRatio times,
// and every decompression buffer is taken out of the MemoryBudget while it lives. Messages read "FILE: offset N: what".
//
// Threading: after open(), the reader is immutable; readPayload() may run from several threads at
// once, each with its own ZstdDecompressor.

#include "model/base/status.h"
#include "model/format/fileformat.h"
#include "model/format/trace.pb.h"
#include "model/format/zstdcodec.h"

#include <memory>
#include <string>
#include <vector>

namespace gapscope::format {

struct FrameInfo {
    uint64_t offset = 0; // of the frame header
    FrameHeader header;
    uint32_t indexEntry = UINT32_MAX; // position in index().frames(), when read through the index
    uint64_t end() const { return offset + kFrameHeaderSize + header.storedBytes; }
};

class TraceReader {
public:
    ~TraceReader();
    TraceReader(const TraceReader&) = delete;
    TraceReader& operator=(const TraceReader&) = delete;

    // `error` (optional) receives the kind of failure.
    static Expected<std::unique_ptr<TraceReader>> open(const std::string& path, FormatError* error = nullptr);
    static Expected<std::unique_ptr<TraceReader>> fromBuffer(
        std::string bytes, const std::string& name, FormatError* error = nullptr);
    // Frames never expand more than this when decompressed (events compress 2-5x); a frame that
    // claims more is damaged or a decompression bomb, and is refused before anything is allocated.
    static constexpr uint64_t kMaxCompressionRatio = 64;
    static uint64_t maxRawBytes(uint64_t storedBytes); // at least 1 MiB
    // True when `bytes` start with the .gapscope magic.
    static bool hasMagic(const void* bytes, size_t size);

    const std::string& name() const { return m_name; }
    uint64_t size() const { return m_size; }
    uint16_t versionMinor() const { return m_minor; }

    bool hasIndex() const { return m_hasIndex; }
    const pb::Index& index() const { return m_index; }
    const std::vector<FrameInfo>& frames() const { return m_frames; }
    // Takes the index rebuilt for a file that has none (cut before its end: ChunkEntryBuilder, one entry
    // per frame of frames(), in order, and the complete dictionaries), so that chunksOverlapping() and
    // windows work as with the file's own index. Refused (nothing changes) when the file has an index,
    // frames were skipped as damaged, or the entries do not match frames().
    Status adoptIndex(pb::Index index);

    // Random access: the CHUNK frames whose events may overlap [t0, t1), from the index's time
    // ranges (every chunk when there is no index). Decode them alone with a ChunkDecoder loaded from
    // index(): the index holds the complete dictionaries.
    std::vector<const FrameInfo*> chunksOverlapping(int64_t t0, int64_t t1) const;

    // Truncation, skipped damage, unknown frame types, index problems.
    const std::vector<std::string>& warnings() const { return m_warnings; }
    bool truncated() const { return m_missingBytes > 0; }
    uint64_t missingBytes() const { return m_missingBytes; }
    uint64_t missingEvents() const { return m_missingEvents; } // events of a cut chunk, when known
    uint64_t damagedBytes() const { return m_damagedBytes; } // skipped between frames
    bool indexDamaged() const { return m_indexDamaged; } // a footer was there, its index unusable
    bool indexMissing() const { return m_indexMissing; } // no footer or no index frame at the end
    bool headerDamaged() const { return m_headerDamaged; } // file header fields that must be 0 are not

    // The payload of a frame, checksum-verified and decompressed.
    Status readPayload(const FrameInfo& frame, ZstdDecompressor& zstd, std::string& out) const;
    // The stored (still compressed) bytes of a frame, checksum-verified.
    Status readStored(const FrameInfo& frame, std::string& out) const;
    // readPayload + parse. Fails on a payload that does not parse.
    Status readMessage(
        const FrameInfo& frame, ZstdDecompressor& zstd, std::string& scratch, google::protobuf::Message& message) const;
    // The same for a chunk, parsed by ChunkParser (kernelConfigs: see ChunkParser::parse).
    Status readMessage(const FrameInfo& frame, ZstdDecompressor& zstd, std::string& scratch, pb::Chunk& chunk,
        bool kernelConfigs = true) const;

    // "NAME: offset N: what"
    std::string where(uint64_t offset, const std::string& what) const;

private:
    TraceReader() = default;
    Status init(FormatError* error);
    bool loadIndex(std::string& why, bool& footerPresent);
    bool framesFromIndex(uint64_t indexOffset, std::string& why);
    void scan(uint64_t from, uint64_t to);
    uint64_t resync(uint64_t from, uint64_t to) const;
    // `size` bytes at `offset`: a pointer into the buffer, or read into `scratch` (files).
    const uint8_t* bytesAt(uint64_t offset, size_t size, std::string& scratch, Status& status) const;

    std::string m_name;
    int m_fd = -1; // file source (pread: no mapping, so a file shrinking under us cannot crash)
    std::string m_buffer; // buffer source
    uint64_t m_size = 0;
    uint16_t m_minor = 0;
    bool m_hasIndex = false;
    pb::Index m_index;
    std::vector<FrameInfo> m_frames;
    std::vector<std::string> m_warnings;
    uint64_t m_missingBytes = 0;
    uint64_t m_missingEvents = 0;
    uint64_t m_damagedBytes = 0;
    bool m_indexDamaged = false;
    bool m_indexMissing = false;
    bool m_headerDamaged = false;
};

} // namespace gapscope::format
