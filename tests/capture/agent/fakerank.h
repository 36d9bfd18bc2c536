// SPDX-License-Identifier: MIT
#pragma once

// FakeRank: a stand-in for a rank process with libgapscope-inject.so, speaking the rank side of the
// capture protocol over the agent's Unix socket with real Chunks made by format::ChunkEncoder. It
// "runs" decode steps on a timer (a step boundary every `stepMs`, `kernelsPerStep` kernels on two
// streams, one NVTX range and one GPU step window per step) and follows Arm / StartRecording /
// Disarm like the real library: step detection after Arm, recording from the planned local step for
// N steps (or a time window), RecordingDone, back to idle on Disarm, disarm itself when the agent
// goes away and register again when it comes back.
//
// Like the real library it never blocks on the socket: a chunk that does not fit is dropped and
// counted ("rank_dropped_chunks"). Faults for tests: crash (abort) or leave after N recorded steps,
// flood (no pacing), a local step counter that starts elsewhere, a refused arm, no steps at all.
//
// Threading: run() loops on the calling thread until stop() (any thread) or the configured end.

#include <atomic>
#include <cstdint>
#include <string>

namespace gapscope::capture::test {

struct FakeRankOptions {
    std::string socket;
    int rank = 0;
    int worldSize = 1;
    double stepMs = 2.0;
    int kernelsPerStep = 20;
    uint64_t firstLocalStep = 0; // local step counter at start (ranks armed at different moments)
    int crashAfterSteps = -1; // abort() after this many recorded steps
    int leaveAfterSteps = -1; // Goodbye + exit after this many recorded steps
    bool flood = false; // while recording: generate `floodEvents` per step as fast as possible
    int floodEvents = 50000;
    bool noSteps = false; // never report step boundaries (idle server)
    std::string armError; // answer Arm with this error (ARM_CUPTI_UNAVAILABLE)
    std::string otherCupti; // report another CUPTI client
    double statusBaselineMs = 0; // > 0: once armed, a RankStatus with this step-time baseline (200 steps,
                                 // 1 capture before, CUPTI detached), as a rank captured before sends
    double runSeconds = 60; // end after this long
    bool reconnect = true; // register again after the agent went away
    bool verbose = false;
};

struct FakeRankStats {
    std::atomic<uint64_t> stepsRecorded { 0 };
    std::atomic<uint64_t> eventsSent { 0 };
    std::atomic<uint64_t> chunksSent { 0 };
    std::atomic<uint64_t> chunksDropped { 0 };
    std::atomic<uint64_t> eventsDropped { 0 };
    std::atomic<uint64_t> captures { 0 }; // RecordingDone sent
    std::atomic<uint64_t> agentLost { 0 }; // times the agent went away (disarmed itself)
    std::atomic<uint64_t> registrations { 0 };
    std::atomic<int64_t> maxSendNs { 0 }; // longest single send() call
    std::atomic<bool> armed { false };
};

class FakeRank {
public:
    explicit FakeRank(FakeRankOptions options);
    ~FakeRank();
    void run();
    void stop() { m_stop = true; }
    const FakeRankStats& stats() const { return m_stats; }

private:
    struct State;
    bool connectAndRegister();
    void loop();
    void onStepBoundary(int64_t now);
    void handleAgent();
    void sendChunk(bool force);
    bool sendFrame(const std::string& frame, bool droppable);
    void finishRecording();
    void lostAgent();

    FakeRankOptions m_opt;
    FakeRankStats m_stats;
    std::atomic<bool> m_stop { false };
    State* m_s;
};

} // namespace gapscope::capture::test
