// SPDX-License-Identifier: MIT
#pragma once

// CaptureHost: what a CaptureSession needs from the agent around it (sending to ranks and clients,
// the merge thread). AgentServer implements it; tests may too.
//
// Threading: all calls happen on the agent's I/O thread.

#include "capture/protocol/protocol.pb.h"

#include <cstdint>

namespace gapscope::capture {

class MergeWorker;
class ReplaySource;

class CaptureHost {
public:
    virtual ~CaptureHost() = default;
    virtual void sendToRank(uint32_t connId, const wire::AgentToRank& msg) = 0;
    // To every client attached to the capture (progress, done, errors).
    virtual void sendToClients(uint64_t captureId, const wire::AgentToClient& msg) = 0;
    virtual MergeWorker& merger() = 0;
    virtual ReplaySource* replay() = 0; // null unless the agent serves a recorded file
};

} // namespace gapscope::capture
