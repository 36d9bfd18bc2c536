// SPDX-License-Identifier: MIT
// The viewer's side of the live connection against the real gapscope-agent process serving a
// gapscope-cli synth trace with --replay (no GPU): every event arrives once and in order and the
// counts match the file; the waterfall fills in while the capture runs and the end is a normal,
// saveable trace; a stalled viewer does not stall the agent (the cut is reported, the agent's file
// fetched); a non-loopback agent refuses a connection without its token with a clear message;
// connecting retries with back-off until the agent is up, and the session finds a killed and
// restarted agent again; follow mode keeps the newest step in view and stops when the user pans.
#include "capture/client/agentclient.h"
#include "capture/protocol/netutil.h"
#include "capture/protocol/tokenauth.h"
#include "model/analysis/kernelranges.h"
#include "model/io/tracefile.h"
#include "views/analysis/waterfallpanel.h"
#include "views/document/workspace.h"
#include "views/live/livepanel.h"
#include "views/live/livesession.h"
#include "views/timeline/timelinewidget.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <map>

using namespace gapscope;
using namespace gapscope::model;
using Phase = LiveStatus::Phase;

namespace {

constexpr int kLong = 20000; // generous: the build box is shared and loaded

// gapscope-agent --replay FILE as a child process, on `port` (0: any free port).
struct Agent {
    QProcess process;
    QString address;
    bool start(const QString& dir, const QString& file, double speed, int port, const QStringList& extra = {})
    {
        const QString portFile = dir + QStringLiteral("/port%1").arg(qrand());
        process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        const QString listen
            = extra.contains(QStringLiteral("--listen")) ? QString() : QStringLiteral("127.0.0.1:%1").arg(port);
        QStringList args { QStringLiteral("--replay"), file, QStringLiteral("--speed"), QString::number(speed),
            QStringLiteral("--port-file"), portFile, QStringLiteral("--output-dir"),
            dir + QStringLiteral("/agent-out") };
        if (!listen.isEmpty())
            args << QStringLiteral("--listen") << listen;
        process.start(QStringLiteral(GAPSCOPE_AGENT_BIN), args + extra);
        if (!process.waitForStarted(5000))
            return false;
        for (int i = 0; i < 1000; ++i) {
            QFile f(portFile);
            if (f.open(QIODevice::ReadOnly)) {
                const int p = QString::fromUtf8(f.readAll()).trimmed().toInt();
                if (p > 0) {
                    address = QStringLiteral("127.0.0.1:%1").arg(p);
                    return true;
                }
            }
            QTest::qWait(10);
        }
        return false;
    }
    void kill()
    {
        ::kill(pid_t(process.processId()), SIGKILL);
        process.waitForFinished(5000);
    }
    ~Agent()
    {
        if (process.state() != QProcess::NotRunning) {
            process.terminate();
            if (!process.waitForFinished(5000))
                kill();
        }
    }
    static int qrand()
    {
        static int n = 0;
        return ++n;
    }
};

int freePort()
{
    auto fd = capture::listenTcp(*capture::Endpoint::parse("127.0.0.1:0"));
    return fd ? capture::boundPort(fd->get()) : 0;
}

capture::LiveCaptureOptions optionsFor(const QString& address, uint32_t steps)
{
    capture::LiveCaptureOptions o;
    o.agents = { address.toStdString() };
    o.settings.set_steps(steps);
    o.settings.set_step_rule("auto");
    o.reconnectS = 5;
    return o;
}

// Events of a trace as (lane key, name, start relative to the first event scaled to us, duration us),
// without the replay-range lanes the final document derives (kernelranges.h).
using Key = std::tuple<std::string, std::string, int64_t, int64_t>;
std::vector<Key> normalised(const Trace& t, double scale)
{
    std::vector<Key> out;
    TimeNs t0 = INT64_MAX;
    for (const Lane& l : t.lanes())
        if (!l.events.empty() && !isReplayRangeLane(l.info))
            t0 = std::min(t0, l.events.start(0));
    for (const Lane& l : t.lanes()) {
        if (isReplayRangeLane(l.info))
            continue;
        for (size_t i = 0; i < l.events.size(); ++i)
            out.emplace_back(l.info.key(), std::string(t.str(l.events.name(i))),
                std::llround(double(l.events.start(i) - t0) * scale / 1000.0),
                std::llround(double(l.events.duration(i)) * scale / 1000.0));
    }
    std::sort(out.begin(), out.end());
    return out;
}

// Events of the replay-range lanes the final document derives.
uint64_t rangeEvents(const Trace& t)
{
    uint64_t n = 0;
    for (const Lane& l : t.lanes())
        n += isReplayRangeLane(l.info) ? l.events.size() : 0;
    return n;
}

// Watches the growing trace: each hand-over must only add events after a lane's last one.
struct OrderCheck {
    std::map<LaneId, std::pair<size_t, TimeNs>> last; // lane -> (events, start of the last)
    int violations = 0;
    int drains = 0;
    void check(const Trace& t)
    {
        ++drains;
        for (const Lane& l : t.lanes()) {
            auto& [n, s] = last[l.id];
            if (n > 0 && (l.events.size() < n || l.events.start(n - 1) != s))
                ++violations; // an event arrived before one already shown: the lane was re-sorted
            for (size_t i = std::max<size_t>(n, 1); i < l.events.size(); ++i)
                if (l.events.start(i) < l.events.start(i - 1))
                    ++violations;
            n = l.events.size();
            s = n ? l.events.start(n - 1) : 0;
        }
    }
};

} // namespace

