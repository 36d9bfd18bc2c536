// SPDX-License-Identifier: MIT
#include "model/format/tracereader.h"

#include "model/format/chunkparser.h"

#include "model/format/crc32c.h"
#include "model/format/memorybudget.h"
#include "model/format/regularfile.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gapscope::format {
namespace {

// Fuzzing builds skip payload checksums so mutated payloads reach the decoders behind them.
#ifdef GAPSCOPE_FUZZING_NO_CRC
constexpr bool kCheckPayloadCrc = false;
#else
constexpr bool kCheckPayloadCrc = true;
#endif

std::string hex(uint32_t v)
{
    char b[16];
    std::snprintf(b, sizeof b, "0x%08x", v);
    return b;
}

// Parsed messages take up to this many times their raw bytes (packed varints become 8-byte values).
constexpr uint64_t kParseExpansion = 8;
// An index of many tiny strings takes more per raw byte.
constexpr uint64_t kIndexExpansion = 40;

std::string frameName(uint8_t type)
{
    return isKnownFrameType(type) ? toString(FrameType(type)) : "type " + std::to_string(type);
}

} // namespace

TraceReader::~TraceReader()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

uint64_t TraceReader::maxRawBytes(uint64_t storedBytes)
{
    return std::max<uint64_t>(uint64_t(1) << 20, storedBytes * kMaxCompressionRatio);
}

bool TraceReader::hasMagic(const void* bytes, size_t size)
{
    return size >= sizeof kFileMagic && std::memcmp(bytes, kFileMagic, sizeof kFileMagic) == 0;
}

std::string TraceReader::where(uint64_t offset, const std::string& what) const
{
    return m_name + ": offset " + std::to_string(offset) + ": " + what;
}

