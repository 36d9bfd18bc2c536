// SPDX-License-Identifier: MIT
#pragma once

// AgentLink: the rank's end of the Unix socket to gapscope-agent. Messages are framed as
// protocol.proto says (u32 LE length + RankToAgent / AgentToRank). Writes never block the
// library's thread for long: frames wait in an outgoing queue that pump() drains with non-blocking
// writes; the queue has a byte cap, and a droppable message (event data) that does not fit is
// dropped and counted instead of growing memory (a stalled agent costs data, not the process).
//
// Threading: one instance, used by the injection library's own thread only.

#include "capture/protocol/framedecoder.h"
#include "capture/protocol/netutil.h"
#include "capture/protocol/protocol.pb.h"
#include "model/base/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gapscope::capture::inject {

class AgentLink {
public:
    explicit AgentLink(size_t maxQueuedBytes = 64u << 20);
    // Queue capacity kept once it has drained; more is released.
    static constexpr size_t kKeepQueueCapacity = 4u << 20;

    Status connect(const std::string& socketPath);
    void adopt(int fd); // an already connected socket (tests)
    bool connected() const { return m_fd.valid(); }
    void close();

    // Queues one frame. Returns false (and counts it) when a droppable frame does not fit the cap;
    // control messages are always queued.
    bool send(const wire::RankToAgent& msg, bool droppable = false);

    // Waits up to timeoutMs for the socket, writes what is queued and reads what arrived.
    // Returns false when the connection is gone (`error` says why).
    bool pump(int timeoutMs, std::vector<wire::AgentToRank>& received, std::string& error);

    size_t queuedBytes() const { return m_out.size() - m_outPos; }
    uint64_t bytesSent() const { return m_bytesSent; }
    uint64_t framesDropped() const { return m_dropped; }

private:
    bool writeSome(std::string& error);
    bool readSome(std::vector<wire::AgentToRank>& received, std::string& error);

    UniqueFd m_fd;
    size_t m_maxQueued;
    std::string m_out;
    size_t m_outPos = 0;
    FrameDecoder m_decoder;
    uint64_t m_bytesSent = 0;
    uint64_t m_dropped = 0;
};

} // namespace gapscope::capture::inject
