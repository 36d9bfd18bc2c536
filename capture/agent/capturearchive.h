// SPDX-License-Identifier: MIT
#pragma once

// CaptureArchive: where an agent's capture files go and which finished captures it can still hand
// out (FetchFile, AttachCapture after the end). File names are chosen by the agent: a client may
// only give a plain name inside the output folder; default names carry the time, the agent
// instance (agents sharing a folder never collide) and the capture id; nothing is overwritten.
//
// Threading: the agent's I/O thread only.

#include "capture/protocol/protocol.pb.h"
#include "model/status.h"

#include <deque>
#include <string>

namespace gapscope::capture {

class CaptureArchive {
public:
    struct Entry {
        uint64_t id;
        std::string path;
        wire::CaptureDone done;
    };

    CaptureArchive(std::string outputDir, uint64_t instance, size_t keep = 16);

    // Creates the output folder when needed and returns a new file path for capture `id`.
    Expected<std::string> pathFor(const std::string& requestedName, uint64_t id) const;
    void add(uint64_t id, const std::string& path, const wire::CaptureDone& done);
    // id 0: the newest finished capture.
    const Entry* find(uint64_t id) const;
    const std::string& outputDir() const { return m_dir; }

private:
    std::string m_dir;
    uint64_t m_instance;
    size_t m_keep;
    std::deque<Entry> m_entries;
};

} // namespace gapscope::capture
