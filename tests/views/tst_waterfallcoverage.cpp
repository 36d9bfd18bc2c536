// SPDX-License-Identifier: MIT
// The coverage under the waterfall (WaterfallPanel::setCoverage): items that are not ok first, the ok ones
// in one line, repeated notes once with their count, and a box of a few lines at most, so that the chart
// keeps its size at 1366x768 however many notes two merged captures bring; and in the workspace, the
// analysis' coverage shown there once it is ready.
#include "views/analysis/findingspanel.h"
#include "views/analysis/waterfallchart.h"
#include "views/analysis/waterfallpanel.h"
#include "views/document/tracedocument.h"
#include "views/document/workspace.h"

#include "testtrace.h"

#include <QTest>

using namespace gapscope::model;

class TstWaterfallCoverage : public QObject {
    Q_OBJECT
private slots:
    void boxKeepsTheChartsSize()
    {
        WaterfallPanel panel;
        panel.resize(460, 560); // the waterfall's share of a 1366x768 window
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        std::vector<CoverageItem> items = {
            { "kernel time in steps", 99.0, "%", CoverageVerdict::Ok, "every kernel's time is inside a step" },
            { "ranks", 8, "ranks", CoverageVerdict::Ok, "every rank" },
            { "complete steps", 60, "%", CoverageVerdict::Warn, "steps 20-39: capture started apart" },
            { "data lost", 12, "events", CoverageVerdict::Bad, "12 events were lost" },
        };
        panel.setCoverage(items, {});
        QCoreApplication::processEvents();
        const int chartBefore = panel.chart()->height();
        QStringList notes;
        for (int i = 0; i < 40; ++i)
            notes << QStringLiteral("rank %1: a note that is long enough to wrap over a line or two at this width, "
                                    "as merged captures write them")
                         .arg(i);
        for (int i = 0; i < 20; ++i)
            notes << QStringLiteral("collectives in no step: left out");
        panel.setCoverage(items, notes);
        QCoreApplication::processEvents();
        QVERIFY2(panel.chart()->height() >= chartBefore - panel.fontMetrics().lineSpacing() * 5 - 8,
            qPrintable(QString("chart %1 px, before %2").arg(panel.chart()->height()).arg(chartBefore)));
        QVERIFY(panel.chart()->height() > panel.height() / 2);
        const QString text = panel.coverageText();
        // Not ok first (bad and warn), the ok ones in one line, a repeated note once with its count.
        QVERIFY2(text.indexOf(QStringLiteral("bad data lost"))
                < text.indexOf(QStringLiteral("ok kernel time in steps, ranks")),
            qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("warn complete steps: steps 20-39")));
        QVERIFY(text.contains(QStringLiteral("collectives in no step: left out (20 times)")));
        QCOMPARE(text.count(QStringLiteral("collectives in no step")), 1);
    }

    void workspaceShowsTheAnalysisCoverage()
    {
        Workspace ws;
        ws.resize(1366, 768);
        ws.show();
        QVERIFY(QTest::qWaitForWindowExposed(&ws));
        Trace trace = testtrace::make();
        for (RankInfo& r : trace.mutableHeader().ranks)
            r.worldSize = 4; // a job of 4 ranks, 2 of them recorded: "ranks" is a warning
        ws.setDocument(TraceDocument::fromTrace(std::move(trace), QStringLiteral("test.gapscope")));
        QTRY_VERIFY_WITH_TIMEOUT(
            ws.waterfallPanel()->coverageText().contains(QStringLiteral("complete steps")), 20'000);
        QVERIFY(ws.waterfallPanel()->chart()->height() > 150);
        QVERIFY2(ws.waterfallPanel()->coverageText().contains(QStringLiteral("warn ranks: 2 of the job's 4 ranks")),
            qPrintable(ws.waterfallPanel()->coverageText()));
        // Items that are not ok lead the Findings tab too.
        const auto& rows = ws.findingsPanel()->findings();
        QVERIFY(!rows.empty());
        QCOMPARE(rows.front().kind, std::string("coverage"));
        QVERIFY(rows.front().text.find("coverage warn: ranks: 2 of the job's 4 ranks") == 0);
    }
};

QTEST_MAIN(TstWaterfallCoverage)
#include "tst_waterfallcoverage.moc"
