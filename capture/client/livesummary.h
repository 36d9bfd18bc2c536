// SPDX-License-Identifier: MIT
#pragma once

// The live connection in plain values, for clients that do not speak the protocol's messages (the
// viewer): who the agents are and what ranks they see (AgentSummary), what a capture reports while it
// runs (LiveEvents, told by LiveEventAdapter, a LiveCapture::Listener), and a probe of agents that went
// away. The protocol's messages (wire::, pb::) stay in capture/; the merged chunks and header go on to
// the model's live feed (model/io/livefeed.h) as they are.
//
// Threading: the thread that runs the LiveCapture.

#include "capture/client/livecapture.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gapscope::capture {

struct RankSummary {
    int rank = 0;
    std::string host, gpuName, gpuUuid, state;
    uint32_t pid = 0;
};

struct AgentSummary {
    std::string address, host, version, replayFile;
    uint64_t instanceId = 0, captureId = 0;
    bool replay = false;
    int64_t offsetNs = 0, shiftNs = 0;
    double offsetErrorNs = 0;
    std::vector<RankSummary> ranks;
};

// The agents of a connected capture, each with the ranks it lists (none where listing failed).
std::vector<AgentSummary> connectedAgents(LiveCapture& capture);
// Each address of `options` connected anew (connectTimeoutMs each) with its ranks; nothing when one
// does not answer.
std::optional<std::vector<AgentSummary>> probeAgents(const LiveCaptureOptions& options, int connectTimeoutMs);

// Each address listed on its own (the viewer's connect dialog): its summary and ranks, or why it could
// not be listed (`error`; `agent.host` still set when the agent answered).
struct AgentListing {
    std::string address, error;
    AgentSummary agent;
};
std::vector<AgentListing> listAgents(const std::vector<std::string>& addresses, const std::string& token,
    const std::string& clientName, int connectTimeoutMs, int listTimeoutMs);

// What to record and how to find the steps (LiveCaptureOptions::settings), as plain values.
struct CaptureChoice {
    uint32_t steps = 0;
    std::string stepRule, stepPattern; // model::StepRule::forCapture's request
    bool kernels = true, memoryOps = true, runtimeApi = true, synchronization = true, nvtx = true, nccl = true;
};
CaptureChoice captureChoiceOf(const LiveCaptureOptions& options);
void setCaptureChoice(LiveCaptureOptions& options, const CaptureChoice& choice);

// What a running capture reports, in plain values (agent: its index in LiveCaptureOptions::agents).
class LiveEvents {
public:
    virtual ~LiveEvents() = default;
    virtual void started(size_t agent, uint64_t captureId, const std::string& outputPath) = 0;
    // `dropped`: events the ranks dropped plus the agent's data-loss counters.
    virtual void progress(size_t agent, const std::string& phase, uint32_t stepsDone, uint32_t stepsTotal,
        uint64_t events, uint64_t dropped)
        = 0;
    virtual void streamCut(size_t agent, const std::string& reason, const std::string& outputPath) = 0;
    virtual void done(size_t agent, bool ok, const std::string& error, uint64_t events, const std::string& outputPath)
        = 0;
    virtual void error(size_t agent, const std::string& message) = 0;
    virtual void reconnected(size_t agent, bool sameInstance, uint64_t instanceId) = 0;
};

// Tells `events` what `capture` hears and hands each merged chunk to `chunks`.
class LiveEventAdapter final : public LiveCapture::Listener {
public:
    LiveEventAdapter(LiveCapture& capture, LiveEvents& events, std::function<void(const pb::Chunk&)> chunks);
    void started(size_t agent, const wire::CaptureStarted& m) override;
    void chunk(const pb::Chunk& merged) override;
    void progress(size_t agent, const wire::Progress& m) override;
    void streamCut(size_t agent, const wire::StreamCut& m) override;
    void done(size_t agent, const wire::CaptureDone& m) override;
    void error(size_t agent, const std::string& message) override;
    void reconnected(size_t agent, bool sameInstance) override;

private:
    LiveCapture& m_capture;
    LiveEvents& m_events;
    std::function<void(const pb::Chunk&)> m_chunks;
};

} // namespace gapscope::capture
