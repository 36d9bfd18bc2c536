// SPDX-License-Identifier: MIT
#include "capture/protocol/socketpath.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace gapscope::capture {

std::string defaultAgentSocketPath()
{
    if (const char* env = std::getenv("GAPSCOPE_AGENT_SOCKET"); env && *env)
        return env;
    if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg && *xdg)
        return std::string(xdg) + "/gapscope/agent.sock";
    return "/tmp/gapscope-" + std::to_string(getuid()) + "/agent.sock";
}

Status prepareSocketDirectory(const std::string& socketPath)
{
    const auto slash = socketPath.rfind('/');
    if (slash == std::string::npos || slash == 0)
        return Status::ok();
    const std::string dir = socketPath.substr(0, slash);
    struct stat st { };
    if (::stat(dir.c_str(), &st) != 0) {
        if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
            return Status::error(dir + ": cannot create the socket folder: " + std::strerror(errno));
        if (::stat(dir.c_str(), &st) != 0)
            return Status::error(dir + ": " + std::strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        return Status::error(dir + ": not a folder");
    if (st.st_uid != getuid())
        return Status::error(dir + ": belongs to another user (uid " + std::to_string(st.st_uid) + ")");
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return Status::error(dir + ": writable by other users; refusing to put the agent socket there");
    return Status::ok();
}

} // namespace gapscope::capture
