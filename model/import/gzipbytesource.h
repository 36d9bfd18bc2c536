// SPDX-License-Identifier: MIT
#pragma once

// GzipByteSource: streams the decompressed bytes of a gzip file through an Inflater (ISA-L or zlib,
// inflater.h), 256 KiB of compressed input at a time, so memory stays constant whatever the file
// size. Concatenated gzip members are read one after the other; anything else after a member is
// ignored. A stream cut short (the input ends inside a member and nothing more comes out) reads as
// ended and reports truncated(); corrupt compressed data is an error naming the compressed byte
// offset. ByteSource::open picks the inflater (ISA-L unless the build lacks it or
// GAPSCOPE_IMPORT_INFLATE=zlib). Threading: one thread at a time.

#include "model/import/bytesource.h"
#include "model/import/inflater.h"

#include <memory>
#include <vector>

namespace gapscope::model::importer {

class GzipByteSource final : public ByteSource {
public:
    ~GzipByteSource() override;
    static Expected<std::unique_ptr<ByteSource>> open(const std::string& path, std::unique_ptr<Inflater> inflater);

    Expected<size_t> read(char* dst, size_t n) override;
    uint64_t fileBytesRead() const override { return m_read; }
    bool compressed() const override { return true; }
    bool truncated() const override { return m_truncated; }

private:
    GzipByteSource() = default;
    Status refill();
    std::unique_ptr<Inflater> m_inflater;
    std::vector<uint8_t> m_input;
    const uint8_t* m_next = nullptr; // unread input in m_input
    size_t m_avail = 0;
    int m_fd = -1;
    uint64_t m_read = 0;
    bool m_inputEnded = false;
    bool m_streamEnded = false;
    bool m_truncated = false;
};

} // namespace gapscope::model::importer
