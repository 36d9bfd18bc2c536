// SPDX-License-Identifier: MIT
#pragma once

// AgentServer: gapscope-agent's core. One I/O thread runs a poll() loop over
//   - the rank socket (Unix; ranks register, report steps and send their data),
//   - the client socket (TCP; Hello/token, rank lists, captures, streaming, file fetches),
//   - a wake-up eventfd (merge thread output, stop requests),
// and drives the current CaptureSession. The MergeWorker thread merges and writes; a ReplaySource
// thread stands in for the ranks with --replay.
//
// Guarantees: the agent never blocks on a peer (all sockets are non-blocking; a rank is never made
// to wait: when the merge queue is full its events are dropped and counted); a malformed or
// oversized message closes that one connection; a client that has not sent a valid Hello within
// `handshakeTimeoutS` is closed, and unauthenticated clients have a quota of their own
// (`maxUnauthenticated`, the oldest makes room), so idle connections never lock real clients out
// (the rank side has the same rules, see RankHub); a slow client's stream is cut (StreamCut) once
// `clientQueueBytes` are waiting for it, while the capture and the file go on; memory is bounded by
// the merge queue, the largest client queue (stream frames are shared between clients) and the
// encoder's pending chunk.
//
// Threading: start() and run() on one thread; stop() from any thread or a signal handler.

#include "capture/agent/agentoptions.h"
#include "capture/agent/capturehost.h"
#include "capture/agent/mergeworker.h"
#include "capture/agent/rankhub.h"
#include "capture/agent/rankrecord.h"
#include "capture/protocol/netutil.h"

#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace gapscope::capture {

class CaptureArchive;
class CaptureSession;
class ClientLink;
class ReplaySource;

class AgentServer final : public CaptureHost, private RankHub::Events {
public:
    explicit AgentServer(AgentOptions options);
    ~AgentServer() override;

    Status start();
    void run();
    void stop(); // async-signal-safe

    uint16_t port() const { return m_port; }
    const std::string& socketPath() const { return m_socketPath; }
    const AgentOptions& options() const { return m_opt; }

    // CaptureHost
    void sendToRank(uint32_t connId, const wire::AgentToRank& msg) override;
    void sendToClients(uint64_t captureId, const wire::AgentToClient& msg) override;
    MergeWorker& merger() override { return *m_merger; }
    ReplaySource* replay() override { return m_replay.get(); }

private:
    // RankHub::Events
    void rankMessage(RankRecord& rank, const wire::RankToAgent& msg) override;
    void rankChunk(const RankRecord& rank, std::string_view payload) override;
    void rankGone(const RankRecord& rank, const std::string& reason) override;

    void loopOnce(int timeoutMs);
    void acceptClients();
    void dropRankChunk(const RankRecord& r, std::string_view payload);
    void serviceClient(ClientLink& c, short revents);
    void handleClient(ClientLink& c, const wire::ClientToAgent& m);
    void onHello(ClientLink& c, const wire::Hello& h);
    void onStartCapture(ClientLink& c, const wire::StartCapture& req);
    bool beginCapture(ClientLink& c, const wire::StartCapture& req);
    void onAttach(ClientLink& c, const wire::AttachCapture& req);
    void onFetch(ClientLink& c, const wire::FetchFile& req);
    void pumpFetch(ClientLink& c);
    void sendError(ClientLink& c, wire::ErrorCode code, const std::string& msg, bool fatal, uint64_t requestId = 0);
    void send(ClientLink& c, const wire::AgentToClient& msg);
    void drainMerge();
    void streamChunk(const MergeOutput& out);
    void periodic();
    void closeClient(ClientLink& c, const std::string& reason);
    void reap();
    std::vector<RankRecord> rankRecords() const;
    wire::AgentIdentity identity() const;
    void shutdownNow();

    AgentOptions m_opt;
    std::string m_socketPath;
    uint16_t m_port = 0;
    UniqueFd m_tcp, m_wake;
    std::unique_ptr<RankHub> m_ranks;
    std::atomic<bool> m_stopRequested { false };
    bool m_stopping = false;
    int64_t m_stopDeadline = 0;
    std::unique_ptr<MergeWorker> m_merger;
    std::unique_ptr<ReplaySource> m_replay;
    std::unique_ptr<CaptureSession> m_session;
    std::unique_ptr<CaptureArchive> m_archive;
    struct PendingStart {
        uint32_t client = 0;
        wire::StartCapture req;
        int64_t deadline = 0;
    };
    std::unique_ptr<PendingStart> m_pending; // waiting for StartCapture.wait_for_ranks ranks
    std::vector<std::unique_ptr<ClientLink>> m_clients;
    uint32_t m_nextConn = 1;
    uint64_t m_nextCapture = 1;
    uint64_t m_instance = 0;
    int64_t m_lastProgress = 0;
    uint64_t m_clientsCut = 0;
    uint64_t m_handshakeTimeouts = 0, m_unauthenticatedEvicted = 0, m_refusedFull = 0;
};

} // namespace gapscope::capture
