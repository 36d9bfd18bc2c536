// SPDX-License-Identifier: MIT
#pragma once

// JsonWindow: a sliding window over a ByteSource for streaming JSON parsing. The unconsumed bytes sit
// in one contiguous buffer with room for simdjson's padding after them and one spare byte before them,
// so a reader can wrap a run of array elements as "[" + bytes + "]" in place, without copying.
// Memory is the window size (plus what a single oversized value forces it to grow to), whatever the
// size of the stream.
//
// Invariants: data()[-1] and data()[size() .. size() + kPadding) are writable; offset() is the stream
// offset of data()[0]. Threading: one thread at a time.

#include "model/import/bytesource.h"

#include <cstdint>
#include <memory>

namespace gapscope::model::importer {

class JsonWindow {
public:
    static constexpr size_t kPadding = 128; // >= SIMDJSON_PADDING

    JsonWindow(ByteSource& source, size_t windowBytes);

    char* data() { return m_buf.get() + m_begin; }
    size_t size() const { return m_end - m_begin; }
    uint64_t offset() const { return m_offset; }
    // The stream has ended and every byte of it is in the window (or consumed).
    bool eof() const { return m_eof; }
    size_t windowBytes() const { return m_window; }

    // Reads until size() >= want or the stream ends; grows the buffer when `want` exceeds it.
    Status fill(size_t want);
    // Fills up to the window size.
    Status fill() { return fill(m_window); }
    void consume(size_t n);
    // Puts `n` bytes that were consumed back in front of the window (they started at stream offset
    // offset() - n).
    void prepend(const char* bytes, size_t n);
    // Bytes writable from `p` (inside the buffer) to the end of the allocation, padding included.
    size_t capacityFrom(const char* p) const { return static_cast<size_t>(m_buf.get() + m_alloc - p); }
    void growWindow(size_t bytes);

    // Hands the buffer holding the first `n` bytes of the window (n < size()) to the caller, without
    // copying them: the window continues in a new buffer with the rest. `*begin` points at those bytes
    // in the returned buffer, with one writable byte before them and at least kPadding writable bytes
    // after the n-th (their content is the old tail: the caller may overwrite it); `*alloc` is its size.
    std::unique_ptr<char[]> detachFront(size_t n, char** begin, size_t* alloc);

private:
    ByteSource& m_source;
    std::unique_ptr<char[]> m_buf;
    size_t m_alloc = 0;
    size_t m_window = 0;
    size_t m_begin = 1;
    size_t m_end = 1;
    uint64_t m_offset = 0;
    bool m_eof = false;
};

} // namespace gapscope::model::importer
