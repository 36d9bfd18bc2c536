// SPDX-License-Identifier: MIT
#include "capture/agent/agentserver.h"

#include "capture/agent/capturearchive.h"
#include "capture/agent/capturesession.h"
#include "capture/agent/clientlink.h"
#include "capture/agent/peerconnection.h"
#include "capture/agent/rankhub.h"
#include "capture/agent/replaysource.h"
#include "capture/client/chunkremapper.h"
#include "capture/protocol/framing.h"
#include "capture/protocol/privatefolder.h"
#include "capture/protocol/socketpath.h"
#include "capture/protocol/tokenauth.h"
#include "model/format/stats.h"
#include "model/format/trace.pb.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
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
constexpr size_t kFetchWindow = 4u << 20;
constexpr uint32_t kClientInLimit = 1u << 20; // client -> agent messages after Hello (all small)
constexpr int64_t kProgressNs = 250 * 1000000;
} // namespace

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
    m_archive = std::make_unique<CaptureArchive>(m_opt.outputDir, m_instance);
}

AgentServer::~AgentServer()
{
    if (m_replay)
        m_replay->stop();
    m_merger.reset();
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
    if (Status s = preparePrivateFolder(m_opt.outputDir, "capture files"); !s)
        return s.withContext("--output-dir");
    RankHub::Limits limits;
    limits.maxRanks = m_opt.maxRanks;
    limits.maxUnregistered = std::max(1u, m_opt.maxUnregistered);
    limits.registerTimeoutNs = int64_t(m_opt.handshakeTimeoutS * 1e9);
    limits.inputBudgetBytes = std::max(m_opt.rankInputBytes, size_t(2) * kMaxRankFrameBytes); // room for a whole frame
    m_ranks = std::make_unique<RankHub>(static_cast<RankHub::Events&>(*this), m_opt.host, limits);
    if (m_opt.rankSocket) {
        m_socketPath = m_opt.socketPath.empty() ? defaultAgentSocketPath() : m_opt.socketPath;
        if (Status s = m_ranks->listen(m_socketPath); !s)
            return s;
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
        // A new file, never through a link (the port file may be in a shared folder), renamed into place.
        const std::string tmp = m_opt.portFile + ".tmp";
        ::unlink(tmp.c_str());
        const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
            return Status::error(tmp + ": cannot create the port file: " + std::strerror(errno));
        const std::string line = std::to_string(m_port) + "\n";
        const bool ok = ::write(fd, line.data(), line.size()) == ssize_t(line.size());
        ::close(fd);
        if (!ok || ::rename(tmp.c_str(), m_opt.portFile.c_str()) != 0)
            return Status::error(m_opt.portFile + ": cannot write the port file: " + std::strerror(errno));
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
    m_ranks->goodbyeAll("agent shutting down");
    wire::AgentToClient cbye;
    cbye.mutable_goodbye()->set_reason("agent shutting down");
    for (auto& c : m_clients)
        if (!c->dead && c->authed) {
            send(*c, cbye);
            std::string err;
            c->peer().writeQueued(err);
        }
}

void AgentServer::loopOnce(int timeoutMs)
{
    std::vector<pollfd> fds;
    fds.push_back({ m_wake.get(), POLLIN, 0 });
    fds.push_back({ m_tcp.get(), POLLIN, 0 });
    fds.push_back({ m_ranks->listenFd(), POLLIN, 0 });
    m_ranks->appendPollFds(fds);
    const size_t firstClient = fds.size();
    for (auto& c : m_clients)
        fds.push_back({ c->peer().fd(), short(POLLIN | (c->peer().wantsWrite() ? POLLOUT : 0)), 0 });
    const int rc = ::poll(fds.data(), fds.size(), timeoutMs);
    if (rc > 0) {
        if (fds[0].revents) {
            uint64_t v;
            while (::read(m_wake.get(), &v, sizeof v) > 0) { }
        }
        m_ranks->service(fds.data() + 3, firstClient - 3);
        const size_t nc = fds.size() - firstClient;
        for (size_t i = 0; i < nc && i < m_clients.size(); ++i)
            if (fds[firstClient + i].revents)
                serviceClient(*m_clients[i], fds[firstClient + i].revents);
        if (fds[1].revents)
            acceptClients();
        if (fds[2].revents)
            m_ranks->accept(m_nextConn);
    }
    drainMerge();
    periodic();
    reap();
}

void AgentServer::acceptClients()
{
    for (;;) {
        const int fd = ::accept4(m_tcp.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        // Unauthenticated connections have a quota of their own; the oldest of them makes room, so
        // idle connections cannot lock out a client that sends its Hello at once.
        ClientLink* oldest = nullptr;
        uint32_t waiting = 0;
        for (auto& c : m_clients)
            if (!c->dead && !c->authed) {
                ++waiting;
                if (!oldest || c->peer().openedNs() < oldest->peer().openedNs())
                    oldest = c.get();
            }
        if (oldest && waiting >= std::max(1u, m_opt.maxUnauthenticated)) {
            ++m_unauthenticatedEvicted;
            sendError(*oldest, wire::ERR_BUSY, "closed to make room: no valid Hello yet", true);
            closeClient(*oldest, "evicted before Hello");
        }
        setNoDelay(fd);
        const uint32_t id = m_nextConn++;
        m_clients.push_back(std::make_unique<ClientLink>(id,
            std::make_unique<PeerConnection>(UniqueFd(fd), kMaxHandshakeFrameBytes, "client " + std::to_string(id))));
    }
}

void AgentServer::dropRankChunk(const RankRecord& r, std::string_view payload)
{
    // Queue full: keep the dictionary entries (later chunks refer to them), drop the events, count them.
    wire::RankToAgent m;
    if (!m.ParseFromArray(payload.data(), int(payload.size())) || !m.has_chunk()) {
        m_ranks->close(r.connId, "malformed ChunkData message");
        return;
    }
    pb::Chunk* c = m.mutable_chunk()->mutable_chunk();
    const uint64_t events = ChunkRemapper::eventCount(*c);
    if (m.chunk().capture_id() != m_session->id() || m.chunk().plan() != m_session->planOf(r.connId))
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
    dict->mutable_graph_nodes()->Swap(c->mutable_graph_nodes()); // where the kept kernels' nodes were built
    m_merger->pushDictionaryOnly(r.connId, m.chunk().plan(), std::move(dict));
    m_session->onDropped(r.connId, events);
}

void AgentServer::sendToRank(uint32_t connId, const wire::AgentToRank& msg)
{
    m_ranks->send(connId, msg);
}

void AgentServer::rankChunk(const RankRecord& r, std::string_view payload)
{
    if (!m_session || m_session->done() || !m_session->involves(r.connId))
        return;
    std::string copy(payload);
    if (!m_merger->tryPushData(r.connId, m_session->planOf(r.connId), copy))
        dropRankChunk(r, payload);
}

void AgentServer::rankGone(const RankRecord& r, const std::string& reason)
{
    if (m_session && !m_session->done())
        m_session->onRankGone(r.connId, reason);
}

void AgentServer::rankMessage(RankRecord& r, const wire::RankToAgent& m)
{
    CaptureSession* s = (m_session && !m_session->done() && m_session->involves(r.connId)) ? m_session.get() : nullptr;
    if (!s)
        return;
    switch (m.msg_case()) {
    case wire::RankToAgent::kArmed:
        s->onArmed(r.connId, m.armed());
        return;
    case wire::RankToAgent::kStep:
        s->onStep(r.connId, m.step());
        return;
    case wire::RankToAgent::kChunk: { // parsed only when it did not start with the usual tag
        std::string copy;
        m.SerializeToString(&copy);
        if (!m_merger->tryPushData(r.connId, s->planOf(r.connId), copy))
            s->onDropped(r.connId, ChunkRemapper::eventCount(m.chunk().chunk()));
        return;
    }
    case wire::RankToAgent::kStatus:
        s->onStatus(r.connId, m.status());
        return;
    case wire::RankToAgent::kDone:
        s->onRecordingDone(r.connId, m.done());
        return;
    case wire::RankToAgent::kDisarmed:
        s->onDisarmed(r.connId, m.disarmed());
        return;
    default:
        return;
    }
}

void AgentServer::serviceClient(ClientLink& c, short revents)
{
    if (c.dead)
        return;
    std::string err;
    if (revents & POLLOUT) {
        if (c.peer().writeQueued(err) != PeerConnection::Io::Ok) {
            closeClient(c, "connection lost");
            return;
        }
        if (c.peer().closing() && !c.peer().wantsWrite()) {
            closeClient(c, "closed after error");
            return;
        }
    }
    if (!(revents & (POLLIN | POLLHUP | POLLERR)) || c.peer().closing())
        return;
    // Before Hello one frame of kMaxHandshakeFrameBytes is all a client may send: read no more.
    const auto io = c.peer().readAvailable(c.authed ? 1u << 20 : kMaxHandshakeFrameBytes + kFrameHeaderBytes, err);
    std::string_view payload;
    for (;;) {
        const auto res = c.peer().decoder().next(payload);
        if (res == FrameDecoder::Result::NeedMore)
            break;
        if (res == FrameDecoder::Result::TooLarge) {
            sendError(c, wire::ERR_TOO_LARGE,
                "message of " + std::to_string(c.peer().decoder().rejectedLength()) + " bytes exceeds the limit of "
                    + std::to_string(c.peer().decoder().limit()),
                true);
            return;
        }
        wire::ClientToAgent m;
        if (Status s = parseFrame(payload, m, c.peer().name()); !s) {
            sendError(c, wire::ERR_MALFORMED, s.message(), true);
            return;
        }
        handleClient(c, m);
        if (c.dead || c.peer().closing())
            return;
    }
    if (io != PeerConnection::Io::Ok)
        closeClient(c, "disconnected");
}

void AgentServer::send(ClientLink& c, const wire::AgentToClient& msg)
{
    if (c.dead)
        return;
    if (Status s = c.peer().enqueue(msg, kMaxClientFrameBytes, ClientLink::kTagControl); !s)
        return;
    if (c.peer().queuedBytes() > 2 * m_opt.clientQueueBytes + kFetchWindow) {
        closeClient(c, "not reading (queue full)");
        return;
    }
    std::string err;
    if (c.peer().writeQueued(err) != PeerConnection::Io::Ok)
        closeClient(c, "connection lost");
}

void AgentServer::sendError(ClientLink& c, wire::ErrorCode code, const std::string& msg, bool fatal, uint64_t requestId)
{
    wire::AgentToClient m;
    auto* e = m.mutable_error();
    e->set_code(code);
    e->set_message(msg);
    e->set_fatal(fatal);
    e->set_request_id(requestId);
    send(c, m);
    if (fatal) {
        c.peer().closeAfterFlush();
        if (!c.peer().wantsWrite())
            closeClient(c, msg);
    }
}

void AgentServer::handleClient(ClientLink& c, const wire::ClientToAgent& m)
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

void AgentServer::onHello(ClientLink& c, const wire::Hello& h)
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
    size_t authed = 0;
    for (const auto& o : m_clients)
        authed += !o->dead && o->authed;
    if (authed >= m_opt.maxClients) {
        ++m_refusedFull;
        sendError(c, wire::ERR_BUSY, "the agent serves " + std::to_string(m_opt.maxClients) + " clients already", true);
        return;
    }
    c.authed = true;
    c.name = h.client_name().empty() ? c.peer().name() : h.client_name().substr(0, 64);
    c.peer().decoder().setLimit(kClientInLimit);
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
    auto counter = [&](format::Stat stat, uint64_t value) {
        *id.add_connection_counters() = format::makeCounter(stat, -1, value);
    };
    counter(format::Stat::ClientsHandshakeTimeout, m_handshakeTimeouts);
    counter(format::Stat::ClientsUnauthenticatedEvicted, m_unauthenticatedEvicted);
    counter(format::Stat::ClientsRefusedFull, m_refusedFull);
    counter(format::Stat::RankConnectionsUnregisteredDropped, m_ranks ? m_ranks->unregisteredDrops() : 0);
    counter(format::Stat::RankConnectionsBudgetDropped, m_ranks ? m_ranks->budgetDrops() : 0);
    return id;
}

std::vector<RankRecord> AgentServer::rankRecords() const
{
    return m_replay ? m_replay->ranks() : m_ranks->records();
}

void AgentServer::onStartCapture(ClientLink& c, const wire::StartCapture& req)
{
    if (m_session && !m_session->done()) {
        sendError(c, wire::ERR_BUSY,
            "capture " + std::to_string(m_session->id()) + " is running (AttachCapture follows it)", false,
            req.request_id());
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
        m_pending->client = c.id();
        m_pending->req = req;
        const double t = req.arm_timeout_s() > 0 ? req.arm_timeout_s() : m_opt.armTimeoutS;
        m_pending->deadline = monotonicNs() + int64_t(t * 1e9);
        return;
    }
    beginCapture(c, req);
}

bool AgentServer::beginCapture(ClientLink& c, const wire::StartCapture& req)
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
    auto path = m_archive->pathFor(req.output_path(), id);
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
    c.follow(id, req.stream());
    m_session->start();
    wire::AgentToClient m;
    *m.mutable_started() = m_session->started();
    send(c, m);
    return true;
}

