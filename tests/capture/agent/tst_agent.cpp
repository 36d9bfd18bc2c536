// SPDX-License-Identifier: MIT
// The agent end to end, in one process and without a GPU: fake ranks register on the Unix socket,
// clients capture over TCP through the client library, the replay mode serves recorded files.
#include "capture/client/livecapture.h"
#include "capture/protocol/framing.h"
#include "capture/protocol/tokenauth.h"
#include "testtrace.h"

#include <QtTest>

#include <QElapsedTimer>
#include <QFileInfo>

#include <fstream>
#include <map>
#include <set>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace gapscope;
using namespace gapscope::capture;
using namespace gapscope::capture::test;

namespace {

// Collects what a LiveCapture delivers, decoding the merged stream as it comes.
struct Recorder : LiveCapture::Listener {
    StreamDecoder dec;
    Decoded stream;
    std::vector<wire::Progress> progressed;
    std::vector<wire::StreamCut> cuts;
    std::vector<wire::CaptureDone> finished;
    std::vector<std::string> errors;
    void chunk(const pb::Chunk& c) override
    {
        if (Status s = dec.add(c, stream); !s)
            errors.push_back(s.message());
    }
    void progress(size_t, const wire::Progress& p) override { progressed.push_back(p); }
    void streamCut(size_t, const wire::StreamCut& c) override { cuts.push_back(c); }
    void done(size_t, const wire::CaptureDone& d) override { finished.push_back(d); }
    void error(size_t, const std::string& e) override { errors.push_back(e); }
};

pb::CaptureSettings steps(uint32_t n)
{
    pb::CaptureSettings s;
    s.set_steps(n);
    s.set_step_rule("nvtx");
    s.set_kernels(true);
    return s;
}

std::map<uint32_t, std::vector<PlainStep>> stepsByRank(const Decoded& d)
{
    std::map<uint32_t, std::vector<PlainStep>> out;
    for (const auto& s : d.steps)
        out[s.rank].push_back(s);
    for (auto& [r, v] : out)
        std::sort(v.begin(), v.end(), [](const PlainStep& a, const PlainStep& b) { return a.index < b.index; });
    return out;
}

const pb::Counter* findCounter(const pb::FileHeader& h, const std::string& name, int rank)
{
    for (const auto& c : h.counters())
        if (c.name() == name && (rank < 0 || c.rank() == rank))
            return &c;
    return nullptr;
}

size_t countKernels(const Decoded& d, uint32_t rank)
{
    size_t n = 0;
    for (const auto& e : d.events)
        n += e.rank == rank && e.name.rfind("void gemm", 0) == 0;
    return n;
}

} // namespace

class TestAgent : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    int m_n = 0;

    AgentOptions options()
    {
        AgentOptions o;
        o.listen = "127.0.0.1:0";
        o.socketPath = m_dir.path().toStdString() + "/agent" + std::to_string(++m_n) + ".sock";
        o.outputDir = m_dir.path().toStdString() + "/out";
        o.armTimeoutS = 10;
        return o;
    }
    FakeRankOptions rankOptions(const AgentOptions& a, int rank, int world)
    {
        FakeRankOptions r;
        r.socket = a.socketPath;
        r.rank = rank;
        r.worldSize = world;
        r.stepMs = 3;
        r.kernelsPerStep = 20;
        return r;
    }
    static size_t registered(const std::string& address)
    {
        ClientOptions co;
        co.address = address;
        AgentClient c(co);
        if (!c.connect())
            return 0;
        auto r = c.listRanks();
        return r ? size_t(r->ranks_size()) : 0;
    }
    Recorder capture(const std::string& address, const pb::CaptureSettings& s, LiveCaptureOptions lo = {})
    {
        lo.agents = { address };
        lo.settings = s;
        lo.clientName = "tst_agent";
        LiveCapture lc(lo);
        Recorder rec;
        Status st = lc.connect();
        if (!st) {
            rec.errors.push_back(st.message());
            return rec;
        }
        if (!(st = lc.start())) {
            rec.errors.push_back(st.message());
            return rec;
        }
        st = lc.run(rec);
        if (!st)
            rec.errors.push_back(st.message());
        return rec;
    }

