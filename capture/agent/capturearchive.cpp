// SPDX-License-Identifier: MIT
#include "capture/agent/capturearchive.h"

#include <cstdio>
#include <ctime>
#include <sys/stat.h>

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
    for (size_t pos = 0; pos != std::string::npos;) {
        pos = m_dir.find('/', pos + 1);
        const std::string dir = m_dir.substr(0, pos);
        if (!dir.empty())
            ::mkdir(dir.c_str(), 0700);
    }
    struct stat st { };
    if (::stat(m_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return Status::error(m_dir + ": cannot create the output folder");
    std::string path = m_dir + "/" + name;
    for (int n = 2; ::stat(path.c_str(), &st) == 0 && n < 1000; ++n) { // never overwrite a capture
        const auto dot = name.rfind(".gapscope");
        path = m_dir + "/" + (dot == std::string::npos ? name : name.substr(0, dot)) + "-" + std::to_string(n)
            + ".gapscope";
    }
    return path;
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
