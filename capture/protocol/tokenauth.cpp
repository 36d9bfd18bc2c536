// SPDX-License-Identifier: MIT
#include "capture/protocol/tokenauth.h"

#include "capture/protocol/netutil.h"
#include "capture/protocol/privatefolder.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gapscope::capture {

static std::string trim(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos)
        return {};
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

static Expected<std::string> createToken(const std::string& path)
{
    unsigned char raw[32];
    const int rnd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (rnd < 0 || ::read(rnd, raw, sizeof raw) != ssize_t(sizeof raw)) {
        if (rnd >= 0)
            ::close(rnd);
        return Status::error("/dev/urandom: cannot read random bytes");
    }
    ::close(rnd);
    static const char* hex = "0123456789abcdef";
    std::string token;
    for (unsigned char c : raw) {
        token += hex[c >> 4];
        token += hex[c & 15];
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return Status::error(path + ": cannot create the token file: " + std::strerror(errno));
    const std::string line = token + "\n";
    const bool ok = ::write(fd, line.data(), line.size()) == ssize_t(line.size());
    ::close(fd);
    if (!ok)
        return Status::error(path + ": cannot write the token file");
    return token;
}

Expected<std::string> loadToken(const std::string& path, bool create)
{
    // Open first and check what was opened (no race with a file swapped in between); O_NONBLOCK so
    // a FIFO cannot hang the open.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT && create)
            return createToken(path);
        return Status::error(path + ": cannot read the token file: " + std::strerror(errno));
    }
    UniqueFd file(fd);
    struct stat st { };
    if (::fstat(fd, &st) != 0)
        return Status::error(path + ": cannot read the token file: " + std::strerror(errno));
    if (!S_ISREG(st.st_mode))
        return Status::error(path + ": the token file is not a regular file");
    // As ssh does for private keys: a token others can read (or replace) protects nothing.
    if (st.st_uid != ::geteuid())
        return Status::error(path + ": the token file belongs to another user (uid " + std::to_string(st.st_uid)
            + ", this process runs as uid " + std::to_string(::geteuid()) + "); refusing to use it");
    if (st.st_mode & 077)
        return Status::error(path + ": the token file's permissions " + modeText(st.st_mode)
            + " are too open (group or others may read or write it); refusing to use it; run chmod 600 " + path);
    std::string text;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return Status::error(path + ": cannot read the token file: " + std::strerror(errno));
        if (n == 0)
            break;
        text.append(buf, size_t(n));
        if (text.size() > 8192)
            break;
    }
    std::string token = trim(text);
    if (token.size() < 16)
        return Status::error(path + ": the token is too short (" + std::to_string(token.size())
            + " characters; use at least 16 random characters)");
    if (token.size() > 4096)
        return Status::error(path + ": the token is too long (over 4096 characters)");
    return token;
}

bool tokenMatches(const std::string& expected, const std::string& given)
{
    // Walk the expected token's length whatever the input; a length difference is folded in.
    volatile unsigned char diff = expected.size() != given.size() ? 1 : 0;
    for (size_t i = 0; i < expected.size(); ++i) {
        const unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
        diff = diff | (static_cast<unsigned char>(expected[i]) ^ g);
    }
    return diff == 0 && !expected.empty();
}

} // namespace gapscope::capture
