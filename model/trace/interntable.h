// SPDX-License-Identifier: MIT
#pragma once

// InternTable: finds the id of a string among a vector of strings without storing the strings twice
// (open addressing over ids; the vector stays the owner). Internal to the trace core.
// Not thread-safe for insert; find() is safe concurrently with other finds.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gapscope::model {

class InternTable {
public:
    std::optional<uint32_t> find(std::string_view s, const std::vector<std::string>& strings) const;
    // Registers strings[id] (which must already be in the vector). Duplicates keep the first id.
    void insert(uint32_t id, const std::vector<std::string>& strings);
    void rebuild(const std::vector<std::string>& strings);
    size_t memoryBytes() const { return m_slots.capacity() * sizeof(uint32_t); }

private:
    static uint64_t hash(std::string_view s);
    void grow(const std::vector<std::string>& strings);
    std::vector<uint32_t> m_slots; // id + 1; 0 = empty
    size_t m_count = 0;
};

} // namespace gapscope::model
