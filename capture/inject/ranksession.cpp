// SPDX-License-Identifier: MIT
#include "capture/inject/ranksession.h"

#include "capture/inject/injectlog.h"
#include "capture/inject/ncclplugin.h"
#include "capture/inject/nvtxhooks.h"
#include "capture/protocol/framing.h"
#include "model/format/stats.h"
#include "model/format/trace.pb.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <unistd.h>

namespace gapscope::capture::inject {

namespace {

constexpr int64_t kMs = 1000000;
constexpr int64_t kStatusEveryNs = 1000 * kMs;
constexpr int64_t kEndGraceNs = 2000 * kMs; // after the window's end marker, at most
constexpr int64_t kNoStepsNs = 5000 * kMs; // no marker for this long while recording: give up
constexpr int64_t kStopSettleNs = 200 * kMs; // at the end of a capture, in-flight GPU work may finish
constexpr uint64_t kDefaultRssGrowthLimitMb = 512; // GAPSCOPE_RANK_RSS_GROWTH_LIMIT_MB

// Resident bytes of this process from /proc/self/statm (second field, pages); 0 when unreadable.
uint64_t residentBytes()
{
    FILE* f = std::fopen("/proc/self/statm", "r");
    if (!f)
        return 0;
    unsigned long long size = 0, resident = 0;
    const int n = std::fscanf(f, "%llu %llu", &size, &resident);
    std::fclose(f);
    const long page = sysconf(_SC_PAGESIZE);
    return n == 2 && page > 0 ? uint64_t(resident) * uint64_t(page) : 0;
}

// GAPSCOPE_RANK_RSS_GROWTH_LIMIT_MB: a whole number of MB, 0 for no limit; anything else keeps
// the default (and says so).
uint64_t rssGrowthLimitFromEnv()
{
    const char* v = std::getenv("GAPSCOPE_RANK_RSS_GROWTH_LIMIT_MB");
    if (!v || !*v)
        return kDefaultRssGrowthLimitMb << 20;
    char* end = nullptr;
    const unsigned long long mb = std::strtoull(v, &end, 10);
    if (!end || *end || v[0] == '-') {
        injectLog("GAPSCOPE_RANK_RSS_GROWTH_LIMIT_MB=%s ignored: expected a whole number of MB", v);
        return kDefaultRssGrowthLimitMb << 20;
    }
    return uint64_t(mb) << 20;
}

const char* stateName(RankSession::State s)
{
    switch (s) {
    case RankSession::State::Idle:
        return "idle";
    case RankSession::State::Detecting:
        return "armed";
    case RankSession::State::Recording:
        return "recording";
    case RankSession::State::Done:
        return "flushing";
    }
    return "idle";
}

bool allKinds(const pb::CaptureSettings& s)
{
    return !s.kernels() && !s.memory_ops() && !s.runtime_api() && !s.synchronization() && !s.nvtx() && !s.nccl();
}

void addCounter(google::protobuf::RepeatedPtrField<pb::Counter>* out, format::Stat stat, uint32_t rank, uint64_t value,
    bool always = false)
{
    if (value || always)
        *out->Add() = format::makeCounter(stat, int32_t(rank), value);
}

} // namespace

RankSession::RankSession(Channels& channels, Tracer& tracer, IdentityFn identity)
    : m_channels(channels)
    , m_tracer(tracer)
    , m_identity(std::move(identity))
    , m_recorder(channels, tracer)
    , m_rss(residentBytes)
    , m_rssLimit(rssGrowthLimitFromEnv())
{
}

void RankSession::setMemoryGuard(RssFn rss, uint64_t limitBytes)
{
    m_rss = std::move(rss);
    m_rssLimit = limitBytes;
}

void RankSession::sampleMemory()
{
    const uint64_t now = m_rss ? m_rss() : 0;
    if (now && m_rssBase)
        m_rssGrowth = std::max<int64_t>(m_rssGrowth, int64_t(now) - int64_t(m_rssBase));
}

void RankSession::checkMemory()
{
    sampleMemory();
    if (m_state == State::Recording && m_rssLimit && m_rssGrowth > int64_t(m_rssLimit)) {
        injectLog("plan %u: the process grew by %lld MB while recording (limit %llu MB): stopping", m_plan,
            (long long)(m_rssGrowth >> 20), (unsigned long long)(m_rssLimit >> 20));
        m_stoppedForMemory = true;
        finishRecording("memory growth");
    }
}

RankSession::~RankSession()
{
    stopEverything();
}

bool RankSession::send(const wire::RankToAgent& msg, bool droppable)
{
    return m_link && m_link->send(msg, droppable);
}

std::string RankSession::serve(AgentLink& link, const std::atomic<bool>& stop)
{
    m_link = &link;
    m_linkDroppedBase = link.framesDropped();
    m_id = m_identity();
    m_rank = m_id.rank >= 0 ? uint32_t(m_id.rank) : 0;
    wire::RankToAgent reg;
    auto* r = reg.mutable_register_rank();
    r->set_protocol_version(kProtocolVersion);
    r->set_pid(m_id.pid);
    r->set_rank(m_id.rank);
    r->set_world_size(m_id.worldSize);
    r->set_local_rank(m_id.localRank);
    r->set_host(m_id.host);
    r->set_process_name(m_id.processName);
    r->set_command_line(m_id.commandLine);
    *r->mutable_gpu() = m_id.gpu;
    *r->mutable_versions() = m_id.versions;
    r->set_other_cupti_client(m_otherClient);
    auto* caps = r->mutable_capabilities();
    caps->set_kernels(true);
    caps->set_memory_ops(true);
    caps->set_runtime_api(true);
    caps->set_synchronization(true);
    const char* nvtxPath = std::getenv("NVTX_INJECTION64_PATH");
    const bool nvtx = nvtxHooksInstalled() || (nvtxPath && *nvtxPath);
    caps->set_nvtx(nvtx);
    caps->set_nccl(m_channels.ncclPluginVersion.load() > 0);
    caps->set_step_rule_nvtx(nvtx);
    caps->set_step_rule_graph(true);
    caps->set_step_rule_anchor(true);
    r->set_inject_version(GAPSCOPE_VERSION);
    r->set_clock_realtime_ns(nowRealtimeNs());
    send(reg);

    std::vector<wire::AgentToRank> received;
    std::string error;
    for (;;) {
        if (stop.load(std::memory_order_relaxed)) {
            wire::RankToAgent bye;
            bye.mutable_goodbye()->set_reason("process exiting");
            send(bye);
            link.pump(20, received, error);
            stopEverything();
            m_link = nullptr;
            return "stopped";
        }
        const int timeout = m_state == State::Idle ? 100 : 5;
        received.clear();
        if (!link.pump(timeout, received, error)) {
            stopEverything(); // the agent is gone: never keep tracing for nobody
            m_link = nullptr;
            return error;
        }
        for (const auto& msg : received) {
            if (msg.has_welcome() && !msg.welcome().accepted()) {
                stopEverything();
                m_link = nullptr;
                return "agent refused the rank: " + msg.welcome().error();
            }
            onMessage(msg);
        }
        tick(nowRealtimeNs());
    }
}

void RankSession::onMessage(const wire::AgentToRank& msg)
{
    switch (msg.msg_case()) {
    case wire::AgentToRank::kWelcome:
        if (msg.welcome().assigned_rank() >= 0)
            m_rank = uint32_t(msg.welcome().assigned_rank());
        break;
    case wire::AgentToRank::kArm:
        onArm(msg.arm());
        break;
    case wire::AgentToRank::kStart:
        onStart(msg.start());
        break;
    case wire::AgentToRank::kDisarm:
        onDisarm(msg.disarm().capture_id());
        break;
    case wire::AgentToRank::kPing: {
        const int64_t t2 = nowRealtimeNs();
        wire::RankToAgent out;
        auto* p = out.mutable_pong();
        p->set_nonce(msg.ping().nonce());
        p->set_t1_ns(msg.ping().t1_ns());
        p->set_t2_ns(t2);
        p->set_t3_ns(nowRealtimeNs());
        send(out);
        break;
    }
    default:
        break;
    }
}

void RankSession::sendArmed(wire::ArmError error, const std::string& message, uint32_t plan)
{
    wire::RankToAgent out;
    auto* a = out.mutable_armed();
    a->set_capture_id(m_captureId);
    a->set_error(error);
    a->set_message(message);
    a->set_local_step_index(m_recorder.window().stepsSeen());
    a->set_step_rule_used(toString(m_recorder.rule()));
    a->set_other_cupti_client(m_otherClient);
    a->set_plan(plan);
    send(out);
}

void RankSession::onArm(const wire::Arm& arm)
{
    if (m_state != State::Idle) {
        if (arm.capture_id() != m_captureId) {
            const uint64_t mine = m_captureId;
            m_captureId = arm.capture_id();
            sendArmed(wire::ARM_BUSY, "capture " + std::to_string(mine) + " is active in this process");
            m_captureId = mine;
        } else {
            sendArmed(wire::ARM_OK, "already armed");
        }
        return;
    }
    m_captureId = arm.capture_id();
    m_settings = arm.settings();
    m_plan = 0;
    m_flushMs = std::clamp<uint32_t>(arm.flush_interval_ms() ? arm.flush_interval_ms() : 20, 5, 1000);
    m_maxEvents = std::clamp<uint32_t>(arm.max_chunk_events() ? arm.max_chunk_events() : 65536, 256, 1u << 20);
    m_maxBytes = std::clamp<uint32_t>(
        arm.max_chunk_bytes() ? arm.max_chunk_bytes() : (4u << 20), 64u << 10, kMaxRankFrameBytes / 2);
    m_armLatencyMs = -1;
    m_enableMs = 0;
    m_buffersLeft = 0;
    StepRule rule = StepRule::Graph;
    if (!parseStepRule(m_settings.step_rule(), &rule)) {
        sendArmed(wire::ARM_RULE_UNSUPPORTED,
            "step rule '" + m_settings.step_rule()
                + "' is not one a rank can follow (auto, graph, nvtx, anchor, time)");
        return;
    }
    if (m_settings.steps() == 0 && m_settings.step_rule().empty())
        rule = StepRule::Time;
    if (m_tracer.layout() == CuptiLayout::Unknown) {
        sendArmed(wire::ARM_CUPTI_UNAVAILABLE,
            "CUPTI API version " + std::to_string(m_tracer.cuptiVersion())
                + " has no known record layout (known: " + knownCuptiVersions() + ")");
        return;
    }
    const char* nvtxPath = std::getenv("NVTX_INJECTION64_PATH");
    if (rule == StepRule::Nvtx && !nvtxHooksInstalled() && !(nvtxPath && *nvtxPath)) {
        sendArmed(wire::ARM_RULE_UNSUPPORTED,
            "the nvtx step rule needs NVTX_INJECTION64_PATH to name libgapscope-inject.so (gapscope-agent launch "
            "sets it)");
        return;
    }
    if (Status s = m_recorder.configure(rule, m_settings.step_pattern()); !s) {
        sendArmed(wire::ARM_RULE_UNSUPPORTED, s.message());
        return;
    }
    m_channels.allocate(m_settings.buffer_bytes() ? m_settings.buffer_bytes() : (128u << 10),
        m_settings.buffer_count() ? m_settings.buffer_count() : 128);
    const Tracer::AttachState afterLast = m_tracer.attachState(); // before this arm attaches again
    std::string other;
    if (Status s = m_tracer.beginDetection(rule, m_settings.step_pattern(), &other); !s) {
        if (!other.empty())
            m_otherClient = other;
        injectLog("arm refused: %s", s.message().c_str());
        sendArmed(wire::ARM_CUPTI_UNAVAILABLE, s.message());
        return;
    }
    m_baseCuptiDropped = m_channels.cuptiDropped.load();
    m_baseRefused = m_channels.pool.load() ? m_channels.pool.load()->refused() : 0;
    m_baseNvtx = m_channels.nvtxDropped.load();
    m_baseMarkers = m_channels.markersDropped.load();
    m_baseNccl = m_channels.collectivesDropped.load();
    m_linkDroppedBase = m_link ? m_link->framesDropped() : 0;
    // Drop markers left over from an earlier capture.
    std::vector<Recorder::NewMarker> stale;
    m_recorder.drainHost(stale);
    m_recorder.window().reset();
    m_baseline.beginArm(afterLast);
    m_prevMarkerTime = 0;
    m_activityAt = 0;
    m_channels.nvtxMode.store(rule == StepRule::Nvtx ? 1 : 0);
    m_state = State::Detecting;
    m_lastMarker = nowRealtimeNs();
    injectLog("armed capture %llu: rule %s, pattern \"%s\", NVTX hooks %s", (unsigned long long)m_captureId,
        toString(rule), m_settings.step_pattern().c_str(), nvtxHooksInstalled() ? "installed" : "not installed");
    sendArmed(wire::ARM_OK, "");
}

void RankSession::onStart(const wire::StartRecording& start)
{
    if (m_state == State::Idle || start.capture_id() != m_captureId || (m_plan != 0 && start.plan() <= m_plan))
        return;
    m_plan = start.plan();
    m_startReceived = nowRealtimeNs();
    if (!m_activityOn) {
        const int64_t t0 = nowRealtimeNs();
        if (Status s = m_tracer.startRecording(m_settings); !s) {
            sendArmed(wire::ARM_CUPTI_UNAVAILABLE, s.message(), m_plan);
            return;
        }
        if (m_activityAt == 0) {
            m_activityAt = t0;
            m_baseline.recordingStarted();
        }
        m_enableMs = double(nowRealtimeNs() - t0) / 1e6;
        m_activityOn = true;
    }
    const int64_t enabledAt = nowRealtimeNs();
    std::vector<Recorder::NewMarker> markers;
    m_recorder.drainHost(markers);
    reportMarkers(markers);
    m_recorder.beginPlan(ChunkBuilder::Identity { m_rank, m_id.host, m_id.pid });
    const bool all = allKinds(m_settings);
    m_channels.nvtxMode.store((all || m_settings.nvtx()) ? 2 : (m_recorder.rule() == StepRule::Nvtx ? 1 : 0));
    ncclSetRecording(all || m_settings.nccl());
    m_state = State::Recording;
    m_rssBase = m_rss ? m_rss() : 0;
    m_rssGrowth = 0;
    m_stoppedForMemory = false;
    m_lastFlush = enabledAt;
    m_endSeenAt = 0;
    m_lastMarker = enabledAt;
    m_armLatencyMs = -1;
    injectLog("plan %u: recording from local step %llu for %u steps (activity on in %.1f ms, %llu steps seen)", m_plan,
        (unsigned long long)start.start_local_index(), start.steps(), m_enableMs,
        (unsigned long long)m_recorder.window().stepsSeen());
    if (start.steps() > 0) {
        if (!m_recorder.window().startSteps(
                start.start_local_index(), start.steps(), start.global_start_index(), enabledAt)) {
            m_recorder.window().backToDetecting();
            m_recorder.endPlan();
            m_state = State::Detecting;
            injectLog("plan %u: start step %llu already passed", m_plan, (unsigned long long)start.start_local_index());
            sendArmed(wire::ARM_START_MISSED,
                "step " + std::to_string(start.start_local_index()) + " began before recording was on (local step "
                    + std::to_string(m_recorder.window().stepsSeen()) + " seen)",
                m_plan);
        }
    } else {
        injectLog("plan %u: time window", m_plan);
        const int64_t from = start.start_time_ns() > 0 ? start.start_time_ns() : enabledAt;
        m_recorder.window().startTime(from, start.stop_time_ns() > from ? start.stop_time_ns() : from + 1000 * kMs);
    }
}

void RankSession::reportMarkers(const std::vector<Recorder::NewMarker>& markers)
{
    for (const auto& m : markers) {
        // Steps before activity first went on in this arm: StepBaseline's.
        if (m_prevMarkerTime && m.time > m_prevMarkerTime && (m_activityAt == 0 || m.time < m_activityAt))
            m_baseline.addInterval(double(m.time - m_prevMarkerTime) / 1e6);
        m_prevMarkerTime = std::max(m_prevMarkerTime, m.time);
        wire::RankToAgent out;
        auto* b = out.mutable_step();
        b->set_capture_id(m_captureId);
        b->set_local_index(m.localIndex);
        b->set_time_ns(m.time);
        b->set_recording(m_state == State::Recording && m_recorder.planActive()
            && m_recorder.window().placeHost(m.time, nullptr) == StepWindow::Place::Inside);
        b->set_plan(m_plan);
        send(out);
        m_lastMarker = nowRealtimeNs();
    }
}

void RankSession::sendChunk(bool force)
{
    ChunkBuilder* b = m_recorder.builder();
    if (!b || !b->hasPending())
        return;
    if (!force && b->pendingEvents() < m_maxEvents && b->pendingBytes() < m_maxBytes / 2)
        return;
    wire::RankToAgent out;
    auto* c = out.mutable_chunk();
    c->set_capture_id(m_captureId);
    c->set_plan(m_plan);
    b->flush(*c->mutable_chunk());
    if (send(out, true))
        return;
    // The socket is backed up: the events go, but the dictionary entries they introduced (strings,
    // lanes, launch configs) and the step boundaries are small and needed by every later chunk, so
    // they travel anyway and the lost events are counted.
    pb::Chunk& ch = *c->mutable_chunk();
    const uint64_t lost = uint64_t(ch.kernels().c().lane_size()) + ch.memops().c().lane_size()
        + ch.api().c().lane_size() + ch.syncs().c().lane_size() + ch.nvtx().c().lane_size()
        + ch.collectives().c().lane_size();
    ch.clear_kernels();
    ch.clear_memops();
    ch.clear_api();
    ch.clear_syncs();
    ch.clear_nvtx();
    ch.clear_collectives();
    *ch.add_counters() = format::makeCounter(format::Stat::RankLinkDroppedEvents, int32_t(m_rank), lost);
    send(out, false);
}

void RankSession::tick(int64_t now)
{
    if (m_state == State::Idle) {
        m_tracer.maintain();
        return;
    }
    std::vector<Recorder::NewMarker> markers;
    m_recorder.drainHost(markers);
    reportMarkers(markers);
    if (m_activityOn && now - m_lastFlush >= int64_t(m_flushMs) * kMs) {
        m_lastFlush = now;
        m_tracer.flush();
        m_recorder.drainGpu([this] { sendChunk(false); });
        m_recorder.drainCollectives();
        m_recorder.emitSteps(false);
        sendChunk(true);
        if (m_armLatencyMs < 0 && m_recorder.firstRecordTime() > 0)
            m_armLatencyMs = std::max(0.0, double(m_recorder.firstRecordTime() - m_startReceived) / 1e6);
    }
    if (m_state == State::Recording && m_recorder.planActive()) {
        StepWindow& w = m_recorder.window();
        if (w.mode() == StepWindow::Mode::Steps) {
            if (w.endMarkerSeen() && m_endSeenAt == 0)
                m_endSeenAt = now;
            if (m_endSeenAt
                && ((m_recorder.sawGpuAfterWindow() && now - m_endSeenAt >= int64_t(m_flushMs) * kMs)
                    || now - m_endSeenAt > kEndGraceNs))
                finishRecording("complete");
            else if (now - m_lastMarker > kNoStepsNs)
                finishRecording("no step boundary for 5 s");
        } else if (w.timeWindowOver(now - 2 * int64_t(m_flushMs) * kMs)) {
            finishRecording("time window over");
        }
    }
    if (now - m_lastStatus >= kStatusEveryNs) {
        m_lastStatus = now;
        if (m_state == State::Recording)
            checkMemory();
        sendStatus();
        if (m_state == State::Detecting)
            injectLog("detecting: %llu steps seen, %llu NVTX calls lost, %llu markers lost",
                (unsigned long long)m_recorder.window().stepsSeen(), (unsigned long long)m_channels.nvtxDropped.load(),
                (unsigned long long)m_channels.markersDropped.load());
    }
}

void RankSession::finishRecording(const char*)
{
    sampleMemory();
    if (m_activityOn) {
        // Work launched before the switch-off is still running on the GPU, and CUPTI fills in its
        // timestamps as it completes. A forced flush right away hands those records out without
        // timestamps (the `records_without_timestamps` of earlier captures on the H200; none in 48
        // rank captures since). So: switch off, drain while the in-flight work finishes, then
        // force out the rest.
        m_tracer.disableRecording();
        const int64_t until = nowRealtimeNs() + kStopSettleNs;
        while (nowRealtimeNs() < until) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            m_tracer.flush();
            m_recorder.drainGpu([this] { sendChunk(false); });
        }
        m_tracer.stopRecording();
        m_activityOn = false;
    }
    std::vector<Recorder::NewMarker> markers;
    m_recorder.drainHost(markers);
    reportMarkers(markers);
    m_recorder.window().closeMarkers();
    m_recorder.drainGpu([this] { sendChunk(false); });
    m_recorder.dropPending();
    releaseCuptiBuffers();
    m_recorder.drainCollectives();
    m_recorder.emitSteps(true);
    m_channels.nvtxMode.store(m_recorder.rule() == StepRule::Nvtx ? 1 : 0);
    ncclSetRecording(false);
    sendChunk(true);
    if (m_armLatencyMs < 0 && m_recorder.firstRecordTime() > 0)
        m_armLatencyMs = std::max(0.0, double(m_recorder.firstRecordTime() - m_startReceived) / 1e6);