private slots:
    void ranksJoinAndLeave()
    {
        AgentOptions o = options();
        AgentThread agent(o);
        QVERIFY(agent.start().isOk());
        auto r0 = std::make_unique<RankThread>(rankOptions(o, 0, 3));
        auto r1 = std::make_unique<RankThread>(rankOptions(o, 1, 3));
        QVERIFY(waitFor([&] { return registered(agent.address()) == 2; }, 3000));
        auto r2 = std::make_unique<RankThread>(rankOptions(o, -1, 3)); // no rank given: the agent numbers it
        QVERIFY(waitFor([&] { return registered(agent.address()) == 3; }, 3000));
        ClientOptions co;
        co.address = agent.address();
        AgentClient c(co);
        QVERIFY(c.connect().isOk());
        auto list = c.listRanks();
        QVERIFY(list.hasValue());
        std::set<uint32_t> ranks;
        for (const auto& e : list->ranks()) {
            ranks.insert(e.info().rank());
            QCOMPARE(QString::fromStdString(e.state()), QString("idle"));
            QVERIFY(e.info().pid() > 0);
        }
        QCOMPARE(ranks, (std::set<uint32_t> { 0, 1, 2 }));
        QCOMPARE(list->agent().instance_id(), c.hello().agent().instance_id());
        r1.reset(); // leaves (closes its socket)
        QVERIFY(waitFor([&] { return registered(agent.address()) == 2; }, 3000));
    }

    void captureAlignsStepsAcrossRanks()
    {
        AgentOptions o = options();
        AgentThread agent(o);
        QVERIFY(agent.start().isOk());
        auto f0 = rankOptions(o, 0, 2);
        auto f1 = rankOptions(o, 1, 2);
        f1.firstLocalStep = 1000; // its counter is far from rank 0's
        RankThread r0(f0), r1(f1);
        QVERIFY(waitFor([&] { return registered(agent.address()) == 2; }, 3000));
        Recorder rec = capture(agent.address(), steps(10));
        QVERIFY2(rec.errors.empty(), rec.errors.empty() ? "" : rec.errors[0].c_str());
        QCOMPARE(int(rec.finished.size()), 1);
        const auto& done = rec.finished[0];
        QVERIFY2(done.ok(), done.error().c_str());
        QVERIFY(!rec.progressed.empty());

        Decoded file = decodeFile(done.output_path());
        QVERIFY2(file.error.empty(), file.error.c_str());
        auto byRank = stepsByRank(file);
        QCOMPARE(int(byRank.size()), 2);
        for (auto& [rank, v] : byRank) {
            QCOMPARE(int(v.size()), 10);
            for (int i = 0; i < 10; ++i)
                QCOMPARE(v[size_t(i)].index, uint32_t(i));
            QCOMPARE(countKernels(file, rank), size_t(10 * 20));
        }
        for (int i = 0; i < 10; ++i) // the same global step on both ranks, not steps 1000 apart
            QVERIFY2(std::llabs(byRank[0][size_t(i)].start - byRank[1][size_t(i)].start) < 100000,
                (std::to_string(i) + ": " + std::to_string(byRank[0][size_t(i)].start - byRank[1][size_t(i)].start))
                    .c_str());
        // The live stream carried exactly what the file holds.
        auto a = rec.stream.events, b = file.events;
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        QCOMPARE(a.size(), b.size());
        QVERIFY(a == b);
        const auto& h = done.header();
        QCOMPARE(h.ranks_size(), 2);
        QCOMPARE(h.gpus_size(), 2);
        QCOMPARE(h.capture().steps(), 10u);
        for (const auto& r : h.ranks()) {
            QVERIFY(r.overhead().steps_before() >= 2);
            QVERIFY(r.overhead().step_ms_median_before() > 2.0 && r.overhead().step_ms_median_before() < 6.0);
            QVERIFY(r.overhead().steps_during() >= 5);
        }
        QVERIFY(h.metadata().count("arm_latency_ms"));
        QVERIFY(done.arm_latency_ms() > 0);
        QVERIFY(findCounter(h, "rank_dropped_chunks", 0));
        QCOMPARE(findCounter(h, "rank_dropped_chunks", 0)->value(), uint64_t(0));
        QCOMPARE(done.events(), uint64_t(file.events.size()));
    }

    void rankBaselineReachesProgressAndHeader()
    {
        // A rank captured before reports its step-time baseline while armed: clients see it in
        // Progress, and the file keeps it (this rank's RecordingDone carries no figures of its own,
        // so the agent's host boundaries fill "before" and "during").
        AgentOptions o = options();
        AgentThread agent(o);
        QVERIFY(agent.start().isOk());
        auto f0 = rankOptions(o, 0, 1);
        f0.statusBaselineMs = 1.75;
        RankThread r0(f0);
        QVERIFY(waitFor([&] { return registered(agent.address()) == 1; }, 3000));
        Recorder rec = capture(agent.address(), steps(200));
        QVERIFY2(rec.errors.empty(), rec.errors.empty() ? "" : rec.errors[0].c_str());
        QCOMPARE(int(rec.finished.size()), 1);
        bool live = false;
        for (const auto& p : rec.progressed)
            for (const auto& r : p.ranks())
                live = live || (r.overhead().baseline_steps() == 200 && r.overhead().step_ms_median_baseline() == 1.75);
        QVERIFY(live);
        const auto& h = rec.finished[0].header();
        QCOMPARE(h.ranks_size(), 1);
        const auto& ov = h.ranks(0).overhead();
        QCOMPARE(ov.baseline_steps(), 200u);
        QCOMPARE(ov.step_ms_median_baseline(), 1.75);
        QCOMPARE(ov.captures_before(), 1u);
        QCOMPARE(ov.cupti_after_last(), pb::OverheadEvidence::CUPTI_AFTER_LAST_DETACHED);
        QVERIFY(ov.steps_before() >= 2);
        QVERIFY(ov.steps_during() >= 100);
    }

    void armFailureAndOtherCuptiClient()
    {
        AgentOptions o = options();
        AgentThread agent(o);
        QVERIFY(agent.start().isOk());
        auto f0 = rankOptions(o, 0, 2);
        f0.otherCupti = "torch.profiler";
        auto f1 = rankOptions(o, 1, 2);
        f1.armError = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
        RankThread r0(f0), r1(f1);
        QVERIFY(waitFor([&] { return registered(agent.address()) == 2; }, 3000));
        Recorder rec = capture(agent.address(), steps(5));
        QCOMPARE(int(rec.finished.size()), 1);
        QVERIFY2(rec.finished[0].ok(), rec.finished[0].error().c_str());
        const auto& h = rec.finished[0].header();
        const pb::Counter* failed = findCounter(h, "rank_arm_failed", 1);
        QVERIFY(failed);
        QVERIFY(QString::fromStdString(failed->detail()).contains("MULTIPLE_SUBSCRIBERS"));
        const pb::Counter* other = findCounter(h, "other_cupti_client", 0);
        QVERIFY(other);
        QVERIFY(QString::fromStdString(other->detail()).contains("torch.profiler"));
        QCOMPARE(QString::fromStdString(h.ranks(0).other_cupti_client()), QString("torch.profiler"));
        auto byRank = stepsByRank(decodeFile(rec.finished[0].output_path()));
        QCOMPARE(int(byRank.size()), 1);
        QCOMPARE(int(byRank[0].size()), 5);
    }

    void timeWindowCapture()
    {
        AgentOptions o = options();
        AgentThread agent(o);
        QVERIFY(agent.start().isOk());
        RankThread r0(rankOptions(o, 0, 1));
        QVERIFY(waitFor([&] { return registered(agent.address()) == 1; }, 3000));
        pb::CaptureSettings s;
        s.set_duration_s(0.3);
        Recorder rec = capture(agent.address(), s);
        QCOMPARE(int(rec.finished.size()), 1);
        QVERIFY2(rec.finished[0].ok(), rec.finished[0].error().c_str());
        const size_t n = stepsByRank(decodeFile(rec.finished[0].output_path()))[0].size();
        QVERIFY2(n >= 50 && n <= 150, std::to_string(n).c_str()); // 0.3 s of 3 ms steps
    }

    void idleServerFailsClearly()
    {
        AgentOptions o = options();
        o.armTimeoutS = 1;
        AgentThread agent(o);
        QVERIFY(agent.start().isOk());
        auto f = rankOptions(o, 0, 1);
        f.noSteps = true;
        RankThread r0(f);
        QVERIFY(waitFor([&] { return registered(agent.address()) == 1; }, 3000));
        Recorder rec = capture(agent.address(), steps(5));
        QCOMPARE(int(rec.finished.size()), 1);
        QVERIFY(!rec.finished[0].ok());
        QVERIFY2(QString::fromStdString(rec.finished[0].error()).contains("no decode steps"),
            rec.finished[0].error().c_str());
        QVERIFY(waitFor([&] { return !r0.rank().stats().armed.load(); }, 2000)); // disarmed again
    }

    void rankLeavesMidCapture()
    {
        AgentOptions o = options();
        AgentThread agent(o);
        QVERIFY(agent.start().isOk());
        auto f1 = rankOptions(o, 1, 2);
        f1.leaveAfterSteps = 3;
        RankThread r0(rankOptions(o, 0, 2)), r1(f1);
        QVERIFY(waitFor([&] { return registered(agent.address()) == 2; }, 3000));
        Recorder rec = capture(agent.address(), steps(30));
        QCOMPARE(int(rec.finished.size()), 1);
        QVERIFY2(rec.finished[0].ok(), rec.finished[0].error().c_str());
        const pb::Counter* lost = findCounter(rec.finished[0].header(), "rank_lost", 1);
        QVERIFY(lost);
        auto byRank = stepsByRank(decodeFile(rec.finished[0].output_path()));
        QCOMPARE(int(byRank[0].size()), 30);
        QCOMPARE(int(byRank[1].size()), 3); // what it sent before leaving is kept
    }

    void replayEveryEventOnceInOrder_data()
    {
        QTest::addColumn<double>("speed");
        QTest::newRow("as fast as possible") << 0.0;
        QTest::newRow("paced x20") << 20.0;
    }
    void replayEveryEventOnceInOrder()
    {
        QFETCH(double, speed);
        const std::string file = m_dir.path().toStdString() + "/replay" + std::to_string(++m_n) + ".gapscope";
        const int64_t stepNs = 2000000;
        QVERIFY(writeTestTrace(file, 2, 200, 50, stepNs, 1'700'000'000'000'000'000LL).isOk());
        const Decoded original = decodeFile(file);
        QCOMPARE(original.events.size(), size_t(2 * 200 * 50));
        AgentOptions o = options();
        o.replayFile = file;
        o.replaySpeed = speed;
        o.rankSocket = false;
        AgentThread agent(o);
        QVERIFY(agent.start().isOk());
        QCOMPARE(registered(agent.address()), size_t(2)); // the file's ranks
        Recorder rec = capture(agent.address(), steps(1000)); // more than the file has: replays it all
        QVERIFY2(rec.errors.empty(), rec.errors.empty() ? "" : rec.errors[0].c_str());
        QCOMPARE(int(rec.finished.size()), 1);
        QVERIFY2(rec.finished[0].ok(), rec.finished[0].error().c_str());
        QCOMPARE(rec.stream.events.size(), original.events.size());
        QCOMPARE(rec.stream.steps.size(), original.steps.size());
        // Same events, once each: times are moved (and scaled) by the replay, so compare normalised.
        auto norm = [&](std::vector<PlainEvent> v, double scale) {
            int64_t t0 = INT64_MAX;
            for (const auto& e : v)
                t0 = std::min(t0, e.start);
            for (auto& e : v) {
                e.start = int64_t(std::llround(double(e.start - t0) * scale / 1000.0)); // us
                e.dur = uint64_t(std::llround(double(e.dur) * scale / 1000.0));
            }
            std::sort(v.begin(), v.end());
            return v;
        };
        const double scale = speed > 0 ? speed : 1.0;
        QVERIFY(norm(rec.stream.events, scale) == norm(original.events, 1.0));
        // In order: per lane, each event ends no earlier than the one before it arrived.
        std::map<std::string, int64_t> lastEnd;
        for (const auto& e : rec.stream.events) {
            const int64_t end = e.start + int64_t(e.dur);
            QVERIFY(end >= lastEnd[e.lane]);
            lastEnd[e.lane] = end;
        }
        Decoded written = decodeFile(rec.finished[0].output_path());
        QCOMPARE(written.events.size(), original.events.size());
    }

    void replayStopsAfterTheAskedSteps()
    {
        const std::string file = m_dir.path().toStdString() + "/steps" + std::to_string(++m_n) + ".gapscope";
        QVERIFY(writeTestTrace(file, 2, 200, 10, 2000000, 1'700'000'000'000'000'000LL).isOk());
        AgentOptions o = options();
        o.replayFile = file;
        o.replaySpeed = 10;
        o.rankSocket = false;
        AgentThread agent(o);
        QVERIFY(agent.start().isOk());
        Recorder rec = capture(agent.address(), steps(30));
        QCOMPARE(int(rec.finished.size()), 1);
        QVERIFY2(rec.finished[0].ok(), rec.finished[0].error().c_str());
        auto byRank = stepsByRank(rec.stream);
        QCOMPARE(int(byRank.size()), 2);
        for (auto& [rank, v] : byRank) {
            QCOMPARE(int(v.size()), 30);
            QCOMPARE(v.back().index, 29u);
            // What each step did travels with it through the replay's cut.
            QCOMPARE(v[0].kind, uint32_t(pb::StepBlock::KIND_PREFILL));
            QCOMPARE(v[0].tokens, 64u);
            QCOMPARE(v[29].kind, uint32_t(pb::StepBlock::KIND_DECODE));
            QCOMPARE(v[29].tokens, 1u);
        }
        size_t kernels = 0;
        for (const auto& e : rec.stream.events)
            kernels += e.name.rfind("kernel_", 0) == 0;
        QCOMPARE(kernels, size_t(2 * 30 * 10)); // nothing of step 30 and later
    }

    void tokenRequiredOffLoopback()
    {
        AgentOptions o = options();
        o.listen = "0.0.0.0:0";
        {
            AgentServer s(o);
            const Status st = s.start();
            QVERIFY(!st.isOk());
            QVERIFY2(QString::fromStdString(st.message()).contains("--token-file"), st.message().c_str());
        }
        o.tokenFile = m_dir.path().toStdString() + "/token";
        AgentThread agent(o);
        QVERIFY(agent.start().isOk());
        struct stat st { };
        QCOMPARE(::stat(o.tokenFile.c_str(), &st), 0);
        QCOMPARE(int(st.st_mode & 0777), 0600);
        auto token = loadToken(o.tokenFile, false);
        QVERIFY(token.hasValue());
        QCOMPARE(int(token->size()), 64);
        for (const std::string& given : { std::string(), std::string("wrong-token-wrong-token"), *token + "x" }) {
            ClientOptions co;
            co.address = agent.address();
            co.token = given;
            AgentClient c(co);
            const Status s = c.connect();
            QVERIFY(!s.isOk());
            QVERIFY2(QString::fromStdString(s.message()).contains("token"), s.message().c_str());
        }
        ClientOptions co;
        co.address = agent.address();
        co.token = *token;
        AgentClient c(co);
        QVERIFY(c.connect().isOk());
        QVERIFY(c.listRanks().hasValue());
        QVERIFY(tokenMatches("abc", "abc") && !tokenMatches("abc", "abd") && !tokenMatches("abc", "ab")
            && !tokenMatches("", ""));
    }

    void idleClientsCannotLockClientsOut()
    {
        // With a token on every address: 40 connections that never send Hello, then a real client.
        AgentOptions o = options();
        o.listen = "0.0.0.0:0";
        o.tokenFile = m_dir.path().toStdString() + "/token-idle";
        o.handshakeTimeoutS = 4.0; // long enough that a loaded machine lets the client in before any times out
        AgentThread agent(o);
        QVERIFY(agent.start().isOk());
        auto token = loadToken(o.tokenFile, false);
        QVERIFY(token.hasValue());
        std::vector<UniqueFd> idle;
        for (int i = 0; i < 40; ++i) {
            auto fd = connectTcp(*Endpoint::parse(agent.address()), 2000);
            QVERIFY(fd.hasValue());
            idle.push_back(std::move(*fd));
        }
        QElapsedTimer t;
        t.start();
        ClientOptions co;
        co.address = agent.address();
        co.token = *token;
        AgentClient c(co);
        QVERIFY(c.connect().isOk());
        QVERIFY(c.listRanks().hasValue());
        qInfo("real client served in %lld ms next to 40 idle connections", (long long)t.elapsed());
        QVERIFY(t.elapsed() < 3000); // let in at once, not after the idle ones timed out
        // Every idle connection is closed: the oldest to make room, the rest after the timeout.
        size_t evicted = 0, timedOut = 0;
        for (auto& fd : idle) {
            std::string got;
            QVERIFY2(readUntilClosed(fd.get(), 8000, got), "the agent kept an idle connection open");
            const QString msg = QString::fromStdString(firstErrorMessage(got));
            evicted += msg.contains("closed to make room: no valid Hello yet");
            timedOut += msg.contains("no valid Hello within 4000 ms");
        }
        QCOMPARE(evicted, size_t(40 + 1 - 16)); // 16 may wait; the real client made room too
        QCOMPARE(timedOut, size_t(15));
        ClientOptions again = co;
        AgentClient d(again);
        QVERIFY(d.connect().isOk());
        std::map<std::string, uint64_t> counters;
        for (const auto& k : d.hello().agent().connection_counters())
            counters[k.name()] = k.value();
        QCOMPARE(counters["clients_unauthenticated_evicted"], uint64_t(25));
        QCOMPARE(counters["clients_handshake_timeout"], uint64_t(15));
        QVERIFY(c.listRanks().hasValue()); // the authenticated client was never touched
    }

    void hostileRankConnectionsAreBounded()
    {
        AgentOptions o = options();
        o.handshakeTimeoutS = 1.5;
        o.rankInputBytes = 32u << 20;
        AgentThread agent(o);
        QVERIFY(agent.start().isOk());
        // Before Register: a frame above 64 KiB closes the connection at once.
        std::string half(4, '\0');
        putU32LE(&half[0], kMaxRankFrameBytes);
        half += std::string(32 << 10, 'x');
        std::vector<UniqueFd> bigFirst;
        for (int i = 0; i < 64; ++i) {
            auto fd = connectUnix(o.socketPath);
            QVERIFY(fd.hasValue());
            QVERIFY(writeAll(fd->get(), half.data(), half.size(), 2000).isOk());
            bigFirst.push_back(std::move(*fd));
        }
        for (auto& fd : bigFirst) {
            std::string got;
            QVERIFY2(readUntilClosed(fd.get(), 3000, got), "a 16 MiB frame before Register was held");
        }
        // 40 idle connections cannot keep a real rank out, and are closed after the timeout.
        std::vector<UniqueFd> idle;
        for (int i = 0; i < 40; ++i) {
            auto fd = connectUnix(o.socketPath);
            QVERIFY(fd.hasValue());
            idle.push_back(std::move(*fd));
        }
        RankThread r0(rankOptions(o, 0, 1));
        QVERIFY(waitFor([&] { return registered(agent.address()) == 1; }, 3000));
        for (auto& fd : idle) {
            std::string got;
            QVERIFY2(readUntilClosed(fd.get(), 4000, got), "an unregistered connection was kept open");
        }
        // Registered connections holding half of a 16 MiB frame each: over the 32 MiB budget the
        // largest unfinished frames are dropped; the real rank (whole frames only) stays.
        std::string register1 = registerFrame();
        std::string bulk(4, '\0');
        putU32LE(&bulk[0], kMaxRankFrameBytes);
        bulk += std::string(8u << 20, 'y');
        std::vector<UniqueFd> heavy;
        for (int i = 0; i < 8; ++i) {
            auto fd = connectUnix(o.socketPath);
            QVERIFY(fd.hasValue());
            QVERIFY(writeAll(fd->get(), register1.data(), register1.size(), 2000).isOk());
            (void)writeAll(fd->get(), bulk.data(), bulk.size(), 3000); // fails once the agent drops it
            heavy.push_back(std::move(*fd));
        }
        auto closedCount = [&] {
            size_t n = 0;
            for (auto& fd : heavy) {
                std::string got;
                n += readUntilClosed(fd.get(), 20, got);
            }
            return n;
        };
        std::map<std::string, uint64_t> counters;
        auto readCounters = [&] {
            ClientOptions co;
            co.address = agent.address();
            AgentClient c(co);
            counters.clear();
            if (c.connect().isOk())
                for (const auto& k : c.hello().agent().connection_counters())
                    counters[k.name()] = k.value();
        };
        size_t closed = 0;
        QVERIFY(waitFor(
            [&] {
                closed = closedCount();
                readCounters();
                return closed >= 4 && counters["rank_connections_budget_dropped"] == closed;
            },
            5000)); // 8 x 8 MiB against 32 MiB: most are dropped, each one counted
        QVERIFY(counters["rank_connections_unregistered_dropped"] >= 40);
        ClientOptions co;
        co.address = agent.address();
        AgentClient c(co);
        QVERIFY(c.connect().isOk());
        auto ranks = c.listRanks();
        QVERIFY(ranks.hasValue());
        bool real = false;
        for (const auto& r : ranks->ranks())
            real = real || r.info().pid() == uint32_t(::getpid());
        QVERIFY(real);
    }

    void outputFolderRefusesLinksAndSharedFolders()
    {
        const std::string base = m_dir.path().toStdString();
        const std::string victim = base + "/victim";
        std::ofstream(victim) << "precious\n";
        auto victimText = [&] {
            std::ifstream in(victim);
            std::string t;
            std::getline(in, t);
            return t;
        };
        AgentOptions o = options();
        o.outputDir = base + "/out-links";
        QCOMPARE(::mkdir(o.outputDir.c_str(), 0700), 0);
        QCOMPARE(::symlink(victim.c_str(), (o.outputDir + "/planted.gapscope").c_str()), 0);
        const std::string target = base + "/created-through-a-link"; // a dangling link: would be created
        QCOMPARE(::symlink(target.c_str(), (o.outputDir + "/dangling.gapscope").c_str()), 0);
        {
            AgentThread agent(o);
            QVERIFY(agent.start().isOk());
            RankThread r0(rankOptions(o, 0, 1));
            QVERIFY(waitFor([&] { return registered(agent.address()) == 1; }, 3000));
            LiveCaptureOptions lo;
            lo.agentOutputName = "planted.gapscope";
            Recorder rec = capture(agent.address(), steps(3), lo);
            QCOMPARE(int(rec.finished.size()), 1);
            QVERIFY2(rec.finished[0].ok(), rec.finished[0].error().c_str());
            QCOMPARE(QString::fromStdString(rec.finished[0].output_path()),
                QString::fromStdString(o.outputDir + "/planted-2.gapscope"));
            QCOMPARE(victimText(), std::string("precious"));
            struct stat st { };
            QCOMPARE(::lstat((o.outputDir + "/planted.gapscope").c_str(), &st), 0);
            QVERIFY(S_ISLNK(st.st_mode));
            lo.agentOutputName = "dangling.gapscope";
            Recorder viaDangling = capture(agent.address(), steps(3), lo);
            QCOMPARE(int(viaDangling.finished.size()), 1);
            QCOMPARE(QString::fromStdString(viaDangling.finished[0].output_path()),
                QString::fromStdString(o.outputDir + "/dangling-2.gapscope"));
            QVERIFY(::lstat(target.c_str(), &st) != 0); // nothing created at the link's target
            lo.agentOutputName = "planted.gapscope";
            // The folder made writable by others: the next capture is refused, nothing is written.
            QCOMPARE(::chmod(o.outputDir.c_str(), 0777), 0);
            Recorder refused = capture(agent.address(), steps(3), lo);
            QVERIFY(refused.finished.empty());
            QString all;
            for (const auto& e : refused.errors)
                all += QString::fromStdString(e) + "\n";
            QVERIFY2(all.contains(QString::fromStdString(
                         o.outputDir + ": writable by other users (mode 0777); refusing to put capture files there")),
                qPrintable(all));
            QVERIFY(!QFileInfo::exists(QString::fromStdString(o.outputDir + "/planted-3.gapscope")));
        }
        // At start: a world-writable folder, a link planted by another user in a sticky shared
        // folder, a folder of another user.
        auto refusedAt = [&](const std::string& dir) {
            AgentOptions a = options();
            a.outputDir = dir;
            AgentServer s(a);
            const Status st = s.start();
            return st.isOk() ? std::string() : st.message();
        };
        const std::string open = base + "/open";
        QCOMPARE(::mkdir(open.c_str(), 0700), 0);
        QCOMPARE(::chmod(open.c_str(), 0777), 0);
        QString msg = QString::fromStdString(refusedAt(open));
        QVERIFY2(
            msg.contains("writable by other users (mode 0777); refusing to put capture files there"), qPrintable(msg));
        const std::string shared = base + "/shared";
        QCOMPARE(::mkdir(shared.c_str(), 0700), 0);
        QCOMPARE(::chmod(shared.c_str(), 01777), 0);
        const std::string elsewhere = base + "/elsewhere";
        QCOMPARE(::mkdir(elsewhere.c_str(), 0700), 0);
        QCOMPARE(::symlink(elsewhere.c_str(), (shared + "/captures").c_str()), 0);
        if (::geteuid() == 0) {
            QCOMPARE(::lchown((shared + "/captures").c_str(), 65534, 65534), 0);
            msg = QString::fromStdString(refusedAt(shared + "/captures"));
            QVERIFY2(msg.contains("captures: a symbolic link owned by another user (uid 65534)"), qPrintable(msg));
            const std::string theirs = base + "/theirs";
            QCOMPARE(::mkdir(theirs.c_str(), 0700), 0);
            QCOMPARE(::chown(theirs.c_str(), 65534, 65534), 0);
            msg = QString::fromStdString(refusedAt(theirs));
            QVERIFY2(msg.contains("theirs: belongs to another user (uid 65534)"), qPrintable(msg));
        }
        // A folder below the shared sticky one, of this user, is fine.
        QVERIFY(refusedAt(shared + "/mine").empty());
    }

    void tokenFileOpenToOthersIsRefused()
    {
        const std::string path = m_dir.path().toStdString() + "/loose-token";
        std::ofstream(path) << "0123456789abcdef0123456789abcdef\n";
        QCOMPARE(::chmod(path.c_str(), 0644), 0);
        AgentOptions o = options();
        o.listen = "0.0.0.0:0";
        o.tokenFile = path;
        auto startError = [&] {
            AgentServer s(o);
            const Status st = s.start();
            return st.isOk() ? QString() : QString::fromStdString(st.message());
        };
        QString msg = startError();
        QVERIFY2(msg.contains(QString::fromStdString(path)
                     + ": the token file's permissions 0644 are too open (group or others may read or write it)"),
            qPrintable(msg));
        QVERIFY(msg.contains("chmod 600"));
        // The client side refuses it too.
        auto client = loadToken(path, false);
        QVERIFY(!client.hasValue());
        QVERIFY(QString::fromStdString(client.error()).contains("permissions 0644 are too open"));
        QCOMPARE(::chmod(path.c_str(), 0640), 0);
        QVERIFY(startError().contains("permissions 0640 are too open"));
        if (::geteuid() == 0) {
            QCOMPARE(::chmod(path.c_str(), 0600), 0);
            QCOMPARE(::chown(path.c_str(), 65534, 65534), 0);
            msg = startError();
            QVERIFY2(msg.contains("the token file belongs to another user (uid 65534, this process runs as uid 0)"),
                qPrintable(msg));
        }
        // Not a regular file (a FIFO must not hang the agent).
        const std::string fifo = m_dir.path().toStdString() + "/fifo-token";
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        o.tokenFile = fifo;
        QVERIFY(startError().contains("the token file is not a regular file"));
        // 0600 of this user is used.
        const std::string good = m_dir.path().toStdString() + "/good-token";
        std::ofstream(good) << "0123456789abcdef0123456789abcdef\n";
        QCOMPARE(::chmod(good.c_str(), 0600), 0);
        o.tokenFile = good;
        QVERIFY(startError().isEmpty());
    }

    void badMessagesCloseOnlyThatConnection_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("expected");
        QTest::newRow("oversized") << QByteArray("\xff\xff\xff\x7f", 4) << "exceeds the limit";
        QTest::newRow("garbage") << QByteArray("\x05\x00\x00\x00\xff\xff\xff\xff\xff", 9) << "malformed";
        QTest::newRow("before hello") << QByteArray("\x02\x00\x00\x00\x12\x00", 6) << "first message must be Hello";
    }
    void badMessagesCloseOnlyThatConnection()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, expected);
        AgentOptions o = options();
        AgentThread agent(o);
        QVERIFY(agent.start().isOk());
        RankThread r0(rankOptions(o, 0, 1));
        QVERIFY(waitFor([&] { return registered(agent.address()) == 1; }, 3000));
        // A well-behaved client keeps its connection while the bad one is thrown out.
        ClientOptions co;
        co.address = agent.address();
        AgentClient good(co);
        QVERIFY(good.connect().isOk());
        auto bad = connectTcp(*Endpoint::parse(agent.address()), 2000);
        QVERIFY(bad.hasValue());
        QVERIFY(writeAll(bad->get(), bytes.constData(), size_t(bytes.size()), 1000).isOk());
        std::string got;
        char buf[4096];
        for (;;) {
            long n = 0;
            QVERIFY(readSome(bad->get(), buf, sizeof buf, 3000, n).isOk());
            QVERIFY2(n != -1, "the agent did not close the bad connection");
            if (n == 0)
                break;
            got.append(buf, size_t(n));
        }
        QVERIFY(got.size() > 4);
        wire::AgentToClient err;
        QVERIFY(err.ParseFromArray(got.data() + 4, int(got.size() - 4)));
        QVERIFY(err.has_error() && err.error().fatal());
        QVERIFY2(QString::fromStdString(err.error().message()).contains(expected), err.error().message().c_str());
        // A bad rank connection is closed too; the registered rank and the client carry on.
        auto badRank = connectUnix(o.socketPath);
        QVERIFY(badRank.hasValue());
        QVERIFY(writeAll(badRank->get(), "\x03\x00\x00\x00\xde\xad\xbe", 7, 1000).isOk());
        long n = 0;
        QVERIFY(readSome(badRank->get(), buf, sizeof buf, 3000, n).isOk());
        QCOMPARE(n, 0L);
        auto list = good.listRanks();
        QVERIFY(list.hasValue());
        QCOMPARE(list->ranks_size(), 1);
        Recorder rec = capture(agent.address(), steps(3));
        QCOMPARE(int(rec.finished.size()), 1);
        QVERIFY(rec.finished[0].ok());
    }

    void stalledClientIsCutAndFetchesTheFile()
    {
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
        // Under ASan the replayed capture runs several times slower, and the agent's stall limit closed the
        // stalled client before its cut notice in 3 of 5 runs (.ci/README.md): a timing case, not memory.
        QSKIP("AddressSanitizer build: the replay runs too slowly for the agent's stall limit; the dev suite runs this "
              "case");
#endif
#endif
        const std::string file = m_dir.path().toStdString() + "/stall.gapscope";
        QVERIFY(writeTestTrace(file, 4, 1000, 500, 2000000, 1'700'000'000'000'000'000LL).isOk());
        AgentOptions o = options();
        o.replayFile = file;
        o.replaySpeed = 0;
        o.rankSocket = false;
        o.clientQueueBytes = 256u << 10;
        AgentThread agent(o);
        QVERIFY(agent.start().isOk());
        // Client A starts a streamed capture on a socket with a tiny receive buffer, then stops reading.
        auto a = connectTcp(*Endpoint::parse(agent.address()), 2000);
        QVERIFY(a.hasValue());
        setBufferSizes(a->get(), 0, 4096);
        std::string out;
        wire::ClientToAgent hello;
        hello.mutable_hello()->set_protocol_version(kProtocolVersion);
        QVERIFY(appendFrame(hello, out, kMaxClientFrameBytes).isOk());
        wire::ClientToAgent start;
        start.mutable_start_capture()->mutable_settings()->set_steps(100000);
        start.mutable_start_capture()->set_stream(true);
        QVERIFY(appendFrame(start, out, kMaxClientFrameBytes).isOk());
        QVERIFY(writeAll(a->get(), out.data(), out.size(), 1000).isOk());
        // Client B follows the capture (progress and done only) and must see it finish meanwhile.
        ClientOptions co;
        co.address = agent.address();
        AgentClient b(co);
        QVERIFY(waitFor([&] { return b.connect().isOk() && b.hello().active_capture_id() != 0; }, 3000));
        wire::ClientToAgent attach;
        attach.mutable_attach();
        QVERIFY(b.send(attach).isOk());
        QElapsedTimer t;
        t.start();
        bool bDone = false;
        while (!bDone && t.elapsed() < 60000) {
            wire::AgentToClient m;
            auto got = b.receive(m, 1000);
            QVERIFY2(got.hasValue(), got.hasValue() ? "" : got.error().c_str());
            if (*got && m.has_done()) {
                bDone = true;
                QVERIFY(m.done().ok());
                QCOMPARE(m.done().events(), uint64_t(4 * 1000 * 500));
            }
        }
        QVERIFY2(bDone, "the capture did not finish while a client was stalled");
        // Now A reads: part of the stream, the cut notice, then done; the file is fetched whole.
        char buf[1 << 16];
        FrameDecoder dec(kMaxClientFrameBytes);
        uint64_t chunksBeforeCut = 0, captureId = 0;
        bool cut = false, done = false;
        while (!done) {
            long n = 0;
            QVERIFY(readSome(a->get(), buf, sizeof buf, 5000, n).isOk());
            QVERIFY2(n > 0, "stream ended early");
            dec.append(buf, size_t(n));
            std::string_view p;
            while (dec.next(p) == FrameDecoder::Result::Frame) {
                wire::AgentToClient m;
                QVERIFY(m.ParseFromArray(p.data(), int(p.size())));
                if (m.has_started())
                    captureId = m.started().capture_id();
                if (m.has_chunk()) {
                    QVERIFY(!cut); // nothing of the stream after the cut
                    ++chunksBeforeCut;
                }
                if (m.has_cut()) {
                    cut = true;
                    QVERIFY(QString::fromStdString(m.cut().reason()).contains("too slow"));
                    QCOMPARE(m.cut().chunks_sent(), chunksBeforeCut);
                }
                done = done || m.has_done();
            }
        }
        QVERIFY(cut);
        wire::ClientToAgent fetch;
        fetch.mutable_fetch()->set_capture_id(captureId);
        out.clear();
        QVERIFY(appendFrame(fetch, out, kMaxClientFrameBytes).isOk());
        setBufferSizes(a->get(), 0, 1 << 20);
        QVERIFY(writeAll(a->get(), out.data(), out.size(), 1000).isOk());
        const std::string copy = m_dir.path().toStdString() + "/fetched.gapscope";
        std::string bytes;
        for (bool eof = false; !eof;) {
            long n = 0;
            QVERIFY(readSome(a->get(), buf, sizeof buf, 5000, n).isOk());
            QVERIFY(n > 0);
            dec.append(buf, size_t(n));
            std::string_view p;
            while (dec.next(p) == FrameDecoder::Result::Frame) {
                wire::AgentToClient m;
                QVERIFY(m.ParseFromArray(p.data(), int(p.size())));
                if (!m.has_file())
                    continue;
                QCOMPARE(m.file().offset(), uint64_t(bytes.size()));
                bytes += m.file().data();
                eof = m.file().eof();
            }
        }
        std::ofstream(copy, std::ios::binary) << bytes;
        const Decoded fetched = decodeFile(copy);
        QVERIFY2(fetched.error.empty(), fetched.error.c_str());
        QCOMPARE(fetched.events.size(), size_t(4 * 1000 * 500));
    }

    void followsAFileBeingCapturedFromTheMiddle()
    {
        const std::string file = m_dir.path().toStdString() + "/attach.gapscope";
        QVERIFY(writeTestTrace(file, 2, 400, 40, 2000000, 1'700'000'000'000'000'000LL).isOk());
        AgentOptions o = options();
        o.replayFile = file;
        o.replaySpeed = 1; // 0.8 s of trace
        o.rankSocket = false;
        AgentThread agent(o);
        QVERIFY(agent.start().isOk());
        Recorder full;
        std::thread starter([&] { full = capture(agent.address(), steps(100000)); });
        ClientOptions co;
        co.address = agent.address();
        AgentClient late(co);
        QVERIFY(waitFor([&] { return late.connect().isOk() && late.hello().active_capture_id() != 0; }, 3000));
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        wire::ClientToAgent attach;
        attach.mutable_attach();
        QVERIFY(late.send(attach).isOk());
        StreamDecoder dec;
        Decoded seen;
        bool done = false;
        while (!done) {
            wire::AgentToClient m;
            auto got = late.receive(m, 5000);
            QVERIFY(got.hasValue() && *got);
            if (m.has_chunk())
                QVERIFY(dec.add(m.chunk().chunk(), seen).isOk()); // the snapshot makes every later id known
            done = m.has_done();
        }
        starter.join();
        QCOMPARE(int(full.finished.size()), 1);
        QVERIFY(!seen.events.empty());
        QVERIFY(seen.events.size() < full.stream.events.size());
        std::set<PlainEvent> all(full.stream.events.begin(), full.stream.events.end());
        for (const auto& e : seen.events)
            QVERIFY(all.count(e));
    }

    void severalAgentsOneClientWithClockOffsets()
    {
        AgentOptions oa = options(), ob = options();
        oa.host = "host-a";
        ob.host = "host-b";
        AgentThread a(oa), b(ob);
        QVERIFY(a.start().isOk());
        QVERIFY(b.start().isOk());
        RankThread r0(rankOptions(oa, 0, 2)), r1(rankOptions(ob, 1, 2));
        QVERIFY(waitFor([&] { return registered(a.address()) == 1 && registered(b.address()) == 1; }, 3000));
        LiveCaptureOptions lo;
        lo.agents = { a.address(), b.address() };
        lo.settings = steps(5);
        LiveCapture lc(lo);
        QVERIFY(lc.connect().isOk());
        QVERIFY(lc.start().isOk());
        Recorder rec;
        QVERIFY(lc.run(rec).isOk());
        QCOMPARE(int(rec.finished.size()), 2);
        const pb::FileHeader h = lc.mergedHeader(true);
        QCOMPARE(h.hosts_size(), 2);
        QCOMPARE(h.ranks_size(), 2);
        QCOMPARE(QString::fromStdString(h.hosts(0).clock_offset_method()), QString("reference"));
        QCOMPARE(QString::fromStdString(h.hosts(1).clock_offset_method()), QString("ntp-ping"));
        // One host, so the true offset is 0: the estimate is within its own error bound (and small).
        QVERIFY(std::llabs(h.hosts(1).clock_offset_ns()) <= int64_t(h.hosts(1).clock_offset_error_ns()) + 1000);
        QVERIFY(std::llabs(h.hosts(1).clock_offset_ns()) < 5000000);
        // Both hosts' events are in the one merged stream, each applied with its host's shift.
        std::map<std::string, size_t> perHost;
        for (const auto& e : rec.stream.events)
            perHost[e.lane.substr(0, e.lane.find('/'))]++;
        QCOMPARE(perHost.size(), size_t(2));
        const Decoded fileB
            = decodeFile(rec.finished[1].header().ranks(0).host() == "host-b" ? rec.finished[1].output_path()
                                                                              : rec.finished[0].output_path());
        int64_t minStream = INT64_MAX, minFile = INT64_MAX;
        for (const auto& e : rec.stream.events)
            if (e.lane.rfind("host-b", 0) == 0)
                minStream = std::min(minStream, e.start);
        for (const auto& e : fileB.events)
            minFile = std::min(minFile, e.start);
        QCOMPARE(minStream - minFile, h.hosts(1).clock_offset_ns());
        QVERIFY(rec.errors.empty());
    }
};

QTEST_GUILESS_MAIN(TestAgent)
#include "tst_agent.moc"
