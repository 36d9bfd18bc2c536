// SPDX-License-Identifier: MIT
#pragma once

// MemoryByteSource: a ByteSource over bytes already in memory (fuzzing, tests, data received over a
// socket). `compressed` only changes how byte offsets are described in messages.
// Threading: one thread at a time.

#include "model/import/bytesource.h"

#include <string>

namespace gapscope::model::importer {

class MemoryByteSource final : public ByteSource {
public:
    MemoryByteSource(std::string bytes, std::string name);

    Expected<size_t> read(char* dst, size_t n) override;
    uint64_t fileBytesRead() const override { return m_pos; }
    bool compressed() const override { return false; }

private:
    std::string m_bytes;
    size_t m_pos = 0;
};

} // namespace gapscope::model::importer
