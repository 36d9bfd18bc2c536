// SPDX-License-Identifier: MIT
#include "capture/agent/agentserver.h"

#include "capture/agent/capturesession.h"
#include "capture/agent/client/chunkremapper.h"
#include "capture/agent/peerconnection.h"
#include "capture/agent/replaysource.h"
#include "capture/protocol/framing.h"
#include "capture/protocol/socketpath.h"
#include "capture/protocol/tokenauth.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <random>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef GAPSCOPE_VERSION
#define GAPSCOPE_VERSION "0.0.0"
#endif

namespace gapscope::capture {

namespace {
constexpr int kTagControl = 0;
constexpr int kTagChunk = 1;
constexpr size_t kRankReadBudget = 8u << 20;   // per poll round, so one rank cannot starve the rest
constexpr size_t kRankQueueLimit = 1u << 20;   // control messages only; more means the rank is stuck
constexpr size_t kFetchWindow = 4u << 20;
constexpr uint32_t kClientInLimit = 1u << 20;  // client -> agent messages after Hello (all small)
constexpr int64_t kProgressNs = 250 * 1000000;
constexpr uint8_t kChunkDataTag = (4 << 3) | 2; // RankToAgent.chunk, length-delimited
} // namespace

struct AgentServer::RankConn {
    std::unique_ptr<PeerConnection> peer;
    uint32_t id = 0;
    bool registered = false;
    bool dead = false;
    RankRecord rec;
};

struct AgentServer::ClientConn {
    std::unique_ptr<PeerConnection> peer;
    uint32_t id = 0;
    bool authed = false;
    bool dead = false;
    std::string name;
    uint64_t attached = 0; // capture whose progress/done this client gets
    bool streaming = false;
    bool awaitingSnapshot = false;
    bool cut = false;
    uint64_t chunksSent = 0, lastSequence = 0;
    UniqueFd fetchFd;
    uint64_t fetchCapture = 0, fetchOffset = 0, fetchTotal = 0;
};

AgentServer::AgentServer(AgentOptions options)
    : m_opt(std::move(options))
{
    if (m_opt.host.empty()) {
        char name[256] = {};
        ::gethostname(name, sizeof name - 1);
        m_opt.host = name;
    }
    if (m_opt.outputDir.empty())
        m_opt.outputDir = "/tmp/gapscope-" + std::to_string(::getuid()) + "/captures";
    std::random_device rd;
    m_instance = (uint64_t(rd()) << 32) ^ rd();
}

AgentServer::~AgentServer()
{
    if (m_replay)
        m_replay->stop();
    m_merger.reset();
    if (m_unix.valid() && !m_socketPath.empty())
        ::unlink(m_socketPath.c_str());
}

Status AgentServer::start()
{
    auto ep = Endpoint::parse(m_opt.listen, kDefaultAgentPort);
    if (!ep)
        return ep.status().withContext("--listen");
    if (!m_opt.tokenFile.empty() && m_opt.token.empty()) {
        auto tok = loadToken(m_opt.tokenFile, true);
        if (!tok)
            return tok.status();
        m_opt.token = *tok;
    }
    if (!ep->isLoopback() && m_opt.token.empty())
        return Status::error("listening on " + ep->toString()
            + " (not loopback) needs --token-file FILE: clients must present that token");
    if (!m_opt.replayFile.empty()) {
        auto r = ReplaySource::open(m_opt.replayFile, m_opt.replaySpeed);
        if (!r)
            return r.status();
        m_replay = std::move(*r);
        m_opt.rankSocket = m_opt.rankSocket && !m_opt.socketPath.empty();
    }
    if (m_opt.rankSocket) {
        m_socketPath = m_opt.socketPath.empty() ? defaultAgentSocketPath() : m_opt.socketPath;
        if (Status s = prepareSocketDirectory(m_socketPath); !s)
            return s;
        auto u = listenUnix(m_socketPath);
        if (!u)
            return u.status();
        m_unix = std::move(*u);
        (void)setNonBlocking(m_unix.get());
    }
    auto t = listenTcp(*ep);
    if (!t)
        return t.status();
    m_tcp = std::move(*t);
    (void)setNonBlocking(m_tcp.get());
    m_port = boundPort(m_tcp.get());
    m_wake = UniqueFd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!m_wake.valid())
        return Status::error(std::string("eventfd: ") + std::strerror(errno));
    MergeWorker::Options mo;
    mo.queueBytes = m_opt.mergeQueueBytes;
    mo.chunkEvents = m_opt.chunkEvents;
    mo.flushIntervalMs = m_opt.flushIntervalMs;
    mo.zstdLevel = m_opt.zstdLevel;
    const int wakeFd = m_wake.get();
    m_merger = std::make_unique<MergeWorker>(mo, [wakeFd] {
        const uint64_t one = 1;
        (void)!::write(wakeFd, &one, sizeof one);
    });
    if (!m_opt.portFile.empty()) {
        std::ofstream pf(m_opt.portFile + ".tmp");
        pf << m_port << "\n";
        pf.close();
        ::rename((m_opt.portFile + ".tmp").c_str(), m_opt.portFile.c_str());
    }
    return Status::ok();
}

