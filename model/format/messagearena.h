// SPDX-License-Identifier: MIT
#pragma once

// MessageArena: a protobuf arena over one reusable block, handing out a fresh message per use.
// Generated Clear() deletes sub-messages, so reusing a heap message re-allocates every column on
// every chunk (large allocations go to mmap: page faults each time). On the arena, a chunk's
// columns land in the same, already-touched block every time. Not thread-safe: one per thread.

#include <google/protobuf/arena.h>

#include <memory>

namespace gapscope::format {

class MessageArena {
public:
    explicit MessageArena(size_t blockBytes = size_t(16) << 20)
        : m_block(new char[blockBytes])
        , m_arena(m_block.get(), blockBytes)
    {
    }
    // A new, empty message; the previous one (and everything it owned) is gone.
    template <typename M> M* fresh()
    {
        m_arena.Reset();
        return google::protobuf::Arena::CreateMessage<M>(&m_arena);
    }

private:
    std::unique_ptr<char[]> m_block;
    google::protobuf::Arena m_arena;
};

} // namespace gapscope::format
