// SPDX-License-Identifier: MIT
#pragma once

// ClientLink: the agent's state for one client connection: authentication, which capture it
// follows, its live stream (with the slow-client cut), and a file download in progress.
//
// Stream frames are offered with offerStream(): a client with more than `limit` bytes waiting gets
// its queued stream frames dropped (a frame already on the wire is finished) and is marked cut;
// the caller then sends cutNotice(). Downloads go out piece by piece (nextFetchPiece) only while
// the client's queue is short, so a slow reader never makes the agent read a file ahead.
//
// Threading: the agent's I/O thread only.

#include "capture/agent/mergeworker.h"
#include "capture/agent/peerconnection.h"
#include "capture/protocol/protocol.pb.h"

#include <memory>
#include <string>

namespace gapscope::capture {

class ClientLink {
public:
    static constexpr int kTagControl = 0;
    static constexpr int kTagStream = 1;
    enum class Offer { Queued, Cut, Skipped };

    ClientLink(uint32_t id, std::unique_ptr<PeerConnection> peer);

    uint32_t id() const { return m_id; }
    PeerConnection& peer() { return *m_peer; }
    bool dead = false;
    bool authed = false;
    std::string name;
    uint64_t attached = 0; // capture whose progress / done this client gets
    bool streaming = false; // gets that capture's chunks
    bool awaitingSnapshot = false; // joined late: streams once the dictionary snapshot is queued

    // Starts a stream for a capture this client started (or follows from a snapshot).
    void follow(uint64_t captureId, bool stream);
    Offer offerStream(const MergeOutput& chunk, size_t limit);
    wire::AgentToClient cutNotice(uint64_t captureId, size_t limit, const std::string& outputPath) const;

    Status startFetch(uint64_t captureId, const std::string& path, uint64_t offset);
    bool fetching() const { return m_fetchFd.valid(); }
    // The next FileData piece when the queue is below `window`; false when nothing to send now.
    // `error` is set when reading failed (the download is abandoned).
    bool nextFetchPiece(size_t window, wire::AgentToClient& out, std::string& error);

private:
    uint32_t m_id;
    std::unique_ptr<PeerConnection> m_peer;
    bool m_cut = false;
    uint64_t m_deliveredBefore = 0; // stream frames of earlier captures on this connection
    UniqueFd m_fetchFd;
    uint64_t m_fetchCapture = 0, m_fetchOffset = 0, m_fetchTotal = 0;
};

} // namespace gapscope::capture
