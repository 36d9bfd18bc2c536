// SPDX-License-Identifier: MIT
#pragma once

// StringPool: interns strings for one import source (one file, one nsys report) before the trace is
// assembled. Ids are dense from 1; id 0 is the empty string. Strings live in a chunked arena (no
// per-string allocation) and are found through an open-addressing table of (hash, id) pairs, so
// interning a kernel name already seen costs one hash of its bytes and, usually, one comparison.
//
// Invariants: str(intern(s)) == s; ids never change; the string_views returned by str() stay valid
// for the pool's lifetime (arena chunks are never moved).
// Threading: not thread-safe; one pool per parsing thread.

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace gapscope::model::importer {

class StringPool {
public:
    StringPool();

    uint32_t intern(std::string_view s) { return intern(s, hash(s)); }
    // With `h` == hash(s) computed beforehand (on another thread, say).
    uint32_t intern(std::string_view s, uint64_t h);
    std::string_view str(uint32_t id) const { return m_strings[id]; }
    size_t size() const { return m_strings.size(); } // including id 0
    size_t memoryBytes() const;

    static uint64_t hash(std::string_view s);

private:
    struct Slot {
        uint64_t hash;
        uint32_t id; // 0 = empty slot
    };
    void grow();
    std::string_view store(std::string_view s);

    std::vector<std::string_view> m_strings;
    std::vector<Slot> m_table;
    std::vector<std::unique_ptr<char[]>> m_chunks;
    size_t m_chunkUsed = 0;
    size_t m_chunkSize = 0;
    size_t m_arenaBytes = 0;
};

} // namespace gapscope::model::importer
