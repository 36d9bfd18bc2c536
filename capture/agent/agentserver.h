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
// oversized message closes that one connection; a slow client's stream is cut (StreamCut) once
// `clientQueueBytes` are waiting for it, while the capture and the file go on; memory is bounded by
// the merge queue, the largest client queue (stream frames are shared between clients) and the
// encoder's pending chunk.
//
// Threading: start() and run() on one thread; stop() from any thread or a signal handler.

#include "capture/agent/agentoptions.h"
#include "capture/agent/capturehost.h"
#include "capture/agent/mergeworker.h"
#include "capture/agent/rankrecord.h"
#include "capture/protocol/netutil.h"

#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace gapscope::capture {

class CaptureSession;
class ReplaySource;

class AgentServer final : public CaptureHost {
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
    struct RankConn;
    struct ClientConn;
    struct Finished {
        uint64_t id;
        std::string path;
        wire::CaptureDone done;
    };

    void loopOnce(int timeoutMs);
    void acceptRanks();
    void acceptClients();
    void serviceRank(RankConn& r, short revents);
    void handleRankFrame(RankConn& r, std::string_view payload);
    void handleRankMessage(RankConn& r, const wire::RankToAgent& m);
    void dropRankChunk(RankConn& r, std::string_view payload);
    void onRegister(RankConn& r, const wire::Register& reg);
    void serviceClient(ClientConn& c, short revents);
    void handleClient(ClientConn& c, const wire::ClientToAgent& m);
    void onHello(ClientConn& c, const wire::Hello& h);
    void onStartCapture(ClientConn& c, const wire::StartCapture& req);
    bool beginCapture(ClientConn& c, const wire::StartCapture& req);
    void onAttach(ClientConn& c, const wire::AttachCapture& req);
    void onFetch(ClientConn& c, const wire::FetchFile& req);
    void pumpFetch(ClientConn& c);
    void sendError(ClientConn& c, wire::ErrorCode code, const std::string& msg, bool fatal, uint64_t requestId = 0);
    void send(ClientConn& c, const wire::AgentToClient& msg);
    void drainMerge();
    void streamChunk(const MergeOutput& out);
    void periodic();
    void closeRank(RankConn& r, const std::string& reason);
    void closeClient(ClientConn& c, const std::string& reason);
    void reap();
    std::vector<RankRecord> rankRecords() const;
    wire::AgentIdentity identity() const;
    Expected<std::string> outputPathFor(const std::string& requested, uint64_t id) const;
    void shutdownNow();

    AgentOptions m_opt;
    std::string m_socketPath;
    uint16_t m_port = 0;
    UniqueFd m_tcp, m_unix, m_wake;
    std::atomic<bool> m_stopRequested { false };
    bool m_stopping = false;
    int64_t m_stopDeadline = 0;
    std::unique_ptr<MergeWorker> m_merger;
    std::unique_ptr<ReplaySource> m_replay;
    std::unique_ptr<CaptureSession> m_session;
    std::deque<Finished> m_finished;
    struct PendingStart {
        uint32_t client = 0;
        wire::StartCapture req;
        int64_t deadline = 0;
    };
    std::unique_ptr<PendingStart> m_pending; // waiting for StartCapture.wait_for_ranks ranks
    std::vector<std::unique_ptr<RankConn>> m_ranks;
    std::vector<std::unique_ptr<ClientConn>> m_clients;
    uint32_t m_nextConn = 1;
    uint64_t m_nextCapture = 1;
    uint64_t m_instance = 0;
    int64_t m_lastProgress = 0;
    uint64_t m_clientsCut = 0;
};

} // namespace gapscope::capture
