// SPDX-License-Identifier: MIT
// The rank side of the protocol against the probe agent over a real Unix socket, with a fake
// tracer that writes hand-built CUpti_ActivityKernel10 records into the real buffer pool: a whole
// capture (alignment, window, per-step kernels, evidence), agent death mid-capture (disarm),
// another CUPTI client, a missed start, no agent at all, and the step-time baseline across captures
// (taken from the first steps, refreshed after a detached capture, frozen after an attached one).
#include "capture/inject/agentlink.h"
#include "capture/inject/channels.h"
#include "capture/inject/nvtxhooks.h"
#include "capture/inject/ranksession.h"
#include "model/format/wholegraph.h"
#include "probeagent.h"

#include <cupti_activity.h>

#include <QTemporaryDir>
#include <QtTest>
#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>

using namespace gapscope;
using namespace gapscope::capture;
using namespace gapscope::capture::inject;

namespace {

const char* kName = "_Z10decodeStepv";

class FakeTracer : public Tracer {
public:
    std::atomic<bool> detecting { false }, recording { false };
    std::atomic<int> stops { 0 }, ends { 0 };
    std::string failWith;
    std::atomic<AttachState> attach { AttachState::Never }; // between captures, as the test says

    AttachState attachState() const override { return detecting ? AttachState::Attached : attach.load(); }
    std::string staysWhy; // what staysAttachedWhy() says, as the test sets it
    std::string staysAttachedWhy() const override { return staysWhy; }

    CuptiLayout layout() const override { return CuptiLayout::Cuda130; }
    uint32_t cuptiVersion() const override { return 130001; }
    Status beginDetection(StepRule, const std::string&, std::string* other) override
    {
        if (!failWith.empty()) {
            *other = failWith;
            return Status::error("CUPTI is in use by " + failWith);
        }
        detecting = true;
        return Status::ok();
    }
    void endDetection() override
    {
        if (detecting.exchange(false))
            ++ends;
    }
    Status startRecording(const pb::CaptureSettings&) override
    {
        recording = true;
        return Status::ok();
    }
    void stopRecording() override
    {
        if (recording.exchange(false))
            ++stops;
        flush();
    }
    void flush() override
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        BufferPool* pool = channels().pool.load();
        size_t i = 0;
        while (i < m_queued.size()) {
            uint8_t* buf = nullptr;
            size_t size = 0;
            if (!pool->acquire(&buf, &size))
                break;
            size_t used = 0;
            for (; i < m_queued.size() && used + sizeof(CUpti_ActivityKernel10) <= size; ++i) {
                std::memcpy(buf + used, &m_queued[i], sizeof(CUpti_ActivityKernel10));
                used += sizeof(CUpti_ActivityKernel10);
            }
            pool->complete(buf, used);
        }
        m_queued.clear();
    }
    void forEachRecord(const uint8_t* buffer, size_t valid, const std::function<void(const void*)>& fn) override
    {
        for (size_t at = 0; at + sizeof(CUpti_ActivityKernel10) <= valid; at += sizeof(CUpti_ActivityKernel10))
            fn(buffer + at);
    }
    std::string apiName(uint8_t, uint32_t) override { return "cudaLaunchKernel"; }

    // What CUPTI would record for a kernel (only while activity is on).
    void emitKernel(uint32_t corr, int64_t start, int64_t end)
    {
        if (!recording)
            return;
        CUpti_ActivityKernel10 k;
        std::memset(&k, 0, sizeof(k));
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.start = uint64_t(start);
        k.end = uint64_t(end);
        k.correlationId = corr;
        k.streamId = 7;
        k.gridX = k.gridY = k.gridZ = 1;
        k.blockX = 128;
        k.blockY = k.blockZ = 1;
        k.name = kName;
        k.graphId = 1;
        std::lock_guard<std::mutex> lock(m_mutex);
        m_queued.push_back(k);
    }

    // A whole graph replay timed by events (the light mode's replaytimer), handed out by takeTimedReplays.
    void emitReplay(uint32_t corr, int64_t start, int64_t end)
    {
        if (!recording)
            return;
        std::lock_guard<std::mutex> lock(m_mutex);
        m_replays.push_back(wholeReplayRecord(start, end, corr, 0, 0, 7, 1));
    }
    void takeTimedReplays(std::vector<GpuRecord>& out) override
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        out.insert(out.end(), m_replays.begin(), m_replays.end());
        m_replays.clear();
    }
    std::atomic<bool> wholeReplays { false }; // the workload's launches are timed whole, not per kernel
    // ... and recorded per kernel as well, those records to be left out (the light mode's last launch of
    // a detailed block, cuptitracer.cpp)
    std::atomic<bool> replacedKernels { false };
    bool replacedByTimedReplay(uint32_t) const override { return replacedKernels; }

