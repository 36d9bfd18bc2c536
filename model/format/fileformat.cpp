// SPDX-License-Identifier: MIT
#include "model/format/fileformat.h"

#include "model/format/crc32c.h"

#include <cstring>

namespace gapscope::format {

const char* toString(FrameType type)
{
    switch (type) {
    case FrameType::Header:
        return "HEADER";
    case FrameType::Chunk:
        return "CHUNK";
    case FrameType::Annotations:
        return "ANNOTATIONS";
    case FrameType::Budget:
        return "BUDGET";
    case FrameType::Classifier:
        return "CLASSIFIER";
    case FrameType::HeaderUpdate:
        return "HEADER_UPDATE";
    case FrameType::Index:
        return "INDEX";
    case FrameType::Overview:
        return "OVERVIEW";
    }
    return "unknown";
}

bool isKnownFrameType(uint8_t type)
{
    return type >= 1 && type <= 8;
}

const char* toString(FormatError e)
{
    switch (e) {
    case FormatError::None:
        return "none";
    case FormatError::Io:
        return "io";
    case FormatError::NotATrace:
        return "not-a-trace";
    case FormatError::UnsupportedVersion:
        return "unsupported-version";
    case FormatError::Corrupt:
        return "corrupt";
    case FormatError::Truncated:
        return "truncated";
    }
    return "?";
}

void encodeFileHeader(uint8_t out[kFileHeaderSize])
{
    std::memcpy(out, kFileMagic, 8);
    out[8] = uint8_t(kVersionMajor);
    out[9] = uint8_t(kVersionMajor >> 8);
    out[10] = uint8_t(kVersionMinor);
    out[11] = uint8_t(kVersionMinor >> 8);
    storeU32(out + 12, 0);
}

void encodeFrameHeader(const FrameHeader& h, uint8_t out[kFrameHeaderSize])
{
    storeU32(out, kFrameMagic);
    out[4] = h.type;
    out[5] = h.codec;
    out[6] = uint8_t(h.flags);
    out[7] = uint8_t(h.flags >> 8);
    storeU32(out + 8, h.storedBytes);
    storeU32(out + 12, h.rawBytes);
    storeU32(out + 16, h.events);
    storeU32(out + 20, 0);
    storeU32(out + 24, h.payloadCrc);
    storeU32(out + 28, crc32c(out, 28));
}

bool decodeFrameHeader(const uint8_t* in, FrameHeader& h, std::string* why)
{
    auto fail = [why](const char* w) {
        if (why)
            *why = w;
        return false;
    };
    if (loadU32(in) != kFrameMagic)
        return fail("no frame starts here (bad frame magic)");
#ifndef GAPSCOPE_FUZZING_NO_CRC // fuzzing builds let mutated headers through to the length checks
    if (loadU32(in + 28) != crc32c(in, 28))
        return fail("frame header checksum mismatch");
#endif
    h.type = in[4];
    h.codec = in[5];
    h.flags = uint16_t(in[6] | in[7] << 8);
    h.storedBytes = loadU32(in + 8);
    h.rawBytes = loadU32(in + 12);
    h.events = loadU32(in + 16);
    h.payloadCrc = loadU32(in + 24);
    if (h.storedBytes > kMaxFrameBytes || h.rawBytes > kMaxFrameBytes)
        return fail("absurd frame length");
    if (h.codec > uint8_t(Codec::Zstd))
        return fail("unknown frame codec");
    if (h.codec == uint8_t(Codec::None) && h.rawBytes != h.storedBytes)
        return fail("uncompressed frame with raw length != stored length");
    return true;
}

void encodeFooter(const Footer& f, uint8_t out[kFooterSize])
{
    storeU64(out, f.indexOffset);
    storeU32(out + 8, f.indexBytes);
    storeU32(out + 12, 0);
    storeU64(out + 16, f.totalEvents);
    storeU32(out + 24, crc32c(out, 24));
    storeU32(out + 28, kFooterMagic);
}

bool decodeFooter(const uint8_t* in, Footer& f, std::string* why)
{
    if (loadU32(in + 28) != kFooterMagic) {
        if (why)
            *why = "no footer (the file was not closed properly or is cut short)";
        return false;
    }
    if (loadU32(in + 24) != crc32c(in, 24)) {
        if (why)
            *why = "footer checksum mismatch";
        return false;
    }
    f.indexOffset = loadU64(in);
    f.indexBytes = loadU32(in + 8);
    f.totalEvents = loadU64(in + 16);
    return true;
}

} // namespace gapscope::format
