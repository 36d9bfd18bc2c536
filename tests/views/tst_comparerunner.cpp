// SPDX-License-Identifier: MIT
// CompareRunner (File > Compare with…): a comparison with a trace file fills the "Compare" dock on
// the window and says so on the status line; a file that cannot be read fails with a warning; a
// newer comparison drops the result of the one it superseded (here a missing file, whose failure
// would otherwise open the warning and say "Compare failed").
#include "model/io/tracefile.h"
#include "model/synth/synth.h"
#include "views/compare/comparerunner.h"
#include "views/compare/compareview.h"

#include <QApplication>
#include <QDockWidget>
#include <QMainWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

using namespace gapscope::model;

namespace {

Trace synthTrace(double extraHostGapUs)
{
    SynthOptions o;
    o.ranks = 1;
    o.steps = 4;
    o.kernelsPerStep = 20;
    o.seed = 3;
    o.extraHostGapUs = extraHostGapUs;
    auto t = synthesize(o);
    if (!t)
        qFatal("synth: %s", t.error().c_str());
    return std::move(t).value();
}

} // namespace

class TstCompareRunner : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_b = m_dir.filePath(QStringLiteral("b.gapscope"));
        const auto s = writeTraceFile(synthTrace(100), m_b.toStdString());
        QVERIFY2(s, s.message().c_str());
        m_a = TraceDocument::fromTrace(synthTrace(0), QStringLiteral("a"));
        // A warning is modal: close it and count it, so that a wrong one fails the test, not hangs it.
        connect(&m_closer, &QTimer::timeout, this, [this] {
            if (QWidget* w = QApplication::activeModalWidget()) {
                ++m_warnings;
                w->close();
            }
        });
        m_closer.start(20);
    }

    void init() { m_warnings = 0; }

    void comparisonFillsTheDock()
    {
        QMainWindow window;
        CompareRunner runner(&window);
        QSignalSpy shown(&runner, &CompareRunner::shown);
        QSignalSpy status(&runner, &CompareRunner::statusText);
        runner.compareWith(m_a, { m_b }, nullptr);
        QTRY_COMPARE_WITH_TIMEOUT(shown.size(), 1, 30000);
        QVERIFY(runner.view() && runner.view()->comparison());
        QCOMPARE(runner.view()->comparison()->a, m_a);
        QCOMPARE(runner.view()->comparison()->b->paths, QStringList { m_b });
        QVERIFY(runner.dock());
        QCOMPARE(runner.dock()->objectName(), QStringLiteral("compare"));
        QCOMPARE(window.dockWidgetArea(runner.dock()), Qt::BottomDockWidgetArea);
        QCOMPARE(status.first().first().toString(), QStringLiteral("Comparing with b.gapscope…"));
        QCOMPARE(status.last().first().toString(), QStringLiteral("Compared with b.gapscope"));
        QCOMPARE(m_warnings, 0);
    }

    void unreadableFileWarns()
    {
        QMainWindow window;
        CompareRunner runner(&window);
        QSignalSpy status(&runner, &CompareRunner::statusText);
        runner.compareWith(m_a, { m_dir.filePath(QStringLiteral("missing.gapscope")) }, nullptr);
        QTRY_COMPARE_WITH_TIMEOUT(m_warnings, 1, 30000);
        QCOMPARE(status.last().first().toString(), QStringLiteral("Compare failed"));
        QVERIFY(!runner.view());
    }

    void newerComparisonDropsTheStaleResult()
    {
        QMainWindow window;
        CompareRunner runner(&window);
        QSignalSpy shown(&runner, &CompareRunner::shown);
        QSignalSpy status(&runner, &CompareRunner::statusText);
        runner.compareWith(m_a, { m_dir.filePath(QStringLiteral("missing.gapscope")) }, nullptr);
        runner.compareWith(m_a, { m_b }, nullptr);
        QTRY_COMPARE_WITH_TIMEOUT(shown.size(), 1, 30000);
        QTest::qWait(300); // the missing file's failure, long since back, was dropped
        QCOMPARE(m_warnings, 0);
        QCOMPARE(shown.size(), 1);
        QCOMPARE(status.last().first().toString(), QStringLiteral("Compared with b.gapscope"));
        QCOMPARE(runner.view()->comparison()->b->paths, QStringList { m_b });
    }

private:
    QTemporaryDir m_dir;
    QString m_b;
    std::shared_ptr<const TraceDocument> m_a;
    QTimer m_closer;
    int m_warnings = 0;
};

QTEST_MAIN(TstCompareRunner)
#include "tst_comparerunner.moc"
