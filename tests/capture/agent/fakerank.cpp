// SPDX-License-Identifier: MIT
#include "fakerank.h"

#include "capture/protocol/framedecoder.h"
#include "capture/protocol/framing.h"
#include "capture/protocol/netutil.h"
#include "capture/protocol/protocol.pb.h"
#include "model/format/chunkencoder.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace gapscope::capture::test {

struct FakeRank::State {
    UniqueFd fd;
    FrameDecoder dec { kMaxRankFrameBytes };
    std::string pending; // bytes of frames not yet written (never cut a frame)
    uint64_t localStep = 0;
    int64_t stepStart = 0; // realtime of the current step's boundary
    bool armed = false;
    uint64_t captureId = 0;
    bool planned = false, timeWindow = false, recording = false, finished = false;
    uint32_t plan = 0;
    uint64_t startLocal = 0;
    uint32_t steps = 0;
    int64_t startTime = 0, stopTime = 0;
    uint32_t recorded = 0;
    std::unique_ptr<format::ChunkEncoder> enc;
    uint32_t laneA = 0, laneB = 0, laneNvtx = 0, stepName = 0;
    std::vector<uint32_t> names;
    uint64_t droppedChunks = 0, droppedEvents = 0;
    int64_t lastConnectTry = 0;
    uint32_t corr = 1;
    pb::Chunk carry; // dictionary entries of dropped chunks, sent with the next one
};

FakeRank::FakeRank(FakeRankOptions options)
    : m_opt(std::move(options))
    , m_s(new State)
{
}

FakeRank::~FakeRank()
{
    delete m_s;
}

