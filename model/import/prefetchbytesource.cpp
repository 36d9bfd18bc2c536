// SPDX-License-Identifier: MIT
#include "model/import/prefetchbytesource.h"

#include <algorithm>
#include <cstring>

namespace gapscope::model::importer {

PrefetchByteSource::PrefetchByteSource(std::unique_ptr<ByteSource> inner, size_t blockBytes, size_t depth)
    : m_inner(std::move(inner))
    , m_blockBytes(blockBytes)
    , m_depth(std::max<size_t>(1, depth))
    , m_compressed(m_inner->compressed())
{
    m_path = m_inner->path();
    m_fileSize = m_inner->fileSize();
    m_thread = std::thread([this] { run(); });
}

PrefetchByteSource::~PrefetchByteSource()
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_stop = true;
    }
    m_cv.notify_all();
    m_thread.join();
}

void PrefetchByteSource::run()
{
    for (;;) {
        std::vector<char> buf;
        {
            std::unique_lock<std::mutex> lock(m_mutex);
            m_cv.wait(lock, [this] { return m_stop || m_ready.size() < m_depth; });
            if (m_stop)
                return;
            if (!m_free.empty()) {
                buf = std::move(m_free.back());
                m_free.pop_back();
            }
        }
        buf.resize(m_blockBytes);
        auto n = m_inner->read(buf.data(), buf.size());
        std::lock_guard<std::mutex> lock(m_mutex);
        if (!n || *n == 0) {
            m_status = n ? Status::ok() : n.status();
            m_innerTruncated = m_inner->truncated();
            m_finished = true;
            m_cv.notify_all();
            return;
        }
        m_ready.push_back(Block { std::move(buf), *n, m_inner->fileBytesRead() });
        m_cv.notify_all();
    }
}

bool PrefetchByteSource::nextBlock()
{
    std::unique_lock<std::mutex> lock(m_mutex);
    if (!m_current.data.empty())
        m_free.push_back(std::move(m_current.data));
    m_current = Block {};
    m_pos = 0;
    m_cv.notify_all();
    m_cv.wait(lock, [this] { return !m_ready.empty() || m_finished; });
    if (m_ready.empty()) {
        m_truncated = m_innerTruncated;
        return false;
    }
    m_current = std::move(m_ready.front());
    m_ready.pop_front();
    m_cv.notify_all();
    return true;
}

Expected<size_t> PrefetchByteSource::read(char* dst, size_t n)
{
    size_t done = 0;
    while (done < n) {
        if (m_pos == m_current.size) {
            if (!nextBlock()) {
                std::lock_guard<std::mutex> lock(m_mutex);
                if (!m_status && done == 0)
                    return m_status;
                break;
            }
            m_fileBytes = m_current.fileBytes;
        }
        const size_t k = std::min(n - done, m_current.size - m_pos);
        std::memcpy(dst + done, m_current.data.data() + m_pos, k);
        m_pos += k;
        done += k;
    }
    return done;
}

} // namespace gapscope::model::importer
