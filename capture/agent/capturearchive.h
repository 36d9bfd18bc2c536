// SPDX-License-Identifier: MIT
#pragma once

// CaptureArchive: where an agent's capture files go and which finished captures it can still hand
// out (FetchFile, AttachCapture after the end). File names are chosen by the agent: a client may
// only give a plain name inside the output folder; default names carry the time, the agent
// instance (agents sharing a folder never collide) and the capture id; nothing is overwritten.
// The folder must be private to the agent's user (preparePrivateFolder) and each file is created
// new, never through a symbolic link: a name that exists (file or link) gets a "-2", "-3" ... suffix.
//
// Threading: the agent's I/O thread only.

#include "capture/protocol/protocol.pb.h"
#include "model/base/status.h"

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

    // Creates (and checks) the output folder when needed, creates a new empty file for capture `id`
    // and returns its path.
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
