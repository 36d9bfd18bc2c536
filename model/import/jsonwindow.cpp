// SPDX-License-Identifier: MIT
#include "model/import/jsonwindow.h"

#include <algorithm>
#include <cstring>

namespace gapscope::model::importer {

JsonWindow::JsonWindow(ByteSource& source, size_t windowBytes)
    : m_source(source)
{
    growWindow(windowBytes);
}

void JsonWindow::growWindow(size_t bytes)
{
    if (bytes <= m_window && m_buf)
        return;
    const size_t alloc = 1 + bytes + kPadding;
    auto buf = std::make_unique<char[]>(alloc);
    if (m_buf && size() > 0)
        std::memcpy(buf.get() + 1, data(), size());
    m_end = 1 + size();
    m_begin = 1;
    m_buf = std::move(buf);
    m_alloc = alloc;
    m_window = bytes;
}

Status JsonWindow::fill(size_t want)
{
    if (want > m_window)
        growWindow(want);
    if (size() >= want || m_eof)
        return Status::ok();
    if (m_begin > 1) { // compact: move the unconsumed bytes to the front
        const size_t n = size();
        std::memmove(m_buf.get() + 1, data(), n);
        m_begin = 1;
        m_end = 1 + n;
    }
    while (size() < want && !m_eof) {
        const size_t room = 1 + m_window - m_end;
        auto r = m_source.read(m_buf.get() + m_end, room);
        if (!r)
            return r.status();
        if (*r == 0)
            m_eof = true;
        m_end += *r;
    }
    return Status::ok();
}

void JsonWindow::consume(size_t n)
{
    n = std::min(n, size());
    m_begin += n;
    m_offset += n;
}

} // namespace gapscope::model::importer

namespace gapscope::model::importer {

void JsonWindow::prepend(const char* bytes, size_t n)
{
    const size_t have = size();
    if (have + n > m_window)
        growWindow(have + n);
    std::memmove(m_buf.get() + 1 + n, data(), have);
    std::memcpy(m_buf.get() + 1, bytes, n);
    m_begin = 1;
    m_end = 1 + n + have;
    m_offset -= n;
}

std::unique_ptr<char[]> JsonWindow::detachFront(size_t n, char** begin, size_t* alloc)
{
    n = std::min(n, size());
    std::unique_ptr<char[]> fresh(new char[m_alloc]); // no zero-fill: only the bytes written are read
    const size_t rest = size() - n;
    std::memcpy(fresh.get() + 1, data() + n, rest);
    *begin = data();
    *alloc = m_alloc;
    m_offset += n;
    m_begin = 1;
    m_end = 1 + rest;
    std::swap(fresh, m_buf);
    return fresh;
}

} // namespace gapscope::model::importer
