// SPDX-License-Identifier: MIT
#include "model/import/gzipbytesource.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gapscope::model::importer {

namespace {
constexpr size_t kInputBytes = 256 * 1024;
}

GzipByteSource::~GzipByteSource()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

Expected<std::unique_ptr<ByteSource>> GzipByteSource::open(const std::string& path, std::unique_ptr<Inflater> inflater)
{
    if (!inflater)
        return Status::error(path + ": cannot initialise the gzip inflater");
    std::unique_ptr<GzipByteSource> s(new GzipByteSource());
    s->m_path = path;
    s->m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (s->m_fd < 0)
        return Status::error(path + ": cannot open: " + std::strerror(errno));
    struct stat st { };
    if (::fstat(s->m_fd, &st) == 0)
        s->m_fileSize = static_cast<uint64_t>(st.st_size);
    s->m_inflater = std::move(inflater);
    s->m_input.resize(kInputBytes);
    return std::unique_ptr<ByteSource>(std::move(s));
}

Status GzipByteSource::refill()
{
    if (m_avail > 0 || m_inputEnded)
        return Status::ok();
    ssize_t r;
    do {
        r = ::read(m_fd, m_input.data(), m_input.size());
    } while (r < 0 && errno == EINTR);
    if (r < 0)
        return Status::error(m_path + ": read error at byte " + std::to_string(m_read) + ": " + std::strerror(errno));
    if (r == 0)
        m_inputEnded = true;
    m_next = m_input.data();
    m_avail = static_cast<size_t>(r);
    m_read += static_cast<uint64_t>(r);
    return Status::ok();
}

Expected<size_t> GzipByteSource::read(char* dst, size_t n)
{
    size_t produced = 0;
    while (produced < n && !m_streamEnded) {
        if (Status st = refill(); !st)
            return st;
        const size_t inBefore = m_avail;
        const Inflater::Step step
            = m_inflater->inflate(m_next, m_avail, reinterpret_cast<uint8_t*>(dst + produced), n - produced);
        m_next += step.consumed;
        m_avail -= step.consumed;
        produced += step.produced;
        if (!step.error.empty())
            return Status::error(m_path + ": corrupt gzip data near compressed byte " + std::to_string(m_read - m_avail)
                + ": " + step.error);
        if (step.memberEnd) {
            // Another member may follow (concatenated gzip); anything else after the end is ignored.
            if (Status st = refill(); !st)
                return st;
            if (m_avail > 0 && m_next[0] == 0x1f)
                m_inflater->nextMember();
            else
                m_streamEnded = true;
        } else if (step.produced == 0 && m_avail == 0 && m_inputEnded) { // the file ends inside a member
            m_truncated = true;
            m_streamEnded = true;
        } else if (step.produced == 0 && step.consumed == 0 && inBefore > 0) {
            return Status::error(m_path + ": corrupt gzip data near compressed byte " + std::to_string(m_read - m_avail)
                + ": inflate makes no progress");
        }
    }
    return produced;
}

} // namespace gapscope::model::importer
