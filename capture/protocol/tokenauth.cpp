// SPDX-License-Identifier: MIT
#include "capture/protocol/tokenauth.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
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
    struct stat st { };
    if (::stat(path.c_str(), &st) != 0) {
        if (errno == ENOENT && create)
            return createToken(path);
        return Status::error(path + ": cannot read the token file: " + std::strerror(errno));
    }
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return Status::error(path + ": cannot open the token file");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string token = trim(ss.str());
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
