// SPDX-License-Identifier: MIT
#pragma once

// Thin POSIX socket helpers shared by the agent, its clients and test programs: listening and
// connecting sockets (TCP and Unix), non-blocking mode, and whole-frame blocking I/O with a deadline.
// Every failure names the address and the errno text. Descriptors are returned as UniqueFd.

#include "capture/protocol/endpoint.h"
#include "model/base/status.h"

#include <string>

namespace gapscope::capture {

// Owns a file descriptor; closes it on destruction. Move-only.
class UniqueFd {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd)
        : m_fd(fd)
    {
    }
    UniqueFd(UniqueFd&& o) noexcept
        : m_fd(o.release())
    {
    }
    UniqueFd& operator=(UniqueFd&& o) noexcept;
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd() { reset(); }

    int get() const { return m_fd; }
    bool valid() const { return m_fd >= 0; }
    int release();
    void reset(int fd = -1);

private:
    int m_fd = -1;
};

Expected<UniqueFd> listenTcp(const Endpoint& at, int backlog = 16);
Expected<UniqueFd> listenUnix(const std::string& path, int backlog = 64); // replaces a stale socket file
Expected<UniqueFd> connectTcp(const Endpoint& to, int timeoutMs);
Expected<UniqueFd> connectUnix(const std::string& path);

uint16_t boundPort(int fd); // port of a listening TCP socket (after listening on port 0)
Status setNonBlocking(int fd, bool on = true);
void setNoDelay(int fd);
void setBufferSizes(int fd, int sendBytes, int recvBytes);

// Blocking helpers with a deadline (poll); fail on timeout, EOF or error.
Status writeAll(int fd, const char* data, size_t size, int timeoutMs);
// Reads whatever is available (waiting up to timeoutMs): >0 bytes, 0 on EOF, error on failure.
// A timeout returns -1 in `n` with an ok status.
Status readSome(int fd, char* buf, size_t size, int timeoutMs, long& n);

int64_t realtimeNs(); // CLOCK_REALTIME (the trace clock)
int64_t monotonicNs(); // CLOCK_MONOTONIC (deadlines, latencies)

} // namespace gapscope::capture
