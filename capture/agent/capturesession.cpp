// SPDX-License-Identifier: MIT
#include "capture/agent/capturesession.h"

#include "capture/agent/mergeworker.h"
#include "capture/agent/rankoutcome.h"
#include "capture/agent/replaysource.h"
#include "capture/protocol/netutil.h"
#include "model/format/stats.h"
#include "model/format/trace.pb.h"

#include <algorithm>
#include <cmath>
#include <set>

#ifndef GAPSCOPE_VERSION
#define GAPSCOPE_VERSION "0.0.0"
#endif

namespace gapscope::capture {

namespace {

constexpr size_t kMaxPeriods = 1u << 16;

} // namespace

const char* toString(CaptureSession::Phase p)
{
    switch (p) {
    case CaptureSession::Phase::Arming:
        return "arming";
    case CaptureSession::Phase::Aligning:
        return "aligning";
    case CaptureSession::Phase::Recording:
        return "recording";
    case CaptureSession::Phase::Finishing:
        return "finishing";
    case CaptureSession::Phase::Writing:
        return "writing";
    case CaptureSession::Phase::Done:
        return "done";
    }
    return "unknown";
}

struct CaptureSession::Slot : RankOutcome {
    enum class State { Arming, Armed, Recording, Done, Gone, Failed };
    State state = State::Arming;
    uint64_t startLocal = 0;
    uint32_t plan = 0;
    uint32_t recordingBoundaries = 0;
    uint32_t stepsDone = 0;
    int64_t firstRecordingMono = 0;
    bool havePrev = false, prevRecording = false;
    uint64_t prevIndex = 0;
    int64_t prevTime = 0;

