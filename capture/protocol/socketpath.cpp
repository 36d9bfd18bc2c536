// SPDX-License-Identifier: MIT
#include "capture/protocol/socketpath.h"

#include "capture/protocol/privatefolder.h"

#include <cstdlib>
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
    return preparePrivateFolder(socketPath.substr(0, slash), "the agent socket");
}

} // namespace gapscope::capture