private:
    std::mutex m_mutex;
    std::vector<CUpti_ActivityKernel10> m_queued;
    std::vector<GpuRecord> m_replays;
};

// A decode loop: one "graph launch" every 3 ms with five kernels.
class Workload {
public:
    explicit Workload(FakeTracer& t)
        : m_tracer(t)
        , m_thread([this] { run(); })
    {
    }
    ~Workload()
    {
        m_stop = true;
        m_thread.join();
    }

private:
    void run()
    {
        uint32_t corr = 1000;
        while (!m_stop) {
            corr += 100;
            const int64_t now = nowRealtimeNs();
            if (m_tracer.detecting) {
                StepMarker m;
                m.time = now;
                m.correlation = corr;
                m.source = MarkerSource::GraphLaunch;
                channels().pushMarker(m);
            }
            if (m_tracer.wholeReplays) {
                m_tracer.emitReplay(corr, now + 100000, now + 550000);
                for (uint32_t k = 1; m_tracer.replacedKernels && k <= 5; ++k)
                    m_tracer.emitKernel(corr, now + 100000 * k, now + 100000 * k + 9000000); // wrong ends
            } else
                for (uint32_t k = 1; k <= 5; ++k)
                    m_tracer.emitKernel(corr + k, now + 100000 * k, now + 100000 * k + 50000);
            std::this_thread::sleep_for(std::chrono::milliseconds(3));
        }
    }
    FakeTracer& m_tracer;
    std::atomic<bool> m_stop { false };
    std::thread m_thread;
};

// A decode loop with exact step times: markers carry their scheduled times (the thread sleeps until
// each), one step every `beforeNs` while not recording and every `recordingNs` while recording, so
// the step-time medians the rank reports are known to the nanosecond.
class PacedWorkload {
public:
    PacedWorkload(FakeTracer& t, int64_t beforeNs, int64_t recordingNs)
        : m_tracer(t)
        , m_before(beforeNs)
        , m_recording(recordingNs)
        , m_thread([this] { run(); })
    {
    }
    ~PacedWorkload()
    {
        m_stop = true;
        m_thread.join();
    }
    void setBefore(int64_t ns) { m_before = ns; }

private:
    void run()
    {
        uint32_t corr = 500000;
        int64_t next = nowRealtimeNs();
        while (!m_stop) {
            int64_t now = nowRealtimeNs();
            if (now < next) {
                std::this_thread::sleep_for(std::chrono::nanoseconds(next - now));
                continue;
            }
            if (now - next > 50000000)
                next = now; // fell far behind (loaded machine): start the schedule again
            corr += 100;
            if (m_tracer.detecting) {
                StepMarker m;
                m.time = next;
                m.correlation = corr;
                m.source = MarkerSource::GraphLaunch;
                channels().pushMarker(m);
            }
            for (uint32_t k = 1; k <= 5; ++k)
                m_tracer.emitKernel(corr + k, next + 100000 * k, next + 100000 * k + 50000);
            next += m_tracer.recording ? m_recording.load() : m_before.load();
        }
    }
    FakeTracer& m_tracer;
    std::atomic<int64_t> m_before, m_recording;
    std::atomic<bool> m_stop { false };
    std::thread m_thread;
};

struct Rank {
    FakeTracer tracer;
    std::atomic<bool> stop { false };
    std::string ended;
    std::atomic<bool> finished { false };
    std::thread thread;
    RankSession::RssFn rss; // set: the memory guard reads this instead of /proc
    uint64_t rssLimit = 0;

    void start(const std::string& socket)
    {
        thread = std::thread([this, socket] {
            RankSession session(channels(), tracer, [] {
                RankIdentity id;
                id.rank = 0;
                id.worldSize = 1;
                id.pid = 4242;
                id.host = "testhost";
                id.gpu.set_uuid("GPU-test");
                return id;
            });
            if (rss)
                session.setMemoryGuard(rss, rssLimit);
            AgentLink link;
            if (Status s = link.connect(socket); !s) {
                ended = s.message();
            } else {
                ended = session.serve(link, stop);
            }
            finished = true;
        });
    }
    ~Rank()
    {
        stop = true;
        if (thread.joinable())
            thread.join();
    }
};