    bool finished() const { return state == State::Done || state == State::Gone || state == State::Failed; }
    void setState(State st)
    {
        state = st;
        gone = st == State::Gone;
        failed = st == State::Failed;
    }
};

CaptureSession::CaptureSession(uint64_t id, const wire::StartCapture& request, std::vector<RankRecord> ranks,
    const AgentOptions& options, const std::string& outputPath, CaptureHost& host)
    : m_id(id)
    , m_req(request)
    , m_settings(request.settings())
    , m_opt(options)
    , m_path(outputPath)
    , m_host(host)
    , m_leadNs(options.alignLeadMs * 1000000)
{
    if (m_settings.step_rule().empty())
        m_settings.set_step_rule("auto");
    std::sort(ranks.begin(), ranks.end(), [](const RankRecord& a, const RankRecord& b) { return a.rank < b.rank; });
    for (auto& r : ranks) {
        auto s = std::make_unique<Slot>();
        s->rec = std::move(r);
        m_slots.push_back(std::move(s));
    }
    m_aligner = std::make_unique<StepAligner>(m_slots.size());
}

CaptureSession::~CaptureSession() = default;

int CaptureSession::slotOf(uint32_t connId) const
{
    for (size_t i = 0; i < m_slots.size(); ++i)
        if (m_slots[i]->rec.connId == connId)
            return int(i);
    return -1;
}

uint32_t CaptureSession::planOf(uint32_t connId) const
{
    const int s = slotOf(connId);
    return s < 0 ? 0 : m_slots[size_t(s)]->plan;
}

void CaptureSession::setPhase(Phase p)
{
    m_phase = p;
    m_phaseMono = monotonicNs();
}

void CaptureSession::start()
{
    m_startMono = monotonicNs();
    m_startUnix = realtimeNs();
    m_phaseMono = m_startMono;
    m_started.set_request_id(m_req.request_id());
    m_started.set_capture_id(m_id);
    m_started.set_output_path(m_path);
    *m_started.mutable_header() = buildHeader(false);
    m_host.merger().begin(m_id, m_started.header(), m_path);
    if (m_host.replay()) {
        startReplay();
        return;
    }
    wire::AgentToRank arm;
    auto* a = arm.mutable_arm();
    a->set_capture_id(m_id);
    *a->mutable_settings() = m_settings;
    a->set_flush_interval_ms(m_opt.flushIntervalMs);
    a->set_max_chunk_events(16384);
    a->set_max_chunk_bytes(4u << 20);
    for (auto& s : m_slots)
        m_host.sendToRank(s->rec.connId, arm);
    setPhase(Phase::Arming);
}

void CaptureSession::startReplay()
{
    m_plan = 1; // the replay defines its stream (0) itself: it knows how to move its times
    m_host.replay()->start(m_id, m_plan, m_settings.steps(), m_host.merger());
    m_recordingMono = monotonicNs();
    m_armLatencyMs = double(m_recordingMono - m_startMono) / 1e6;
    setPhase(Phase::Recording);
}

void CaptureSession::onArmed(uint32_t connId, const wire::Armed& m)
{
    const int i = slotOf(connId);
    if (i < 0 || m.capture_id() != m_id)
        return;
    Slot& s = *m_slots[size_t(i)];
    if (!m.other_cupti_client().empty())
        s.otherCupti = m.other_cupti_client();
    if (m.error() == wire::ARM_START_MISSED) {
        if (m.plan() == m_plan && m_phase == Phase::Recording && m_replans < 4) {
            ++m_replans;
            m_leadNs *= 2;
            m_notes.push_back("rank " + std::to_string(s.rec.rank) + " missed the start step of plan "
                + std::to_string(m_plan) + "; planned again with " + std::to_string(m_leadNs / 1000000) + " ms lead");
            setPhase(Phase::Aligning);
            tryPlan(monotonicNs());
        } else if (m_replans >= 4) {
            fail("ranks kept missing the planned start step (steps too short for the agent to align them?)");
        }
        return;
    }
    if (m.error() != wire::ARM_OK) {
        s.setState(Slot::State::Failed);
        s.error = "arm failed: " + m.message();
        m_notes.push_back("rank " + std::to_string(s.rec.rank) + ": " + s.error);
    } else if (s.state == Slot::State::Arming) {
        s.setState(Slot::State::Armed);
        s.stepRule = m.step_rule_used();
    }
    checkArmed();
}

void CaptureSession::checkArmed()
{
    if (m_phase != Phase::Arming)
        return;
    bool allAnswered = true, anyArmed = false;
    std::string errors;
    for (const auto& x : m_slots) {
        allAnswered = allAnswered && x->state != Slot::State::Arming;
        anyArmed = anyArmed || x->state == Slot::State::Armed;
        if (!x->error.empty())
            errors += (errors.empty() ? "" : "; ") + ("rank " + std::to_string(x->rec.rank) + ": " + x->error);
    }
    if (!allAnswered)
        return;
    if (!anyArmed) {
        fail("no rank could be armed (" + errors + ")");
        return;
    }
    setPhase(Phase::Aligning);
    if (m_settings.steps() == 0)
        startTimeWindow();
    else
        tryPlan(monotonicNs());
}

void CaptureSession::onStep(uint32_t connId, const wire::StepBoundary& m)
{
    const int i = slotOf(connId);
    if (i < 0 || m.capture_id() != m_id)
        return;
    Slot& s = *m_slots[size_t(i)];
    m_aligner->add(size_t(i), m.local_index(), m.time_ns());
    if (s.havePrev && m.local_index() == s.prevIndex + 1) {
        auto& v = (s.prevRecording && m.recording()) ? s.during : s.before;
        if (s.prevRecording == m.recording() && v.size() < kMaxPeriods)
            v.push_back(m.time_ns() - s.prevTime);
    }
    s.havePrev = true;
    s.prevIndex = m.local_index();
    s.prevTime = m.time_ns();
    s.prevRecording = m.recording();
    if (m.recording() && m.plan() == m_plan && s.plan == m_plan) {
        ++s.recordingBoundaries;
        s.stepsDone = s.recordingBoundaries > 0 ? s.recordingBoundaries - 1 : 0;
        if (!s.firstRecordingMono) {
            s.firstRecordingMono = monotonicNs();
            bool all = true;
            for (const auto& x : m_slots)
                all = all
                    && (x->firstRecordingMono || x->state == Slot::State::Failed || x->state == Slot::State::Gone);
            if (all && m_armLatencyMs < 0) {
                m_recordingMono = s.firstRecordingMono;
                m_armLatencyMs = double(m_recordingMono - m_startMono) / 1e6;
            }
        }
    }
    if (m_phase == Phase::Aligning && m_settings.steps() > 0)
        tryPlan(monotonicNs());
}

void CaptureSession::tryPlan(int64_t nowMono)
{
    (void)nowMono;
    std::vector<bool> active(m_slots.size());
    bool any = false;
    for (size_t i = 0; i < m_slots.size(); ++i) {
        active[i] = m_slots[i]->state == Slot::State::Armed || m_slots[i]->state == Slot::State::Recording;
        any = any || active[i];
    }
    if (!any) {
        fail("no rank left to record");
        return;
    }
    auto plan = m_aligner->plan(m_leadNs, 2, 3, active);
    if (!plan)
        return;
    ++m_plan;
    for (size_t i = 0; i < m_slots.size(); ++i) {
        Slot& s = *m_slots[i];
        s.startLocal = plan->startLocal[i];
        s.plan = m_plan;
        s.recordingBoundaries = 0;
        s.stepsDone = 0;
        s.firstRecordingMono = 0;
    }
    m_settings.set_start_step_index(uint32_t(plan->globalStart));
    m_notes.push_back("plan " + std::to_string(m_plan) + ": start at step " + std::to_string(plan->globalStart)
        + ", lead " + std::to_string(plan->leadSteps) + " steps, step period "
        + std::to_string(double(plan->periodNs) / 1e6) + " ms, max boundary skew "
        + std::to_string(double(plan->maxSkewNs) / 1e3) + " us");
    m_armLatencyMs = -1;
    sendPlan();
}

void CaptureSession::sendPlan()
{
    for (auto& sp : m_slots) {
        Slot& s = *sp;
        if (s.state != Slot::State::Armed && s.state != Slot::State::Recording)
            continue;
        RemapOptions ro;
        ro.rank = s.rec.rank;
        ro.pid = s.rec.reg.pid();
        if (!s.rec.reg.host().empty())
            ro.host = s.rec.reg.host();
        ro.stepIndexShift = -int64_t(s.startLocal);
        m_host.merger().defineStream(s.rec.connId, m_plan, ro);
        wire::AgentToRank msg;
        auto* st = msg.mutable_start();
        st->set_capture_id(m_id);
        st->set_plan(m_plan);
        st->set_start_local_index(s.startLocal);
        st->set_steps(m_settings.steps());
        st->set_global_start_index(m_settings.start_step_index());
        if (m_settings.duration_s() > 0) {
            st->set_start_time_ns(0);
            st->set_stop_time_ns(realtimeNs() + int64_t(m_settings.duration_s() * 1e9) + m_leadNs);
        }
        m_host.sendToRank(s.rec.connId, msg);
        s.setState(Slot::State::Recording);
    }
    setPhase(Phase::Recording);
}

void CaptureSession::startTimeWindow()
{
    const int64_t start = realtimeNs() + m_leadNs;
    const int64_t stop = start + int64_t(std::max(0.0, m_settings.duration_s()) * 1e9);
    m_plan = 1;
    for (auto& sp : m_slots) {
        Slot& s = *sp;
        if (s.state != Slot::State::Armed)
            continue;
        s.plan = m_plan;
        RemapOptions ro;
        ro.rank = s.rec.rank;
        ro.pid = s.rec.reg.pid();
        if (!s.rec.reg.host().empty())
            ro.host = s.rec.reg.host();
        m_host.merger().defineStream(s.rec.connId, m_plan, ro);
        wire::AgentToRank msg;
        auto* st = msg.mutable_start();
        st->set_capture_id(m_id);
        st->set_plan(m_plan);
        st->set_start_time_ns(start);
        st->set_stop_time_ns(stop);
        m_host.sendToRank(s.rec.connId, msg);
        s.setState(Slot::State::Recording);
    }
    m_notes.push_back("time window of " + std::to_string(m_settings.duration_s()) + " s");
    setPhase(Phase::Recording);
}

void CaptureSession::onStatus(uint32_t connId, const wire::RankStatus& m)
{
    const int i = slotOf(connId);
    if (i < 0 || m.capture_id() != m_id)
        return;
    Slot& s = *m_slots[size_t(i)];
    s.takeCounters(m.counters());
    if (!m.other_cupti_client().empty())
        s.otherCupti = m.other_cupti_client();
    if (m.arm_latency_ms() > 0)
        s.rankArmLatencyMs = m.arm_latency_ms();
    if (m.has_overhead())
        s.liveOverhead = m.overhead();
}

void CaptureSession::onRecordingDone(uint32_t connId, const wire::RecordingDone& m)
{
    const int i = slotOf(connId);
    if (i < 0 || m.capture_id() != m_id || m.plan() != m_plan)
        return;
    Slot& s = *m_slots[size_t(i)];
    s.takeCounters(m.counters());
    s.rankOverhead = m.overhead();
    if (m.overhead().arm_latency_ms() > 0)
        s.rankArmLatencyMs = m.overhead().arm_latency_ms();
    s.stepsDone = m.steps_recorded();
    s.setState(Slot::State::Done);
    wire::AgentToRank d;
    d.mutable_disarm()->set_capture_id(m_id);
    d.mutable_disarm()->set_reason("complete");
    m_host.sendToRank(connId, d);
    maybeFinish(monotonicNs());
}

void CaptureSession::onDisarmed(uint32_t connId, const wire::Disarmed& m)
{
    const int i = slotOf(connId);
    if (i < 0 || m.capture_id() != m_id)
        return;
    Slot& s = *m_slots[size_t(i)];
    s.takeCounters(m.counters());
    s.disarmLatencyMs = m.disarm_latency_ms();
    if (!s.finished())
        s.setState(Slot::State::Done); // disarmed early (stop): whatever it sent is all there is
    maybeFinish(monotonicNs());
}

void CaptureSession::onRankGone(uint32_t connId, const std::string& reason)
{
    const int i = slotOf(connId);
    if (i < 0)
        return;
    Slot& s = *m_slots[size_t(i)];
    if (s.state == Slot::State::Done || s.state == Slot::State::Failed)
        return;
    s.setState(Slot::State::Gone);
    s.error = reason;
    m_notes.push_back("rank " + std::to_string(s.rec.rank) + " left during the capture: " + reason);
    if (m_phase == Phase::Arming || m_phase == Phase::Aligning) {
        bool anyLeft = false;
        for (const auto& x : m_slots)
            anyLeft = anyLeft || (!x->finished());
        if (!anyLeft)
            fail("every rank left before recording began");
        else
            checkArmed();
        return;
    }
    maybeFinish(monotonicNs());
}

void CaptureSession::onDropped(uint32_t connId, uint64_t events)
{
    const int i = slotOf(connId);
    if (i >= 0)
        m_slots[size_t(i)]->dropped += events;
}

void CaptureSession::onStreamError(uint32_t connId, const std::string& error)
{
    const int i = slotOf(connId);
    if (i >= 0)
        m_notes.push_back("rank " + std::to_string(m_slots[size_t(i)]->rec.rank) + ": data rejected: " + error);
}

void CaptureSession::onChunkWritten(uint64_t events)
{
    m_events += events;
    ++m_chunks;
}

void CaptureSession::finishRanks(const std::string& reason)
{
    wire::AgentToRank d;
    d.mutable_disarm()->set_capture_id(m_id);
    d.mutable_disarm()->set_reason(reason);
    for (auto& s : m_slots)
        if (!s->finished())
            m_host.sendToRank(s->rec.connId, d);
}

void CaptureSession::stop(const std::string& reason)
{
    if (m_phase == Phase::Writing || m_phase == Phase::Done || m_phase == Phase::Finishing)
        return;
    m_notes.push_back("stopped: " + reason);
    if (m_host.replay()) {
        m_host.replay()->stop();
        setPhase(Phase::Finishing);
        return;
    }
    const bool recording = m_phase == Phase::Recording;
    finishRanks(reason);
    if (!recording) {
        m_error = "stopped before recording began (" + reason + ")";
        for (auto& s : m_slots)
            if (!s->finished())
                s->setState(Slot::State::Done);
    }
    setPhase(Phase::Finishing);
    maybeFinish(monotonicNs());
}

void CaptureSession::fail(const std::string& error)
{
    if (m_phase == Phase::Writing || m_phase == Phase::Done)
        return;
    m_error = error;
    finishRanks("capture failed: " + error);
    for (auto& s : m_slots)
        if (!s->finished())
            s->setState(Slot::State::Done);
    setPhase(Phase::Finishing);
    maybeFinish(monotonicNs());
}

void CaptureSession::maybeFinish(int64_t nowMono)
{
    if (m_phase != Phase::Recording && m_phase != Phase::Finishing)
        return;
    if (m_host.replay())
        return; // the replay reports its own end (ReplaySource::finished)
    bool all = true;
    for (const auto& s : m_slots)
        all = all && s->finished();
    if (!all && m_phase == Phase::Finishing && nowMono - m_phaseMono > int64_t(m_opt.finishTimeoutS * 1e9)) {
        for (auto& s : m_slots)
            if (!s->finished()) {
                s->setState(Slot::State::Gone);
                s->error = "did not deliver its last data within " + std::to_string(int(m_opt.finishTimeoutS)) + " s";
            }
        all = true;
    }
    if (!all)
        return;
    setPhase(Phase::Writing);
    m_host.merger().end(m_id, buildHeader(true));
}

void CaptureSession::tick(int64_t nowMono)
{
    const double since = double(nowMono - m_startMono) / 1e9;
    if (m_phase == Phase::Arming && since > m_opt.armTimeoutS) {
        for (auto& s : m_slots)
            if (s->state == Slot::State::Arming) {
                s->setState(Slot::State::Failed);
                s->error = "no answer to Arm within " + std::to_string(int(m_opt.armTimeoutS)) + " s";
            }
        checkArmed();
    } else if (m_phase == Phase::Aligning && since > m_opt.armTimeoutS) {
        if (m_settings.duration_s() > 0) {
            m_notes.push_back("no common step boundaries within the arm timeout: recording a time window instead");
            startTimeWindow();
        } else {
            fail("no decode steps seen on every rank within " + std::to_string(int(m_opt.armTimeoutS))
                + " s (step rule '" + m_settings.step_rule() + "'); is the server idle? --duration S records a time "
                + "window instead");
        }
    } else if (m_phase == Phase::Recording && m_settings.steps() > 0 && m_settings.duration_s() > 0 && m_recordingMono
        && double(nowMono - m_recordingMono) / 1e9 > m_settings.duration_s()) {
        stop("duration limit of " + std::to_string(m_settings.duration_s()) + " s reached");
    } else if (m_phase == Phase::Recording && m_host.replay() && m_host.replay()->finished()) {
        setPhase(Phase::Writing);
        m_host.merger().end(m_id, buildHeader(true));
    } else if (m_phase == Phase::Finishing && m_host.replay() && m_host.replay()->finished()) {
        setPhase(Phase::Writing);
        m_host.merger().end(m_id, buildHeader(true));
    }
    maybeFinish(nowMono);
}

void CaptureSession::onMergeFinished(const MergeOutput& out)
{
    if (out.captureId != m_id || m_phase == Phase::Done)
        return;
    if (m_phase != Phase::Writing) {
        // The output failed mid-way (disk full, cannot create the file): stop the ranks.
        m_error = out.error;
        finishRanks("cannot write the capture file: " + out.error);
        if (m_host.replay())
            m_host.replay()->stop();
    }
    m_done.set_capture_id(m_id);
    m_done.set_ok(out.ok && m_error.empty());
    m_done.set_error(!m_error.empty() ? m_error : out.error);
    *m_done.mutable_header() = buildHeader(true);
    m_done.set_output_path(m_path);
    m_done.set_file_bytes(out.bytes);
    m_done.set_events(out.events);
    m_done.set_chunks(out.chunks);
    m_done.set_arm_latency_ms(m_armLatencyMs);
    setPhase(Phase::Done);
    wire::AgentToClient msg;
    *msg.mutable_done() = m_done;
    m_host.sendToClients(m_id, msg);
}

wire::Progress CaptureSession::progress() const
{
    wire::Progress p;
    p.set_capture_id(m_id);
    p.set_phase(toString(m_phase));
    p.set_steps_total(m_settings.steps());
    p.set_elapsed_s(double(monotonicNs() - m_startMono) / 1e9);
    p.set_events(m_events);
    uint32_t minSteps = UINT32_MAX;
    for (const auto& s : m_slots) {
        auto* r = p.add_ranks();
        r->set_rank(s->rec.rank);
        static const char* names[] = { "arming", "armed", "recording", "done", "gone", "failed" };
        r->set_state(names[int(s->state)]);
        r->set_steps_recorded(s->stepsDone);
        r->set_dropped_events(s->dropped);
        if (s->liveOverhead.baseline_steps() || s->liveOverhead.steps_before())
            *r->mutable_overhead() = s->liveOverhead;
        if (s->state == Slot::State::Recording || s->state == Slot::State::Done)
            minSteps = std::min(minSteps, s->stepsDone);
    }
    if (m_host.replay()) {
        const auto rp = m_host.replay()->progress();
        minSteps = rp.steps;
        p.set_events(rp.events);
    }
    p.set_steps_done(minSteps == UINT32_MAX ? 0 : minSteps);
    if (m_settings.steps() && p.steps_done() > m_settings.steps())
        p.set_steps_done(m_settings.steps());
    pb::FileHeader h;
    addLossCounters(h);
    *p.mutable_counters() = h.counters();
    return p;
}

void CaptureSession::addLossCounters(pb::FileHeader& h) const
{
    for (const auto& sp : m_slots)
        sp->addCounters(h);
}

pb::FileHeader CaptureSession::buildHeader(bool final) const
{
    pb::FileHeader h;
    if (m_host.replay())
        h = m_host.replay()->header();
    h.set_tool_version(GAPSCOPE_VERSION);
    h.set_created_unix_ns(m_startUnix);
    h.set_clock_domain("CLOCK_REALTIME");
    h.set_source(m_host.replay() ? "gapscope-agent --replay" : "gapscope-agent");
    *h.mutable_capture() = m_settings;
    (*h.mutable_metadata())["capture_id"] = std::to_string(m_id);
    if (!m_host.replay()) {
        h.clear_counters();
        std::vector<const RankOutcome*> outcomes;
        for (const auto& sp : m_slots)
            outcomes.push_back(sp.get());
        addRanks(outcomes, m_opt.host, h);
    } else {
        (*h.mutable_metadata())["replay_file"] = m_host.replay()->path();
        (*h.mutable_metadata())["replay_speed"] = std::to_string(m_host.replay()->speed());
    }
    if (!final)
        return h;
    if (m_armLatencyMs >= 0)
        (*h.mutable_metadata())["arm_latency_ms"] = std::to_string(m_armLatencyMs);
    std::string notes;
    for (const auto& n : m_notes)
        notes += (notes.empty() ? "" : "\n") + n;
    if (!notes.empty())
        (*h.mutable_metadata())["capture_notes"] = notes;
    if (!m_error.empty())
        (*h.mutable_metadata())["capture_error"] = m_error;
    addLossCounters(h);
    if (m_host.replay()) {
        const auto rp = m_host.replay()->progress();
        if (rp.waits)
            *h.add_counters() = format::makeCounter(format::Stat::ReplayWaits, -1, rp.waits);
    }
    return h;
}

} // namespace gapscope::capture
