// SPDX-License-Identifier: MIT
#pragma once

// PeerConnection: one non-blocking socket of the agent (a rank on the Unix socket, or a client on
// TCP) with its incoming FrameDecoder and its outgoing queue of whole frames.
//
// Outgoing frames are shared, immutable buffers (the same StreamChunk frame goes to every streaming
// client without a copy). queuedBytes() counts what is waiting; the owner decides what to do when it
// grows (cut a slow client's stream, close a stuck one). A frame that has started to go out is
// always finished first, so dropping queued frames never breaks the framing.
//
// Threading: owned and used by the agent's I/O thread only.

#include "capture/protocol/framedecoder.h"
#include "capture/protocol/netutil.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

namespace google::protobuf {
class MessageLite;
}

namespace gapscope::capture {

using SharedFrame = std::shared_ptr<const std::string>;

class PeerConnection {
public:
    enum class Io { Ok, Closed, Error };

    PeerConnection(UniqueFd fd, uint32_t maxFrameBytes, std::string name);
    virtual ~PeerConnection() = default;

    int fd() const { return m_fd.get(); }
    const std::string& name() const { return m_name; }
    FrameDecoder& decoder() { return m_decoder; }

    // Reads what the socket has (up to `budget` bytes, so one peer cannot starve the others; reads
    // of at most `budget` bytes each, so a small budget also keeps the buffer small).
    Io readAvailable(size_t budget, std::string& error);
    // Writes queued frames until the socket would block.
    Io writeQueued(std::string& error);

    // Frame tags (0 or 1) let the owner drop a class of queued frames (stream chunks) without
    // touching others; `cookie` is the owner's label of a frame (a chunk sequence).
    void enqueue(SharedFrame frame, int tag = 0, uint64_t cookie = 0);
    Status enqueue(const google::protobuf::MessageLite& msg, uint32_t maxBytes, int tag = 0);
    // Drops queued frames with `tag` that have not started to go out; returns the bytes dropped.
    size_t dropQueued(int tag);
    size_t queuedBytes() const { return m_queuedBytes; }
    // Frames of `tag` that went out whole or are going out now, and the cookie of the latest of them.
    uint64_t framesDelivered(int tag) const;
    uint64_t lastDeliveredCookie(int tag) const;
    bool wantsWrite() const { return !m_out.empty(); }

    // Close after the queue has drained (e.g. after a fatal error message).
    void closeAfterFlush() { m_closeAfterFlush = true; }
    bool closing() const { return m_closeAfterFlush; }
    uint64_t bytesIn() const { return m_bytesIn; }
    uint64_t bytesOut() const { return m_bytesOut; }
    int64_t openedNs() const { return m_openedNs; } // monotonicNs() when accepted

private:
    struct Out {
        SharedFrame frame;
        int tag;
        uint64_t cookie;
    };
    uint64_t m_done[2] = { 0, 0 }; // frames sent whole, per tag
    uint64_t m_lastCookie[2] = { 0, 0 }; // cookie of the last of them
    UniqueFd m_fd;
    FrameDecoder m_decoder;
    std::string m_name;
    std::deque<Out> m_out;
    size_t m_sentOfFront = 0;
    size_t m_queuedBytes = 0;
    bool m_closeAfterFlush = false;
    uint64_t m_bytesIn = 0;
    uint64_t m_bytesOut = 0;
    int64_t m_openedNs = 0;
};

} // namespace gapscope::capture
