// SPDX-License-Identifier: MIT
#pragma once

// ProbeAgent: a minimal agent for testing libgapscope-inject.so on its own: it accepts rank
// connections on the Unix socket, arms them, aligns their local step counters by boundary time
// (the nearest boundary of rank 0), sends StartRecording, decodes the ChunkData it receives and
// keeps per-step statistics (kernels and total kernel time inside each recorded step window).
// The CI tests drive a RankSession against it; tests/gpu drives real ranks through inject_probe.
//
// It is deliberately small and strict: anything unexpected becomes an entry in errors().
// Threading: single-threaded, poll()-driven (pump()).

#include "capture/protocol/framedecoder.h"
#include "capture/protocol/netutil.h"
#include "capture/protocol/protocol.pb.h"
#include "model/format/chunkdecoder.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gapscope::capture::probe {

class ProbeAgent {
public:
    struct StepStat {
        int64_t start = 0;
        uint64_t duration = 0;
        int64_t hostTime = 0; // the step's boundary on the host (StepBoundary), 0 when not seen
        uint32_t kernels = 0;
        uint64_t kernelNs = 0;
        uint64_t computeNs = 0; // kernels other than NCCL's (their time includes waiting for peers)
    };
    struct Rank {
        UniqueFd fd;
        FrameDecoder decoder { kMaxFrame };
        bool registered = false;
        bool open = true;
        bool inCapture = false; // chosen for the current capture
        uint64_t order = 0; // registration order
        wire::Register reg;
        wire::Armed armed;
        bool armedSeen = false;
        bool done = false;
        bool disarmed = false;
        wire::RecordingDone doneMsg;
        wire::Disarmed disarmedMsg;
        wire::RankStatus lastStatus;
        std::vector<std::pair<uint64_t, int64_t>> boundaries; // (local index, host time)
        std::map<uint64_t, int64_t> recordedBoundaries; // inside the window, by local index
        uint64_t startLocal = 0;
        uint32_t plan = 0;
        int64_t firstRecordingBoundary = 0;
        int64_t lastRecordingBoundary = 0;
        uint32_t recordingBoundaries = 0;
        format::ChunkDecoder chunks;
        std::map<uint64_t, StepStat> steps; // by local index
        std::vector<std::pair<int64_t, uint64_t>> kernels; // (start, duration) of recorded kernels
        std::vector<std::pair<int64_t, uint64_t>> computeKernels; // the same, NCCL kernels left out
        uint64_t memops = 0, apis = 0, syncs = 0, nvtx = 0, collectives = 0, chunkCount = 0, chunkBytes = 0;
        std::map<std::string, uint64_t> collectiveOps;
        std::map<std::string, uint64_t> kernelNames; // name -> count (kept small: first 512 names)
        std::vector<std::string> collectiveSamples; // a few decoded collectives, as text
    };

    static constexpr uint32_t kMaxFrame = 32u << 20;

    ProbeAgent() = default;
    Status listen(const std::string& socketPath);
    void pump(int timeoutMs);

    size_t rankCount() const;
    std::vector<Rank*> ranks();

    // Arms the `ranks` most recently registered open ranks (0: all open ranks).
    void arm(uint64_t captureId, const pb::CaptureSettings& settings, uint32_t flushMs = 20, size_t ranks = 0);
    bool allArmed() const;
    // Every rank answered Arm, none of them successfully.
    bool noneArmedOk() const;
    // Sends StartRecording once every rank has `minBoundaries` boundaries; true when sent.
    bool tryPlan(int64_t leadNs, uint32_t minBoundaries = 3);
    bool allDone() const;
    // Test hook: a StartRecording for `startLocal` on every rank under a new plan.
    void sendStart(uint64_t startLocal, uint32_t steps);
    bool anyMissed() const { return m_missed; }
    void disarm(const std::string& reason = "complete");
    // Closes every rank connection (the agent "dies").
    void dropConnections();

    const std::vector<std::string>& errors() const { return m_errors; }
    uint64_t captureId() const { return m_captureId; }
    uint32_t plan() const { return m_plan; }
    // Per-step kernel statistics computed from the recorded kernels and steps (idempotent).
    void finishStats();
    // Results as JSON text (one object with a "ranks" array).
    std::string json() const;

private:
    void accept();
    void readRank(Rank& r);
    void onMessage(Rank& r, const wire::RankToAgent& m);
    void onChunk(Rank& r, const pb::Chunk& c);
    void sendTo(Rank& r, const wire::AgentToRank& m);

    UniqueFd m_listen;
    std::string m_path;
    std::vector<std::unique_ptr<Rank>> m_ranks;
    std::vector<std::string> m_errors;
    uint64_t m_captureId = 0;
    pb::CaptureSettings m_settings;
    uint32_t m_plan = 0;
    bool m_planned = false;
    bool m_missed = false;
    int64_t m_leadNs = 0;
    uint64_t m_registrations = 0;
};

} // namespace gapscope::capture::probe
