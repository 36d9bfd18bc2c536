// SPDX-License-Identifier: MIT
#include "model/import/filebytesource.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gapscope::model::importer {

FileByteSource::~FileByteSource()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

Expected<std::unique_ptr<ByteSource>> FileByteSource::open(const std::string& path)
{
    std::unique_ptr<FileByteSource> s(new FileByteSource());
    s->m_path = path;
    s->m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (s->m_fd < 0)
        return Status::error(path + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(s->m_fd, &st) == 0)
        s->m_fileSize = static_cast<uint64_t>(st.st_size);
#ifdef POSIX_FADV_SEQUENTIAL
    ::posix_fadvise(s->m_fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    return std::unique_ptr<ByteSource>(std::move(s));
}

Expected<size_t> FileByteSource::read(char* dst, size_t n)
{
    size_t total = 0;
    while (total < n) {
        const ssize_t r = ::read(m_fd, dst + total, n - total);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return Status::error(m_path + ": read error at byte " + std::to_string(m_read) + ": " + std::strerror(errno));
        }
        if (r == 0)
            break;
        total += static_cast<size_t>(r);
        m_read += static_cast<uint64_t>(r);
    }
    return total;
}

} // namespace gapscope::model::importer
