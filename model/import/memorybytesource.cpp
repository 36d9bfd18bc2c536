// SPDX-License-Identifier: MIT
#include "model/import/memorybytesource.h"

#include <algorithm>
#include <cstring>

namespace gapscope::model::importer {

MemoryByteSource::MemoryByteSource(std::string bytes, std::string name)
    : m_bytes(std::move(bytes))
{
    m_path = std::move(name);
    m_fileSize = m_bytes.size();
}

Expected<size_t> MemoryByteSource::read(char* dst, size_t n)
{
    const size_t k = std::min(n, m_bytes.size() - m_pos);
    std::memcpy(dst, m_bytes.data() + m_pos, k);
    m_pos += k;
    return k;
}

} // namespace gapscope::model::importer
