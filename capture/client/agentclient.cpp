// SPDX-License-Identifier: MIT
#include "capture/client/agentclient.h"

#include "capture/protocol/framing.h"

namespace gapscope::capture {

AgentClient::AgentClient(ClientOptions options)
    : m_opt(std::move(options))
    , m_decoder(m_opt.maxFrameBytes)
{
}

void AgentClient::close()
{
    m_fd.reset();
    m_queue.clear();
    m_decoder = FrameDecoder(m_opt.maxFrameBytes);
}

Status AgentClient::connect()
{
    close();
    auto ep = Endpoint::parse(m_opt.address, kDefaultAgentPort);
    if (!ep)
        return ep.status();
    auto fd = connectTcp(*ep, m_opt.connectTimeoutMs);
    if (!fd)
        return fd.status();
    m_fd = std::move(*fd);
    setBufferSizes(m_fd.get(), 0, 4 << 20);
    wire::ClientToAgent hello;
    auto* h = hello.mutable_hello();
    h->set_protocol_version(kProtocolVersion);
    h->set_client_name(m_opt.clientName);
    h->set_client_version(m_opt.clientVersion);
    h->set_token(m_opt.token);
    if (Status s = send(hello); !s)
        return s.withContext(m_opt.address);
    auto reply = waitFor(
        [](const wire::AgentToClient& m) { return m.has_hello() || m.has_error(); }, m_opt.connectTimeoutMs, "hello");
    if (!reply) {
        close();
        return reply.status().withContext(m_opt.address);
    }
    if (reply->has_error()) {
        close();
        return Status::error(m_opt.address + ": agent refused the connection: " + reply->error().message());
    }
    m_hello = reply->hello();
    return Status::ok();
}

Status AgentClient::send(const wire::ClientToAgent& msg)
{
    if (!m_fd.valid())
        return Status::error("not connected");
    m_out.clear();
    if (Status s = appendFrame(msg, m_out, kMaxClientFrameBytes); !s)
        return s;
    if (Status s = writeAll(m_fd.get(), m_out.data(), m_out.size(), 10000); !s) {
        close();
        return s.withContext("agent " + m_opt.address);
    }
    return Status::ok();
}

Status AgentClient::readMore(int timeoutMs, bool& gotBytes)
{
    gotBytes = false;
    constexpr size_t kRead = 256 << 10;
    char* p = m_decoder.prepare(kRead);
    long n = 0;
    Status s = readSome(m_fd.get(), p, kRead, timeoutMs, n);
    m_decoder.commit(n > 0 ? size_t(n) : 0);
    if (!s) {
        close();
        return s.withContext("agent " + m_opt.address);
    }
    if (n == 0) {
        close();
        return Status::error("agent " + m_opt.address + " closed the connection");
    }
    if (n > 0) {
        m_bytes += uint64_t(n);
        gotBytes = true;
    }
    return Status::ok();
}

Status AgentClient::decodeBuffered()
{
    std::string_view payload;
    for (;;) {
        const auto r = m_decoder.next(payload);
        if (r == FrameDecoder::Result::NeedMore)
            return Status::ok();
        if (r == FrameDecoder::Result::TooLarge) {
            const uint32_t len = m_decoder.rejectedLength();
            close();
            return Status::error("agent " + m_opt.address + ": message of " + std::to_string(len)
                + " bytes exceeds the limit of " + std::to_string(m_opt.maxFrameBytes));
        }
        wire::AgentToClient msg;
        if (Status s = parseFrame(payload, msg, "agent " + m_opt.address); !s) {
            close();
            return s;
        }
        ++m_received;
        if (msg.has_pong()) {
            const auto& p = msg.pong();
            m_clock.add(p.t1_ns(), p.t2_ns(), p.t3_ns(), realtimeNs());
            continue;
        }
        if (msg.has_ping()) {
            wire::ClientToAgent pong;
            auto* p = pong.mutable_pong();
            p->set_nonce(msg.ping().nonce());
            p->set_t1_ns(msg.ping().t1_ns());
            p->set_t2_ns(realtimeNs());
            p->set_t3_ns(realtimeNs());
            if (Status s = send(pong); !s)
                return s;
            continue;
        }
        m_queue.push_back(std::move(msg));
    }
}

Expected<bool> AgentClient::receive(wire::AgentToClient& out, int timeoutMs)
{
    const int64_t deadline = monotonicNs() + int64_t(timeoutMs) * 1000000;
    for (;;) {
        if (!m_queue.empty()) {
            out = std::move(m_queue.front());
            m_queue.pop_front();
            return true;
        }
        if (!m_fd.valid())
            return Status::error("agent " + m_opt.address + ": not connected");
        const int64_t left = (deadline - monotonicNs()) / 1000000;
        bool got = false;
        if (Status s = readMore(int(left > 0 ? left : 0), got); !s)
            return s;
        if (Status s = decodeBuffered(); !s)
            return s;
        if (!got && m_queue.empty() && monotonicNs() >= deadline)
            return false;
    }
}

template <typename Pred> Expected<wire::AgentToClient> AgentClient::waitFor(Pred pred, int timeoutMs, const char* what)
{
    const int64_t deadline = monotonicNs() + int64_t(timeoutMs) * 1000000;
    size_t scanned = 0;
    for (;;) {
        for (size_t i = scanned; i < m_queue.size(); ++i)
            if (pred(m_queue[i])) {
                wire::AgentToClient m = std::move(m_queue[i]);
                m_queue.erase(m_queue.begin() + long(i));
                return m;
            }
        scanned = m_queue.size();
        if (!m_fd.valid())
            return Status::error(std::string(what) + ": not connected");
        const int64_t left = (deadline - monotonicNs()) / 1000000;
        if (left <= 0)
            return Status::error(std::string(what) + ": no answer within " + std::to_string(timeoutMs) + " ms");
        bool got = false;
        if (Status s = readMore(int(left), got); !s)
            return s;
        if (Status s = decodeBuffered(); !s)
            return s;
    }
}

Expected<wire::RankList> AgentClient::listRanks(int timeoutMs)
{
    wire::ClientToAgent req;
    const uint64_t id = ++m_nonce;
    req.mutable_list_ranks()->set_request_id(id);
    if (Status s = send(req); !s)
        return s;
    auto reply = waitFor([id](const wire::AgentToClient& m) { return m.has_ranks() && m.ranks().request_id() == id; },
        timeoutMs, "list ranks");
    if (!reply)
        return reply.status();
    return std::move(*reply->mutable_ranks());
}

Status AgentClient::syncClock(int exchanges, int timeoutMs)
{
    for (int i = 0; i < exchanges; ++i) {
        const size_t before = m_clock.samples();
        wire::ClientToAgent req;
        auto* p = req.mutable_ping();
        p->set_nonce(++m_nonce);
        p->set_t1_ns(realtimeNs());
        if (Status s = send(req); !s)
            return s;
        const int64_t deadline = monotonicNs() + int64_t(timeoutMs) * 1000000;
        while (m_clock.samples() == before) {
            const int64_t left = (deadline - monotonicNs()) / 1000000;
            if (left <= 0)
                return Status::error(
                    "clock sync with " + m_opt.address + ": no pong within " + std::to_string(timeoutMs) + " ms");
            bool got = false;
            if (Status s = readMore(int(left), got); !s)
                return s;
            if (Status s = decodeBuffered(); !s)
                return s;
        }
    }
    return Status::ok();
}

} // namespace gapscope::capture
