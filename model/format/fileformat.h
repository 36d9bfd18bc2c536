// SPDX-License-Identifier: MIT
#pragma once

// The framing of a .gapscope file. All integers little-endian.
//
//   file   := FileHeader Frame* Footer
//   FileHeader (16 bytes): magic "GAPSCOPE", u16 major, u16 minor, u32 flags (0)
//   Frame  := FrameHeader payload
//   FrameHeader (32 bytes):
//      0 u32 magic "GSFR"     4 u8 type    5 u8 codec    6 u16 flags (0)
//      8 u32 stored bytes    12 u32 raw bytes (after decompression)
//     16 u32 events (CHUNK frames: events inside, so a cut file can say what it lost; else 0)
//     20 u32 reserved (0)   24 u32 CRC-32C of the stored payload   28 u32 CRC-32C of bytes 0..27
//   payload: a protobuf message (see trace.proto), zstd-compressed when codec == 1
//   Footer (32 bytes): 0 u64 index frame offset, 8 u32 index frame bytes, 12 u32 flags (0),
//     16 u64 total events, 24 u32 CRC-32C of bytes 0..23, 28 u32 magic "GSEF"
//
// Frame payloads by type: HEADER FileHeader (first frame), CHUNK Chunk, ANNOTATIONS AnnotationSet,
// BUDGET BudgetSettings, CLASSIFIER ClassifierTable, HEADER_UPDATE FileHeader (replaces the header;
// the last one wins), OVERVIEW Overview (per-lane totals and node summaries, every step, the summed
// counters, every graph-node entry; once, before the index), INDEX Index (last frame). Readers skip
// frame types they do not know.
//
// Versioning: the major version changes only when an older reader could misread a file; a reader
// rejects a major version it does not know. Minor versions add frame types or fields only
// (1.1: every chunk repeats the dictionary entries it uses, so it decodes without the chunks before it;
// 1.2: the OVERVIEW frame).
// Header bytes 12-15 (flags) must be 0: a reader warns and validate fails otherwise.
//
// Trust: nothing a file says is allocated before it is checked against what the file can hold. A
// frame expands at most TraceReader::kMaxCompressionRatio times; index counts must match the frame
// headers (else the index is damaged and frames are read in order); every buffer and the trace
// itself are checked against the MemoryBudget.

#include <cstddef>
#include <cstdint>
#include <string>

namespace gapscope::format {

constexpr char kFileMagic[8] = { 'G', 'A', 'P', 'S', 'C', 'O', 'P', 'E' };
constexpr uint16_t kVersionMajor = 1;
constexpr uint16_t kVersionMinor = 2; // 1.1: chunks repeat the dictionary entries they use; 1.2: OVERVIEW
constexpr size_t kFileHeaderSize = 16;
constexpr size_t kFrameHeaderSize = 32;
constexpr size_t kFooterSize = 32;
constexpr uint32_t kFrameMagic = 0x52465347u; // "GSFR"
constexpr uint32_t kFooterMagic = 0x46455347u; // "GSEF"
// No frame is ever larger than this, stored or decompressed (a length beyond it is damage).
constexpr uint32_t kMaxFrameBytes = 512u << 20;

enum class FrameType : uint8_t {
    Header = 1,
    Chunk = 2,
    Annotations = 3,
    Budget = 4,
    Classifier = 5,
    HeaderUpdate = 6,
    Index = 7,
    Overview = 8,
};
const char* toString(FrameType type); // "unknown" for values this build does not know
bool isKnownFrameType(uint8_t type);

enum class Codec : uint8_t { None = 0, Zstd = 1 };

struct FrameHeader {
    uint8_t type = 0;
    uint8_t codec = 0;
    uint16_t flags = 0;
    uint32_t storedBytes = 0;
    uint32_t rawBytes = 0;
    uint32_t events = 0;
    uint32_t payloadCrc = 0;
};

struct Footer {
    uint64_t indexOffset = 0;
    uint32_t indexBytes = 0;
    uint64_t totalEvents = 0;
};

// Kinds of failure a reader reports, so callers (and tests) can tell them apart.
enum class FormatError { None, Io, NotATrace, UnsupportedVersion, Corrupt, Truncated };
const char* toString(FormatError e);

void encodeFileHeader(uint8_t out[kFileHeaderSize]);
void encodeFrameHeader(const FrameHeader& h, uint8_t out[kFrameHeaderSize]);
void encodeFooter(const Footer& f, uint8_t out[kFooterSize]);

// Decoders return false when the bytes are not a valid header/footer; `why` says what is wrong.
bool decodeFrameHeader(const uint8_t* in, FrameHeader& h, std::string* why = nullptr);
bool decodeFooter(const uint8_t* in, Footer& f, std::string* why = nullptr);

inline uint32_t loadU32(const uint8_t* p)
{
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
inline uint64_t loadU64(const uint8_t* p)
{
    return uint64_t(loadU32(p)) | uint64_t(loadU32(p + 4)) << 32;
}
inline void storeU32(uint8_t* p, uint32_t v)
{
    p[0] = uint8_t(v);
    p[1] = uint8_t(v >> 8);
    p[2] = uint8_t(v >> 16);
    p[3] = uint8_t(v >> 24);
}
inline void storeU64(uint8_t* p, uint64_t v)
{
    storeU32(p, uint32_t(v));
    storeU32(p + 4, uint32_t(v >> 32));
}

} // namespace gapscope::format