template <typename F> bool pumpUntil(probe::ProbeAgent& agent, F done, int ms = 5000)
{
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until) {
        agent.pump(5);
        if (done())
            return true;
    }
    return false;
}

// The probe agent listening on a socket in `dir`, and `rank` started against it and registered.
bool connectRank(const QTemporaryDir& dir, probe::ProbeAgent& agent, Rank& rank)
{
    const std::string path = dir.filePath("agent.sock").toStdString();
    if (!agent.listen(path))
        return false;
    rank.start(path);
    return pumpUntil(agent, [&] { return agent.rankCount() == 1; });
}

pb::CaptureSettings settings(uint32_t steps)
{
    pb::CaptureSettings s;
    s.set_steps(steps);
    s.set_step_rule("graph");
    return s;
}

// One whole capture of `steps` steps once the rank has reported `boundaries` step boundaries, then
// disarm; `done` receives the rank's RecordingDone.
bool captureAfter(
    probe::ProbeAgent& agent, uint64_t id, uint32_t steps, size_t boundaries, int64_t leadNs, wire::RecordingDone* done)
{
    agent.arm(id, settings(steps), 5);
    if (!pumpUntil(agent, [&] { return agent.allArmed(); }) || agent.ranks()[0]->armed.error() != wire::ARM_OK)
        return false;
    if (!pumpUntil(agent, [&] { return agent.ranks()[0]->boundaries.size() >= boundaries; }))
        return false;
    if (!pumpUntil(agent, [&] { return agent.tryPlan(leadNs, 2); }))
        return false;
    if (!pumpUntil(agent, [&] { return agent.allDone(); }))
        return false;
    *done = agent.ranks()[0]->doneMsg;
    agent.disarm();
    return pumpUntil(agent, [&] { return agent.ranks()[0]->disarmed; });
}

constexpr int64_t kMsNs = 1000000;

} // namespace

class TstRankSession : public QObject {
    Q_OBJECT
private slots:
    // Whole replays timed by events (the light mode without CUPTI's graph-level trace) reach the file
    // as one whole-graph kernel event per step, placed in their steps like CUPTI's records. Where CUPTI
    // recorded the same launches kernel by kernel as well (a detailed block's last launch), only the
    // whole replays are kept.
    void timedReplaysPlacedInSteps_data()
    {
        QTest::addColumn<bool>("replacedKernels");
        QTest::newRow("timed whole") << false;
        QTest::newRow("also recorded per kernel") << true;
    }
    void timedReplaysPlacedInSteps()
    {
        QFETCH(bool, replacedKernels);
        QTemporaryDir dir;
        probe::ProbeAgent agent;
        Rank rank;
        rank.tracer.wholeReplays = true;
        rank.tracer.replacedKernels = replacedKernels;
        QVERIFY(connectRank(dir, agent, rank));
        agent.arm(1, settings(4), 5);
        QVERIFY(pumpUntil(agent, [&] { return agent.allArmed(); }));
        Workload load(rank.tracer);
        QVERIFY(pumpUntil(agent, [&] { return agent.tryPlan(20000000) || agent.plan() > 0; }));
        QVERIFY(pumpUntil(agent, [&] { return agent.allDone(); }));
        agent.finishStats();
        probe::ProbeAgent::Rank& r = *agent.ranks()[0];
        QCOMPARE(r.doneMsg.steps_recorded(), 4u);
        QCOMPARE(r.steps.size(), size_t(4));
        for (const auto& [index, st] : r.steps) {
            QCOMPARE(st.kernels, 1u);
            QCOMPARE(st.kernelNs, uint64_t(450000));
        }
        QCOMPARE(r.kernels.size(), size_t(4));
        QCOMPARE(r.kernelNames.size(), size_t(1));
        QCOMPARE(r.kernelNames.begin()->first, std::string(format::kWholeGraphName));
    }

