// SPDX-License-Identifier: MIT
#pragma once

// ByteBuffer: a growable byte array that, unlike std::string, does not zero what it reserves; the
// encoders append a few bytes per field through a raw cursor (reserve(), then commit()).
// Not thread-safe.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

namespace gapscope::format {

class ByteBuffer {
public:
    size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    const char* data() const { return m_data.get(); }
    std::string_view view() const { return { m_data.get(), m_size }; }
    void clear() { m_size = 0; }
    // Room for `n` more bytes; returns where they go. commit() then says how many were written.
    char* reserve(size_t n)
    {
        if (m_size + n > m_capacity)
            grow(m_size + n);
        return m_data.get() + m_size;
    }
    void commit(char* end) { m_size = size_t(end - m_data.get()); }
    void append(const void* d, size_t n)
    {
        std::memcpy(reserve(n), d, n);
        m_size += n;
    }
    void append(std::string_view s) { append(s.data(), s.size()); }

private:
    void grow(size_t need)
    {
        const size_t cap = std::max(need, std::max<size_t>(256, m_capacity * 2));
        std::unique_ptr<char[]> d(new char[cap]);
        if (m_size)
            std::memcpy(d.get(), m_data.get(), m_size);
        m_data = std::move(d);
        m_capacity = cap;
    }
    std::unique_ptr<char[]> m_data;
    size_t m_size = 0;
    size_t m_capacity = 0;
};

} // namespace gapscope::format