void AgentServer::onAttach(ClientLink& c, const wire::AttachCapture& req)
{
    if (m_session && (req.capture_id() == 0 || req.capture_id() == m_session->id())) {
        c.follow(m_session->id(), false);
        wire::AgentToClient m;
        *m.mutable_started() = m_session->started();
        m.mutable_started()->set_request_id(0);
        send(c, m);
        if (m_session->done()) {
            wire::AgentToClient d;
            *d.mutable_done() = m_session->doneMessage();
            send(c, d);
        } else {
            c.awaitingSnapshot = true; // streams from the dictionary snapshot on
            m_merger->snapshotFor(c.id());
        }
        return;
    }
    if (const CaptureArchive::Entry* f = req.capture_id() ? m_archive->find(req.capture_id()) : nullptr) {
        wire::AgentToClient d;
        *d.mutable_done() = f->done;
        send(c, d);
        return;
    }
    sendError(c, wire::ERR_NOT_FOUND, "no capture " + std::to_string(req.capture_id()), false);
}

void AgentServer::onFetch(ClientLink& c, const wire::FetchFile& req)
{
    const CaptureArchive::Entry* f = m_archive->find(req.capture_id());
    if (!f) {
        const bool running
            = m_session && !m_session->done() && (req.capture_id() == 0 || req.capture_id() == m_session->id());
        sendError(c, running ? wire::ERR_BUSY : wire::ERR_NOT_FOUND,
            running ? "the capture is still running; fetch it after CaptureDone"
                    : "no finished capture " + std::to_string(req.capture_id()),
            false);
        return;
    }
    if (Status s = c.startFetch(f->id, f->path, req.offset()); !s) {
        sendError(c, wire::ERR_IO, s.message(), false);
        return;
    }
    pumpFetch(c);
}

