// SPDX-License-Identifier: MIT
#pragma once

// Launcher: `gapscope-agent launch -- CMD ...`. Makes sure an agent serves this host's rank socket
// (starts one in the background, detached, when none answers), then replaces itself with CMD with
// CUDA_INJECTION64_PATH and NCCL_PROFILER_PLUGIN naming libgapscope-inject.so and
// GAPSCOPE_AGENT_SOCKET naming the socket, so every CUDA process CMD starts registers with the agent.

#include "capture/agent/agentoptions.h"
#include "model/base/status.h"

#include <string>
#include <vector>

namespace gapscope::capture {

struct LaunchOptions {
    AgentOptions agent; // for the background agent, when one is started
    std::string injectLibrary; // empty: look next to this executable, then $GAPSCOPE_INJECT_LIB
    bool startAgent = true;
    std::string agentLog; // empty: <socket folder>/agent.log
    std::vector<std::string> command;
};

// Returns only on failure (on success the process becomes the command).
Status launch(const LaunchOptions& options);

// libgapscope-inject.so next to the running executable (build tree or install prefix); empty if none.
std::string findInjectLibrary();

} // namespace gapscope::capture
