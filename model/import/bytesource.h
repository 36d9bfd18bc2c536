// SPDX-License-Identifier: MIT
#pragma once

// ByteSource: a forward-only stream of a file's bytes, decompressed on the fly when the file is gzip
// (.json.gz: one or several concatenated gzip members). Readers pull bytes in windows, so a file of
// any size is read with bounded memory. open() sniffs the content (gzip magic), not the file name.
//
// Threading: one thread at a time.

#include "model/base/status.h"

#include <cstdint>
#include <memory>
#include <string>

namespace gapscope::model::importer {

class ByteSource {
public:
    virtual ~ByteSource() = default;

    // Reads up to `n` bytes into `dst`; 0 means the end of the stream. A gzip stream that stops
    // before its end reads as ended and reports truncated().
    virtual Expected<size_t> read(char* dst, size_t n) = 0;
    // Bytes of the underlying file consumed so far and its size (for progress).
    virtual uint64_t fileBytesRead() const = 0;
    uint64_t fileSize() const { return m_fileSize; }
    virtual bool compressed() const = 0;
    virtual bool truncated() const { return false; }
    const std::string& path() const { return m_path; }

    static Expected<std::unique_ptr<ByteSource>> open(const std::string& path);
    // True when the first bytes of `path` are a gzip header.
    static bool isGzip(const std::string& path);

protected:
    std::string m_path;
    uint64_t m_fileSize = 0;
};

} // namespace gapscope::model::importer
