// SPDX-License-Identifier: MIT
// libFuzzer target for the .gapscope framing with the size fields free: the input is a file whose
// checksums are recomputed before it is read (each frame header's, its payload's when the payload
// lies inside the input, the footer's), so mutated stored/raw/event lengths, types and codecs reach
// the length checks, the decompressor and the index-trust rules in every build, CRC-checking or not.
#include "fuzzbudget.h"

#include "model/format/crc32c.h"
#include "model/format/fileformat.h"
#include "model/io/tracefile.h"

#include <cstdint>
#include <string>

using namespace gapscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    std::string bytes(reinterpret_cast<const char*>(data), size);
    auto* b = reinterpret_cast<uint8_t*>(bytes.data());
    for (size_t i = format::kFileHeaderSize; i + format::kFrameHeaderSize <= size; ++i) {
        if (format::loadU32(b + i) != format::kFrameMagic)
            continue;
        const uint64_t stored = format::loadU32(b + i + 8);
        const size_t payload = i + format::kFrameHeaderSize;
        if (stored <= size - payload)
            format::storeU32(b + i + 24, format::crc32c(b + payload, size_t(stored)));
        format::storeU32(b + i + 28, format::crc32c(b + i, 28));
    }
    if (size >= format::kFileHeaderSize + format::kFooterSize && format::loadU32(b + size - 4) == format::kFooterMagic)
        format::storeU32(b + size - 8, format::crc32c(b + size - format::kFooterSize, 24));
    model::ReadOptions options;
    options.threads = 2;
    auto trace = model::readTraceBuffer(std::move(bytes), "fuzz", options);
    if (!trace && trace.error().empty())
        __builtin_trap(); // errors must say what is wrong
    if (trace && trace->eventCount() > size * 64)
        __builtin_trap(); // more events than the bytes can hold
    return 0;
}
