// SPDX-License-Identifier: MIT
// libFuzzer target for the index of a .gapscope file: the input becomes the INDEX frame of a real
// file (a small synth capture made once), behind valid frames and a valid footer, so every count,
// offset and dictionary of the index is fuzzed against real chunks. Input byte 0 picks the codec:
// even, the rest is the raw Index message; odd, bytes 1-4 are the raw length the frame claims and
// the rest its zstd payload (decompression bombs, lying lengths).
#include "fuzzbudget.h"

#include "model/format/crc32c.h"
#include "model/format/fileformat.h"
#include "model/io/tracefile.h"
#include "model/synth/synth.h"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

using namespace gapscope;

namespace {

// The synth capture's bytes before its index frame, and its event count.
struct Prefix {
    std::string bytes;
    uint64_t events = 0;
};

const Prefix& prefix()
{
    static const Prefix p = [] {
        Prefix out;
        char path[] = "/tmp/gapscope-fuzz-index-XXXXXX";
        const int fd = ::mkstemp(path);
        if (fd < 0)
            __builtin_trap();
        ::close(fd);
        model::SynthOptions o;
        o.ranks = 2;
        o.steps = 4;
        o.kernelsPerStep = 60;
        o.seed = 7;
        if (!model::synthesizeToFile(o, path))
            __builtin_trap();
        std::ifstream in(path, std::ios::binary);
        std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::remove(path);
        format::Footer f;
        if (file.size() < format::kFooterSize
            || !format::decodeFooter(
                reinterpret_cast<const uint8_t*>(file.data()) + file.size() - format::kFooterSize, f))
            __builtin_trap();
        out.bytes = file.substr(0, size_t(f.indexOffset));
        out.events = f.totalEvents;
        return out;
    }();
    return p;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size == 0)
        return 0;
    const Prefix& p = prefix();
    const bool zstd = data[0] & 1;
    if (zstd && size < 5)
        return 0;
    const size_t skip = zstd ? 5 : 1;
    const std::string payload(reinterpret_cast<const char*>(data) + skip, size - skip);
    format::FrameHeader h;
    h.type = uint8_t(format::FrameType::Index);
    h.codec = uint8_t(zstd ? format::Codec::Zstd : format::Codec::None);
    h.storedBytes = uint32_t(payload.size());
    h.rawBytes = zstd ? format::loadU32(data + 1) : h.storedBytes;
    h.payloadCrc = format::crc32c(payload.data(), payload.size());
    uint8_t header[format::kFrameHeaderSize];
    format::encodeFrameHeader(h, header);
    format::Footer f;
    f.indexOffset = p.bytes.size();
    f.indexBytes = uint32_t(format::kFrameHeaderSize + payload.size());
    f.totalEvents = p.events;
    uint8_t footer[format::kFooterSize];
    format::encodeFooter(f, footer);
    std::string file = p.bytes;
    file.append(reinterpret_cast<const char*>(header), sizeof header);
    file += payload;
    file.append(reinterpret_cast<const char*>(footer), sizeof footer);
    model::ReadOptions options;
    options.threads = 2;
    auto trace = model::readTraceBuffer(std::move(file), "fuzz", options);
    if (!trace && trace.error().empty())
        __builtin_trap();
    // The chunks are intact: whatever the index says, every event of the file is kept.
    if (trace && trace->eventCount() != p.events)
        __builtin_trap();
    return 0;
}
