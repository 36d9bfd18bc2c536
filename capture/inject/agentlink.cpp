// SPDX-License-Identifier: MIT
#include "capture/inject/agentlink.h"

#include "capture/protocol/framing.h"

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gapscope::capture::inject {

namespace {
// Agent -> rank messages are small control messages.
constexpr uint32_t kMaxIncomingFrame = 1u << 20;
}

AgentLink::AgentLink(size_t maxQueuedBytes)
    : m_maxQueued(maxQueuedBytes)
    , m_decoder(kMaxIncomingFrame)
{
}

Status AgentLink::connect(const std::string& socketPath)
{
    close();
    auto fd = connectUnix(socketPath);
    if (!fd)
        return fd.status();
    adopt(fd->release());
    return Status::ok();
}

void AgentLink::adopt(int fd)
{
    close();
    m_fd.reset(fd);
    (void)setNonBlocking(fd, true);
}

void AgentLink::close()
{
    m_fd.reset();
    m_out.clear();
    m_outPos = 0;
    m_decoder = FrameDecoder(kMaxIncomingFrame);
}

bool AgentLink::send(const wire::RankToAgent& msg, bool droppable)
{
    if (!m_fd.valid())
        return false;
    const size_t size = msg.ByteSizeLong() + kFrameHeaderBytes;
    if (droppable && queuedBytes() + size > m_maxQueued) {
        ++m_dropped;
        return false;
    }
    if (m_outPos > 0 && m_outPos >= m_out.size() / 2) {
        m_out.erase(0, m_outPos);
        m_outPos = 0;
    }
    if (!appendFrame(msg, m_out, kMaxRankFrameBytes)) {
        ++m_dropped;
        return false;
    }
    return true;
}

bool AgentLink::writeSome(std::string& error)
{
    while (m_outPos < m_out.size()) {
        const ssize_t n = ::send(m_fd.get(), m_out.data() + m_outPos, m_out.size() - m_outPos, MSG_NOSIGNAL);
        if (n > 0) {
            m_outPos += size_t(n);
            m_bytesSent += uint64_t(n);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        if (n < 0 && errno == EINTR)
            continue;
        error = std::string("agent socket: write failed: ") + std::strerror(errno);
        return false;
    }
    // Everything went out: give back what a backlog (a reader that fell behind) made the queue
    // grow to, so the rank's memory follows the backlog instead of its peak.
    if (m_out.capacity() > kKeepQueueCapacity)
        std::string().swap(m_out);
    m_out.clear();
    m_outPos = 0;
    return true;
}

bool AgentLink::readSome(std::vector<wire::AgentToRank>& received, std::string& error)
{
    for (;;) {
        char* at = m_decoder.prepare(64 * 1024);
        const ssize_t n = ::recv(m_fd.get(), at, 64 * 1024, 0);
        if (n > 0) {
            m_decoder.commit(size_t(n));
        } else {
            m_decoder.commit(0);
            if (n == 0) {
                error = "agent closed the connection";
                return false;
            }
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                error = std::string("agent socket: read failed: ") + std::strerror(errno);
                return false;
            }
        }
        std::string_view payload;
        for (;;) {
            const auto r = m_decoder.next(payload);
            if (r == FrameDecoder::Result::NeedMore)
                break;
            if (r == FrameDecoder::Result::TooLarge) {
                error = "agent sent a frame of " + std::to_string(m_decoder.rejectedLength()) + " bytes (limit "
                    + std::to_string(kMaxIncomingFrame) + ")";
                return false;
            }
            wire::AgentToRank msg;
            if (Status s = parseFrame(payload, msg, "agent"); !s) {
                error = s.message();
                return false;
            }
            received.push_back(std::move(msg));
        }
        if (n <= 0)
            return true;
    }
}

bool AgentLink::pump(int timeoutMs, std::vector<wire::AgentToRank>& received, std::string& error)
{
    if (!m_fd.valid()) {
        error = "not connected";
        return false;
    }
    pollfd p {};
    p.fd = m_fd.get();
    p.events = POLLIN | (queuedBytes() > 0 ? POLLOUT : 0);
    const int r = ::poll(&p, 1, timeoutMs);
    if (r < 0 && errno != EINTR) {
        error = std::string("poll: ") + std::strerror(errno);
        return false;
    }
    if (r > 0 && (p.revents & (POLLERR | POLLNVAL))) {
        error = "agent socket error";
        return false;
    }
    if (r > 0 && (p.revents & (POLLIN | POLLHUP)) && !readSome(received, error))
        return false;
    if (queuedBytes() > 0 && !writeSome(error))
        return false;
    return true;
}

} // namespace gapscope::capture::inject
