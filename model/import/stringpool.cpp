// SPDX-License-Identifier: MIT
#include "model/import/stringpool.h"

#include <cstring>

namespace gapscope::model::importer {

namespace {
constexpr size_t kChunkBytes = 1 << 20;

inline uint64_t load64(const char* p)
{
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

inline uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}
} // namespace

StringPool::StringPool()
    : m_table(1024, Slot { 0, 0 })
{
    m_strings.push_back(std::string_view());
}

// 8 bytes at a time multiply-xor, in four independent lanes over 32-byte blocks (kernel names are long
// templated signatures: one dependent chain would cost a multiply latency per 8 bytes); good enough
// spread for kernel names, far cheaper than std::hash.
uint64_t StringPool::hash(std::string_view s)
{
    constexpr uint64_t kMul = 0x100000001B3ULL;
    const char* p = s.data();
    const size_t n = s.size();
    uint64_t h0 = 0x9E3779B97F4A7C15ULL ^ (n * kMul), h1 = 0xC2B2AE3D27D4EB4FULL, h2 = 0x165667B19E3779F9ULL,
             h3 = 0x27D4EB2F165667C5ULL;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        h0 = (h0 ^ load64(p + i)) * kMul + (h0 >> 29);
        h1 = (h1 ^ load64(p + i + 8)) * kMul + (h1 >> 29);
        h2 = (h2 ^ load64(p + i + 16)) * kMul + (h2 >> 29);
        h3 = (h3 ^ load64(p + i + 24)) * kMul + (h3 >> 29);
    }
    uint64_t h = h0 ^ mix(h1) ^ (mix(h2) >> 1) ^ (mix(h3) >> 2);
    for (; i + 8 <= n; i += 8)
        h = (h ^ load64(p + i)) * kMul + (h >> 29);
    uint64_t tail = 0;
    if (n > i)
        std::memcpy(&tail, p + i, n - i);
    h = (h ^ tail) * kMul;
    return mix(h);
}

std::string_view StringPool::store(std::string_view s)
{
    if (s.size() > kChunkBytes / 4) { // large strings get their own chunk
        m_chunks.push_back(std::make_unique<char[]>(s.size()));
        std::memcpy(m_chunks.back().get(), s.data(), s.size());
        m_arenaBytes += s.size();
        auto view = std::string_view(m_chunks.back().get(), s.size());
        // keep the current small-string chunk last so later strings keep filling it
        if (m_chunks.size() >= 2)
            std::swap(m_chunks[m_chunks.size() - 1], m_chunks[m_chunks.size() - 2]);
        return view;
    }
    if (m_chunks.empty() || m_chunkUsed + s.size() > m_chunkSize) {
        m_chunks.push_back(std::make_unique<char[]>(kChunkBytes));
        m_chunkUsed = 0;
        m_chunkSize = kChunkBytes;
        m_arenaBytes += kChunkBytes;
    }
    char* dst = m_chunks.back().get() + m_chunkUsed;
    std::memcpy(dst, s.data(), s.size());
    m_chunkUsed += s.size();
    return std::string_view(dst, s.size());
}

uint32_t StringPool::intern(std::string_view s, uint64_t h)
{
    if (s.empty())
        return 0;
    size_t mask = m_table.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        Slot& slot = m_table[i];
        if (slot.id == 0) {
            const auto id = static_cast<uint32_t>(m_strings.size());
            m_strings.push_back(store(s));
            slot = Slot { h, id };
            if (m_strings.size() * 2 > m_table.size())
                grow();
            return id;
        }
        if (slot.hash == h && m_strings[slot.id] == s)
            return slot.id;
    }
}

void StringPool::grow()
{
    std::vector<Slot> table(m_table.size() * 2, Slot { 0, 0 });
    const size_t mask = table.size() - 1;
    for (const Slot& slot : m_table) {
        if (slot.id == 0)
            continue;
        size_t i = slot.hash & mask;
        while (table[i].id != 0)
            i = (i + 1) & mask;
        table[i] = slot;
    }
    m_table.swap(table);
}

size_t StringPool::memoryBytes() const
{
    return m_arenaBytes + m_table.capacity() * sizeof(Slot) + m_strings.capacity() * sizeof(std::string_view);
}

} // namespace gapscope::model::importer
