// SPDX-License-Identifier: MIT
#pragma once

// FrameDecoder splits a byte stream into frame payloads (u32 LE length + payload, see framing.h).
// Bytes are appended as they arrive; next() hands out whole payloads in order. A length above the
// limit is an error the decoder stays in (the connection must be closed): it never buffers more
// than limit + one read of bytes. The limit can change between frames (a larger one once a peer
// has authenticated or registered).
//
// Invariants: the view returned by next() stays valid until the next append()/next() call.
// Threading: one instance per connection, used by one thread.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gapscope::capture {

class FrameDecoder {
public:
    enum class Result { Frame, NeedMore, TooLarge };

    explicit FrameDecoder(uint32_t maxFrameBytes);

    void setLimit(uint32_t maxFrameBytes) { m_limit = maxFrameBytes; }
    uint32_t limit() const { return m_limit; }

    void append(const char* data, size_t size);
    // Space to read into directly (avoids a copy): write at most `size` bytes, then commit(n).
    char* prepare(size_t size);
    void commit(size_t n);

    Result next(std::string_view& payload);

    // Length announced by the frame that exceeded the limit (after TooLarge).
    uint32_t rejectedLength() const { return m_rejected; }
    size_t buffered() const { return m_buf.size() - m_pos; }
    // Memory the decoder holds (its buffer's capacity), and giving it back when nothing is buffered.
    size_t memoryBytes() const { return m_buf.capacity(); }
    void releaseIdle();
    // Drops everything buffered (the connection is being closed) and gives the memory back.
    void discard();

private:
    void compact();

    std::string m_buf;
    size_t m_pos = 0; // start of unread bytes
    size_t m_prepared = 0; // m_buf size before prepare()
    uint32_t m_limit;
    uint32_t m_rejected = 0;
};

} // namespace gapscope::capture
