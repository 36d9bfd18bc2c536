// SPDX-License-Identifier: MIT
// Crashes and floods with real processes: a rank process that dies mid-capture, the agent killed
// with SIGKILL (file still readable, ranks disarm, clients and ranks find the restarted agent), and
// flooding ranks against an agent whose memory must stay bounded while every event is accounted for.
#include "capture/client/livecapture.h"
#include "capture/protocol/framing.h"
#include "testtrace.h"

#include <QtTest>

#include <QDir>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <csignal>
#include <fstream>
#include <sys/types.h>

using namespace gapscope;
using namespace gapscope::capture;
using namespace gapscope::capture::test;

namespace {

struct Recorder : LiveCapture::Listener {
    uint64_t events = 0;
    std::vector<wire::CaptureDone> finished;
    std::vector<std::string> errors;
    std::atomic<bool> recording { false };
    void chunk(const pb::Chunk& c) override { events += ChunkRemapper::eventCount(c); }
    void progress(size_t, const wire::Progress& p) override { recording = p.phase() == "recording"; }
    void done(size_t, const wire::CaptureDone& d) override { finished.push_back(d); }
    void error(size_t, const std::string& e) override { errors.push_back(e); }
};

uint16_t freePort()
{
    auto fd = listenTcp(*Endpoint::parse("127.0.0.1:0"));
    return fd ? boundPort(fd->get()) : 0;
}

uint64_t vmHwmKb(qint64 pid)
{
    return procStatusKb(long(pid), "VmHWM");
}

size_t registered(const std::string& address)
{
    ClientOptions co;
    co.address = address;
    AgentClient c(co);
    if (!c.connect())
        return 0;
    auto r = c.listRanks();
    return r ? size_t(r->ranks_size()) : 0;
}

uint64_t counterSum(const pb::FileHeader& h, const std::string& name)
{
    uint64_t v = 0;
    for (const auto& c : h.counters())
        if (c.name() == name)
            v += c.value();
    return v;
}

} // namespace

class TestAgentProcess : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    QString sock(const char* name) const { return m_dir.path() + "/" + name + ".sock"; }
    QString outDir() const { return m_dir.path() + "/out"; }

    bool startAgent(QProcess& p, const QString& socket, uint16_t port, const QStringList& extra = {})
    {
        p.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        p.start(GAPSCOPE_AGENT_BIN,
            QStringList { "--socket", socket, "--listen", QString("127.0.0.1:%1").arg(port), "--output-dir", outDir() }
                + extra);
        if (!p.waitForStarted(5000))
            return false;
        const std::string addr = "127.0.0.1:" + std::to_string(port);
        return waitFor(
            [&] {
                ClientOptions co;
                co.address = addr;
                co.connectTimeoutMs = 200;
                AgentClient c(co);
                return c.connect().isOk();
            },
            5000);
    }