    void wholeCapture()
    {
        QTemporaryDir dir;
        probe::ProbeAgent agent;
        Rank rank;
        QVERIFY(connectRank(dir, agent, rank));
        QCOMPARE(agent.ranks()[0]->reg.gpu().uuid(), std::string("GPU-test"));
        QCOMPARE(agent.ranks()[0]->reg.pid(), 4242u);
        agent.arm(1, settings(4), 5);
        QVERIFY(pumpUntil(agent, [&] { return agent.allArmed(); }));
        QCOMPARE(agent.ranks()[0]->armed.error(), wire::ARM_OK);
        QVERIFY(rank.tracer.detecting);
        QVERIFY(!rank.tracer.recording); // detection only until StartRecording
        Workload load(rank.tracer);
        QVERIFY(pumpUntil(agent, [&] { return agent.tryPlan(20000000) || agent.plan() > 0; }));
        QVERIFY(pumpUntil(agent, [&] { return agent.allDone(); }));
        QVERIFY(!rank.tracer.recording); // activity off as soon as the window is complete
        agent.finishStats();
        probe::ProbeAgent::Rank& r = *agent.ranks()[0];
        QCOMPARE(r.doneMsg.steps_recorded(), 4u);
        QCOMPARE(r.steps.size(), size_t(4));
        uint64_t expect = r.startLocal;
        for (const auto& [index, s] : r.steps) {
            QCOMPARE(index, expect++);
            QCOMPARE(s.kernels, 5u);
            QCOMPARE(s.kernelNs, uint64_t(5 * 50000));
        }
        QCOMPARE(r.kernels.size(), size_t(20)); // nothing outside the window
        QCOMPARE(r.kernelNames.begin()->first, std::string("decodeStep()"));
        QVERIFY(r.doneMsg.overhead().steps_before() >= 2);
        QVERIFY(r.doneMsg.overhead().step_ms_median_before() > 2.5);
        QVERIFY(r.doneMsg.overhead().steps_during() >= 3);
        QVERIFY(r.doneMsg.overhead().arm_latency_ms() >= 0);
        bool activity = false, rssGrowth = false;
        for (const auto& c : r.doneMsg.counters()) {
            activity = activity || (c.name() == "activity_records" && c.value() >= 20);
            rssGrowth = rssGrowth || c.name() == "rank_rss_growth_mb"; // reported with every capture
            QVERIFY(c.name() != "stopped_for_memory_growth");
        }
        QVERIFY(activity);
        QVERIFY(rssGrowth);
        QVERIFY(agent.errors().empty());
        agent.disarm();
        QVERIFY(pumpUntil(agent, [&] { return r.disarmed; }));
        QVERIFY(!rank.tracer.detecting);
        QCOMPARE(channels().nvtxMode.load(), 0);
        QCOMPARE(channels().pool.load()->inUse(), size_t(0)); // every buffer came back
    }

