// SPDX-License-Identifier: MIT
// The live connection through the main window, as a user drives it: Live > Connect to agent… opens
// the dialog (its rank list filled from the agent), "Capture" starts the session, the Live dock and
// the status bar report progress, the workspace shows the growing trace and, at the end, the final
// one, which File > Save trace as .gapscope… writes; the window then closes cleanly.
#include "app/gui/mainwindow.h"
#include "model/io/tracefile.h"
#include "views/document/workspace.h"
#include "views/live/connectdialog.h"
#include "views/live/livepanel.h"
#include "views/live/livesession.h"

#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QListWidget>
#include <QProcess>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace gapscope;

class TstLiveWindow : public QObject {
    Q_OBJECT
private slots:
    void connectCaptureAndSave()
    {
        QTemporaryDir dir;
        const QString file = dir.path() + QStringLiteral("/t.gapscope");
        QProcess synth;
        synth.start(QStringLiteral(GAPSCOPE_CLI_BIN),
            { QStringLiteral("synth"), QStringLiteral("--ranks"), QStringLiteral("2"), QStringLiteral("--steps"),
                QStringLiteral("12"), QStringLiteral("--kernels-per-step"), QStringLiteral("30"), QStringLiteral("-o"),
                file });
        QVERIFY(synth.waitForFinished(60000) && synth.exitCode() == 0);
        const QString portFile = dir.path() + QStringLiteral("/port");
        QProcess agent;
        agent.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        agent.start(QStringLiteral(GAPSCOPE_AGENT_BIN),
            { QStringLiteral("--replay"), file, QStringLiteral("--speed"), QStringLiteral("0"),
                QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"), QStringLiteral("--port-file"), portFile,
                QStringLiteral("--output-dir"), dir.path() });
        QVERIFY(agent.waitForStarted(5000));
        int port = 0;
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                QFile f(portFile);
                return f.open(QIODevice::ReadOnly) && (port = QString::fromUtf8(f.readAll()).trimmed().toInt()) > 0;
            }(),
            10000);

        MainWindow w;
        w.show();
        // The dialog is modal: fill it in once it is up and its ranks are listed, then press Capture.
        int listedRanks = -1;
        QTimer::singleShot(0, this, [&] {
            auto* d = qobject_cast<ConnectDialog*>(QApplication::activeModalWidget());
            QVERIFY(d);
            auto* agents = d->findChild<QListWidget*>();
            agents->item(0)->setText(QStringLiteral("127.0.0.1:%1").arg(port));
            d->findChild<QSpinBox*>()->setValue(1000);
            QSignalSpy listed(d, &ConnectDialog::ranksListed);
            d->listRanks();
            QTRY_VERIFY_WITH_TIMEOUT(!listed.isEmpty() && listed.last().at(0).toInt() > 0, 20000);
            listedRanks = listed.last().at(0).toInt();
            d->accept();
        });
        w.connectToAgent();
        QCOMPARE(listedRanks, 2);
        LiveSession* session = w.liveSession();
        QVERIFY(session);
        auto* dock = w.findChild<QDockWidget*>(QStringLiteral("live"));
        QVERIFY(dock && dock->isVisible());
        QTRY_VERIFY_WITH_TIMEOUT(session->status().phase == LiveStatus::Phase::Finished, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(session->finalReady(), 20000);
        auto original = model::readTraceFile(file.toStdString());
        QVERIFY(original.hasValue());
        QCOMPARE(w.workspace()->document(), session->document().get());
        QCOMPARE(w.workspace()->document()->trace->eventCount(), original->eventCount());
        auto* panel = w.findChild<LivePanel*>();
        QVERIFY(panel);
        QVERIFY2(panel->summaryText().contains(QLatin1String("finished")), qPrintable(panel->summaryText()));
        QVERIFY(panel->agentTable()->rowCount() == 1);
        const QString saved = dir.path() + QStringLiteral("/saved.gapscope");
        QCOMPARE(session->saveAs(saved), QString());
        auto reread = model::readTraceFile(saved.toStdString());
        QVERIFY(reread.hasValue());
        QCOMPARE(reread->eventCount(), original->eventCount());
        agent.terminate();
        QVERIFY(agent.waitForFinished(5000));
    }
};

QTEST_MAIN(TstLiveWindow)
#include "tst_livewindow.moc"
