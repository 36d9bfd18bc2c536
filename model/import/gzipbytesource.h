// SPDX-License-Identifier: MIT
#pragma once

// GzipByteSource: streams the decompressed bytes of a gzip file with zlib, 256 KiB of compressed
// input at a time, so memory stays constant whatever the file size. ByteSource::open uses it when the
// build has no ISA-L (IsalByteSource, faster) or GAPSCOPE_IMPORT_INFLATE=zlib is set. Concatenated gzip members are
// read one after the other. A stream cut short reads as ended and reports truncated(); corrupt
// compressed data is an error naming the compressed byte offset.
// Threading: one thread at a time.

#include "model/import/bytesource.h"

#include <memory>

namespace gapscope::model::importer {

class GzipByteSource final : public ByteSource {
public:
    ~GzipByteSource() override;
    static Expected<std::unique_ptr<ByteSource>> open(const std::string& path);

    Expected<size_t> read(char* dst, size_t n) override;
    uint64_t fileBytesRead() const override { return m_read; }
    bool compressed() const override { return true; }
    bool truncated() const override { return m_truncated; }

private:
    GzipByteSource() = default;
    Status refill();
    struct Impl;
    std::unique_ptr<Impl> m_impl;
    int m_fd = -1;
    uint64_t m_read = 0;
    bool m_inputEnded = false;
    bool m_streamEnded = false;
    bool m_truncated = false;
};

} // namespace gapscope::model::importer
