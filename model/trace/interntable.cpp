// SPDX-License-Identifier: MIT
#include "model/trace/interntable.h"

namespace gapscope::model {

uint64_t InternTable::hash(std::string_view s)
{
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s)
        h = (h ^ c) * 1099511628211ull;
    return h ^ (h >> 29);
}

std::optional<uint32_t> InternTable::find(std::string_view s, const std::vector<std::string>& strings) const
{
    if (m_slots.empty())
        return std::nullopt;
    const size_t mask = m_slots.size() - 1;
    for (size_t i = size_t(hash(s)) & mask;; i = (i + 1) & mask) {
        uint32_t v = m_slots[i];
        if (v == 0)
            return std::nullopt;
        if (strings[v - 1] == s)
            return v - 1;
    }
}

void InternTable::insert(uint32_t id, const std::vector<std::string>& strings)
{
    if ((m_count + 1) * 2 > m_slots.size())
        grow(strings);
    const size_t mask = m_slots.size() - 1;
    const std::string& s = strings[id];
    for (size_t i = size_t(hash(s)) & mask;; i = (i + 1) & mask) {
        uint32_t v = m_slots[i];
        if (v == 0) {
            m_slots[i] = id + 1;
            ++m_count;
            return;
        }
        if (strings[v - 1] == s)
            return;
    }
}

void InternTable::grow(const std::vector<std::string>& strings)
{
    std::vector<uint32_t> old;
    old.swap(m_slots);
    m_slots.assign(old.empty() ? 64 : old.size() * 2, 0);
    m_count = 0;
    for (uint32_t v : old)
        if (v)
            insert(v - 1, strings);
}

void InternTable::rebuild(const std::vector<std::string>& strings)
{
    m_slots.clear();
    m_count = 0;
    size_t cap = 64;
    while (cap < strings.size() * 2 + 2)
        cap *= 2;
    m_slots.assign(cap, 0);
    for (uint32_t id = 0; id < strings.size(); ++id)
        insert(id, strings);
}

} // namespace gapscope::model