Expected<std::unique_ptr<TraceReader>> TraceReader::open(const std::string& path, FormatError* error)
{
    std::unique_ptr<TraceReader> r(new TraceReader);
    r->m_name = path;
    if (Status s = checkRegularFile(path); !s) {
        if (error)
            *error = FormatError::Io;
        return s;
    }
    // O_NONBLOCK: should the path turn into a FIFO after the check, open() still returns at once.
    r->m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st { };
    if (r->m_fd < 0 || ::fstat(r->m_fd, &st) != 0) {
        if (error)
            *error = FormatError::Io;
        return Status::error(path + ": cannot open: " + std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) {
        if (error)
            *error = FormatError::Io;
        return Status::error(path + ": not a regular file");
    }
    r->m_size = uint64_t(st.st_size);
    if (Status s = r->init(error); !s)
        return s;
    return r;
}

Expected<std::unique_ptr<TraceReader>> TraceReader::fromBuffer(
    std::string bytes, const std::string& name, FormatError* error)
{
    std::unique_ptr<TraceReader> r(new TraceReader);
    r->m_name = name;
    r->m_buffer = std::move(bytes);
    r->m_size = r->m_buffer.size();
    if (Status s = r->init(error); !s)
        return s;
    return r;
}

const uint8_t* TraceReader::bytesAt(uint64_t offset, size_t size, std::string& scratch, Status& status) const
{
    if (offset > m_size || size > m_size - offset) {
        status = Status::error(where(offset, "read past the end of the file"));
        return nullptr;
    }
    if (m_fd < 0)
        return reinterpret_cast<const uint8_t*>(m_buffer.data()) + offset;
    scratch.resize(size);
    size_t done = 0;
    while (done < size) {
        ssize_t n = ::pread(m_fd, scratch.data() + done, size - done, off_t(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            status = Status::error(where(offset + done, n == 0 ? "file shrank while reading" : std::strerror(errno)));
            return nullptr;
        }
        done += size_t(n);
    }
    return reinterpret_cast<const uint8_t*>(scratch.data());
}

Status TraceReader::init(FormatError* error)
{
    auto fail = [&](FormatError kind, std::string what) {
        if (error)
            *error = kind;
        return Status::error(std::move(what));
    };
    std::string scratch;
    Status st;
    if (m_size == 0)
        return fail(FormatError::NotATrace, m_name + ": empty file, not a .gapscope trace");
    const uint8_t* h = bytesAt(0, size_t(std::min<uint64_t>(m_size, kFileHeaderSize)), scratch, st);
    if (!h)
        return fail(FormatError::Io, st.message());
    size_t magicBytes = size_t(std::min<uint64_t>(m_size, sizeof kFileMagic));
    if (std::memcmp(h, kFileMagic, magicBytes) != 0)
        return fail(FormatError::NotATrace, where(0, "not a .gapscope file (bad magic)"));
    if (m_size < kFileHeaderSize)
        return fail(FormatError::Truncated, where(m_size, "cut short inside the file header"));
    uint16_t major = uint16_t(h[8] | h[9] << 8);
    m_minor = uint16_t(h[10] | h[11] << 8);
    if (major != kVersionMajor)
        return fail(FormatError::UnsupportedVersion,
            where(8,
                "format version " + std::to_string(major) + "." + std::to_string(m_minor)
                    + (major > kVersionMajor ? " is newer than" : " is not known to") + " this build (reads "
                    + std::to_string(kVersionMajor) + ".x)" + (major > kVersionMajor ? "; update gapscope" : "")));
    if (m_minor > kVersionMinor)
        m_warnings.push_back(where(10,
            "format version 1." + std::to_string(m_minor) + " is newer than this build (1."
                + std::to_string(kVersionMinor) + "); what it added is skipped"));
    if (uint32_t flags = loadU32(h + 12); flags != 0) {
        m_headerDamaged = true;
        m_warnings.push_back(where(12, "file header flags are " + hex(flags) + ", not 0 (damaged header)"));
    }
    std::string why;
    bool footerPresent = false;
    m_hasIndex = loadIndex(why, footerPresent);
    if (!m_hasIndex) {
        if (footerPresent) {
            m_indexDamaged = true;
            m_warnings.push_back(where(m_size - kFooterSize, why + "; frames read in order instead"));
        }
        m_frames.clear();
        scan(kFileHeaderSize, footerPresent ? m_size - kFooterSize : m_size);
    }
    if (error)
        *error = FormatError::None;
    return Status::ok();
}

bool TraceReader::loadIndex(std::string& why, bool& footerPresent)
{
    footerPresent = false;
    if (m_size < kFileHeaderSize + kFooterSize)
        return false;
    std::string scratch;
    Status st;
    const uint8_t* fb = bytesAt(m_size - kFooterSize, kFooterSize, scratch, st);
    Footer f;
    if (!fb || !decodeFooter(fb, f, &why))
        return false;
    footerPresent = true;
    const uint64_t indexEnd = m_size - kFooterSize;
    if (f.indexOffset < kFileHeaderSize || f.indexOffset > indexEnd || f.indexBytes != indexEnd - f.indexOffset) {
        why = "footer points outside the file";
        return false;
    }
    FrameInfo idx;
    idx.offset = f.indexOffset;
    const uint8_t* hb = bytesAt(idx.offset, kFrameHeaderSize, scratch, st);
    if (!hb || !decodeFrameHeader(hb, idx.header, &why) || idx.header.type != uint8_t(FrameType::Index)
        || idx.end() != indexEnd) {
        why = "index frame unreadable" + (why.empty() ? std::string() : " (" + why + ")");
        return false;
    }
    // A parsed index takes up to about kIndexExpansion times its raw bytes (small repeated strings).
    if (Status s = MemoryBudget::check(uint64_t(idx.header.rawBytes) * kIndexExpansion, where(idx.offset, "index"));
        !s) {
        why = s.message();
        return false;
    }
    ZstdDecompressor zstd;
    if (Status s = readMessage(idx, zstd, scratch, m_index); !s) {
        why = s.message();
        return false;
    }
    return framesFromIndex(idx.offset, why);
}

bool TraceReader::framesFromIndex(uint64_t indexOffset, std::string& why)
{
    std::string scratch;
    Status st;
    uint64_t prevEnd = kFileHeaderSize;
    for (int i = 0; i < m_index.frames_size(); ++i) {
        const auto& e = m_index.frames(i);
        FrameInfo fi;
        fi.offset = e.offset();
        fi.indexEntry = uint32_t(i);
        if (fi.offset < prevEnd || e.frame_bytes() < kFrameHeaderSize || fi.offset > indexOffset
            || e.frame_bytes() > indexOffset - fi.offset) {
            why = "index entry " + std::to_string(i) + " points outside the frames";
            return false;
        }
        // The writer indexes every frame, so the entries tile the frames end to end: a gap is a
        // frame the index does not list, whose events would be lost.
        if (fi.offset != prevEnd) {
            why = "index skips " + std::to_string(fi.offset - prevEnd) + " bytes of frames before entry "
                + std::to_string(i);
            return false;
        }
        const uint8_t* hb = bytesAt(fi.offset, kFrameHeaderSize, scratch, st);
        if (!hb || !decodeFrameHeader(hb, fi.header, &why) || fi.end() != fi.offset + e.frame_bytes()
            || fi.header.type != e.type()) {
            why = "index entry " + std::to_string(i) + " does not match the frame at offset "
                + std::to_string(fi.offset);
            return false;
        }
        prevEnd = fi.end();
        if (!isKnownFrameType(fi.header.type))
            m_warnings.push_back(where(fi.offset,
                "skipped a frame of unknown " + frameName(fi.header.type) + " (" + std::to_string(fi.header.storedBytes)
                    + " bytes; written by a newer gapscope?)"));
        m_frames.push_back(fi);
    }
    if (prevEnd != indexOffset) {
        why = "index lists frames up to offset " + std::to_string(prevEnd) + " of " + std::to_string(indexOffset);
        return false;
    }
    return true;
}

uint64_t TraceReader::resync(uint64_t from, uint64_t to) const
{
    std::string scratch;
    Status st;
    const uint64_t block = 1 << 20;
    for (uint64_t base = from; base + kFrameHeaderSize <= to; base += block) {
        uint64_t len = std::min<uint64_t>(block + kFrameHeaderSize, to - base);
        const uint8_t* p = bytesAt(base, size_t(len), scratch, st);
        if (!p)
            return to;
        for (uint64_t i = 0; i + kFrameHeaderSize <= len && i < block; ++i) {
            FrameHeader h;
            if (p[i] == 'G' && loadU32(p + i) == kFrameMagic && decodeFrameHeader(p + i, h))
                return base + i;
        }
    }
    return to;
}

void TraceReader::scan(uint64_t from, uint64_t to)
{
    std::string scratch;
    Status st;
    uint64_t off = from;
    while (off < to) {
        if (to - off < kFrameHeaderSize) {
            m_missingBytes = kFrameHeaderSize - (to - off);
            m_warnings.push_back(where(off,
                "the file is cut short inside a frame header (" + std::to_string(to - off)
                    + " bytes); no index: read up to the last whole frame"));
            return;
        }
        FrameInfo fi;
        fi.offset = off;
        std::string why;
        const uint8_t* hb = bytesAt(off, kFrameHeaderSize, scratch, st);
        if (!hb || !decodeFrameHeader(hb, fi.header, &why)) {
            uint64_t next = resync(off + 1, to);
            m_damagedBytes += next - off;
            m_warnings.push_back(where(off,
                (hb ? why : st.message()) + "; skipped " + std::to_string(next - off) + " damaged bytes"
                    + (next < to ? " up to the next frame at offset " + std::to_string(next) : "")));
            off = next;
            continue;
        }
        if (fi.end() > to) {
            // Cut short, or a damaged length: a valid frame further on means damage.
            uint64_t next = resync(off + 1, to);
            if (next < to) {
                m_damagedBytes += next - off;
                m_warnings.push_back(where(off,
                    "frame claims " + std::to_string(fi.header.storedBytes)
                        + " bytes, past the end of the file; skipped " + std::to_string(next - off)
                        + " damaged bytes up to the next frame at offset " + std::to_string(next)));
                off = next;
                continue;
            }
            m_missingBytes = fi.end() - to;
            m_missingEvents = fi.header.events;
            std::string events = fi.header.events ? ", " + std::to_string(fi.header.events) + " events" : "";
            m_warnings.push_back(where(off,
                "the file is cut short: the last frame (" + frameName(fi.header.type) + events + ") has "
                    + std::to_string(to - off) + " of its " + std::to_string(fi.end() - off) + " bytes ("
                    + std::to_string(m_missingBytes) + " bytes missing); no index: read up to the last whole frame"));
            return;
        }
        if (!isKnownFrameType(fi.header.type))
            m_warnings.push_back(where(off,
                "skipped a frame of unknown " + frameName(fi.header.type) + " (" + std::to_string(fi.header.storedBytes)
                    + " bytes; written by a newer gapscope?)"));
        m_frames.push_back(fi);
        off = fi.end();
    }
    if (m_frames.empty() || m_frames.back().header.type != uint8_t(FrameType::Index)) {
        m_indexMissing = true;
        if (m_missingBytes == 0)
            m_warnings.push_back(m_name + ": no index at the end (the writer did not finish); read "
                + std::to_string(m_frames.size()) + " whole frames");
    }
}

Status TraceReader::adoptIndex(pb::Index index)
{
    if (m_hasIndex)
        return Status::error(m_name + ": has its index");
    if (m_damagedBytes > 0)
        return Status::error(m_name + ": damaged frames were skipped; no index can be rebuilt");
    if (index.frames_size() != int(m_frames.size()))
        return Status::error(m_name + ": a rebuilt index of " + std::to_string(index.frames_size()) + " entries for "
            + std::to_string(m_frames.size()) + " frames");
    for (size_t i = 0; i < m_frames.size(); ++i) {
        const auto& e = index.frames(int(i));
        const FrameInfo& f = m_frames[i];
        if (e.offset() != f.offset || e.type() != f.header.type || e.frame_bytes() != f.end() - f.offset)
            return Status::error(where(f.offset, "the rebuilt index entry " + std::to_string(i) + " does not match the frame"));
    }
    for (size_t i = 0; i < m_frames.size(); ++i)
        m_frames[i].indexEntry = uint32_t(i);
    m_index = std::move(index);
    m_hasIndex = true;
    return Status::ok();
}

std::vector<const FrameInfo*> TraceReader::chunksOverlapping(int64_t t0, int64_t t1) const
{
    std::vector<const FrameInfo*> out;
    for (const auto& f : m_frames) {
        if (f.header.type != uint8_t(FrameType::Chunk))
            continue;
        if (f.indexEntry != UINT32_MAX) {
            const auto& e = m_index.frames(int(f.indexEntry));
            if (e.event_count() && (e.max_time_ns() <= t0 || e.min_time_ns() >= t1))
                continue;
        }
        out.push_back(&f);
    }
    return out;
}

Status TraceReader::readPayload(const FrameInfo& frame, ZstdDecompressor& zstd, std::string& out) const
{
    const FrameHeader& h = frame.header;
    if (h.codec != uint8_t(Codec::None) && uint64_t(h.rawBytes) > maxRawBytes(h.storedBytes))
        return Status::error(where(frame.offset,
            frameName(h.type) + " frame claims " + std::to_string(h.rawBytes) + " bytes from "
                + std::to_string(h.storedBytes) + " compressed, more than a .gapscope frame ever expands (damaged "
                + "length or a decompression bomb)"));
    MemoryBudget::Reservation reservation;
    if (Status s = MemoryBudget::reserve(uint64_t(h.rawBytes) + h.storedBytes, reservation); !s)
        return Status::error(where(frame.offset, frameName(h.type) + " frame: " + s.message()));
    std::string scratch;
    Status st;
    const uint8_t* p = bytesAt(frame.offset + kFrameHeaderSize, h.storedBytes, m_fd >= 0 ? out : scratch, st);
    if (!p)
        return st;
    uint32_t crc = crc32c(p, h.storedBytes);
    if (kCheckPayloadCrc && crc != h.payloadCrc)
        return Status::error(where(frame.offset,
            frameName(h.type) + " frame payload checksum mismatch (stored " + hex(h.payloadCrc) + ", computed "
                + hex(crc) + ")"));
    if (h.codec == uint8_t(Codec::None)) {
        if (p != reinterpret_cast<const uint8_t*>(out.data()))
            out.assign(reinterpret_cast<const char*>(p), h.storedBytes);
        return Status::ok();
    }
    if (m_fd >= 0) {
        // `out` holds the compressed bytes (pread target); decompress from a copy.
        thread_local std::string compressed;
        compressed.swap(out);
        p = reinterpret_cast<const uint8_t*>(compressed.data());
        Status s = zstd.decompress(p, h.storedBytes, h.rawBytes, out);
        return s ? s : Status::error(where(frame.offset, frameName(h.type) + " frame: " + s.message()));
    }
    Status s = zstd.decompress(p, h.storedBytes, h.rawBytes, out);
    return s ? s : Status::error(where(frame.offset, frameName(h.type) + " frame: " + s.message()));
}

Status TraceReader::readStored(const FrameInfo& frame, std::string& out) const
{
    Status st;
    const uint8_t* p = bytesAt(frame.offset + kFrameHeaderSize, frame.header.storedBytes, out, st);
    if (!p)
        return st;
    if (p != reinterpret_cast<const uint8_t*>(out.data()))
        out.assign(reinterpret_cast<const char*>(p), frame.header.storedBytes);
    uint32_t crc = crc32c(out.data(), out.size());
    if (crc != frame.header.payloadCrc)
        return Status::error(where(frame.offset, frameName(frame.header.type) + " frame payload checksum mismatch"));
    return Status::ok();
}

Status TraceReader::readMessage(
    const FrameInfo& frame, ZstdDecompressor& zstd, std::string& scratch, google::protobuf::Message& message) const
{
    if (Status s = readPayload(frame, zstd, scratch); !s)
        return s;
    MemoryBudget::Reservation reservation;
    if (Status s = MemoryBudget::reserve(uint64_t(scratch.size()) * kParseExpansion, reservation); !s)
        return Status::error(where(frame.offset, frameName(frame.header.type) + " frame: " + s.message()));
    if (!message.ParseFromArray(scratch.data(), int(scratch.size())))
        return Status::error(where(
            frame.offset, frameName(frame.header.type) + " frame: payload does not parse as " + message.GetTypeName()));
    return Status::ok();
}

Status TraceReader::readMessage(const FrameInfo& frame, ZstdDecompressor& zstd, std::string& scratch, pb::Chunk& chunk,
    bool kernelConfigs) const
{
    if (Status s = readPayload(frame, zstd, scratch); !s)
        return s;
    MemoryBudget::Reservation reservation;
    if (Status s = MemoryBudget::reserve(uint64_t(scratch.size()) * kParseExpansion, reservation); !s)
        return Status::error(where(frame.offset, frameName(frame.header.type) + " frame: " + s.message()));
    if (!ChunkParser::parse(scratch.data(), scratch.size(), chunk, kernelConfigs))
        return Status::error(where(
            frame.offset, frameName(frame.header.type) + " frame: payload does not parse as " + chunk.GetTypeName()));
    return Status::ok();
}

} // namespace gapscope::format
