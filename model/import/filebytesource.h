// SPDX-License-Identifier: MIT
#pragma once

// FileByteSource: the plain bytes of a file through read(2), with sequential read-ahead advice.
// Threading: one thread at a time.

#include "model/import/bytesource.h"

namespace gapscope::model::importer {

class FileByteSource final : public ByteSource {
public:
    ~FileByteSource() override;
    static Expected<std::unique_ptr<ByteSource>> open(const std::string& path);

    Expected<size_t> read(char* dst, size_t n) override;
    uint64_t fileBytesRead() const override { return m_read; }
    bool compressed() const override { return false; }

private:
    FileByteSource() = default;
    int m_fd = -1;
    uint64_t m_read = 0;
};

} // namespace gapscope::model::importer
