// SPDX-License-Identifier: MIT
#include "capture/agent/peerconnection.h"

#include "capture/protocol/framing.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <sys/uio.h>

namespace gapscope::capture {

PeerConnection::PeerConnection(UniqueFd fd, uint32_t maxFrameBytes, std::string name)
    : m_fd(std::move(fd))
    , m_decoder(maxFrameBytes)
    , m_name(std::move(name))
    , m_openedNs(monotonicNs())
{
}

PeerConnection::Io PeerConnection::readAvailable(size_t budget, std::string& error)
{
    const size_t chunk = std::min(size_t(256) << 10, std::max(budget, size_t(1)));
    size_t total = 0;
    while (total < budget) {
        char* p = m_decoder.prepare(chunk);
        const ssize_t n = ::recv(m_fd.get(), p, chunk, MSG_DONTWAIT);
        m_decoder.commit(n > 0 ? size_t(n) : 0);
        if (n > 0) {
            total += size_t(n);
            m_bytesIn += uint64_t(n);
            if (size_t(n) < chunk)
                return Io::Ok;
            continue;
        }
        if (n == 0)
            return Io::Closed;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return Io::Ok;
        if (errno == EINTR)
            continue;
        error = std::strerror(errno);
        return errno == ECONNRESET ? Io::Closed : Io::Error;
    }
    return Io::Ok;
}

PeerConnection::Io PeerConnection::writeQueued(std::string& error)
{
    while (!m_out.empty()) {
        iovec iov[16];
        int n = 0;
        size_t skip = m_sentOfFront;
        for (auto it = m_out.begin(); it != m_out.end() && n < 16; ++it, ++n) {
            iov[n].iov_base = const_cast<char*>(it->frame->data() + skip);
            iov[n].iov_len = it->frame->size() - skip;
            skip = 0;
        }
        msghdr mh {};
        mh.msg_iov = iov;
        mh.msg_iovlen = size_t(n);
        const ssize_t w = ::sendmsg(m_fd.get(), &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return Io::Ok;
            if (errno == EINTR)
                continue;
            error = std::strerror(errno);
            return (errno == EPIPE || errno == ECONNRESET) ? Io::Closed : Io::Error;
        }
        m_bytesOut += uint64_t(w);
        size_t left = size_t(w);
        while (left > 0 && !m_out.empty()) {
            const size_t rest = m_out.front().frame->size() - m_sentOfFront;
            if (left >= rest) {
                left -= rest;
                const Out& done = m_out.front();
                m_queuedBytes -= done.frame->size();
                m_done[done.tag & 1]++;
                m_lastCookie[done.tag & 1] = done.cookie;
                m_out.pop_front();
                m_sentOfFront = 0;
            } else {
                m_sentOfFront += left;
                left = 0;
            }
        }
    }
    return Io::Ok;
}

void PeerConnection::enqueue(SharedFrame frame, int tag, uint64_t cookie)
{
    m_queuedBytes += frame->size();
    m_out.push_back({ std::move(frame), tag, cookie });
}

uint64_t PeerConnection::framesDelivered(int tag) const
{
    const bool inFlight = !m_out.empty() && m_sentOfFront > 0 && m_out.front().tag == tag;
    return m_done[tag & 1] + (inFlight ? 1 : 0);
}

uint64_t PeerConnection::lastDeliveredCookie(int tag) const
{
    if (!m_out.empty() && m_sentOfFront > 0 && m_out.front().tag == tag)
        return m_out.front().cookie;
    return m_lastCookie[tag & 1];
}

Status PeerConnection::enqueue(const google::protobuf::MessageLite& msg, uint32_t maxBytes, int tag)
{
    auto buf = std::make_shared<std::string>();
    if (Status s = appendFrame(msg, *buf, maxBytes); !s)
        return s;
    enqueue(std::move(buf), tag);
    return Status::ok();
}

size_t PeerConnection::dropQueued(int tag)
{
    size_t dropped = 0;
    std::deque<Out> kept;
    for (size_t i = 0; i < m_out.size(); ++i) {
        const bool started = i == 0 && m_sentOfFront > 0;
        if (m_out[i].tag == tag && !started) {
            dropped += m_out[i].frame->size();
            continue;
        }
        kept.push_back(std::move(m_out[i]));
    }
    m_out.swap(kept);
    m_queuedBytes -= dropped;
    return dropped;
}

} // namespace gapscope::capture
