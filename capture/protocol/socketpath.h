// SPDX-License-Identifier: MIT
#pragma once

// Where the rank <-> agent Unix socket lives: $GAPSCOPE_AGENT_SOCKET, else
// $XDG_RUNTIME_DIR/gapscope/agent.sock, else /tmp/gapscope-$UID/agent.sock. Shared by the agent
// and the injection library so both sides agree without configuration.

#include "model/base/status.h"

#include <string>

namespace gapscope::capture {

std::string defaultAgentSocketPath();

// Creates the socket's parent folder (mode 0700) when missing and checks it (preparePrivateFolder).
Status prepareSocketDirectory(const std::string& socketPath);

} // namespace gapscope::capture
