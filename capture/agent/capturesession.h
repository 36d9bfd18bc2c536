// SPDX-License-Identifier: MIT
#pragma once

// CaptureSession: one capture, from StartCapture to CaptureDone, as a state machine driven by rank
// messages and a periodic tick().
//
//   arming    Arm sent to every participating rank; wait for Armed (ranks that fail are reported
//             and left out; all failing fails the capture).
//   aligning  ranks report step boundaries; StepAligner picks a global start step far enough ahead,
//             and each rank gets StartRecording for its own local index of that step (a rank that
//             already passed it answers START_MISSED and everyone gets a new plan with more lead).
//             Duration captures without steps skip this: they get a common time window.
//   recording data flows rank -> MergeWorker -> file + streaming clients; progress is the number of
//             steps complete on every rank.
//   finishing every rank sent RecordingDone (or left, or the finish timeout passed); the merge thread
//             writes the final header (ranks, GPUs, versions, losses, overhead evidence, arm latency)
//             and the index.
//   done      CaptureDone went to the attached clients.
//
// Replay captures (the agent serves a file) go straight to recording with the ReplaySource as the
// only stream.
//
// Invariants: rank data of an older plan never reaches the file (MergeWorker drops it); every loss
// (agent drops, rank counters, ranks lost) ends up as a counter in the final header.
// Threading: the agent's I/O thread only.

#include "capture/agent/agentoptions.h"
#include "capture/agent/capturehost.h"
#include "capture/agent/rankrecord.h"
#include "capture/agent/stepaligner.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gapscope::capture {

struct MergeOutput;

class CaptureSession {
public:
    enum class Phase { Arming, Aligning, Recording, Finishing, Writing, Done };

    CaptureSession(uint64_t id, const wire::StartCapture& request, std::vector<RankRecord> ranks,
        const AgentOptions& options, const std::string& outputPath, CaptureHost& host);
    ~CaptureSession();

    void start();
    uint64_t id() const { return m_id; }
    Phase phase() const { return m_phase; }
    bool done() const { return m_phase == Phase::Done; }
    bool involves(uint32_t connId) const { return slotOf(connId) >= 0; }
    const std::string& outputPath() const { return m_path; }

    void onArmed(uint32_t connId, const wire::Armed& m);
    void onStep(uint32_t connId, const wire::StepBoundary& m);
    void onStatus(uint32_t connId, const wire::RankStatus& m);
    void onRecordingDone(uint32_t connId, const wire::RecordingDone& m);
    void onDisarmed(uint32_t connId, const wire::Disarmed& m);
    void onRankGone(uint32_t connId, const std::string& reason);
    void onDropped(uint32_t connId, uint64_t events);
    void onStreamError(uint32_t connId, const std::string& error);
    void onMergeFinished(const MergeOutput& out);
    void onChunkWritten(uint64_t events);
    void stop(const std::string& reason);
    void tick(int64_t nowMono);

    // Plan of a rank's current stream (data of other plans is stale).
    uint32_t planOf(uint32_t connId) const;
    wire::Progress progress() const;
    const wire::CaptureStarted& started() const { return m_started; }
    const wire::CaptureDone& doneMessage() const { return m_done; }

private:
    struct Slot;
    int slotOf(uint32_t connId) const;
    void setPhase(Phase p);
    void checkArmed();
    void tryPlan(int64_t nowMono);
    void sendPlan();
    void startTimeWindow();
    void startReplay();
    void maybeFinish(int64_t nowMono);
    void finishRanks(const std::string& reason);
    void fail(const std::string& error);
    pb::FileHeader buildHeader(bool final) const;
    void addLossCounters(pb::FileHeader& h) const;

    uint64_t m_id;
    wire::StartCapture m_req;
    pb::CaptureSettings m_settings;
    AgentOptions m_opt;
    std::string m_path;
    CaptureHost& m_host;
    std::vector<std::unique_ptr<Slot>> m_slots;
    std::unique_ptr<StepAligner> m_aligner;
    Phase m_phase = Phase::Arming;
    uint32_t m_plan = 0;
    int64_t m_leadNs;
    int64_t m_startMono = 0;
    int64_t m_startUnix = 0;
    int64_t m_phaseMono = 0;
    int64_t m_recordingMono = 0; // when every rank had started recording
    double m_armLatencyMs = -1;
    int m_replans = 0;
    uint64_t m_events = 0;
    uint64_t m_chunks = 0;
    std::string m_error;
    std::vector<std::string> m_notes;
    wire::CaptureStarted m_started;
    wire::CaptureDone m_done;
};

const char* toString(CaptureSession::Phase p);

} // namespace gapscope::capture