bool FakeRank::sendFrame(const std::string& frame, bool droppable)
{
    State& s = *m_s;
    if (!s.fd.valid())
        return false;
    if (droppable && s.pending.size() > (1u << 20))
        return false;
    s.pending += frame;
    while (!s.pending.empty()) {
        const int64_t t0 = monotonicNs();
        const ssize_t n = ::send(s.fd.get(), s.pending.data(), s.pending.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        const int64_t dt = monotonicNs() - t0;
        if (dt > m_stats.maxSendNs.load())
            m_stats.maxSendNs = dt;
        if (n > 0) {
            s.pending.erase(0, size_t(n));
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break; // the rest goes out later; a rank never waits for the agent
        if (n < 0 && errno == EINTR)
            continue;
        lostAgent();
        return false;
    }
    return true;
}

static std::string frameOf(const wire::RankToAgent& m)
{
    std::string f;
    (void)appendFrame(m, f, kMaxRankFrameBytes);
    return f;
}

bool FakeRank::connectAndRegister()
{
    State& s = *m_s;
    auto fd = connectUnix(m_opt.socket);
    if (!fd)
        return false;
    s.fd = std::move(*fd);
    s.pending.clear();
    s.dec = FrameDecoder(kMaxRankFrameBytes);
    wire::RankToAgent m;
    auto* r = m.mutable_register_rank();
    r->set_protocol_version(kProtocolVersion);
    r->set_pid(uint32_t(::getpid()));
    r->set_rank(m_opt.rank);
    r->set_world_size(uint32_t(m_opt.worldSize));
    r->set_local_rank(m_opt.rank);
    r->set_process_name("fake-rank");
    auto* g = r->mutable_gpu();
    g->set_uuid("GPU-fake-" + std::to_string(m_opt.rank));
    g->set_name("fake GPU (test)");
    g->set_device_index(uint32_t(m_opt.rank));
    g->set_sm_count(132);
    r->mutable_versions()->set_cupti_api_version(0);
    r->set_other_cupti_client(m_opt.otherCupti);
    r->mutable_capabilities()->set_kernels(true);
    r->mutable_capabilities()->set_step_rule_nvtx(true);
    r->set_inject_version("fake");
    r->set_clock_realtime_ns(realtimeNs());
    ++m_stats.registrations;
    return sendFrame(frameOf(m), false);
}

void FakeRank::lostAgent()
{
    State& s = *m_s;
    if (!s.fd.valid())
        return;
    s.fd.reset();
    s.pending.clear();
    s.armed = s.planned = s.recording = false; // disarm ourselves: the agent went away
    m_stats.armed = false;
    ++m_stats.agentLost;
    if (m_opt.verbose)
        std::fprintf(stderr, "fake rank %d: agent gone, disarmed\n", m_opt.rank);
}

void FakeRank::sendChunk(bool force)
{
    State& s = *m_s;
    if (!s.enc || (!force && s.enc->pendingEvents() == 0))
        return;
    const uint64_t events = s.enc->pendingEvents();
    wire::RankToAgent m;
    auto* cd = m.mutable_chunk();
    cd->set_capture_id(s.captureId);
    cd->set_plan(s.plan);
    pb::Chunk* c = cd->mutable_chunk();
    s.enc->flush(*c);
    c->set_source_rank(uint32_t(m_opt.rank));
    if (s.carry.strings_size() || s.carry.lanes_size() || s.carry.configs_size()) {
        // Dictionary entries of chunks that could not be sent go out first, or later ids dangle.
        if (s.carry.strings_size()) {
            for (const auto& str : c->strings())
                s.carry.add_strings(str);
            c->mutable_strings()->Swap(s.carry.mutable_strings());
            c->set_first_string_id(s.carry.first_string_id());
        }
        for (const auto& l : c->lanes())
            *s.carry.add_lanes() = l;
        c->mutable_lanes()->Swap(s.carry.mutable_lanes());
        for (const auto& cf : c->configs())
            *s.carry.add_configs() = cf;
        c->mutable_configs()->Swap(s.carry.mutable_configs());
        s.carry.Clear();
    }
    if (sendFrame(frameOf(m), true)) {
        ++m_stats.chunksSent;
        m_stats.eventsSent += events;
        return;
    }
    ++s.droppedChunks;
    s.droppedEvents += events;
    ++m_stats.chunksDropped;
    m_stats.eventsDropped += events;
    if (c->strings_size()) {
        s.carry.set_first_string_id(c->first_string_id());
        s.carry.mutable_strings()->Swap(c->mutable_strings());
    }
    s.carry.mutable_lanes()->Swap(c->mutable_lanes());
    s.carry.mutable_configs()->Swap(c->mutable_configs());
}

void FakeRank::finishRecording()
{
    State& s = *m_s;
    sendChunk(true);
    wire::RankToAgent m;
    auto* d = m.mutable_done();
    d->set_capture_id(s.captureId);
    d->set_plan(s.plan);
    d->set_steps_recorded(s.recorded);
    auto* c = d->add_counters();
    c->set_name("rank_dropped_chunks");
    c->set_rank(m_opt.rank);
    c->set_value(s.droppedChunks);
    c->set_severity("data_loss");
    c->set_detail(std::to_string(s.droppedEvents) + " events in chunks the socket did not take");
    sendFrame(frameOf(m), false);
    s.recording = false;
    s.planned = false;
    s.finished = true;
    ++m_stats.captures;
}

void FakeRank::onStepBoundary(int64_t now)
{
    State& s = *m_s;
    const int64_t prevStart = s.stepStart;
    const uint64_t ended = s.localStep; // the step that ends here
    s.stepStart = now;
    ++s.localStep;
    const uint64_t begins = s.localStep;
    if (s.recording && s.enc && prevStart) {
        const int64_t len = now - prevStart;
        const int n = m_opt.flood ? m_opt.floodEvents : m_opt.kernelsPerStep;
        const int64_t slot = std::max<int64_t>(1, len / std::max(1, n));
        for (int k = 0; k < n; ++k) {
            const uint32_t name = s.names[size_t(k) % s.names.size()];
            s.enc->addKernel(k % 2 ? s.laneB : s.laneA, prevStart + k * slot, uint64_t(slot / 2), name, s.corr++, 0);
        }
        s.enc->addNvtx(s.laneNvtx, prevStart, uint64_t(len - 1000), s.stepName, 0);
        s.enc->addStep(uint32_t(m_opt.rank), uint32_t(ended), prevStart, uint64_t(len), pb::STEP_NVTX);
        ++s.recorded;
        ++m_stats.stepsRecorded;
        sendChunk(false);
        if (m_opt.crashAfterSteps >= 0 && int(s.recorded) >= m_opt.crashAfterSteps)
            std::abort();
        if (m_opt.leaveAfterSteps >= 0 && int(s.recorded) >= m_opt.leaveAfterSteps) {
            wire::RankToAgent bye;
            bye.mutable_goodbye()->set_reason("test rank leaving");
            sendFrame(frameOf(bye), false);
            m_stop = true;
            return;
        }
    }
    if (s.planned && !s.timeWindow) {
        if (!s.recording && begins > s.startLocal) {
            wire::RankToAgent m; // asked to start at a step already gone
            m.mutable_armed()->set_capture_id(s.captureId);
            m.mutable_armed()->set_error(wire::ARM_START_MISSED);
            m.mutable_armed()->set_plan(s.plan);
            sendFrame(frameOf(m), false);
            s.planned = false;
        } else if (begins == s.startLocal) {
            s.recording = true;
        } else if (s.recording && begins >= s.startLocal + s.steps) {
            finishRecording();
        }
    }
    if (s.planned && s.timeWindow) {
        if (!s.recording && now >= s.startTime && now < s.stopTime)
            s.recording = true;
        else if (s.recording && now >= s.stopTime)
            finishRecording();
    }
    if (s.armed && !m_opt.noSteps) {
        wire::RankToAgent m;
        auto* b = m.mutable_step();
        b->set_capture_id(s.captureId);
        b->set_local_index(begins);
        b->set_time_ns(now);
        b->set_recording(s.recording);
        b->set_plan(s.plan);
        sendFrame(frameOf(m), false);
    }
}

void FakeRank::handleAgent()
{
    State& s = *m_s;
    constexpr size_t kRead = 64 << 10;
    for (;;) {
        char* p = s.dec.prepare(kRead);
        const ssize_t n = ::recv(s.fd.get(), p, kRead, MSG_DONTWAIT);
        s.dec.commit(n > 0 ? size_t(n) : 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            lostAgent();
            return;
        }
        if (n < 0)
            break;
    }
    std::string_view payload;
    while (s.fd.valid() && s.dec.next(payload) == FrameDecoder::Result::Frame) {
        wire::AgentToRank m;
        if (!m.ParseFromArray(payload.data(), int(payload.size()))) {
            lostAgent();
            return;
        }
        if (m.has_welcome() && !m.welcome().accepted()) {
            std::fprintf(stderr, "fake rank %d: refused: %s\n", m_opt.rank, m.welcome().error().c_str());
            m_stop = true;
        } else if (m.has_arm()) {
            wire::RankToAgent a;
            auto* ar = a.mutable_armed();
            ar->set_capture_id(m.arm().capture_id());
            if (!m_opt.armError.empty()) {
                ar->set_error(wire::ARM_CUPTI_UNAVAILABLE);
                ar->set_message(m_opt.armError);
            } else {
                s.armed = true;
                m_stats.armed = true;
                s.captureId = m.arm().capture_id();
                s.finished = false;
                ar->set_local_step_index(s.localStep);
                ar->set_step_rule_used("nvtx");
                ar->set_other_cupti_client(m_opt.otherCupti);
            }
            sendFrame(frameOf(a), false);
            if (s.armed && m_opt.statusBaselineMs > 0) {
                wire::RankToAgent st;
                auto* rs = st.mutable_status();
                rs->set_capture_id(s.captureId);
                rs->set_state("armed");
                auto* o = rs->mutable_overhead();
                o->set_baseline_steps(200);
                o->set_step_ms_median_baseline(m_opt.statusBaselineMs);
                o->set_captures_before(1);
                o->set_cupti_after_last(pb::OverheadEvidence::CUPTI_AFTER_LAST_DETACHED);
                sendFrame(frameOf(st), false);
            }
        } else if (m.has_start() && s.armed && m.start().capture_id() == s.captureId) {
            const auto& st = m.start();
            s.plan = st.plan();
            s.startLocal = st.start_local_index();
            s.steps = st.steps();
            s.timeWindow = st.steps() == 0;
            s.startTime = st.start_time_ns();
            s.stopTime = st.stop_time_ns() ? st.stop_time_ns() : INT64_MAX;
            s.recording = false;
            s.recorded = 0;
            s.carry.Clear();
            s.enc = std::make_unique<format::ChunkEncoder>();
            pb::LaneDef l;
            l.set_kind(pb::LANE_GPU_STREAM);
            l.set_rank(uint32_t(m_opt.rank));
            l.set_device(uint32_t(m_opt.rank));
            l.set_pid(uint32_t(::getpid()));
            l.set_stream(7);
            l.set_name("stream 7");
            s.laneA = s.enc->lane(l);
            l.set_stream(13);
            l.set_name("stream 13");
            s.laneB = s.enc->lane(l);
            l.set_kind(pb::LANE_NVTX);
            l.set_stream(1);
            l.set_name("thread 1");
            s.laneNvtx = s.enc->lane(l);
            s.names.clear();
            for (int k = 0; k < 16; ++k)
                s.names.push_back(
                    s.enc->internString("void gemm_kernel<" + std::to_string(k) + ">(float const*, float*)"));
            s.stepName = s.enc->internString("decode_step");
            s.planned = true;
            if (!s.timeWindow && s.startLocal <= s.localStep) {
                wire::RankToAgent a;
                a.mutable_armed()->set_capture_id(s.captureId);
                a.mutable_armed()->set_error(wire::ARM_START_MISSED);
                a.mutable_armed()->set_plan(s.plan);
                sendFrame(frameOf(a), false);
                s.planned = false;
            }
        } else if (m.has_disarm()) {
            if (s.recording)
                sendChunk(false);
            s.armed = s.planned = s.recording = false;
            m_stats.armed = false;
            wire::RankToAgent d;
            d.mutable_disarmed()->set_capture_id(m.disarm().capture_id());
            d.mutable_disarmed()->set_disarm_latency_ms(0.01);
            sendFrame(frameOf(d), false);
        } else if (m.has_goodbye()) {
            lostAgent();
            return;
        } else if (m.has_ping()) {
            wire::RankToAgent p;
            p.mutable_pong()->set_nonce(m.ping().nonce());
            p.mutable_pong()->set_t1_ns(m.ping().t1_ns());
            p.mutable_pong()->set_t2_ns(realtimeNs());
            p.mutable_pong()->set_t3_ns(realtimeNs());
            sendFrame(frameOf(p), false);
        }
    }
}

void FakeRank::run()
{
    State& s = *m_s;
    const int64_t end = monotonicNs() + int64_t(m_opt.runSeconds * 1e9);
    // Steps follow one wall-clock schedule (a boundary at every multiple of the period), so fake ranks
    // of one host run in lockstep like tensor-parallel ranks do, however late their threads wake up.
    const int64_t period = std::max<int64_t>(1, int64_t(m_opt.stepMs * 1e6));
    int64_t processed = realtimeNs() / period;
    s.localStep = m_opt.firstLocalStep;
    while (!m_stop && monotonicNs() < end) {
        const int64_t now = realtimeNs();
        if (!s.fd.valid() && monotonicNs() - s.lastConnectTry > 200000000
            && (m_opt.reconnect || !m_stats.registrations)) {
            s.lastConnectTry = monotonicNs();
            connectAndRegister();
        }
        const int64_t due = now / period;
        if (due > processed) {
            if (m_opt.flood && due - processed > 1) { // a flooding rank skips steps but keeps counting them
                s.localStep += uint64_t(due - processed - 1);
                processed = due - 1;
            }
            ++processed;
            onStepBoundary(processed * period);
            continue;
        }
        pollfd pfd { s.fd.valid() ? s.fd.get() : -1, short(POLLIN | (s.pending.empty() ? 0 : POLLOUT)), 0 };
        const int wait = int(std::max<int64_t>(0, ((processed + 1) * period - now) / 1000000));
        ::poll(&pfd, 1, std::min(wait, 50));
        if (s.fd.valid() && (pfd.revents & POLLOUT))
            sendFrame(std::string(), false);
        if (s.fd.valid() && (pfd.revents & (POLLIN | POLLHUP | POLLERR)))
            handleAgent();
    }
    if (s.fd.valid())
        sendFrame(std::string(), false);
}

} // namespace gapscope::capture::test
