// SPDX-License-Identifier: MIT
#include "model/import/isalbytesource.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace gapscope::model::importer {

namespace {
constexpr size_t kInputBytes = 256 * 1024;

const char* isalError(int rc)
{
    switch (rc) {
    case ISAL_INVALID_BLOCK:
        return "invalid deflate block";
    case ISAL_INVALID_SYMBOL:
        return "invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK:
        return "invalid back-reference distance";
    case ISAL_INVALID_WRAPPER:
        return "invalid gzip header";
    case ISAL_UNSUPPORTED_METHOD:
        return "unsupported compression method";
    case ISAL_INCORRECT_CHECKSUM:
        return "CRC or length check failed";
    default:
        return "inflate error";
    }
}
} // namespace

struct IsalByteSource::Impl {
    inflate_state state {};
    std::vector<unsigned char> input = std::vector<unsigned char>(kInputBytes);
};

IsalByteSource::~IsalByteSource()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

Expected<std::unique_ptr<ByteSource>> IsalByteSource::open(const std::string& path)
{
    std::unique_ptr<IsalByteSource> s(new IsalByteSource());
    s->m_path = path;
    s->m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (s->m_fd < 0)
        return Status::error(path + ": cannot open: " + std::strerror(errno));
    struct stat st { };
    if (::fstat(s->m_fd, &st) == 0)
        s->m_fileSize = static_cast<uint64_t>(st.st_size);
    s->m_impl = std::make_unique<Impl>();
    isal_inflate_init(&s->m_impl->state);
    s->m_impl->state.crc_flag = ISAL_GZIP; // parse the gzip header, check the trailer's CRC and size
    return std::unique_ptr<ByteSource>(std::move(s));
}

Status IsalByteSource::refill()
{
    inflate_state& zs = m_impl->state;
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
    zs.avail_in = static_cast<uint32_t>(r);
    m_read += static_cast<uint64_t>(r);
    return Status::ok();
}

// After a member's trailer: another member may follow (concatenated gzip); anything else is ignored.
void IsalByteSource::nextMember()
{
    inflate_state& zs = m_impl->state;
    if (zs.avail_in == 0 || zs.next_in[0] != 0x1f) {
        m_streamEnded = true;
        return;
    }
    uint8_t* in = zs.next_in;
    const uint32_t avail = zs.avail_in;
    isal_inflate_reset(&zs);
    zs.crc_flag = ISAL_GZIP;
    zs.next_in = in;
    zs.avail_in = avail;
}

Expected<size_t> IsalByteSource::read(char* dst, size_t n)
{
    inflate_state& zs = m_impl->state;
    size_t produced = 0;
    while (produced < n && !m_streamEnded) {
        if (Status st = refill(); !st)
            return st;
        zs.next_out = reinterpret_cast<uint8_t*>(dst + produced);
        zs.avail_out = static_cast<uint32_t>(std::min<size_t>(n - produced, 1u << 30));
        const uint32_t before = zs.avail_out, inBefore = zs.avail_in;
        const int rc = isal_inflate(&zs);
        const uint32_t got = before - zs.avail_out;
        produced += got;
        if (rc < 0)
            return Status::error(m_path + ": corrupt gzip data near compressed byte "
                + std::to_string(m_read - zs.avail_in) + ": " + isalError(rc));
        if (zs.block_state == ISAL_BLOCK_FINISH) {
            if (Status st = refill(); !st)
                return st;
            nextMember();
        } else if (got == 0 && zs.avail_in == 0 && m_inputEnded) { // the file ends inside a gzip member
            m_truncated = true;
            m_streamEnded = true;
        } else if (got == 0 && zs.avail_in == inBefore) {
            return Status::error(m_path + ": corrupt gzip data near compressed byte "
                + std::to_string(m_read - zs.avail_in) + ": inflate makes no progress");
        }
    }
    return produced;
}

} // namespace gapscope::model::importer