void AgentServer::stop()
{
    m_stopRequested.store(true);
    if (m_wake.valid()) {
        const uint64_t one = 1;
        (void)!::write(m_wake.get(), &one, sizeof one);
    }
}

void AgentServer::run()
{
    for (;;) {
        if (m_stopRequested.load() && !m_stopping) {
            m_stopping = true;
            m_stopDeadline = monotonicNs() + int64_t(5e9);
            if (m_session && !m_session->done())
                m_session->stop("agent shutting down");
        }
        if (m_stopping && (!m_session || m_session->done() || monotonicNs() > m_stopDeadline))
            break;
        loopOnce(50);
    }
    shutdownNow();
}

void AgentServer::shutdownNow()
{
    wire::AgentToRank bye;
    bye.mutable_goodbye()->set_reason("agent shutting down");
    for (auto& r : m_ranks)
        if (!r->dead) {
            (void)r->peer->enqueue(bye, kMaxRankFrameBytes);
            std::string err;
            r->peer->writeQueued(err);
        }
    wire::AgentToClient cbye;
    cbye.mutable_goodbye()->set_reason("agent shutting down");
    for (auto& c : m_clients)
        if (!c->dead && c->authed) {
            send(*c, cbye);
            std::string err;
            c->peer->writeQueued(err);
        }
}

void AgentServer::loopOnce(int timeoutMs)
{
    std::vector<pollfd> fds;
    fds.push_back({ m_wake.get(), POLLIN, 0 });
    fds.push_back({ m_tcp.get(), POLLIN, 0 });
    fds.push_back({ m_unix.valid() ? m_unix.get() : -1, POLLIN, 0 });
    for (auto& r : m_ranks)
        fds.push_back({ r->peer->fd(), short(POLLIN | (r->peer->wantsWrite() ? POLLOUT : 0)), 0 });
    for (auto& c : m_clients)
        fds.push_back({ c->peer->fd(), short(POLLIN | (c->peer->wantsWrite() ? POLLOUT : 0)), 0 });
    const int rc = ::poll(fds.data(), fds.size(), timeoutMs);
    if (rc > 0) {
        if (fds[0].revents) {
            uint64_t v;
            while (::read(m_wake.get(), &v, sizeof v) > 0) { }
        }
        size_t k = 3;
        const size_t nr = m_ranks.size(), nc = m_clients.size();
        for (size_t i = 0; i < nr; ++i, ++k)
            if (fds[k].revents)
                serviceRank(*m_ranks[i], fds[k].revents);
        for (size_t i = 0; i < nc; ++i, ++k)
            if (fds[k].revents)
                serviceClient(*m_clients[i], fds[k].revents);
        if (fds[1].revents)
            acceptClients();
        if (fds[2].revents)
            acceptRanks();
    }
    drainMerge();
    periodic();
    reap();
}