void AgentServer::pumpFetch(ClientLink& c)
{
    wire::AgentToClient piece;
    std::string error;
    while (!c.dead && c.nextFetchPiece(kFetchWindow, piece, error))
        send(c, piece);
    if (!error.empty())
        sendError(c, wire::ERR_IO, error, false);
}

void AgentServer::sendToClients(uint64_t captureId, const wire::AgentToClient& msg)
{
    auto frame = std::make_shared<std::string>();
    if (!appendFrame(msg, *frame, kMaxClientFrameBytes))
        return;
    for (auto& c : m_clients)
        if (!c->dead && c->authed && c->attached == captureId) {
            c->peer().enqueue(frame, ClientLink::kTagControl);
            if (c->peer().queuedBytes() > 2 * m_opt.clientQueueBytes + kFetchWindow)
                closeClient(*c, "not reading (queue full)");
        }
}

void AgentServer::streamChunk(const MergeOutput& out)
{
    for (auto& c : m_clients)
        if (c->offerStream(out, m_opt.clientQueueBytes) == ClientLink::Offer::Cut) {
            ++m_clientsCut;
            send(*c, c->cutNotice(out.captureId, m_opt.clientQueueBytes, m_session ? m_session->outputPath() : ""));
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
                if (c->id() == o.stream && c->awaitingSnapshot && o.frame) {
                    c->awaitingSnapshot = false;
                    c->streaming = true;
                    c->peer().enqueue(o.frame, ClientLink::kTagStream);
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
                m_archive->add(o.captureId, m_session->outputPath(), m_session->doneMessage());
            }
            break;
        }
    }
}

