// SPDX-License-Identifier: MIT
#include "capture/agent/capturearchive.h"

#include "capture/protocol/privatefolder.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <unistd.h>

namespace gapscope::capture {

CaptureArchive::CaptureArchive(std::string outputDir, uint64_t instance, size_t keep)
    : m_dir(std::move(outputDir))
    , m_instance(instance)
    , m_keep(keep)
{
}

Expected<std::string> CaptureArchive::pathFor(const std::string& requestedName, uint64_t id) const
{
    std::string name = requestedName;
    if (name.empty()) {
        char stamp[32];
        const std::time_t t = std::time(nullptr);
        std::tm tm {};
        localtime_r(&t, &tm);
        std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        char inst[9];
        std::snprintf(inst, sizeof inst, "%08x", unsigned(m_instance & 0xffffffffu));
        name = std::string("capture-") + stamp + "-" + inst + "-" + std::to_string(id) + ".gapscope";
    }
    if (name.find('/') != std::string::npos || name == "." || name == ".." || name.size() > 200)
        return Status::error(
            "output name '" + requestedName + "' must be a plain file name (the agent writes into " + m_dir + ")");
    if (Status s = preparePrivateFolder(m_dir, "capture files"); !s)
        return s;
    // The file is created here, new and never through a link (O_EXCL | O_NOFOLLOW); the writer then
    // opens that same file by name, which nobody else can swap in a private folder.
    const auto dot = name.rfind(".gapscope");
    const std::string stem = dot == std::string::npos ? name : name.substr(0, dot);
    for (int n = 1; n < 1000; ++n) { // never overwrite a capture (or anything else)
        const std::string path = m_dir + "/" + (n == 1 ? name : stem + "-" + std::to_string(n) + ".gapscope");
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0) {
            ::close(fd);
            return path;
        }
        if (errno != EEXIST)
            return Status::error(path + ": cannot create the capture file: " + std::strerror(errno));
    }
    return Status::error(m_dir + "/" + name + ": 999 files of that name exist already");
}

void CaptureArchive::add(uint64_t id, const std::string& path, const wire::CaptureDone& done)
{
    m_entries.push_back({ id, path, done });
    while (m_entries.size() > m_keep)
        m_entries.pop_front();
}

const CaptureArchive::Entry* CaptureArchive::find(uint64_t id) const
{
    for (auto it = m_entries.rbegin(); it != m_entries.rend(); ++it)
        if (id == 0 || it->id == id)
            return &*it;
    return nullptr;
}

} // namespace gapscope::capture