void AgentServer::acceptRanks()
{
    for (;;) {
        const int fd = ::accept4(m_unix.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        if (m_ranks.size() >= m_opt.maxRanks) {
            ::close(fd);
            continue;
        }
        setBufferSizes(fd, 0, 4 << 20);
        auto r = std::make_unique<RankConn>();
        r->id = m_nextConn++;
        r->peer = std::make_unique<PeerConnection>(UniqueFd(fd), kMaxRankFrameBytes, "rank connection " + std::to_string(r->id));
        m_ranks.push_back(std::move(r));
    }
}

void AgentServer::acceptClients()
{
    for (;;) {
        const int fd = ::accept4(m_tcp.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        if (m_clients.size() >= m_opt.maxClients) {
            ::close(fd);
            continue;
        }
        setNoDelay(fd);
        auto c = std::make_unique<ClientConn>();
        c->id = m_nextConn++;
        c->peer = std::make_unique<PeerConnection>(UniqueFd(fd), kMaxHandshakeFrameBytes, "client " + std::to_string(c->id));
        m_clients.push_back(std::move(c));
    }
}

void AgentServer::serviceRank(RankConn& r, short revents)
{
    if (r.dead)
        return;
    std::string err;
    if (revents & POLLOUT) {
        if (r.peer->writeQueued(err) != PeerConnection::Io::Ok) {
            closeRank(r, "connection lost" + (err.empty() ? std::string() : ": " + err));
            return;
        }
    }
    if (!(revents & (POLLIN | POLLHUP | POLLERR)))
        return;
    const auto io = r.peer->readAvailable(kRankReadBudget, err);
    std::string_view payload;
    for (;;) {
        const auto res = r.peer->decoder().next(payload);
        if (res == FrameDecoder::Result::NeedMore)
            break;
        if (res == FrameDecoder::Result::TooLarge) {
            closeRank(r, "message of " + std::to_string(r.peer->decoder().rejectedLength()) + " bytes exceeds the limit of "
                    + std::to_string(kMaxRankFrameBytes));
            return;
        }
        handleRankFrame(r, payload);
        if (r.dead)
            return;
    }
    if (io == PeerConnection::Io::Closed)
        closeRank(r, "the process closed its connection (exited or crashed)");
    else if (io == PeerConnection::Io::Error)
        closeRank(r, "read error: " + err);
}

void AgentServer::handleRankFrame(RankConn& r, std::string_view payload)
{
    // ChunkData goes to the merge thread unparsed (it parses it there); everything else is small.
    if (r.registered && !payload.empty() && uint8_t(payload[0]) == kChunkDataTag) {
        if (!m_session || m_session->done() || !m_session->involves(r.id))
            return;
        std::string copy(payload);
        if (!m_merger->tryPushData(r.id, m_session->planOf(r.id), copy))
            dropRankChunk(r, payload);
        return;
    }
    wire::RankToAgent m;
    if (Status s = parseFrame(payload, m, r.peer->name()); !s) {
        closeRank(r, s.message());
        return;
    }
    handleRankMessage(r, m);
}

void AgentServer::dropRankChunk(RankConn& r, std::string_view payload)
{
    // Queue full: keep the dictionary entries (later chunks refer to them), drop the events, count them.
    wire::RankToAgent m;
    if (!m.ParseFromArray(payload.data(), int(payload.size())) || !m.has_chunk()) {
        closeRank(r, "malformed ChunkData message");
        return;
    }
    pb::Chunk* c = m.mutable_chunk()->mutable_chunk();
    const uint64_t events = ChunkRemapper::eventCount(*c);
    if (m.chunk().capture_id() != m_session->id() || m.chunk().plan() != m_session->planOf(r.id))
        return;
    auto dict = std::make_unique<pb::Chunk>();
    dict->set_sequence(c->sequence());
    dict->set_base_time_ns(c->base_time_ns());
    dict->set_first_string_id(c->first_string_id());
    dict->mutable_strings()->Swap(c->mutable_strings());
    dict->mutable_lanes()->Swap(c->mutable_lanes());
    dict->mutable_configs()->Swap(c->mutable_configs());
    dict->mutable_steps()->Swap(c->mutable_steps()); // steps are tiny and say where the gap is
    dict->mutable_counters()->Swap(c->mutable_counters());
    m_merger->pushDictionaryOnly(r.id, m.chunk().plan(), std::move(dict));
    m_session->onDropped(r.id, events);
}

void AgentServer::handleRankMessage(RankConn& r, const wire::RankToAgent& m)
{
    if (!r.registered && !m.has_register_rank()) {
        closeRank(r, "first message was not Register");
        return;
    }
    CaptureSession* s = (m_session && !m_session->done() && m_session->involves(r.id)) ? m_session.get() : nullptr;
    switch (m.msg_case()) {
    case wire::RankToAgent::kRegisterRank:
        if (r.registered)
            closeRank(r, "registered twice");
        else
            onRegister(r, m.register_rank());
        return;
    case wire::RankToAgent::kArmed:
        r.rec.state = m.armed().error() == wire::ARM_OK ? "armed" : "idle";
        if (s)
            s->onArmed(r.id, m.armed());
        return;
    case wire::RankToAgent::kStep:
        if (m.step().recording())
            r.rec.state = "recording";
        if (s)
            s->onStep(r.id, m.step());
        return;
    case wire::RankToAgent::kChunk: // parsed only when it did not start with the usual tag
        if (s) {
            std::string copy;
            m.SerializeToString(&copy);
            if (!m_merger->tryPushData(r.id, s->planOf(r.id), copy))
                s->onDropped(r.id, ChunkRemapper::eventCount(m.chunk().chunk()));
        }
        return;
    case wire::RankToAgent::kStatus:
        if (!m.status().other_cupti_client().empty())
            r.rec.reg.set_other_cupti_client(m.status().other_cupti_client());
        if (s)
            s->onStatus(r.id, m.status());
        return;
    case wire::RankToAgent::kDone:
        if (s)
            s->onRecordingDone(r.id, m.done());
        return;
    case wire::RankToAgent::kDisarmed:
        r.rec.state = "idle";
        if (s)
            s->onDisarmed(r.id, m.disarmed());
        return;
    case wire::RankToAgent::kGoodbye:
        closeRank(r, "left: " + m.goodbye().reason());
        return;
    case wire::RankToAgent::kPing: {
        wire::AgentToRank pong;
        auto* p = pong.mutable_pong();
        p->set_nonce(m.ping().nonce());
        p->set_t1_ns(m.ping().t1_ns());
        p->set_t2_ns(realtimeNs());
        p->set_t3_ns(realtimeNs());
        sendToRank(r.id, pong);
        return;
    }
    case wire::RankToAgent::kPong:
    case wire::RankToAgent::MSG_NOT_SET:
        return;
    }
}

void AgentServer::onRegister(RankConn& r, const wire::Register& reg)
{
    wire::AgentToRank w;
    auto* wl = w.mutable_welcome();
    wl->set_protocol_version(kProtocolVersion);
    wl->set_agent_version(GAPSCOPE_VERSION);
    wl->set_connection_id(r.id);
    if (reg.protocol_version() != kProtocolVersion) {
        wl->set_accepted(false);
        wl->set_error("protocol version " + std::to_string(reg.protocol_version()) + " not supported (agent speaks "
            + std::to_string(kProtocolVersion) + ")");
        sendToRank(r.id, w);
        r.peer->closeAfterFlush();
        return;
    }
    uint32_t rank = 0;
    if (reg.rank() >= 0) {
        rank = uint32_t(reg.rank());
    } else {
        for (const auto& o : m_ranks)
            if (o->registered && !o->dead)
                rank = std::max(rank, o->rec.rank + 1);
    }
    r.registered = true;
    r.rec.connId = r.id;
    r.rec.rank = rank;
    r.rec.reg = reg;
    if (r.rec.reg.host().empty())
        r.rec.reg.set_host(m_opt.host);
    r.rec.registeredUnixNs = realtimeNs();
    r.rec.state = "idle";
    r.peer->decoder().setLimit(kMaxRankFrameBytes);
    wl->set_accepted(true);
    wl->set_assigned_rank(int32_t(rank));
    sendToRank(r.id, w);
}

void AgentServer::closeRank(RankConn& r, const std::string& reason)
{
    if (r.dead)
        return;
    r.dead = true;
    r.rec.state = "gone";
    if (m_session && !m_session->done())
        m_session->onRankGone(r.id, reason);
}

void AgentServer::sendToRank(uint32_t connId, const wire::AgentToRank& msg)
{
    for (auto& r : m_ranks)
        if (r->id == connId && !r->dead) {
            if (Status s = r->peer->enqueue(msg, kMaxRankFrameBytes); !s)
                return;
            if (r->peer->queuedBytes() > kRankQueueLimit) {
                closeRank(*r, "not reading the agent's messages");
                return;
            }
            std::string err;
            if (r->peer->writeQueued(err) != PeerConnection::Io::Ok)
                closeRank(*r, "connection lost: " + err);
            return;
        }
}

void AgentServer::serviceClient(ClientConn& c, short revents)
{
    if (c.dead)
        return;
    std::string err;
    if (revents & POLLOUT) {
        if (c.peer->writeQueued(err) != PeerConnection::Io::Ok) {
            closeClient(c, "connection lost");
            return;
        }
        if (c.peer->closing() && !c.peer->wantsWrite()) {
            closeClient(c, "closed after error");
            return;
        }
    }
    if (!(revents & (POLLIN | POLLHUP | POLLERR)) || c.peer->closing())
        return;
    const auto io = c.peer->readAvailable(1u << 20, err);
    std::string_view payload;
    for (;;) {
        const auto res = c.peer->decoder().next(payload);
        if (res == FrameDecoder::Result::NeedMore)
            break;
        if (res == FrameDecoder::Result::TooLarge) {
            sendError(c, wire::ERR_TOO_LARGE,
                "message of " + std::to_string(c.peer->decoder().rejectedLength()) + " bytes exceeds the limit of "
                    + std::to_string(c.peer->decoder().limit()),
                true);
            return;
        }
        wire::ClientToAgent m;
        if (Status s = parseFrame(payload, m, c.peer->name()); !s) {
            sendError(c, wire::ERR_MALFORMED, s.message(), true);
            return;
        }
        handleClient(c, m);
        if (c.dead || c.peer->closing())
            return;
    }
    if (io != PeerConnection::Io::Ok)
        closeClient(c, "disconnected");
}

void AgentServer::send(ClientConn& c, const wire::AgentToClient& msg)
{
    if (c.dead)
        return;
    if (Status s = c.peer->enqueue(msg, kMaxClientFrameBytes, kTagControl); !s)
        return;
    if (c.peer->queuedBytes() > 2 * m_opt.clientQueueBytes + kFetchWindow) {
        closeClient(c, "not reading (queue full)");
        return;
    }
    std::string err;
    if (c.peer->writeQueued(err) != PeerConnection::Io::Ok)
        closeClient(c, "connection lost");
}

void AgentServer::sendError(ClientConn& c, wire::ErrorCode code, const std::string& msg, bool fatal, uint64_t requestId)
{
    wire::AgentToClient m;
    auto* e = m.mutable_error();
    e->set_code(code);
    e->set_message(msg);
    e->set_fatal(fatal);
    e->set_request_id(requestId);
    send(c, m);
    if (fatal) {
        c.peer->closeAfterFlush();
        if (!c.peer->wantsWrite())
            closeClient(c, msg);
    }
}

void AgentServer::handleClient(ClientConn& c, const wire::ClientToAgent& m)
{
    if (!c.authed && !m.has_hello()) {
        sendError(c, wire::ERR_UNEXPECTED, "the first message must be Hello", true);
        return;
    }
    switch (m.msg_case()) {
    case wire::ClientToAgent::kHello:
        if (c.authed)
            sendError(c, wire::ERR_UNEXPECTED, "Hello sent twice", false);
        else
            onHello(c, m.hello());
        return;
    case wire::ClientToAgent::kListRanks: {
        wire::AgentToClient r;
        auto* rl = r.mutable_ranks();
        rl->set_request_id(m.list_ranks().request_id());
        for (const auto& rec : rankRecords()) {
            auto* e = rl->add_ranks();
            *e->mutable_info() = rec.rankInfo();
            *e->mutable_gpu() = rec.reg.gpu();
            e->set_state(rec.state);
            e->set_connection_id(rec.connId);
            e->set_registered_unix_ns(rec.registeredUnixNs);
            *e->mutable_capabilities() = rec.reg.capabilities();
        }
        *rl->mutable_agent() = identity();
        send(c, r);
        return;
    }
    case wire::ClientToAgent::kStartCapture:
        onStartCapture(c, m.start_capture());
        return;
    case wire::ClientToAgent::kAttach:
        onAttach(c, m.attach());
        return;
    case wire::ClientToAgent::kStop:
        if (m_session && !m_session->done() && (m.stop().capture_id() == 0 || m.stop().capture_id() == m_session->id()))
            m_session->stop("stopped by " + c.name);
        else
            sendError(c, wire::ERR_NOT_FOUND, "no running capture " + std::to_string(m.stop().capture_id()), false);
        return;
    case wire::ClientToAgent::kFetch:
        onFetch(c, m.fetch());
        return;
    case wire::ClientToAgent::kPing: {
        const int64_t t2 = realtimeNs();
        wire::AgentToClient r;
        auto* p = r.mutable_pong();
        p->set_nonce(m.ping().nonce());
        p->set_t1_ns(m.ping().t1_ns());
        p->set_t2_ns(t2);
        p->set_t3_ns(realtimeNs());
        send(c, r);
        return;
    }
    case wire::ClientToAgent::kGoodbye:
        closeClient(c, "said goodbye");
        return;
    case wire::ClientToAgent::kPong:
    case wire::ClientToAgent::MSG_NOT_SET:
        return;
    }
}

void AgentServer::onHello(ClientConn& c, const wire::Hello& h)
{
    if (h.protocol_version() != kProtocolVersion) {
        sendError(c, wire::ERR_VERSION,
            "protocol version " + std::to_string(h.protocol_version()) + " not supported (agent speaks "
                + std::to_string(kProtocolVersion) + ")",
            true);
        return;
    }
    if (!m_opt.token.empty() && !tokenMatches(m_opt.token, h.token())) {
        sendError(c, wire::ERR_AUTH, "invalid or missing token (the agent was started with --token-file)", true);
        return;
    }
    c.authed = true;
    c.name = h.client_name().empty() ? c.peer->name() : h.client_name().substr(0, 64);
    c.peer->decoder().setLimit(kClientInLimit);
    wire::AgentToClient r;
    auto* hr = r.mutable_hello();
    hr->set_protocol_version(kProtocolVersion);
    *hr->mutable_agent() = identity();
    hr->set_agent_time_ns(realtimeNs());
    hr->set_active_capture_id(m_session && !m_session->done() ? m_session->id() : 0);
    send(c, r);
}

wire::AgentIdentity AgentServer::identity() const
{
    wire::AgentIdentity id;
    id.set_host(m_opt.host);
    id.set_agent_version(GAPSCOPE_VERSION);
    id.set_pid(uint32_t(::getpid()));
    id.set_instance_id(m_instance);
    id.set_replay(m_replay != nullptr);
    if (m_replay) {
        id.set_replay_file(m_replay->path());
        id.set_replay_speed(m_replay->speed());
    }
    id.set_socket_path(m_socketPath);
    return id;
}

std::vector<RankRecord> AgentServer::rankRecords() const
{
    if (m_replay)
        return m_replay->ranks();
    std::vector<RankRecord> out;
    for (const auto& r : m_ranks)
        if (r->registered && !r->dead)
            out.push_back(r->rec);
    std::sort(out.begin(), out.end(), [](const RankRecord& a, const RankRecord& b) { return a.rank < b.rank; });
    return out;
}

Expected<std::string> AgentServer::outputPathFor(const std::string& requested, uint64_t id) const
{
    std::string name = requested;
    if (name.empty()) {
        char stamp[32];
        const std::time_t t = std::time(nullptr);
        std::tm tm {};
        localtime_r(&t, &tm);
        std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        // The agent instance keeps agents sharing an output folder (several on one host) apart.
        char inst[9];
        std::snprintf(inst, sizeof inst, "%08x", unsigned(m_instance & 0xffffffffu));
        name = std::string("capture-") + stamp + "-" + inst + "-" + std::to_string(id) + ".gapscope";
    }
    if (name.find('/') != std::string::npos || name == "." || name == ".." || name.size() > 200)
        return Status::error("output name '" + requested + "' must be a plain file name (the agent writes into "
            + m_opt.outputDir + ")");
    std::string dir;
    for (size_t pos = 0; pos != std::string::npos;) {
        pos = m_opt.outputDir.find('/', pos + 1);
        dir = m_opt.outputDir.substr(0, pos);
        if (!dir.empty())
            ::mkdir(dir.c_str(), 0700);
    }
    struct stat st {};
    if (::stat(m_opt.outputDir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return Status::error(m_opt.outputDir + ": cannot create the output folder");
    std::string path = m_opt.outputDir + "/" + name;
    struct stat existing {};
    for (int n = 2; ::stat(path.c_str(), &existing) == 0 && n < 1000; ++n) { // never overwrite a capture
        const auto dot = name.rfind(".gapscope");
        path = m_opt.outputDir + "/" + (dot == std::string::npos ? name : name.substr(0, dot)) + "-" + std::to_string(n)
            + ".gapscope";
    }
    return path;
}

void AgentServer::onStartCapture(ClientConn& c, const wire::StartCapture& req)
{
    if (m_session && !m_session->done()) {
        sendError(c, wire::ERR_BUSY, "capture " + std::to_string(m_session->id()) + " is running (AttachCapture follows it)",
            false, req.request_id());
        return;
    }
    if (m_pending) {
        sendError(c, wire::ERR_BUSY, "another capture is waiting for ranks", false, req.request_id());
        return;
    }
    if (req.settings().steps() == 0 && req.settings().duration_s() <= 0) {
        sendError(c, wire::ERR_UNEXPECTED, "StartCapture needs steps > 0 or duration_s > 0", false, req.request_id());
        return;
    }
    if (!m_replay && rankRecords().size() < req.wait_for_ranks()) {
        m_pending = std::make_unique<PendingStart>();
        m_pending->client = c.id;
        m_pending->req = req;
        const double t = req.arm_timeout_s() > 0 ? req.arm_timeout_s() : m_opt.armTimeoutS;
        m_pending->deadline = monotonicNs() + int64_t(t * 1e9);
        return;
    }
    beginCapture(c, req);
}

bool AgentServer::beginCapture(ClientConn& c, const wire::StartCapture& req)
{
    std::vector<RankRecord> ranks;
    for (const auto& r : rankRecords())
        if (req.ranks().empty() || std::find(req.ranks().begin(), req.ranks().end(), r.rank) != req.ranks().end())
            ranks.push_back(r);
    if (ranks.empty() && !m_replay) {
        sendError(c, wire::ERR_NO_RANKS,
            "no rank process is registered with this agent (rank socket " + m_socketPath
                + "); start the server with 'gapscope-agent launch -- COMMAND' or set CUDA_INJECTION64_PATH and "
                  "GAPSCOPE_AGENT_SOCKET",
            false, req.request_id());
        return false;
    }
    const uint64_t id = m_nextCapture++;
    auto path = outputPathFor(req.output_path(), id);
    if (!path) {
        sendError(c, wire::ERR_IO, path.error(), false, req.request_id());
        return false;
    }
    AgentOptions opt = m_opt;
    if (req.arm_timeout_s() > 0)
        opt.armTimeoutS = req.arm_timeout_s();
    m_session = std::make_unique<CaptureSession>(id, req, ranks, opt, *path, *this);
    for (auto& cl : m_clients)
        if (cl->attached && cl.get() != &c)
            cl->attached = 0; // followers of the previous capture
    c.attached = id;
    c.streaming = req.stream();
    c.cut = false;
    c.chunksSent = 0;
    m_session->start();
    wire::AgentToClient m;
    *m.mutable_started() = m_session->started();
    send(c, m);
    return true;
}

void AgentServer::onAttach(ClientConn& c, const wire::AttachCapture& req)
{
    if (m_session && (req.capture_id() == 0 || req.capture_id() == m_session->id())) {
        c.attached = m_session->id();
        wire::AgentToClient m;
        *m.mutable_started() = m_session->started();
        m.mutable_started()->set_request_id(0);
        send(c, m);
        if (m_session->done()) {
            wire::AgentToClient d;
            *d.mutable_done() = m_session->doneMessage();
            send(c, d);
        } else {
            c.streaming = false;
            c.awaitingSnapshot = true; // streams from the dictionary snapshot on
            c.cut = false;
            m_merger->snapshotFor(c.id);
        }
        return;
    }
    for (const auto& f : m_finished)
        if (f.id == req.capture_id()) {
            wire::AgentToClient d;
            *d.mutable_done() = f.done;
            send(c, d);
            return;
        }
    sendError(c, wire::ERR_NOT_FOUND, "no capture " + std::to_string(req.capture_id()), false);
}

void AgentServer::onFetch(ClientConn& c, const wire::FetchFile& req)
{
    const Finished* f = nullptr;
    for (const auto& x : m_finished)
        if (req.capture_id() == 0 || x.id == req.capture_id())
            f = &x;
    if (!f) {
        const bool running = m_session && !m_session->done() && (req.capture_id() == 0 || req.capture_id() == m_session->id());
        sendError(c, running ? wire::ERR_BUSY : wire::ERR_NOT_FOUND,
            running ? "the capture is still running; fetch it after CaptureDone"
                    : "no finished capture " + std::to_string(req.capture_id()),
            false);
        return;
    }
    UniqueFd fd(::open(f->path.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0) {
        sendError(c, wire::ERR_IO, f->path + ": " + std::strerror(errno), false);
        return;
    }
    c.fetchFd = std::move(fd);
    c.fetchCapture = f->id;
    c.fetchTotal = uint64_t(st.st_size);
    c.fetchOffset = std::min<uint64_t>(req.offset(), c.fetchTotal);
    pumpFetch(c);
}

void AgentServer::pumpFetch(ClientConn& c)
{
    while (c.fetchFd.valid() && !c.dead && c.peer->queuedBytes() < kFetchWindow) {
        const uint64_t n = std::min<uint64_t>(kFileDataPiece, c.fetchTotal - c.fetchOffset);
        std::string buf(n, '\0');
        const ssize_t got = n ? ::pread(c.fetchFd.get(), &buf[0], n, off_t(c.fetchOffset)) : 0;
        if (got < 0 || uint64_t(got) != n) {
            c.fetchFd.reset();
            sendError(c, wire::ERR_IO, "reading the capture file failed", false);
            return;
        }
        wire::AgentToClient m;
        auto* fdm = m.mutable_file();
        fdm->set_capture_id(c.fetchCapture);
        fdm->set_offset(c.fetchOffset);
        fdm->set_total_bytes(c.fetchTotal);
        c.fetchOffset += n;
        fdm->set_eof(c.fetchOffset >= c.fetchTotal);
        fdm->set_data(std::move(buf));
        if (fdm->eof())
            c.fetchFd.reset();
        send(c, m);
    }
}

void AgentServer::sendToClients(uint64_t captureId, const wire::AgentToClient& msg)
{
    auto frame = std::make_shared<std::string>();
    if (!appendFrame(msg, *frame, kMaxClientFrameBytes))
        return;
    for (auto& c : m_clients)
        if (!c->dead && c->authed && c->attached == captureId) {
            c->peer->enqueue(frame, kTagControl);
            if (c->peer->queuedBytes() > 2 * m_opt.clientQueueBytes + kFetchWindow)
                closeClient(*c, "not reading (queue full)");
        }
}

void AgentServer::streamChunk(const MergeOutput& out)
{
    if (!out.frame)
        return;
    for (auto& cp : m_clients) {
        ClientConn& c = *cp;
        if (c.dead || !c.streaming || c.cut || c.attached != out.captureId)
            continue;
        if (c.peer->queuedBytes() + out.frame->size() > m_opt.clientQueueBytes) {
            // Too slow: drop its queued stream (the frame being written finishes) and tell it.
            c.peer->dropQueued(kTagChunk);
            c.cut = true;
            c.streaming = false;
            ++m_clientsCut;
            wire::AgentToClient m;
            auto* cut = m.mutable_cut();
            cut->set_capture_id(out.captureId);
            cut->set_reason("client too slow: more than " + std::to_string(m_opt.clientQueueBytes)
                + " bytes of stream waiting; the capture goes on and the file is complete (FetchFile after CaptureDone)");
            cut->set_chunks_sent(c.chunksSent);
            cut->set_last_sequence(c.lastSequence);
            if (m_session)
                cut->set_output_path(m_session->outputPath());
            send(c, m);
            continue;
        }
        c.peer->enqueue(out.frame, kTagChunk);
        ++c.chunksSent;
        c.lastSequence = out.sequence;
    }
}

void AgentServer::drainMerge()
{
    for (auto& o : m_merger->takeOutputs()) {
        switch (o.kind) {
        case MergeOutput::Kind::Chunk:
            if (m_session && m_session->id() == o.captureId)
                m_session->onChunkWritten(o.events);
            streamChunk(o);
            break;
        case MergeOutput::Kind::Snapshot:
            for (auto& c : m_clients)
                if (c->id == o.stream && c->awaitingSnapshot && o.frame) {
                    c->awaitingSnapshot = false;
                    c->streaming = true;
                    c->peer->enqueue(o.frame, kTagChunk);
                }
            break;
        case MergeOutput::Kind::StreamError:
            if (m_session && m_session->id() == o.captureId) {
                m_session->onStreamError(o.stream, o.error);
                m_session->onRankGone(o.stream, "its data was rejected: " + o.error);
                wire::AgentToRank d;
                d.mutable_disarm()->set_capture_id(o.captureId);
                d.mutable_disarm()->set_reason("data rejected: " + o.error);
                sendToRank(o.stream, d);
            }
            break;
        case MergeOutput::Kind::Finished:
            if (m_session && m_session->id() == o.captureId) {
                m_session->onMergeFinished(o);
                m_finished.push_back({ o.captureId, m_session->outputPath(), m_session->doneMessage() });
                while (m_finished.size() > 16)
                    m_finished.pop_front();
            }
            break;
        }
    }
}

void AgentServer::periodic()
{
    const int64_t now = monotonicNs();
    if (m_pending) {
        ClientConn* c = nullptr;
        for (auto& cl : m_clients)
            if (cl->id == m_pending->client && !cl->dead)
                c = cl.get();
        const bool enough = rankRecords().size() >= m_pending->req.wait_for_ranks();
        if (!c) {
            m_pending.reset();
        } else if (enough || now > m_pending->deadline) {
            auto p = std::move(m_pending);
            beginCapture(*c, p->req);
        }
    }
    if (m_session && !m_session->done()) {
        m_session->tick(now);
        if (now - m_lastProgress >= kProgressNs && !m_session->done()) {
            m_lastProgress = now;
            wire::AgentToClient m;
            *m.mutable_progress() = m_session->progress();
            sendToClients(m_session->id(), m);
        }
    }
    for (auto& c : m_clients) {
        if (c->dead)
            continue;
        pumpFetch(*c);
        std::string err;
        if (c->peer->wantsWrite() && c->peer->writeQueued(err) != PeerConnection::Io::Ok)
            closeClient(*c, "connection lost");
    }
}

void AgentServer::closeClient(ClientConn& c, const std::string& reason)
{
    (void)reason;
    c.dead = true;
}

void AgentServer::reap()
{
    m_ranks.erase(std::remove_if(m_ranks.begin(), m_ranks.end(), [](const auto& r) { return r->dead; }), m_ranks.end());
    m_clients.erase(std::remove_if(m_clients.begin(), m_clients.end(), [](const auto& c) { return c->dead; }),
        m_clients.end());
}

} // namespace gapscope::capture
