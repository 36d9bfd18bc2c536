// SPDX-License-Identifier: MIT
#include "capture/protocol/netutil.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace gapscope::capture {

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept
{
    if (this != &o)
        reset(o.release());
    return *this;
}

int UniqueFd::release()
{
    const int fd = m_fd;
    m_fd = -1;
    return fd;
}

void UniqueFd::reset(int fd)
{
    if (m_fd >= 0)
        ::close(m_fd);
    m_fd = fd;
}

static std::string errnoText(const std::string& what)
{
    return what + ": " + std::strerror(errno);
}

// Resolves host:port (numeric or a name) to the first usable address.
static Status resolve(const Endpoint& e, bool passive, sockaddr_storage& out, socklen_t& len)
{
    addrinfo hints {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    addrinfo* res = nullptr;
    const std::string port = std::to_string(e.port);
    const int rc = getaddrinfo(e.host.empty() ? nullptr : e.host.c_str(), port.c_str(), &hints, &res);
    if (rc != 0 || !res)
        return Status::error(e.toString() + ": cannot resolve: " + gai_strerror(rc));
    std::memcpy(&out, res->ai_addr, res->ai_addrlen);
    len = res->ai_addrlen;
    freeaddrinfo(res);
    return Status::ok();
}

Expected<UniqueFd> listenTcp(const Endpoint& at, int backlog)
{
    sockaddr_storage addr {};
    socklen_t len = 0;
    if (Status s = resolve(at, true, addr, len); !s)
        return s;
    UniqueFd fd(::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid())
        return Status::error(errnoText(at.toString() + ": socket"));
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0)
        return Status::error(errnoText("listen on " + at.toString()));
    if (::listen(fd.get(), backlog) != 0)
        return Status::error(errnoText("listen on " + at.toString()));
    return fd;
}

Expected<UniqueFd> listenUnix(const std::string& path, int backlog)
{
    sockaddr_un addr {};
    if (path.size() >= sizeof addr.sun_path)
        return Status::error(path + ": socket path too long");
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid())
        return Status::error(errnoText(path + ": socket"));
    // A socket file nobody answers on is stale (agent killed): replace it. A live one is an error.
    if (auto probe = connectUnix(path); probe)
        return Status::error(path + ": another agent is already listening there");
    struct stat st { };
    if (::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode))
        ::unlink(path.c_str());
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
        return Status::error(errnoText("listen on " + path));
    ::chmod(path.c_str(), 0600);
    if (::listen(fd.get(), backlog) != 0)
        return Status::error(errnoText("listen on " + path));
    return fd;
}

Expected<UniqueFd> connectUnix(const std::string& path)
{
    sockaddr_un addr {};
    if (path.size() >= sizeof addr.sun_path)
        return Status::error(path + ": socket path too long");
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid())
        return Status::error(errnoText(path + ": socket"));
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
        return Status::error(errnoText("connect to " + path));
    return fd;
}

Expected<UniqueFd> connectTcp(const Endpoint& to, int timeoutMs)
{
    sockaddr_storage addr {};
    socklen_t len = 0;
    if (Status s = resolve(to, false, addr, len); !s)
        return s;
    UniqueFd fd(::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid())
        return Status::error(errnoText(to.toString() + ": socket"));
    if (Status s = setNonBlocking(fd.get()); !s)
        return s;
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) {
        if (errno != EINPROGRESS)
            return Status::error(errnoText("connect to " + to.toString()));
        pollfd p { fd.get(), POLLOUT, 0 };
        const int rc = ::poll(&p, 1, timeoutMs);
        if (rc == 0)
            return Status::error(
                "connect to " + to.toString() + ": timed out after " + std::to_string(timeoutMs) + " ms");
        int err = 0;
        socklen_t elen = sizeof err;
        ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &elen);
        if (rc < 0 || err != 0) {
            errno = rc < 0 ? errno : err;
            return Status::error(errnoText("connect to " + to.toString()));
        }
    }
    if (Status s = setNonBlocking(fd.get(), false); !s)
        return s;
    setNoDelay(fd.get());
    return fd;
}

uint16_t boundPort(int fd)
{
    sockaddr_storage addr {};
    socklen_t len = sizeof addr;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
        return 0;
    if (addr.ss_family == AF_INET)
        return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    if (addr.ss_family == AF_INET6)
        return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
    return 0;
}

Status setNonBlocking(int fd, bool on)
{
    const int flags = ::fcntl(fd, F_GETFL, 0);
    if (flags < 0 || ::fcntl(fd, F_SETFL, on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK)) != 0)
        return Status::error(errnoText("fcntl(O_NONBLOCK)"));
    return Status::ok();
}

void setNoDelay(int fd)
{
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void setBufferSizes(int fd, int sendBytes, int recvBytes)
{
    if (sendBytes > 0)
        ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sendBytes, sizeof sendBytes);
    if (recvBytes > 0)
        ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &recvBytes, sizeof recvBytes);
}

Status writeAll(int fd, const char* data, size_t size, int timeoutMs)
{
    const int64_t deadline = monotonicNs() + int64_t(timeoutMs) * 1000000;
    while (size > 0) {
        const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            data += n;
            size -= size_t(n);
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return Status::error(errnoText("send"));
        const int64_t left = (deadline - monotonicNs()) / 1000000;
        if (left <= 0)
            return Status::error("send: timed out after " + std::to_string(timeoutMs) + " ms");
        pollfd p { fd, POLLOUT, 0 };
        ::poll(&p, 1, int(left));
    }
    return Status::ok();
}

Status readSome(int fd, char* buf, size_t size, int timeoutMs, long& n)
{
    pollfd p { fd, POLLIN, 0 };
    const int rc = ::poll(&p, 1, timeoutMs);
    if (rc == 0) {
        n = -1;
        return Status::ok();
    }
    if (rc < 0) {
        if (errno == EINTR) {
            n = -1;
            return Status::ok();
        }
        return Status::error(errnoText("poll"));
    }
    const ssize_t r = ::recv(fd, buf, size, MSG_DONTWAIT);
    if (r < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            n = -1;
            return Status::ok();
        }
        return Status::error(errnoText("recv"));
    }
    n = long(r);
    return Status::ok();
}

int64_t realtimeNs()
{
    timespec ts {};
    clock_gettime(CLOCK_REALTIME, &ts);
    return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t monotonicNs()
{
    timespec ts {};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

} // namespace gapscope::capture