    wire::RankToAgent out;
    auto* d = out.mutable_done();
    d->set_capture_id(m_captureId);
    d->set_plan(m_plan);
    d->set_steps_recorded(m_recorder.window().stepsRecorded());
    const StepWindow::Evidence e = m_recorder.window().evidence();
    auto* o = d->mutable_overhead();
    fillOverhead(o);
    o->set_steps_during(e.stepsDuring);
    o->set_step_ms_median_during(e.stepDuringMs);
    o->set_arm_latency_ms(std::max(0.0, m_armLatencyMs));
    fillCounters(d->mutable_counters());
    send(out);
    injectLog("capture %llu done: %u steps; median step %.3f ms baseline (%u steps), %.3f ms before (%u), %.3f ms "
              "while recording (%u); %u captures before, CUPTI after the last: %s",
        (unsigned long long)m_captureId, m_recorder.window().stepsRecorded(), o->step_ms_median_baseline(),
        o->baseline_steps(), o->step_ms_median_before(), o->steps_before(), e.stepDuringMs, e.stepsDuring,
        o->captures_before(), toString(m_baseline.report().afterLast));
    m_recorder.window().backToDetecting();
    m_recorder.endPlan();
    m_state = State::Done;
}

void RankSession::onDisarm(uint64_t captureId)
{
    if (m_state == State::Idle || captureId != m_captureId)
        return;
    const int64_t t0 = nowRealtimeNs();
    if (m_state == State::Recording && m_activityOn) {
        // Aborted: ship what was recorded so far, then stop.
        m_tracer.stopRecording();
        m_activityOn = false;
        m_recorder.drainGpu([this] { sendChunk(false); });
        releaseCuptiBuffers();
        m_recorder.drainCollectives();
        m_recorder.emitSteps(true);
        sendChunk(true);
    }
    wire::RankToAgent out;
    auto* d = out.mutable_disarmed();
    d->set_capture_id(m_captureId);
    fillCounters(d->mutable_counters());
    stopEverything();
    d->set_disarm_latency_ms(double(nowRealtimeNs() - t0) / 1e6);
    send(out);
}

