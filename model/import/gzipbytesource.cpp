// SPDX-License-Identifier: MIT
#include "model/import/gzipbytesource.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>
#include <zlib.h>

namespace gapscope::model::importer {

namespace {
constexpr size_t kInputBytes = 256 * 1024;
}

struct GzipByteSource::Impl {
    z_stream zs {};
    std::vector<unsigned char> input = std::vector<unsigned char>(kInputBytes);
    bool initialised = false;
    ~Impl()
    {
        if (initialised)
            inflateEnd(&zs);
    }
};

GzipByteSource::~GzipByteSource()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

Expected<std::unique_ptr<ByteSource>> GzipByteSource::open(const std::string& path)
{
    std::unique_ptr<GzipByteSource> s(new GzipByteSource());
    s->m_path = path;
    s->m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (s->m_fd < 0)
        return Status::error(path + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(s->m_fd, &st) == 0)
        s->m_fileSize = static_cast<uint64_t>(st.st_size);
    s->m_impl = std::make_unique<Impl>();
    if (inflateInit2(&s->m_impl->zs, 15 + 32) != Z_OK) // 15 + 32: gzip or zlib header, detected
        return Status::error(path + ": cannot initialise zlib");
    s->m_impl->initialised = true;
    return std::unique_ptr<ByteSource>(std::move(s));
}

Status GzipByteSource::refill()
{
    z_stream& zs = m_impl->zs;
    if (zs.avail_in > 0 || m_inputEnded)
        return Status::ok();
    ssize_t r;
    do {
        r = ::read(m_fd, m_impl->input.data(), m_impl->input.size());
    } while (r < 0 && errno == EINTR);
    if (r < 0)
        return Status::error(m_path + ": read error at byte " + std::to_string(m_read) + ": " + std::strerror(errno));
    if (r == 0)
        m_inputEnded = true;
    zs.next_in = m_impl->input.data();
    zs.avail_in = static_cast<uInt>(r);
    m_read += static_cast<uint64_t>(r);
    return Status::ok();
}

Expected<size_t> GzipByteSource::read(char* dst, size_t n)
{
    z_stream& zs = m_impl->zs;
    size_t produced = 0;
    while (produced < n && !m_streamEnded) {
        if (Status st = refill(); !st)
            return st;
        if (zs.avail_in == 0 && m_inputEnded) { // the file ends inside a gzip member
            m_truncated = true;
            m_streamEnded = true;
            break;
        }
        zs.next_out = reinterpret_cast<Bytef*>(dst + produced);
        zs.avail_out = static_cast<uInt>(std::min<size_t>(n - produced, 1u << 30));
        const uInt before = zs.avail_out;
        const int rc = inflate(&zs, Z_NO_FLUSH);
        produced += before - zs.avail_out;
        if (rc == Z_STREAM_END) {
            // Another member may follow (concatenated gzip); anything else after the end is ignored.
            if (Status st = refill(); !st)
                return st;
            if (zs.avail_in == 0 && m_inputEnded)
                m_streamEnded = true;
            else if (zs.avail_in > 0 && zs.next_in[0] == 0x1f)
                inflateReset(&zs);
            else
                m_streamEnded = true;
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            const uint64_t at = m_read - zs.avail_in;
            return Status::error(m_path + ": corrupt gzip data near compressed byte " + std::to_string(at) + ": "
                + (zs.msg ? zs.msg : "inflate error " + std::to_string(rc)));
        }
    }
    return produced;
}

} // namespace gapscope::model::importer
