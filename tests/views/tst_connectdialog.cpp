// SPDX-License-Identifier: MIT
// "Connect to agent…": the step rule as gapscope-cli capture takes it, the options the dialog hands
// to the session, and the rank list read from a real gapscope-agent replaying a synth trace.
#include "views/live/connectdialog.h"

#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace gapscope;

class TstConnectDialog : public QObject {
    Q_OBJECT
private slots:
    void stepRules_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<QString>("rule");
        QTest::addColumn<QString>("pattern");
        QTest::newRow("auto") << "auto" << true << "auto"
                              << "";
        QTest::newRow("graph") << "graph" << true << "graph"
                               << "";
        QTest::newRow("nvtx") << "nvtx:decode_step" << true << "nvtx"
                              << "decode_step";
        QTest::newRow("anchor with colon") << "anchor:a:b" << true << "anchor"
                                           << "a:b";
        QTest::newRow("nvtx without pattern") << "nvtx" << false << ""
                                              << "";
        QTest::newRow("graph with pattern") << "graph:x" << false << ""
                                            << "";
        QTest::newRow("unknown") << "period" << false << ""
                                 << "";
    }
    void stepRules()
    {
        QFETCH(QString, text);
        QFETCH(bool, ok);
        QFETCH(QString, rule);
        QFETCH(QString, pattern);
        capture::CaptureChoice s;
        QCOMPARE(ConnectDialog::parseStepRule(text, s), ok);
        if (ok) {
            QCOMPARE(QString::fromStdString(s.stepRule), rule);
            QCOMPARE(QString::fromStdString(s.stepPattern), pattern);
        }
    }

    void optionsRoundTrip()
    {
        capture::LiveCaptureOptions in;
        in.agents = { "gpu-a:7433", "gpu-b:7433" };
        in.token = "secret";
        in.settings.set_steps(42);
        in.settings.set_step_rule("nvtx");
        in.settings.set_step_pattern("decode_step");
        ConnectDialog d;
        d.setOptions(in);
        const capture::LiveCaptureOptions out = d.options();
        QCOMPARE(out.agents, in.agents);
        QCOMPARE(out.token, in.token);
        QCOMPARE(out.settings.steps(), 42u);
        QCOMPARE(out.settings.step_rule(), std::string("nvtx"));
        QCOMPARE(out.settings.step_pattern(), std::string("decode_step"));
        QVERIFY(out.settings.kernels() && out.settings.memory_ops() && out.settings.runtime_api()
            && out.settings.synchronization() && out.settings.nvtx() && out.settings.nccl());
        QCOMPARE(out.clientName, std::string("gapscope"));
    }

    void listsTheRanksWithTheirGpus()
    {
        QTemporaryDir dir;
        const QString file = dir.path() + QStringLiteral("/t.gapscope");
        QProcess synth;
        synth.start(QStringLiteral(GAPSCOPE_CLI_BIN),
            { QStringLiteral("synth"), QStringLiteral("--ranks"), QStringLiteral("3"), QStringLiteral("--steps"),
                QStringLiteral("4"), QStringLiteral("--kernels-per-step"), QStringLiteral("20"), QStringLiteral("-o"),
                file });
        QVERIFY(synth.waitForFinished(60000) && synth.exitCode() == 0);
        const QString portFile = dir.path() + QStringLiteral("/port");
        QProcess agent;
        agent.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        agent.start(QStringLiteral(GAPSCOPE_AGENT_BIN),
            { QStringLiteral("--replay"), file, QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"),
                QStringLiteral("--port-file"), portFile, QStringLiteral("--output-dir"), dir.path() });
        QVERIFY(agent.waitForStarted(5000));
        int port = 0;
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                QFile f(portFile);
                return f.open(QIODevice::ReadOnly) && (port = QString::fromUtf8(f.readAll()).trimmed().toInt()) > 0;
            }(),
            10000);
        capture::LiveCaptureOptions o;
        o.agents = { "127.0.0.1:" + std::to_string(port) };
        ConnectDialog d;
        d.setOptions(o);
        QSignalSpy listed(&d, &ConnectDialog::ranksListed);
        d.listRanks();
        QTRY_COMPARE_WITH_TIMEOUT(listed.count(), 1, 20000);
        QCOMPARE(listed.at(0).at(0).toInt(), 3);
        auto* table = d.findChild<QTableWidget*>();
        QVERIFY(table);
        QCOMPARE(table->rowCount(), 3);
        for (int r = 0; r < 3; ++r) {
            QCOMPARE(table->item(r, 1)->text(), QString::number(r)); // rank
            QVERIFY(!table->item(r, 3)->text().isEmpty()); // GPU name
        }
        agent.terminate();
        QVERIFY(agent.waitForFinished(5000));
    }
};

QTEST_MAIN(TstConnectDialog)
#include "tst_connectdialog.moc"