class TstLiveSession : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_small; // 2 ranks x 40 steps
    QString m_large; // 4 ranks x 1000 steps (the stall test)
    double m_smallSpanS = 0;

    bool synth(const QString& out, int ranks, int steps, int kernels)
    {
        QProcess p;
        p.setProcessChannelMode(QProcess::ForwardedChannels);
        p.start(QStringLiteral(GAPSCOPE_CLI_BIN),
            { QStringLiteral("synth"), QStringLiteral("--ranks"), QString::number(ranks), QStringLiteral("--steps"),
                QString::number(steps), QStringLiteral("--kernels-per-step"), QString::number(kernels),
                QStringLiteral("--seed"), QStringLiteral("7"), QStringLiteral("-o"), out });
        return p.waitForFinished(60000) && p.exitCode() == 0;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_small = m_dir.path() + QStringLiteral("/small.gapscope");
        m_large = m_dir.path() + QStringLiteral("/large.gapscope");
        QVERIFY(synth(m_small, 2, 40, 60));
        QVERIFY(synth(m_large, 4, 1000, 500)); // ~22 MB of stream: more than the socket buffers hold
        auto t = readTraceFile(m_small.toStdString());
        QVERIFY(t.hasValue());
        m_smallSpanS = double(t->endTime() - t->startTime()) / 1e9;
        QVERIFY(m_smallSpanS > 0);
    }

    void everyEventOnceInOrderAndAWaterfall()
    {
        // Paced so that the capture takes about 2.5 s: the waterfall must fill in meanwhile.
        const double speed = std::max(0.01, m_smallSpanS / 2.5);
        Agent agent;
        QVERIFY(agent.start(m_dir.path(), m_small, speed, 0));
        Workspace ws;
        ws.resize(1200, 700);
        LiveSession session;
        session.attach(&ws);
        session.setAnalysisIntervalMs(200);
        OrderCheck order;
        int partialSnapshots = 0, partialWithBars = 0;
        connect(&session, &LiveSession::traceGrew, this, [&] {
            if (!session.finalReady())
                order.check(*session.document()->trace);
        });
        connect(&session, &LiveSession::snapshotApplied, this, [&](bool final) {
            if (!final)
                ++partialSnapshots;
        });
        connect(ws.analysis(), &AnalysisRunner::waterfallReady, this, [&](const WaterfallData& d) {
            if (!session.finalReady() && !d.bars.empty())
                ++partialWithBars;
        });
        session.start(optionsFor(agent.address, 1000)); // more than the file has: all of it
        QTRY_VERIFY_WITH_TIMEOUT(session.status().phase == Phase::Finished, kLong);
        QTRY_VERIFY_WITH_TIMEOUT(session.finalReady(), kLong);
        const LiveStatus& st = session.status();
        QVERIFY2(st.errors.isEmpty(), qPrintable(st.errors.join('\n')));
        QVERIFY(!st.cut);
        QCOMPARE(st.agents.size(), 1);
        QVERIFY(st.agents[0].replay);
        QVERIFY(st.agents[0].instanceId != 0);
        QCOMPARE(st.agents[0].ranks.size(), 2); // the file's ranks, listed with their GPUs
        auto file = readTraceFile(m_small.toStdString());
        QVERIFY(file.hasValue());
        const Trace& live = *session.document()->trace;
        // The final document groups the synth's graph replays by (inferred) range, as an opened file's.
        QVERIFY(hasGraphReplays(*file));
        QVERIFY(rangeEvents(live) > 0);
        QCOMPARE(live.eventCount() - rangeEvents(live), file->eventCount());
        QCOMPARE(st.eventsReceived, file->eventCount());
        QCOMPARE(st.eventsShown, file->eventCount());
        QCOMPARE(live.stepCount(), file->stepCount());
        // The same events, once each (times moved and scaled by the paced replay: 1 us of slack).
        const auto got = normalised(live, speed), want = normalised(*file, 1.0);
        QCOMPARE(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) {
            const bool same = std::get<0>(got[i]) == std::get<0>(want[i]) && std::get<1>(got[i]) == std::get<1>(want[i])
                && std::abs(std::get<2>(got[i]) - std::get<2>(want[i])) <= 1
                && std::abs(std::get<3>(got[i]) - std::get<3>(want[i])) <= 1;
            if (!same)
                QFAIL(qPrintable(QStringLiteral("event %1 differs: %2 at %3 us vs %4 at %5 us")
                                     .arg(i)
                                     .arg(QString::fromStdString(std::get<0>(got[i])))
                                     .arg(std::get<2>(got[i]))
                                     .arg(QString::fromStdString(std::get<0>(want[i])))
                                     .arg(std::get<2>(want[i]))));
        }
        QCOMPARE(order.violations, 0);
        QVERIFY2(order.drains >= 5, qPrintable(QString::number(order.drains))); // arrived over time
        QVERIFY2(partialSnapshots >= 2, qPrintable(QString::number(partialSnapshots)));
        QVERIFY(partialWithBars >= 1); // the waterfall filled in before the end
        // The end is a normal trace: the workspace shows it, the analysis ran on it, it saves and reopens.
        QCOMPARE(ws.document(), session.document().get());
        QTRY_VERIFY_WITH_TIMEOUT(ws.analysis()->ready() && !ws.analysis()->waterfall().bars.empty(), kLong);
        const QString saved = m_dir.path() + QStringLiteral("/saved.gapscope");
        QCOMPARE(session.saveAs(saved), QString());
        auto reread = readTraceFile(saved.toStdString());
        QVERIFY(reread.hasValue());
        QCOMPARE(reread->eventCount(), file->eventCount());
        QVERIFY(normalised(*reread, 1.0) == normalised(live, 1.0));
    }

    void stalledViewerDoesNotStallTheAgent()
    {
        Agent agent;
        QVERIFY(
            agent.start(m_dir.path(), m_large, 0, 0, { QStringLiteral("--client-queue-mb"), QStringLiteral("0.25") }));
        auto file = readTraceFile(m_large.toStdString());
        QVERIFY(file.hasValue());
        LiveSession session;
        session.start(optionsFor(agent.address, 100000));
        session.setStalledForTest(true); // reads nothing more once the first chunk is in
        QTRY_VERIFY_WITH_TIMEOUT(session.status().phase == Phase::Capturing, kLong);
        // Another client follows the same capture and sees it finish while this viewer reads nothing.
        capture::ClientOptions co;
        co.address = agent.address.toStdString();
        capture::AgentClient watcher(co);
        QTRY_VERIFY_WITH_TIMEOUT(watcher.connect().isOk() && watcher.hello().active_capture_id() != 0, kLong);
        wire::ClientToAgent attach;
        attach.mutable_attach();
        QVERIFY(watcher.send(attach).isOk());
        bool agentDone = false;
        QElapsedTimer t;
        t.start();
        while (!agentDone && t.elapsed() < 60000) {
            wire::AgentToClient m;
            auto got = watcher.receive(m, 500);
            QVERIFY(got.hasValue());
            agentDone = *got && m.has_done();
            if (agentDone)
                QCOMPARE(m.done().events(), file->eventCount());
        }
        QVERIFY2(agentDone, "the agent did not finish while the viewer was stalled");
        session.setStalledForTest(false);
        QTRY_VERIFY_WITH_TIMEOUT(session.status().phase == Phase::Finished, kLong);
        const LiveStatus& st = session.status();
        QVERIFY2(st.cut,
            qPrintable(QStringLiteral("%1 events, %2 bytes received")
                           .arg(st.eventsReceived)
                           .arg(st.bytesReceived))); // noticed and reported
        QVERIFY2(st.cutReason.contains(QLatin1String("too slow")), qPrintable(st.cutReason));
        QVERIFY2(st.message.contains(QLatin1String("cut")), qPrintable(st.message));
        QVERIFY(st.eventsReceived < file->eventCount());
        QVERIFY(!st.agents[0].outputPath.isEmpty());
        LivePanel panel;
        panel.setSession(&session);
        QVERIFY2(panel.lossText().contains(QLatin1String("cut")), qPrintable(panel.lossText()));
        QVERIFY(panel.fetchButton()->isEnabled());
        // The agent's complete file can be fetched.
        QSignalSpy fetched(&session, &LiveSession::fetched);
        const QString copy = m_dir.path() + QStringLiteral("/fetched.gapscope");
        session.fetchAgentFile(0, copy);
        QTRY_COMPARE_WITH_TIMEOUT(fetched.count(), 1, kLong);
        QCOMPARE(fetched.at(0).at(1).toString(), QString());
        auto whole = readTraceFile(copy.toStdString());
        QVERIFY(whole.hasValue());
        QCOMPARE(whole->eventCount(), file->eventCount());
    }

    void tokenRequiredOffLoopback()
    {
        const QString tokenFile = m_dir.path() + QStringLiteral("/token");
        Agent agent;
        QVERIFY(agent.start(m_dir.path(), m_small, 0, 0,
            { QStringLiteral("--listen"), QStringLiteral("0.0.0.0:0"), QStringLiteral("--token-file"), tokenFile }));
        LiveSession session;
        session.start(optionsFor(agent.address, 5));
        QTRY_VERIFY_WITH_TIMEOUT(session.status().phase == Phase::Failed, kLong);
        QVERIFY2(session.status().message.contains(QLatin1String("token")), qPrintable(session.status().message));
        QCOMPARE(session.status().attempt, 0); // refused: not retried
        auto token = capture::loadToken(tokenFile.toStdString(), false);
        QVERIFY(token.hasValue());
        auto o = optionsFor(agent.address, 5);
        o.token = *token;
        session.start(o);
        QTRY_VERIFY_WITH_TIMEOUT(session.status().phase == Phase::Finished, kLong);
        QVERIFY(session.status().eventsReceived > 0);
    }

    void retriesUntilUpAndFindsARestartedAgent()
    {
        const int port = freePort();
        QVERIFY(port > 0);
        const QString address = QStringLiteral("127.0.0.1:%1").arg(port);
        LiveSession session;
        session.setMaxBackoffS(1);
        session.start(optionsFor(address, 100000));
        // Nobody listens yet: connecting retries with back-off, shown in the status.
        QTRY_VERIFY_WITH_TIMEOUT(session.status().attempt >= 2, kLong);
        QCOMPARE(session.status().phase, Phase::Connecting);
        QVERIFY(session.status().message.contains(QLatin1String("retrying")));
        // Paced slowly: the capture is still running when the agent is killed.
        auto agent = std::make_unique<Agent>();
        QVERIFY(agent->start(m_dir.path(), m_small, m_smallSpanS / 20, port));
        QTRY_VERIFY_WITH_TIMEOUT(
            session.status().phase == Phase::Capturing && session.status().eventsReceived > 0, kLong);
        const quint64 firstInstance = session.status().agents[0].instanceId;
        agent->kill();
        QTRY_VERIFY_WITH_TIMEOUT(session.status().phase == Phase::Reconnecting, kLong);
        agent = std::make_unique<Agent>();
        QVERIFY(agent->start(m_dir.path(), m_small, m_smallSpanS / 2, port));
        // The restarted agent answers: its capture was lost (said so), the events so far are kept.
        QTRY_VERIFY_WITH_TIMEOUT(session.status().phase == Phase::Lost, kLong);
        QTRY_VERIFY_WITH_TIMEOUT(session.status().agents[0].state.contains(QLatin1String("reachable")), kLong);
        const LiveStatus& st = session.status();
        QVERIFY(st.agents[0].instanceId != firstInstance);
        QVERIFY(st.reconnects >= 1);
        QVERIFY(st.eventsReceived > 0);
        bool restartNamed = false;
        for (const QString& e : st.errors)
            restartNamed = restartNamed || e.contains(QLatin1String("restarted"));
        QVERIFY2(restartNamed, qPrintable(st.errors.join('\n')));
        QTRY_VERIFY_WITH_TIMEOUT(session.finalReady(), kLong); // the partial capture is a normal trace
        QCOMPARE(session.document()->trace->eventCount(), st.eventsReceived);
        // Capture again on the restarted agent.
        auto o = optionsFor(address, 10);
        session.start(o);
        QTRY_VERIFY_WITH_TIMEOUT(session.status().phase == Phase::Finished, kLong);
        QCOMPARE(session.document()->trace->stepCount(), 10u);
    }

    void followKeepsTheNewestStepInViewUntilThePan()
    {
        const double speed = std::max(0.01, m_smallSpanS / 4);
        Agent agent;
        QVERIFY(agent.start(m_dir.path(), m_small, speed, 0));
        Workspace ws;
        ws.resize(1200, 700);
        ws.show();
        LiveSession session;
        session.attach(&ws);
        session.start(optionsFor(agent.address, 1000));
        TimelineWidget* tl = ws.timeline();
        auto newestStepStart = [&] {
            const Trace& t = *session.document()->trace;
            TimeNs s = INT64_MIN;
            for (uint32_t r : t.ranks())
                if (!t.steps(r).empty())
                    s = std::max(s, t.steps(r).back().start);
            return s;
        };
        QTRY_VERIFY_WITH_TIMEOUT(session.document()->trace->stepCount() >= 5, kLong);
        QVERIFY(session.follow());
        // While following, the newest step is in view and the view ends at the newest data.
        for (int i = 0; i < 3; ++i) {
            QTest::qWait(300);
            const Trace& t = *session.document()->trace;
            const TimeMapping& m = tl->view().mapping;
            QVERIFY(m.firstVisible() <= newestStepStart());
            QVERIFY(m.lastVisible() >= t.endTime() - TimeNs(2 * m.nsPerPixel));
        }
        // The user pans: following stops, and new data no longer moves the view.
        QSignalSpy followSpy(&session, &LiveSession::followChanged);
        tl->panBy(-0.5);
        QCOMPARE(session.follow(), false);
        QCOMPARE(followSpy.count(), 1);
        const TimeMapping frozen = tl->view().mapping;
        const quint64 before = session.status().eventsShown;
        QTRY_VERIFY_WITH_TIMEOUT(session.status().eventsShown > before, kLong);
        QCOMPARE(tl->view().mapping.firstVisible(), frozen.firstVisible());
        // Resuming (the End key / button) jumps back to the newest step.
        session.setFollow(true);
        QVERIFY(tl->view().mapping.lastVisible()
            >= session.document()->trace->endTime() - TimeNs(2 * tl->view().mapping.nsPerPixel));
        // Scrolling the lanes up and down keeps following.
        tl->setView([&] {
            TimelineView v = tl->view();
            v.scrollY += 10;
            return v;
        }());
        QVERIFY(session.follow());
        session.stop();
        QTRY_VERIFY_WITH_TIMEOUT(!session.status().active(), kLong);
    }

    void severalAgentsFeedOneViewer()
    {
        Agent a, b;
        QVERIFY(a.start(m_dir.path(), m_small, 0, 0));
        QVERIFY(b.start(m_dir.path(), m_small, 0, 0));
        auto o = optionsFor(a.address, 1000);
        o.agents.push_back(b.address.toStdString());
        LiveSession session;
        LivePanel panel;
        panel.setSession(&session);
        session.start(o);
        QTRY_VERIFY_WITH_TIMEOUT(session.status().phase == Phase::Finished, kLong);
        QTRY_VERIFY_WITH_TIMEOUT(session.finalReady(), kLong);
        const LiveStatus& st = session.status();
        QCOMPARE(st.agents.size(), 2);
        auto file = readTraceFile(m_small.toStdString());
        QVERIFY(file.hasValue());
        QCOMPARE(st.eventsReceived, 2 * file->eventCount()); // both streams, merged into one
        const Trace& merged = *session.document()->trace;
        QCOMPARE(merged.eventCount() - rangeEvents(merged), 2 * file->eventCount());
        for (const LiveAgentInfo& ai : st.agents) {
            QVERIFY(ai.instanceId != 0);
            QCOMPARE(ai.ranks.size(), 2);
            // Same machine: the NTP-style estimate is close to zero and its bound is a round trip.
            QVERIFY2(std::abs(ai.offsetNs) < 50'000'000, qPrintable(QString::number(ai.offsetNs)));
            QVERIFY(ai.offsetErrorNs >= 0 && ai.offsetErrorNs < 50e6);
        }
        QCOMPARE(st.agents[0].shiftNs, 0); // the first agent is the reference clock
        QCOMPARE(st.agents[1].shiftNs, -(st.agents[1].offsetNs - st.agents[0].offsetNs));
        // The panel shows both hosts with their offsets, and no losses.
        QCOMPARE(panel.agentTable()->rowCount(), 2);
        QVERIFY(panel.agentTable()->item(0, 2)->text().contains(QLatin1String("reference")));
        QVERIFY(panel.agentTable()->item(1, 2)->text().contains(QStringLiteral("±")));
        QCOMPARE(panel.lossText(), QStringLiteral("no losses"));
        QVERIFY(panel.summaryText().contains(QLatin1String("finished")));
    }

    void backoffDoubles_data()
    {
        QTest::addColumn<int>("attempt");
        QTest::addColumn<double>("maxS");
        QTest::addColumn<double>("expected");
        QTest::newRow("first") << 1 << 5.0 << 0.5;
        QTest::newRow("second") << 2 << 5.0 << 1.0;
        QTest::newRow("fourth") << 4 << 5.0 << 4.0;
        QTest::newRow("capped") << 9 << 5.0 << 5.0;
    }
    void backoffDoubles()
    {
        QFETCH(int, attempt);
        QFETCH(double, maxS);
        QFETCH(double, expected);
        QCOMPARE(LiveWorker::backoffS(attempt, maxS), expected);
    }
};

QTEST_MAIN(TstLiveSession)
#include "tst_livesession.moc"
