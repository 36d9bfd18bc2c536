// SPDX-License-Identifier: MIT
#include "capture/agent/clientlink.h"

#include "capture/protocol/framing.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gapscope::capture {

ClientLink::ClientLink(uint32_t id, std::unique_ptr<PeerConnection> peer)
    : m_id(id)
    , m_peer(std::move(peer))
{
}

void ClientLink::follow(uint64_t captureId, bool stream)
{
    attached = captureId;
    streaming = stream;
    awaitingSnapshot = false;
    m_cut = false;
    m_deliveredBefore = m_peer->framesDelivered(kTagStream);
}

ClientLink::Offer ClientLink::offerStream(const MergeOutput& chunk, size_t limit)
{
    if (dead || !streaming || m_cut || attached != chunk.captureId || !chunk.frame)
        return Offer::Skipped;
    if (m_peer->queuedBytes() + chunk.frame->size() > limit) {
        // Too slow: its queued stream goes (the frame being written finishes), the capture goes on.
        m_peer->dropQueued(kTagStream);
        m_cut = true;
        streaming = false;
        return Offer::Cut;
    }
    m_peer->enqueue(chunk.frame, kTagStream, chunk.sequence);
    return Offer::Queued;
}

wire::AgentToClient ClientLink::cutNotice(uint64_t captureId, size_t limit, const std::string& outputPath) const
{
    wire::AgentToClient m;
    auto* cut = m.mutable_cut();
    cut->set_capture_id(captureId);
    cut->set_reason("client too slow: more than " + std::to_string(limit)
        + " bytes of stream waiting; the capture goes on and the file is complete (FetchFile after CaptureDone)");
    // Counted from this client's connection: what it has received (or is receiving) of the stream.
    cut->set_chunks_sent(m_peer->framesDelivered(kTagStream) - m_deliveredBefore);
    cut->set_last_sequence(m_peer->lastDeliveredCookie(kTagStream));
    cut->set_output_path(outputPath);
    return m;
}

Status ClientLink::startFetch(uint64_t captureId, const std::string& path, uint64_t offset)
{
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st { };
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0)
        return Status::error(path + ": " + std::strerror(errno));
    m_fetchFd = std::move(fd);
    m_fetchCapture = captureId;
    m_fetchTotal = uint64_t(st.st_size);
    m_fetchOffset = std::min<uint64_t>(offset, m_fetchTotal);
    return Status::ok();
}

bool ClientLink::nextFetchPiece(size_t window, wire::AgentToClient& out, std::string& error)
{
    if (!m_fetchFd.valid() || dead || m_peer->queuedBytes() >= window)
        return false;
    const uint64_t n = std::min<uint64_t>(kFileDataPiece, m_fetchTotal - m_fetchOffset);
    std::string buf(n, '\0');
    const ssize_t got = n ? ::pread(m_fetchFd.get(), &buf[0], n, off_t(m_fetchOffset)) : 0;
    if (got < 0 || uint64_t(got) != n) {
        m_fetchFd.reset();
        error = "reading the capture file failed";
        return false;
    }
    out.Clear();
    auto* fd = out.mutable_file();
    fd->set_capture_id(m_fetchCapture);
    fd->set_offset(m_fetchOffset);
    fd->set_total_bytes(m_fetchTotal);
    m_fetchOffset += n;
    fd->set_eof(m_fetchOffset >= m_fetchTotal);
    fd->set_data(std::move(buf));
    if (fd->eof())
        m_fetchFd.reset();
    return true;
}

} // namespace gapscope::capture
