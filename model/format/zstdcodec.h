// SPDX-License-Identifier: MIT
#pragma once

// Reusable zstd contexts for frame payloads. One context per thread: a context is not thread-safe,
// but reusing it keeps compression and decompression free of per-frame allocation.

#include "model/base/status.h"

#include <cstddef>
#include <string>

namespace gapscope::format {

class ZstdCompressor {
public:
    explicit ZstdCompressor(int level = 3);
    ~ZstdCompressor();
    ZstdCompressor(const ZstdCompressor&) = delete;
    ZstdCompressor& operator=(const ZstdCompressor&) = delete;
    void setLevel(int level) { m_level = level; }
    int level() const { return m_level; }
    // Compresses `size` bytes into `out` (resized to the compressed length).
    Status compress(const void* data, size_t size, std::string& out);

private:
    void* m_ctx;
    int m_level;
};

class ZstdDecompressor {
public:
    ZstdDecompressor();
    ~ZstdDecompressor();
    ZstdDecompressor(const ZstdDecompressor&) = delete;
    ZstdDecompressor& operator=(const ZstdDecompressor&) = delete;
    // Decompresses exactly `rawSize` bytes into `out`; anything else is an error.
    Status decompress(const void* data, size_t size, size_t rawSize, std::string& out);
    // Decompresses one or more frames whose size is not known in advance (a Perfetto
    // zstd_compressed_packets payload) into `out`; more than `maxSize` bytes is an error.
    Status decompressAll(const void* data, size_t size, size_t maxSize, std::string& out);

private:
    void* m_ctx;
};

} // namespace gapscope::format
