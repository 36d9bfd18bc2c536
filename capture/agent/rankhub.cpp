// SPDX-License-Identifier: MIT
#include "capture/agent/rankhub.h"

#include "capture/protocol/framing.h"
#include "capture/protocol/socketpath.h"

#include <algorithm>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef GAPSCOPE_VERSION
#define GAPSCOPE_VERSION "0.0.0"
#endif

namespace gapscope::capture {

namespace {
constexpr size_t kReadBudget = 8u << 20; // per poll round, so one rank cannot starve the rest
constexpr size_t kQueueLimit = 1u << 20; // control messages only; more means the rank is stuck
constexpr size_t kMinRead = 64u << 10; // a read smaller than this waits for room in the budget
constexpr uint8_t kChunkDataTag = (4 << 3) | 2; // RankToAgent.chunk, length-delimited
} // namespace

struct RankHub::Conn {
    uint32_t id = 0;
    std::unique_ptr<PeerConnection> peer;
    bool registered = false;
    bool dead = false;
    RankRecord rec;
};

RankHub::RankHub(Events& events, std::string host, Limits limits)
    : m_events(events)
    , m_host(std::move(host))
    , m_limits(limits)
{
}

RankHub::~RankHub()
{
    if (m_listen.valid() && !m_path.empty())
        ::unlink(m_path.c_str());
}

Status RankHub::listen(const std::string& socketPath)
{
    m_path = socketPath;
    if (Status s = prepareSocketDirectory(m_path); !s)
        return s;
    auto u = listenUnix(m_path);
    if (!u)
        return u.status();
    m_listen = std::move(*u);
    return setNonBlocking(m_listen.get());
}

void RankHub::accept(uint32_t& nextId)
{
    for (;;) {
        const int fd = ::accept4(m_listen.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        // Connections that have not registered get a small quota of their own: the oldest one makes
        // room, so idle connections cannot lock real ranks out.
        Conn* oldest = nullptr;
        uint32_t waiting = 0;
        for (auto& o : m_conns)
            if (!o->dead && !o->registered) {
                ++waiting;
                if (!oldest || o->peer->openedNs() < oldest->peer->openedNs())
                    oldest = o.get();
            }
        if (oldest && waiting >= m_limits.maxUnregistered) {
            ++m_unregisteredDrops;
            closeConn(*oldest,
                "not registered yet, closed to make room (" + std::to_string(m_limits.maxUnregistered)
                    + " unregistered connections at most)");
        }
        setBufferSizes(fd, 0, 4 << 20);
        auto c = std::make_unique<Conn>();
        c->id = nextId++;
        c->peer = std::make_unique<PeerConnection>(
            UniqueFd(fd), kMaxRankRegisterFrameBytes, "rank connection " + std::to_string(c->id));
        m_conns.push_back(std::move(c));
    }
}

void RankHub::appendPollFds(std::vector<pollfd>& fds) const
{
    for (const auto& c : m_conns)
        fds.push_back({ c->peer->fd(), short(POLLIN | (c->peer->wantsWrite() ? POLLOUT : 0)), 0 });
}

void RankHub::service(const pollfd* fds, size_t count)
{
    const size_t n = std::min(count, m_conns.size()); // connections accepted after poll() come later
    for (size_t i = 0; i < n; ++i)
        if (fds[i].revents)
            serviceOne(*m_conns[i], fds[i].revents);
}

void RankHub::serviceOne(Conn& c, short revents)
{
    if (c.dead)
        return;
    std::string err;
    if ((revents & POLLOUT) && c.peer->writeQueued(err) != PeerConnection::Io::Ok) {
        closeConn(c, "connection lost" + (err.empty() ? std::string() : ": " + err));
        return;
    }
    if (c.peer->closing() && !c.peer->wantsWrite()) {
        closeConn(c, "refused");
        return;
    }
    if (!(revents & (POLLIN | POLLHUP | POLLERR)))
        return;
    const size_t want = c.registered ? kReadBudget : kMaxRankRegisterFrameBytes + kFrameHeaderBytes;
    const size_t room = makeRoom(std::min(want, kMinRead));
    if (c.dead || room == 0)
        return; // closed for the budget, or no room now: the bytes wait in the socket
    const size_t memBefore = c.peer->decoder().memoryBytes();
    const auto io = c.peer->readAvailable(std::min(want, room), err);
    m_inputBytes = m_inputBytes - std::min(m_inputBytes, memBefore) + c.peer->decoder().memoryBytes();
    std::string_view payload;
    for (;;) {
        const auto res = c.peer->decoder().next(payload);
        if (res == FrameDecoder::Result::NeedMore)
            break;
        if (res == FrameDecoder::Result::TooLarge) {
            closeConn(c,
                "message of " + std::to_string(c.peer->decoder().rejectedLength()) + " bytes exceeds the limit of "
                    + std::to_string(c.peer->decoder().limit()) + (c.registered ? "" : " before Register"));
            return;
        }
        handleFrame(c, payload);
        if (c.dead)
            return;
    }
    if (io == PeerConnection::Io::Closed)
        closeConn(c, "the process closed its connection (exited or crashed)");
    else if (io == PeerConnection::Io::Error)
        closeConn(c, "read error: " + err);
}

void RankHub::handleFrame(Conn& c, std::string_view payload)
{
    // ChunkData goes on unparsed (the merge thread parses it); everything else is small.
    if (c.registered && !payload.empty() && uint8_t(payload[0]) == kChunkDataTag) {
        m_events.rankChunk(c.rec, payload);
        return;
    }
    wire::RankToAgent m;
    if (Status s = parseFrame(payload, m, c.peer->name()); !s) {
        closeConn(c, s.message());
        return;
    }
    if (!c.registered && !m.has_register_rank()) {
        closeConn(c, "first message was not Register");
        return;
    }
    switch (m.msg_case()) {
    case wire::RankToAgent::kRegisterRank:
        if (c.registered)
            closeConn(c, "registered twice");
        else
            onRegister(c, m.register_rank());
        return;
    case wire::RankToAgent::kGoodbye:
        closeConn(c, "left: " + m.goodbye().reason());
        return;
    case wire::RankToAgent::kPing: {
        wire::AgentToRank pong;
        auto* p = pong.mutable_pong();
        p->set_nonce(m.ping().nonce());
        p->set_t1_ns(m.ping().t1_ns());
        p->set_t2_ns(realtimeNs());
        p->set_t3_ns(realtimeNs());
        send(c.id, pong);
        return;
    }
    case wire::RankToAgent::kArmed:
        c.rec.state = m.armed().error() == wire::ARM_OK ? "armed" : "idle";
        break;
    case wire::RankToAgent::kStep:
        if (m.step().recording())
            c.rec.state = "recording";
        break;
    case wire::RankToAgent::kStatus:
        if (!m.status().other_cupti_client().empty())
            c.rec.reg.set_other_cupti_client(m.status().other_cupti_client());
        break;
    case wire::RankToAgent::kDisarmed:
        c.rec.state = "idle";
        break;
    default:
        break;
    }
    m_events.rankMessage(c.rec, m);
}

void RankHub::onRegister(Conn& c, const wire::Register& reg)
{
    wire::AgentToRank w;
    auto* wl = w.mutable_welcome();
    wl->set_protocol_version(kProtocolVersion);
    wl->set_agent_version(GAPSCOPE_VERSION);
    wl->set_connection_id(c.id);
    if (reg.protocol_version() != kProtocolVersion) {
        wl->set_accepted(false);
        wl->set_error("protocol version " + std::to_string(reg.protocol_version()) + " not supported (agent speaks "
            + std::to_string(kProtocolVersion) + ")");
        send(c.id, w);
        c.peer->closeAfterFlush();
        return;
    }
    size_t ranks = 0;
    for (const auto& o : m_conns)
        ranks += o->registered && !o->dead;
    if (ranks >= m_limits.maxRanks) {
        wl->set_accepted(false);
        wl->set_error("the agent serves " + std::to_string(m_limits.maxRanks) + " ranks already");
        send(c.id, w);
        c.peer->closeAfterFlush();
        return;
    }
    uint32_t rank = 0;
    if (reg.rank() >= 0) {
        rank = uint32_t(reg.rank());
    } else {
        for (const auto& o : m_conns)
            if (o->registered && !o->dead)
                rank = std::max(rank, o->rec.rank + 1);
    }
    c.registered = true;
    c.peer->decoder().setLimit(kMaxRankFrameBytes);
    c.rec.connId = c.id;
    c.rec.rank = rank;
    c.rec.reg = reg;
    if (c.rec.reg.host().empty())
        c.rec.reg.set_host(m_host);
    c.rec.registeredUnixNs = realtimeNs();
    c.rec.state = "idle";
    wl->set_accepted(true);
    wl->set_assigned_rank(int32_t(rank));
    send(c.id, w);
}

void RankHub::closeConn(Conn& c, const std::string& reason)
{
    if (c.dead)
        return;
    c.dead = true;
    c.rec.state = "gone";
    if (c.registered)
        m_events.rankGone(c.rec, reason);
}

void RankHub::close(uint32_t connId, const std::string& reason)
{
    for (auto& c : m_conns)
        if (c->id == connId)
            closeConn(*c, reason);
}

void RankHub::send(uint32_t connId, const wire::AgentToRank& msg)
{
    for (auto& c : m_conns)
        if (c->id == connId && !c->dead) {
            if (Status s = c->peer->enqueue(msg, kMaxRankFrameBytes); !s)
                return;
            if (c->peer->queuedBytes() > kQueueLimit) {
                closeConn(*c, "not reading the agent's messages");
                return;
            }
            std::string err;
            if (c->peer->writeQueued(err) != PeerConnection::Io::Ok)
                closeConn(*c, "connection lost: " + err);
            return;
        }
}

void RankHub::goodbyeAll(const std::string& reason)
{
    wire::AgentToRank bye;
    bye.mutable_goodbye()->set_reason(reason);
    for (auto& c : m_conns)
        if (!c->dead) {
            (void)c->peer->enqueue(bye, kMaxRankFrameBytes);
            std::string err;
            c->peer->writeQueued(err);
        }
}

void RankHub::reap()
{
    m_conns.erase(std::remove_if(m_conns.begin(), m_conns.end(), [](const auto& c) { return c->dead; }), m_conns.end());
    m_inputBytes = countInputBytes();
}

void RankHub::expire(int64_t nowNs)
{
    for (auto& c : m_conns)
        if (!c->dead && !c->registered && nowNs - c->peer->openedNs() > m_limits.registerTimeoutNs) {
            ++m_unregisteredDrops;
            closeConn(*c, "did not register within " + std::to_string(m_limits.registerTimeoutNs / 1000000) + " ms");
        }
}

size_t RankHub::countInputBytes() const
{
    size_t n = 0;
    for (const auto& c : m_conns)
        if (!c->dead)
            n += c->peer->decoder().memoryBytes();
    return n;
}

size_t RankHub::makeRoom(size_t want)
{
    const size_t budget = m_limits.inputBudgetBytes;
    if (m_inputBytes + want <= budget)
        return budget - m_inputBytes;
    for (auto& c : m_conns)
        if (!c->dead)
            c->peer->decoder().releaseIdle();
    m_inputBytes = countInputBytes();
    while (m_inputBytes + want > budget) {
        Conn* largest = nullptr; // the largest unfinished frame
        for (auto& c : m_conns)
            if (!c->dead && c->peer->decoder().buffered() > 0
                && (!largest || c->peer->decoder().memoryBytes() > largest->peer->decoder().memoryBytes()))
                largest = c.get();
        if (!largest)
            break;
        const size_t held = largest->peer->decoder().buffered();
        ++m_budgetDrops;
        closeConn(*largest,
            "the input memory budget of all rank connections (" + std::to_string(budget >> 20)
                + " MiB) is used up; this connection held " + std::to_string(held) + " bytes of an unfinished message");
        largest->peer->decoder().discard();
        m_inputBytes = countInputBytes();
    }
    return m_inputBytes + want <= budget ? budget - m_inputBytes : 0;
}

std::vector<RankRecord> RankHub::records() const
{
    std::vector<RankRecord> out;
    for (const auto& c : m_conns)
        if (c->registered && !c->dead)
            out.push_back(c->rec);
    std::sort(out.begin(), out.end(), [](const RankRecord& a, const RankRecord& b) { return a.rank < b.rank; });
    return out;
}

} // namespace gapscope::capture
