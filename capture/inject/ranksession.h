// SPDX-License-Identifier: MIT
#pragma once

// RankSession: the rank side of the capture protocol (capture/protocol/protocol.proto) on one agent
// connection. States: idle -> detecting (Arm: step detection on, no activity records) ->
// recording (StartRecording: activity on, window placed by StepWindow) -> done (RecordingDone
// sent, activity off, detection on until Disarm) -> idle (Disarm -> Disarmed).
//
// Guarantees: a lost connection (agent died, socket error) disarms at once: activity off,
// subscriber released, NVTX/NCCL hooks back to "off", buffers returned unread. A StartRecording
// for a step already passed when activity came on is answered with ARM_START_MISSED (activity stays
// on for the next plan). Everything the capture lost is reported as counters.
//
// Step-time evidence: every interval between step markers of an arm, until activity first goes on
// in it, feeds StepBaseline (this arm's "before" and the process's baseline; the rule is in
// stepbaseline.h); RecordingDone.overhead carries the baseline, this arm's figure, the captures
// before this one and what CUPTI was after the last, with StepWindow's "during"; RankStatus carries
// the same while armed.
//
// Memory guard: the process's resident memory is read once a second while recording (/proc, no
// locks taken in the application). Its growth since StartRecording is reported with every capture
// (`rank_rss_growth_mb`), and past GAPSCOPE_RANK_RSS_GROWTH_LIMIT_MB (default 512; 0: no limit)
// recording stops early (`stopped_for_memory_growth`): CUPTI itself was seen to grow the heap of a
// CUDA-graph process 4.6 MB per 100,000 kernel records in some captures, which must not be able to
// take a server's memory.
//
// Threading: serve() runs on the injection library's own thread; nothing here runs in a callback.

#include "capture/inject/agentlink.h"
#include "capture/inject/channels.h"
#include "capture/inject/recorder.h"
#include "capture/inject/stepbaseline.h"
#include "capture/inject/tracer.h"

#include <atomic>
#include <functional>
#include <string>

namespace gapscope::capture::inject {

struct RankIdentity {
    int rank = -1;
    uint32_t worldSize = 0;
    int localRank = -1;
    uint32_t pid = 0;
    std::string host;
    std::string processName;
    std::string commandLine;
    pb::GpuInfo gpu;
    pb::VersionInfo versions;
};

class RankSession {
public:
    using IdentityFn = std::function<RankIdentity()>;
    using RssFn = std::function<uint64_t()>; // resident bytes of this process (0: unknown)

    RankSession(Channels& channels, Tracer& tracer, IdentityFn identity);
    // Tests: another source for the resident size, another growth limit (bytes; 0: none).
    void setMemoryGuard(RssFn rss, uint64_t limitBytes);
    ~RankSession();

    // Registers and serves until the connection is lost or `stop` is set. Returns why it ended.
    std::string serve(AgentLink& link, const std::atomic<bool>& stop);

    enum class State { Idle, Detecting, Recording, Done };
    State state() const { return m_state; }

private:
    void onMessage(const wire::AgentToRank& msg);
    void onArm(const wire::Arm& arm);
    void onStart(const wire::StartRecording& start);
    void onDisarm(uint64_t captureId);
    void tick(int64_t nowNs);
    void reportMarkers(const std::vector<Recorder::NewMarker>& markers);
    void sendChunk(bool force);
    void finishRecording(const char* why);
    void sampleMemory();
    void checkMemory();
    void stopEverything();
    void releaseCuptiBuffers();
    void sendStatus();
    void fillOverhead(pb::OverheadEvidence* out) const;
    void fillCounters(google::protobuf::RepeatedPtrField<pb::Counter>* out);
    void sendArmed(wire::ArmError error, const std::string& message, uint32_t plan = 0);
    bool send(const wire::RankToAgent& msg, bool droppable = false);

    Channels& m_channels;
    Tracer& m_tracer;
    IdentityFn m_identity;
    Recorder m_recorder;
    AgentLink* m_link = nullptr;
    RankIdentity m_id;
    uint32_t m_rank = 0;

    State m_state = State::Idle;
    uint64_t m_captureId = 0;
    uint32_t m_plan = 0;
    pb::CaptureSettings m_settings;
    std::string m_otherClient;
    uint32_t m_flushMs = 20;
    uint32_t m_maxEvents = 65536;
    uint32_t m_maxBytes = 4u << 20;
    bool m_activityOn = false;

    int64_t m_startReceived = 0; // realtime ns of StartRecording (arm latency)
    int64_t m_lastFlush = 0;
    int64_t m_lastStatus = 0;
    int64_t m_endSeenAt = 0;
    int64_t m_lastMarker = 0;
    double m_armLatencyMs = -1;
    double m_enableMs = 0;

    // Baselines of the process-wide loss counters at arm time.
    uint64_t m_baseCuptiDropped = 0, m_baseRefused = 0, m_baseNvtx = 0, m_baseMarkers = 0, m_baseNccl = 0;
    uint64_t m_linkDroppedBase = 0;
    uint64_t m_buffersLeft = 0;

    RssFn m_rss;
    uint64_t m_rssLimit = 0;
    uint64_t m_rssBase = 0; // at StartRecording
    int64_t m_rssGrowth = 0; // the most seen while recording
    bool m_stoppedForMemory = false;

    StepBaseline m_baseline; // for the life of the process (RankSession outlives connections)
    int64_t m_prevMarkerTime = 0; // this arm's newest marker
    int64_t m_activityAt = 0; // when activity first went on in this arm (0: not yet)
};

} // namespace gapscope::capture::inject