    void agentDeathDisarms()
    {
        QTemporaryDir dir;
        probe::ProbeAgent agent;
        Rank rank;
        QVERIFY(connectRank(dir, agent, rank));
        agent.arm(2, settings(100000), 5);
        QVERIFY(pumpUntil(agent, [&] { return agent.allArmed(); }));
        Workload load(rank.tracer);
        QVERIFY(pumpUntil(agent, [&] { return agent.tryPlan(20000000) || agent.plan() > 0; }));
        QVERIFY(pumpUntil(agent, [&] { return agent.ranks()[0]->recordingBoundaries > 2; }));
        QVERIFY(rank.tracer.recording);
        agent.dropConnections(); // the agent dies mid-capture
        for (int i = 0; i < 200 && !rank.finished; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        QVERIFY(rank.finished);
        QVERIFY(!rank.ended.empty());
        QVERIFY(!rank.tracer.recording);
        QVERIFY(!rank.tracer.detecting);
        QCOMPARE(channels().nvtxMode.load(), 0);
        QVERIFY(!channels().ncclRecording.load());
    }

    void otherCuptiClientIsReported()
    {
        QTemporaryDir dir;
        probe::ProbeAgent agent;
        Rank rank;
        rank.tracer.failWith = "CUPTI for Nsight Systems";
        QVERIFY(connectRank(dir, agent, rank));
        agent.arm(3, settings(5));
        QVERIFY(pumpUntil(agent, [&] { return agent.allArmed(); }));
        const auto& armed = agent.ranks()[0]->armed;
        QCOMPARE(armed.error(), wire::ARM_CUPTI_UNAVAILABLE);
        QCOMPARE(armed.other_cupti_client(), std::string("CUPTI for Nsight Systems"));
        QVERIFY(!rank.tracer.detecting);
        // The session stays usable: the agent may try again once the other client is gone.
        rank.tracer.failWith.clear();
        agent.arm(4, settings(5));
        QVERIFY(pumpUntil(agent, [&] { return agent.allArmed(); }));
        QCOMPARE(agent.ranks()[0]->armed.error(), wire::ARM_OK);
    }

    void unknownRuleIsRefused()
    {
        // A rule the rank cannot follow is an error, never a silent graph rule; the session stays usable.
        QTemporaryDir dir;
        probe::ProbeAgent agent;
        Rank rank;
        QVERIFY(connectRank(dir, agent, rank));
        pb::CaptureSettings s = settings(5);
        s.set_step_rule("forward");
        agent.arm(6, s);
        QVERIFY(pumpUntil(agent, [&] { return agent.allArmed(); }));
        QCOMPARE(agent.ranks()[0]->armed.error(), wire::ARM_RULE_UNSUPPORTED);
        QVERIFY2(QString::fromStdString(agent.ranks()[0]->armed.message()).contains(QLatin1String("'forward'")),
            agent.ranks()[0]->armed.message().c_str());
        QVERIFY(!rank.tracer.detecting);
        agent.arm(7, settings(5));
        QVERIFY(pumpUntil(agent, [&] { return agent.allArmed(); }));
        QCOMPARE(agent.ranks()[0]->armed.error(), wire::ARM_OK);
    }

    void missedStartIsAnswered()
    {
        QTemporaryDir dir;
        probe::ProbeAgent agent;
        Rank rank;
        QVERIFY(connectRank(dir, agent, rank));
        agent.arm(5, settings(3), 5);
        QVERIFY(pumpUntil(agent, [&] { return agent.allArmed(); }));
        Workload load(rank.tracer);
        QVERIFY(pumpUntil(agent, [&] { return agent.ranks()[0]->boundaries.size() >= 3; }));
        agent.sendStart(0, 3); // step 0 is long gone
        QVERIFY(pumpUntil(agent, [&] { return agent.anyMissed(); }));
        // A proper plan afterwards still records.
        QVERIFY(pumpUntil(agent, [&] { return agent.tryPlan(20000000); }));
        QVERIFY(pumpUntil(agent, [&] { return agent.allDone(); }));
        agent.finishStats();
        QCOMPARE(agent.ranks()[0]->doneMsg.steps_recorded(), 3u);
    }

    void memoryGrowthStopsRecording()
    {
        // The process grows 64 MB between reads (as CUPTI's heap did in some CUDA-graph captures)
        // against a 100 MB limit: recording stops at the second read, says why, and activity is off.
        QTemporaryDir dir;
        probe::ProbeAgent agent;
        Rank rank;
        auto reads = std::make_shared<std::atomic<uint64_t>>(0);
        rank.rss = [reads] { return (uint64_t(1) << 30) + (reads->fetch_add(1) << 26); };
        rank.rssLimit = uint64_t(100) << 20;
        QVERIFY(connectRank(dir, agent, rank));
        agent.arm(6, settings(100000), 5);
        QVERIFY(pumpUntil(agent, [&] { return agent.allArmed(); }));
        Workload load(rank.tracer);
        QVERIFY(pumpUntil(agent, [&] { return agent.tryPlan(20000000) || agent.plan() > 0; }));
        QVERIFY(pumpUntil(
            agent, [&] { return agent.allDone(); }, 8000));
        QVERIFY(!rank.tracer.recording);
        const auto& done = agent.ranks()[0]->doneMsg;
        QVERIFY(done.steps_recorded() > 0);
        QVERIFY(done.steps_recorded() < 100000);
        uint64_t stopped = 0, growth = 0;
        for (const auto& c : done.counters()) {
            if (c.name() == "stopped_for_memory_growth") {
                stopped = c.value();
                QCOMPARE(c.severity(), std::string("data_loss"));
            }
            if (c.name() == "rank_rss_growth_mb")
                growth = c.value();
        }
        QCOMPARE(stopped, uint64_t(1));
        QVERIFY(growth >= 128);
        QVERIFY(agent.errors().empty());
    }

    void firstCaptureTakesTheBaseline()
    {
        // 60 steps of 2 ms before recording, 2.5 ms while recording: the baseline and "before"
        // are this arm's 60+ steps at exactly 2 ms; the rank's status says so while armed.
        QTemporaryDir dir;
        probe::ProbeAgent agent;
        Rank rank;
        QVERIFY(connectRank(dir, agent, rank));
        PacedWorkload load(rank.tracer, 2 * kMsNs, 5 * kMsNs / 2);
        agent.arm(21, settings(20), 5);
        QVERIFY(pumpUntil(agent, [&] { return agent.allArmed(); }));
        probe::ProbeAgent::Rank& r = *agent.ranks()[0];
        QVERIFY(pumpUntil(agent, [&] { return r.boundaries.size() >= 61; }));
        QVERIFY(pumpUntil(
            agent,
            [&] {
                return r.lastStatus.capture_id() == 21 && r.lastStatus.state() == "armed"
                    && r.lastStatus.overhead().baseline_steps() >= 50;
            },
            3000));
        const pb::OverheadEvidence& live = r.lastStatus.overhead();
        QCOMPARE(live.step_ms_median_baseline(), 2.0);
        QCOMPARE(live.steps_before(), live.baseline_steps()); // never captured: the same steps
        QCOMPARE(live.step_ms_median_before(), 2.0);
        QCOMPARE(live.captures_before(), 0u);
        QVERIFY(pumpUntil(agent, [&] { return agent.tryPlan(20 * kMsNs) || agent.plan() > 0; }));
        QVERIFY(pumpUntil(agent, [&] { return agent.allDone(); }));
        const pb::OverheadEvidence& o = r.doneMsg.overhead();
        QVERIFY2(o.baseline_steps() >= 60, std::to_string(o.baseline_steps()).c_str());
        QVERIFY(o.baseline_steps() <= 200);
        QCOMPARE(o.step_ms_median_baseline(), 2.0);
        QCOMPARE(o.baseline_captures_before(), 0u);
        QCOMPARE(o.steps_before(), o.baseline_steps());
        QCOMPARE(o.step_ms_median_before(), 2.0);
        QCOMPARE(o.captures_before(), 0u);
        QCOMPARE(o.cupti_after_last(), pb::OverheadEvidence::CUPTI_AFTER_LAST_NONE);
        QCOMPARE(o.steps_during(), 20u);
        QCOMPARE(o.step_ms_median_during(), 2.5);
    }

    void detachedCaptureLetsTheBaselineRefresh()
    {
        QTemporaryDir dir;
        probe::ProbeAgent agent;
        Rank rank;
        QVERIFY(connectRank(dir, agent, rank));
        PacedWorkload load(rank.tracer, 2 * kMsNs, 5 * kMsNs / 2);
        wire::RecordingDone first, second, third;
        QVERIFY(captureAfter(agent, 31, 10, 61, 20 * kMsNs, &first));
        QCOMPARE(first.overhead().captures_before(), 0u);
        // CUPTI detached after it; the process runs a little slower now (longer sequences).
        rank.tracer.attach = Tracer::AttachState::Detached;
        load.setBefore(22 * kMsNs / 10);
        QVERIFY(captureAfter(agent, 32, 10, 61, 20 * kMsNs, &second));
        const pb::OverheadEvidence& o = second.overhead();
        QCOMPARE(o.captures_before(), 1u);
        QCOMPARE(o.cupti_after_last(), pb::OverheadEvidence::CUPTI_AFTER_LAST_DETACHED);
        QVERIFY(o.steps_before() >= 60); // after the last capture
        QCOMPARE(o.step_ms_median_before(), 2.2);
        // The baseline as it stood when the arm began: the first capture's, from before it.
        QCOMPARE(o.baseline_steps(), first.overhead().baseline_steps());
        QCOMPARE(o.step_ms_median_baseline(), 2.0);
        QCOMPARE(o.baseline_captures_before(), 0u);
        // The second arm's steps (CUPTI detached) joined the baseline.
        QVERIFY(captureAfter(agent, 33, 10, 61, 20 * kMsNs, &third));
        const pb::OverheadEvidence& t = third.overhead();
        QCOMPARE(t.captures_before(), 2u);
        QCOMPARE(t.baseline_steps(), std::min(200u, first.overhead().baseline_steps() + o.steps_before()));
        QCOMPARE(t.baseline_captures_before(), 1u);
        QVERIFY(t.step_ms_median_baseline() >= 2.0 && t.step_ms_median_baseline() <= 2.2);
    }

    void attachedCaptureFreezesTheBaseline()
    {
        QTemporaryDir dir;
        probe::ProbeAgent agent;
        Rank rank;
        QVERIFY(connectRank(dir, agent, rank));
        PacedWorkload load(rank.tracer, 2 * kMsNs, 5 * kMsNs / 2);
        wire::RecordingDone first, second, third;
        QVERIFY(captureAfter(agent, 41, 10, 61, 20 * kMsNs, &first));
        // CUPTI stayed attached (graph kernels): the process keeps a lasting cost.
        rank.tracer.attach = Tracer::AttachState::Idle;
        load.setBefore(26 * kMsNs / 10);
        QVERIFY(captureAfter(agent, 42, 10, 61, 20 * kMsNs, &second));
        QCOMPARE(second.overhead().captures_before(), 1u);
        QCOMPARE(second.overhead().cupti_after_last(), pb::OverheadEvidence::CUPTI_AFTER_LAST_STILL_ATTACHED);
        QCOMPARE(second.overhead().step_ms_median_before(), 2.6);
        QVERIFY(captureAfter(agent, 43, 10, 61, 20 * kMsNs, &third));
        const pb::OverheadEvidence& t = third.overhead();
        QCOMPARE(t.captures_before(), 2u);
        QCOMPARE(t.cupti_after_last(), pb::OverheadEvidence::CUPTI_AFTER_LAST_STILL_ATTACHED);
        QCOMPARE(t.baseline_steps(), first.overhead().baseline_steps()); // frozen
        QCOMPARE(t.step_ms_median_baseline(), 2.0);
        QCOMPARE(t.baseline_captures_before(), 0u);
        QCOMPARE(t.step_ms_median_before(), 2.6);
    }

    void captureThatKeepsCuptiSaysSoInItsCounters()
    {
        // A capture after which CUPTI will stay attached carries a warning counter naming why; one
        // after which it detaches carries none.
        QTemporaryDir dir;
        probe::ProbeAgent agent;
        Rank rank;
        QVERIFY(connectRank(dir, agent, rank));
        PacedWorkload load(rank.tracer, 2 * kMsNs, 2 * kMsNs);
        const auto stays = [](const wire::RecordingDone& d) -> const pb::Counter* {
            for (const auto& c : d.counters())
                if (c.name() == "cupti_stays_attached")
                    return &c;
            return nullptr;
        };
        wire::RecordingDone detaching, staying;
        QVERIFY(captureAfter(agent, 45, 10, 61, 20 * kMsNs, &detaching));
        QVERIFY(!stays(detaching));
        rank.tracer.staysWhy = "kernels of CUDA-graph replays were recorded";
        QVERIFY(captureAfter(agent, 46, 10, 61, 20 * kMsNs, &staying));
        const pb::Counter* c = stays(staying);
        QVERIFY(c);
        QCOMPARE(c->value(), uint64_t(1));
        QCOMPARE(c->severity(), std::string("warning"));
        QCOMPARE(c->rank(), 0);
        QVERIFY2(c->detail().find("until it exits") != std::string::npos, c->detail().c_str());
        QVERIFY2(c->detail().find(": kernels of CUDA-graph replays were recorded") != std::string::npos,
            c->detail().c_str());
    }

    void fewStepsAreCounted()
    {
        // Recording starts after a handful of steps: every one of them is the figure, and the
        // count says how few.
        QTemporaryDir dir;
        probe::ProbeAgent agent;
        Rank rank;
        QVERIFY(connectRank(dir, agent, rank));
        PacedWorkload load(rank.tracer, 2 * kMsNs, 2 * kMsNs);
        wire::RecordingDone done;
        QVERIFY(captureAfter(agent, 51, 5, 4, 10 * kMsNs, &done));
        const pb::OverheadEvidence& o = done.overhead();
        QVERIFY2(o.steps_before() >= 3 && o.steps_before() < 50, std::to_string(o.steps_before()).c_str());
        QCOMPARE(o.baseline_steps(), o.steps_before());
        QCOMPARE(o.step_ms_median_baseline(), 2.0);
    }

    void noAgentStaysQuiet()
    {
        QTemporaryDir dir;
        AgentLink link;
        const Status s = link.connect(dir.filePath("nobody.sock").toStdString());
        QVERIFY(!s);
        QVERIFY(!s.message().empty());
        QVERIFY(!link.connected());
        wire::RankToAgent msg;
        QVERIFY(!link.send(msg)); // nothing queued without a connection
    }
};

QTEST_GUILESS_MAIN(TstRankSession)
#include "tst_ranksession.moc"