void RankSession::stopEverything()
{
    m_channels.nvtxMode.store(0);
    ncclSetRecording(false);
    if (m_activityOn) {
        m_tracer.stopRecording();
        m_activityOn = false;
        m_recorder.discardBuffers();
        releaseCuptiBuffers();
    }
    m_recorder.discardBuffers();
    m_tracer.endDetection();
    m_recorder.endPlan();
    m_recorder.window().reset();
    m_state = State::Idle;
}

void RankSession::releaseCuptiBuffers()
{
    if (BufferPool* pool = m_channels.pool.load())
        m_buffersLeft += pool->abandonInFlight();
}

void RankSession::fillCounters(google::protobuf::RepeatedPtrField<pb::Counter>* out)
{
    BufferPool* pool = m_channels.pool.load();
    const Recorder::Counters& c = m_recorder.counters();
    const ChunkBuilder* b = m_recorder.builder();
    addCounter(out, format::Stat::CuptiDroppedRecords, m_rank, m_channels.cuptiDropped.load() - m_baseCuptiDropped);
    addCounter(out, format::Stat::RefusedBuffers, m_rank, pool ? pool->refused() - m_baseRefused : 0);
    addCounter(out, format::Stat::NvtxDropped, m_rank, m_channels.nvtxDropped.load() - m_baseNvtx);
    addCounter(out, format::Stat::StepMarkersDropped, m_rank, m_channels.markersDropped.load() - m_baseMarkers);
    addCounter(out, format::Stat::NcclDropped, m_rank, m_channels.collectivesDropped.load() - m_baseNccl);
    addCounter(out, format::Stat::PendingDropped, m_rank, c.pendingDropped);
    addCounter(out, format::Stat::StoppedForMemoryGrowth, m_rank, m_stoppedForMemory ? 1 : 0);
    addCounter(
        out, format::Stat::RankRssGrowthMb, m_rank, uint64_t(std::max<int64_t>(0, m_rssGrowth) >> 20), m_rssBase != 0);
    static_assert(StepWindow::kKeepBehindWork == 16384, "the counter's detail names the limit");
    addCounter(out, format::Stat::LateDropped, m_rank, c.lateDropped);
    static_assert(StepWindow::kSettleNs == 1000000000, "the counter's detail names the settle time");
    addCounter(out, format::Stat::StepWorkAfterSettle, m_rank, m_recorder.window().workAfterSettle());
    addCounter(out, format::Stat::StepWorkAfterSettleMaxUs, m_rank,
        uint64_t(std::max<int64_t>(0, m_recorder.window().workAfterSettleMaxNs()) / 1000));
    addCounter(out, format::Stat::RankChunksDropped, m_rank, m_link ? m_link->framesDropped() - m_linkDroppedBase : 0);
    addCounter(out, format::Stat::RecordsWithoutTimestamps, m_rank, c.noTiming);
    addCounter(out, format::Stat::NvtxUnpaired, m_rank, b ? b->nvtxUnpaired() : 0);
    addCounter(out, format::Stat::GraphNodesRecorded, m_rank, b ? b->graphNodesSent() : 0);
    addCounter(out, format::Stat::GraphNodesUnknown, m_rank, b ? b->graphNodesUnknown() : 0);
    if (const std::string why = m_tracer.staysAttachedWhy(); !why.empty())
        *out->Add() = format::makeCounter(format::Stat::CuptiStaysAttached, int32_t(m_rank), 1,
            std::string(format::statInfo(format::Stat::CuptiStaysAttached).description) + ": " + why);
    addCounter(out, format::Stat::ActivityRecords, m_rank, c.records, true);
    addCounter(out, format::Stat::BuffersLeftWithCupti, m_rank, m_buffersLeft);
    addCounter(out, format::Stat::NcclProfilerPluginVersion, m_rank,
        uint64_t(std::max(0, m_channels.ncclPluginVersion.load())), true);
    addCounter(out, format::Stat::CuptiEnableUs, m_rank, uint64_t(m_enableMs * 1000), true);
    const Tracer::DeviceBuffers db = m_tracer.deviceBuffers();
    addCounter(out, format::Stat::CuptiDeviceBufferBytes, m_rank, db.bytes);
    addCounter(out, format::Stat::CuptiDeviceBufferPoolLimit, m_rank, db.poolLimit);
    addCounter(out, format::Stat::RankCacheEntries, m_rank, b ? b->cacheEntries() : 0);
    addCounter(out, format::Stat::RankDictionaryStrings, m_rank, b ? b->dictionaryStrings() : 0);
    addCounter(out, format::Stat::RankPendingRecords, m_rank, m_recorder.pendingRecords());
}