void AgentServer::periodic()
{
    const int64_t now = monotonicNs();
    if (m_pending) {
        ClientLink* c = nullptr;
        for (auto& cl : m_clients)
            if (cl->id() == m_pending->client && !cl->dead)
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
    m_ranks->expire(now);
    const int64_t handshakeNs = int64_t(m_opt.handshakeTimeoutS * 1e9);
    for (auto& c : m_clients) {
        if (c->dead)
            continue;
        if (!c->authed && now - c->peer().openedNs() > handshakeNs) {
            ++m_handshakeTimeouts;
            sendError(*c, wire::ERR_UNEXPECTED,
                "no valid Hello within " + std::to_string(handshakeNs / 1000000) + " ms", true);
            closeClient(*c, "no Hello in time"); // whether the error went out or not
            continue;
        }
        pumpFetch(*c);
        std::string err;
        if (c->peer().wantsWrite() && c->peer().writeQueued(err) != PeerConnection::Io::Ok)
            closeClient(*c, "connection lost");
    }
}

void AgentServer::closeClient(ClientLink& c, const std::string& reason)
{
    (void)reason;
    c.dead = true;
}

void AgentServer::reap()
{
    m_ranks->reap();
    m_clients.erase(
        std::remove_if(m_clients.begin(), m_clients.end(), [](const auto& c) { return c->dead; }), m_clients.end());
}

} // namespace gapscope::capture