private slots:
    void rankProcessCrashesMidCapture()
    {
        AgentOptions o;
        o.listen = "127.0.0.1:0";
        o.socketPath = sock("crash").toStdString();
        o.outputDir = outDir().toStdString();
        AgentThread agent(o);
        QVERIFY(agent.start().isOk());
        FakeRankOptions f;
        f.socket = o.socketPath;
        f.rank = 0;
        f.worldSize = 2;
        f.stepMs = 3;
        RankThread r0(f);
        QProcess crasher;
        crasher.start(GAPSCOPE_FAKE_RANK_BIN,
            { "--socket", sock("crash"), "--rank", "1", "--world", "2", "--step-ms", "3", "--crash-after", "3",
                "--seconds", "30" });
        QVERIFY(crasher.waitForStarted(5000));
        QVERIFY(waitFor([&] { return registered(agent.address()) == 2; }, 5000));
        LiveCaptureOptions lo;
        lo.agents = { agent.address() };
        pb::CaptureSettings s;
        s.set_steps(20);
        s.set_step_rule("nvtx");
        lo.settings = s;
        LiveCapture lc(lo);
        QVERIFY(lc.connect().isOk());
        QVERIFY(lc.start().isOk());
        Recorder rec;
        QVERIFY(lc.run(rec).isOk());
        QVERIFY(crasher.waitForFinished(5000));
        QCOMPARE(crasher.exitStatus(), QProcess::CrashExit);
        QCOMPARE(int(rec.finished.size()), 1);
        QVERIFY2(rec.finished[0].ok(), rec.finished[0].error().c_str());
        const auto& h = rec.finished[0].header();
        bool lost = false;
        for (const auto& c : h.counters())
            lost = lost
                || (c.name() == "rank_lost" && c.rank() == 1 && QString::fromStdString(c.detail()).contains("crashed"));
        QVERIFY(lost);
        Decoded file = decodeFile(rec.finished[0].output_path());
        QVERIFY2(file.error.empty(), file.error.c_str());
        size_t steps0 = 0, steps1 = 0;
        for (const auto& st : file.steps)
            (st.rank == 0 ? steps0 : steps1)++;
        QCOMPARE(steps0, size_t(20));
        QVERIFY2(steps1 >= 2 && steps1 <= 3, std::to_string(steps1).c_str()); // what it sent before dying
    }

    void agentKilledThenRestarted()
    {
        const uint16_t port = freePort();
        const std::string addr = "127.0.0.1:" + std::to_string(port);
        QProcess agent;
        QVERIFY(startAgent(agent, sock("kill"), port));
        FakeRankOptions f;
        f.socket = sock("kill").toStdString();
        f.stepMs = 3;
        RankThread rank(f);
        QVERIFY(waitFor([&] { return registered(addr) == 1; }, 5000));
        LiveCaptureOptions lo;
        lo.agents = { addr };
        pb::CaptureSettings s;
        s.set_steps(1000000);
        s.set_step_rule("nvtx");
        lo.settings = s;
        lo.reconnectS = 8;
        LiveCapture lc(lo);
        QVERIFY(lc.connect().isOk());
        const uint64_t firstInstance = lc.agents()[0]->hello.agent().instance_id();
        QVERIFY(lc.start().isOk());
        Recorder rec;
        Status st;
        std::thread runner([&] { st = lc.run(rec); });
        QVERIFY(waitFor([&] { return rec.recording.load() && rank.rank().stats().stepsRecorded.load() > 30; }, 10000));
        ::kill(pid_t(agent.processId()), SIGKILL);
        QVERIFY(agent.waitForFinished(5000));
        // The rank notices and disarms itself; then a new agent comes up on the same socket and port.
        QVERIFY(waitFor([&] { return rank.rank().stats().agentLost.load() >= 1; }, 5000));
        QVERIFY(!rank.rank().stats().armed.load());
        QProcess restarted;
        QVERIFY(startAgent(restarted, sock("kill"), port));
        runner.join();
        QVERIFY(!st.isOk()); // the capture could not complete
        bool lostMsg = false;
        for (const auto& e : rec.errors)
            lostMsg = lostMsg || QString::fromStdString(e).contains("the agent restarted");
        QVERIFY2(lostMsg, rec.errors.empty() ? "no error" : rec.errors.back().c_str());
        QVERIFY(rec.events > 0);
        // The file the killed agent was writing opens up to its last whole frame.
        const QStringList files = QDir(outDir()).entryList({ "*.gapscope" }, QDir::Files, QDir::Time);
        QVERIFY(!files.isEmpty());
        Decoded d = decodeFile((outDir() + "/" + files.first()).toStdString());
        QVERIFY2(d.error.empty(), d.error.c_str());
        QVERIFY(!d.events.empty());
        // The rank registered again with the new agent; a client sees a new instance.
        QVERIFY(waitFor([&] { return registered(addr) == 1; }, 5000));
        QVERIFY(rank.rank().stats().registrations.load() >= 2);
        ClientOptions co;
        co.address = addr;
        AgentClient c(co);
        QVERIFY(c.connect().isOk());
        QVERIFY(c.hello().agent().instance_id() != firstInstance);
        restarted.terminate();
        QVERIFY(restarted.waitForFinished(5000));
    }

    void launchSetsTheEnvironmentAndStartsAnAgent()
    {
        const QString sockPath = m_dir.path() + "/launch/agent.sock";
        const QString envFile = m_dir.path() + "/launch-env.txt";
        const uint16_t port = freePort();
        QProcess launch;
        launch.setProcessChannelMode(QProcess::ForwardedChannels);
        // Any existing file stands in for libgapscope-inject.so: launch only checks that it is there.
        launch.start(GAPSCOPE_AGENT_BIN,
            { "launch", "--socket", sockPath, "--listen", QString("127.0.0.1:%1").arg(port), "--output-dir", outDir(),
                "--inject", GAPSCOPE_FAKE_RANK_BIN, "--agent-log", m_dir.path() + "/launch-agent.log", "--", "sh", "-c",
                "echo \"$CUDA_INJECTION64_PATH|$NCCL_PROFILER_PLUGIN|$GAPSCOPE_AGENT_SOCKET|$NVTX_INJECTION64_PATH\" > "
                    + envFile });
        QVERIFY(launch.waitForFinished(10000));
        QCOMPARE(launch.exitCode(), 0);
        QFile f(envFile);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QStringList env = QString::fromUtf8(f.readAll()).trimmed().split('|');
        QCOMPARE(env.size(), 4);
        QVERIFY(env[0].endsWith("gapscope-fake-rank"));
        QCOMPARE(env[1], env[0]);
        QCOMPARE(env[2], sockPath);
        QCOMPARE(env[3], env[0]);
        // The background agent answers on the socket and the port; stop it through its pid.
        ClientOptions co;
        co.address = "127.0.0.1:" + std::to_string(port);
        AgentClient c(co);
        QVERIFY(c.connect().isOk());
        QCOMPARE(QString::fromStdString(c.hello().agent().socket_path()), sockPath);
        const pid_t agentPid = pid_t(c.hello().agent().pid());
        QVERIFY(agentPid > 0 && agentPid != ::getpid());
        QVERIFY(connectUnix(sockPath.toStdString()).hasValue());
        c.close();
        QCOMPARE(::kill(agentPid, SIGTERM), 0);
        QVERIFY(waitFor([&] { return ::kill(agentPid, 0) != 0; }, 5000));
    }

    void servesARealClientWhileHostilePeersHoldConnections()
    {
        // The agent with its default limits; 40 idle client connections and 256 rank connections
        // that each hold half of a 16 MiB frame (half of them registered first), held open
        // while a real rank registers and a real client is served.
        const uint16_t port = freePort();
        const std::string addr = "127.0.0.1:" + std::to_string(port);
        const std::string socket = sock("hostile").toStdString();
        QProcess agent;
        QVERIFY(startAgent(agent, sock("hostile"), port));
        const uint64_t baseKb = procStatusKb(long(agent.processId()), "VmRSS");
        std::vector<UniqueFd> idle;
        for (int i = 0; i < 40; ++i) {
            auto fd = connectTcp(*Endpoint::parse(addr), 2000);
            QVERIFY(fd.hasValue());
            idle.push_back(std::move(*fd));
        }
        const std::string reg = registerFrame();
        std::string half(4, '\0');
        putU32LE(&half[0], kMaxRankFrameBytes);
        half += std::string(2u << 20, 'h'); // 2 MiB written of the 16 MiB announced
        std::vector<UniqueFd> ranks;
        uint64_t peakKb = 0;
        for (int i = 0; i < 256; ++i) {
            auto fd = connectUnix(socket);
            QVERIFY(fd.hasValue());
            if (i % 2 == 0)
                QVERIFY(writeAll(fd->get(), reg.data(), reg.size(), 2000).isOk());
            (void)writeAll(fd->get(), half.data(), half.size(), 2000); // fails where the agent closed it
            ranks.push_back(std::move(*fd));
            peakKb = std::max(peakKb, procStatusKb(long(agent.processId()), "VmRSS"));
        }
        QElapsedTimer t;
        t.start();
        RankThread real([&] {
            FakeRankOptions f;
            f.socket = socket;
            f.rank = 7;
            f.worldSize = 8;
            f.stepMs = 3;
            return f;
        }());
        bool served = false;
        while (!served && t.elapsed() < 10000) {
            ClientOptions co;
            co.address = addr;
            co.connectTimeoutMs = 1000;
            AgentClient c(co);
            if (c.connect().isOk())
                if (auto list = c.listRanks(2000))
                    for (const auto& r : list->ranks())
                        served = served || (r.info().rank() == 7 && r.info().pid() == uint32_t(::getpid()));
            peakKb = std::max(peakKb, procStatusKb(long(agent.processId()), "VmRSS"));
        }
        const qint64 servedMs = t.elapsed();
        const uint64_t hwmKb = procStatusKb(long(agent.processId()), "VmHWM");
        qInfo("real client served in %lld ms; agent RSS %.1f MB at start, %.1f MB peak sampled, VmHWM %.1f MB",
            (long long)servedMs, double(baseKb) / 1024, double(peakKb) / 1024, double(hwmKb) / 1024);
        QVERIFY2(served, "no real client served within 10 s");
        // 256 x 2 MiB would be 512 MiB: the budget (256 MiB, capacity counted) and the 64 KiB limit
        // before Register keep the agent far below.
        QVERIFY(hwmKb > 0 && hwmKb < 384 * 1024);
        QCOMPARE(agent.state(), QProcess::Running);
        idle.clear();
        ranks.clear();
        agent.terminate();
        QVERIFY(agent.waitForFinished(10000));
        QCOMPARE(agent.exitCode(), 0);
    }

    void floodKeepsAgentMemoryBounded()
    {
        const uint16_t port = freePort();
        const std::string addr = "127.0.0.1:" + std::to_string(port);
        QProcess agent;
        QVERIFY(startAgent(agent, sock("flood"), port, { "--queue-mb", "16", "--client-queue-mb", "4" }));
        std::vector<std::unique_ptr<QProcess>> ranks;
        for (int r = 0; r < 3; ++r) {
            auto p = std::make_unique<QProcess>();
            p->start(GAPSCOPE_FAKE_RANK_BIN,
                { "--socket", sock("flood"), "--rank", QString::number(r), "--world", "3", "--step-ms", "2", "--flood",
                    "100000", "--seconds", "6" });
            QVERIFY(p->waitForStarted(5000));
            ranks.push_back(std::move(p));
        }
        QVERIFY(waitFor([&] { return registered(addr) == 3; }, 5000));
        LiveCaptureOptions lo;
        lo.agents = { addr };
        pb::CaptureSettings s;
        s.set_duration_s(2.0);
        lo.settings = s;
        LiveCapture lc(lo);
        QVERIFY(lc.connect().isOk());
        QVERIFY(lc.start().isOk());
        Recorder rec;
        QVERIFY(lc.run(rec).isOk());
        QCOMPARE(int(rec.finished.size()), 1);
        QVERIFY2(rec.finished[0].ok(), rec.finished[0].error().c_str());
        const uint64_t hwmKb = vmHwmKb(agent.processId());
        qInfo("agent peak RSS %.1f MB; file events %llu", double(hwmKb) / 1024.0,
            (unsigned long long)rec.finished[0].events());
        QVERIFY(hwmKb > 0 && hwmKb < 256 * 1024);
        uint64_t sent = 0;
        double maxSendUs = 0;
        for (auto& p : ranks) {
            QVERIFY(p->waitForFinished(15000));
            const auto lines = QString::fromUtf8(p->readAllStandardOutput()).trimmed().split('\n');
            const QJsonObject j = QJsonDocument::fromJson(lines.last().toUtf8()).object();
            sent += uint64_t(j["events_sent"].toDouble());
            maxSendUs = std::max(maxSendUs, j["max_send_us"].toDouble());
        }
        // Every event a rank handed to its socket is in the file or counted as dropped by the agent.
        const uint64_t dropped = counterSum(rec.finished[0].header(), "agent_dropped_events");
        qInfo("ranks sent %llu events; agent dropped %llu; longest rank send() %.0f us", (unsigned long long)sent,
            (unsigned long long)dropped, maxSendUs);
        QCOMPARE(rec.finished[0].events() + dropped, sent);
        agent.terminate();
        QVERIFY(agent.waitForFinished(10000));
    }
};

QTEST_GUILESS_MAIN(TestAgentProcess)
#include "tst_agentprocess.moc"