void RankSession::sendStatus()
{
    wire::RankToAgent out;
    auto* s = out.mutable_status();
    s->set_capture_id(m_captureId);
    s->set_state(stateName(m_state));
    fillCounters(s->mutable_counters());
    s->set_records(m_recorder.counters().records);
    BufferPool* pool = m_channels.pool.load();
    s->set_buffers_in_use(pool ? pool->inUse() : 0);
    s->set_bytes_sent(m_link ? m_link->bytesSent() : 0);
    s->set_other_cupti_client(m_otherClient);
    s->set_arm_latency_ms(m_armLatencyMs);
    if (m_state != State::Idle)
        fillOverhead(s->mutable_overhead());
    send(out);
}

void RankSession::fillOverhead(pb::OverheadEvidence* o) const
{
    const StepBaseline::Report r = m_baseline.report();
    o->set_steps_before(r.before.steps);
    o->set_step_ms_median_before(r.before.medianMs);
    o->set_baseline_steps(r.baseline.steps);
    o->set_step_ms_median_baseline(r.baseline.medianMs);
    o->set_baseline_captures_before(r.baselineCapturesBefore);
    o->set_captures_before(r.capturesBefore);
    switch (r.afterLast) {
    case StepBaseline::AfterLast::NoCapture:
        o->set_cupti_after_last(pb::OverheadEvidence::CUPTI_AFTER_LAST_NONE);
        break;
    case StepBaseline::AfterLast::Detached:
        o->set_cupti_after_last(pb::OverheadEvidence::CUPTI_AFTER_LAST_DETACHED);
        break;
    case StepBaseline::AfterLast::StillAttached:
        o->set_cupti_after_last(pb::OverheadEvidence::CUPTI_AFTER_LAST_STILL_ATTACHED);
        break;
    case StepBaseline::AfterLast::DetachPending:
        o->set_cupti_after_last(pb::OverheadEvidence::CUPTI_AFTER_LAST_DETACH_PENDING);
        break;
    }
}

} // namespace gapscope::capture::inject
