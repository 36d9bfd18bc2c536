// SPDX-License-Identifier: MIT
#pragma once

// LiveCapture: a capture driven from the client side, over one or several agents (one per host).
//
// connect() opens every agent (Hello, token) and estimates each agent's clock offset with
// NTP-style ping/pong (ClockSync). The first agent's clock is the reference: the events of agent i
// are shifted by -(offset_i - offset_0), and the merged header records that shift per host
// (HostInfo.clock_offset_ns, method "ntp-ping", error bound). start() sends StartCapture to every
// agent; run() receives until every agent is done and hands the Listener one merged stream of chunks
// with one global dictionary (a ChunkRemapper per agent into one ChunkEncoder). With a single agent
// the agent's chunks are passed through unchanged.
//
// A connection that drops is reopened (for up to `reconnectS`): the same agent instance is followed
// again (AttachCapture: dictionary snapshot, then the stream from there on, the gap reported); a
// restarted agent means its capture is lost, reported as an error for that agent.
//
// Qt-free: the viewer runs run() on a worker thread and forwards the Listener calls as signals; the
// CLI runs it in main. Threading: one thread drives an instance; `stop` may be set from any thread.

#include "capture/client/agentclient.h"
#include "capture/client/chunkremapper.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace gapscope::capture {

struct LiveCaptureOptions {
    std::vector<std::string> agents { "127.0.0.1:7433" };
    std::string token;
    std::string clientName = "gapscope-client";
    std::string clientVersion;
    pb::CaptureSettings settings;
    bool stream = true;
    std::string agentOutputName; // file name on the agents (empty: they pick one)
    double armTimeoutS = 0; // 0: the agent's default
    uint32_t waitForRanks = 0;
    int clockExchanges = 8;
    double reconnectS = 10;
    int connectTimeoutMs = 5000;
};

class LiveCapture {
public:
    class Listener {
    public:
        virtual ~Listener() = default;
        virtual void started(size_t agent, const wire::CaptureStarted& m) { }
        // Merged chunk: global dictionaries, reference clock. Valid during the call only.
        virtual void chunk(const pb::Chunk& merged) = 0;
        virtual void progress(size_t agent, const wire::Progress& m) { }
        virtual void streamCut(size_t agent, const wire::StreamCut& m) { }
        virtual void done(size_t agent, const wire::CaptureDone& m) { }
        virtual void error(size_t agent, const std::string& message) { }
        virtual void reconnected(size_t agent, bool sameInstance) { }
    };

    struct Agent {
        std::string address;
        std::unique_ptr<AgentClient> client;
        wire::HelloReply hello;
        int64_t offsetNs = 0; // agent clock - local clock
        double offsetErrorNs = 0;
        int64_t shiftNs = 0; // added to this agent's times (reference: agent 0)
        uint64_t captureId = 0;
        wire::CaptureStarted started;
        wire::CaptureDone doneMsg;
        bool done = false, cut = false, failed = false;
        std::unique_ptr<ChunkRemapper> remap;
        uint64_t chunks = 0, events = 0;
    };

    explicit LiveCapture(LiveCaptureOptions options);
    ~LiveCapture();

    Status connect();
    Expected<std::vector<wire::RankList>> listRanks();
    Status start();
    // Until every agent is done or failed. Setting *stop sends StopCapture and keeps receiving until done.
    Status run(Listener& listener, const std::atomic<bool>* stop = nullptr);

    const std::vector<std::unique_ptr<Agent>>& agents() const { return m_agents; }
    // Header of the merged capture: settings, hosts (with clock offsets), GPUs, ranks; final adds counters.
    pb::FileHeader mergedHeader(bool final) const;
    // Downloads agent `i`'s capture file (after its CaptureDone) to `path`.
    Status fetchFile(size_t i, const std::string& path, int timeoutMs = 600000);

private:
    void handle(size_t i, wire::AgentToClient& m, Listener& l);
    void mergeChunk(size_t i, const pb::Chunk& c, Listener& l);
    bool reconnect(size_t i, Listener& l);

    LiveCaptureOptions m_opt;
    std::vector<std::unique_ptr<Agent>> m_agents;
    format::ChunkEncoder m_enc;
    pb::Chunk m_out;
    bool m_stopSent = false;
};

} // namespace gapscope::capture
