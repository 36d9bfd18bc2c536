// SPDX-License-Identifier: MIT
#pragma once

// AgentClient: one TCP connection from a client (gapscope-cli, the viewer, tests) to a gapscope-agent.
// connect() opens the socket and performs the Hello handshake (version, token). Afterwards messages
// are sent with send() and received with receive(), which also answers the agent's Pings and feeds
// Pongs into the connection's ClockSync (they are not returned). Blocking calls take a timeout.
//
// Qt-free on purpose: the viewer runs it on a worker thread (see LiveCapture) and turns its results
// into signals. Threading: not thread-safe; one thread uses an instance at a time.

#include "capture/client/clocksync.h"
#include "capture/protocol/framedecoder.h"
#include "capture/protocol/netutil.h"
#include "capture/protocol/protocol.pb.h"
#include "model/base/status.h"

#include <deque>
#include <string>

namespace gapscope::capture {

struct ClientOptions {
    std::string address = "127.0.0.1:7433";
    std::string token; // the agent's token (contents of its --token-file), if it has one
    std::string clientName = "gapscope-client";
    std::string clientVersion;
    int connectTimeoutMs = 5000;
    uint32_t maxFrameBytes = 32u << 20; // largest message accepted from the agent
};

class AgentClient {
public:
    explicit AgentClient(ClientOptions options);

    Status connect();
    void close();
    bool connected() const { return m_fd.valid(); }
    const ClientOptions& options() const { return m_opt; }
    const wire::HelloReply& hello() const { return m_hello; }
    int fd() const { return m_fd.get(); }

    Status send(const wire::ClientToAgent& msg);
    // Next message from the agent. Returns false (with an ok status) when none arrived in time.
    Expected<bool> receive(wire::AgentToClient& out, int timeoutMs);

    // Requests, waiting for their answer (other messages that arrive meanwhile are kept for receive()).
    Expected<wire::RankList> listRanks(int timeoutMs = 5000);
    // `exchanges` ping/pong round trips; the estimate is in clock().
    Status syncClock(int exchanges = 8, int timeoutMs = 2000);
    const ClockSync& clock() const { return m_clock; }

    // Messages received since connect() (for statistics and tests).
    uint64_t messagesReceived() const { return m_received; }
    uint64_t bytesReceived() const { return m_bytes; }

private:
    Status readMore(int timeoutMs, bool& gotBytes);
    // Decodes buffered frames into m_queue, answering pings / absorbing pongs.
    Status decodeBuffered();
    template <typename Pred> Expected<wire::AgentToClient> waitFor(Pred pred, int timeoutMs, const char* what);

    ClientOptions m_opt;
    UniqueFd m_fd;
    FrameDecoder m_decoder;
    std::deque<wire::AgentToClient> m_queue;
    wire::HelloReply m_hello;
    ClockSync m_clock;
    uint64_t m_nonce = 0;
    uint64_t m_received = 0;
    uint64_t m_bytes = 0;
    std::string m_out;
};

} // namespace gapscope::capture
