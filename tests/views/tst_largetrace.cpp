// SPDX-License-Identifier: MIT
// A large .gapscope file in the viewer (the threshold lowered so a small synth file takes the path):
// it opens through its overview with a first window of events, not whole; zoomed out, the timeline
// draws the overview over the whole file (pixels at its far end); a jump to a step far away reads that
// step's window in the background, after which the frame draws events again and the tables, the
// analysis and the details cover the window; times stay relative to the file's start. A file cut
// before its index opens the same way.
#include "views/analysis/analysisrunner.h"
#include "views/document/tracedocument.h"
#include "views/document/workspace.h"
#include "views/tables/kerneltablemodel.h"
#include "views/tables/statspanel.h"
#include "views/tables/steptablemodel.h"
#include "views/timeline/timelinewidget.h"

#include "model/synth/synth.h"

#include <QFile>
#include <QImage>
#include <QPainter>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace gapscope::model;

class TstLargeTrace : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        SynthOptions o;
        o.ranks = 2;
        o.steps = 200;
        o.kernelsPerStep = 600; // 240,000 kernels, several chunks
        o.seed = 5;
        m_path = m_dir.filePath(QStringLiteral("large.gapscope"));
        QVERIFY(synthesizeToFile(o, m_path.toStdString()).isOk());
        TraceDocument::setLargeTraceEvents(50'000);
        TraceDocument::setCacheBytes(2u << 20); // windows of about 70,000 events: a part of the file
    }

    void opensThroughItsOverview()
    {
        QString error;
        auto doc = TraceDocument::open({ m_path }, &error);
        QVERIFY2(doc, qPrintable(error));
        QVERIFY(doc->large());
        QCOMPARE(doc->overview->stepCount(), 200u);
        QVERIFY(doc->trace->eventCount() > 0);
        QVERIFY2(doc->trace->eventCount() < doc->overview->eventCount() / 2,
            qPrintable(QStringLiteral("%1 of %2").arg(doc->trace->eventCount()).arg(doc->overview->eventCount())));
        // The window's trace keeps the file's lanes and strings, and whole steps only.
        QCOMPARE(doc->trace->laneCount(), doc->overview->lanes().size());
        QCOMPARE(doc->trace->stringCount(), doc->overview->strings().size());
        for (uint32_t r : doc->trace->ranks())
            for (const Step& s : doc->trace->steps(r))
                QVERIFY(doc->window.contains(s.start, s.end));
    }

    void zoomedOutDrawsTheWholeFile()
    {
        QString error;
        auto doc = TraceDocument::open({ m_path }, &error);
        QVERIFY(doc);
        Workspace ws;
        ws.analysis()->setAsync(false);
        ws.resize(1400, 800);
        ws.setDocument(doc);
        TimelineWidget* tl = ws.timeline();
        tl->resize(1200, 500);
        tl->zoomToAll();
        QCOMPARE(tl->extentStart(), doc->overview->startTime());
        QCOMPARE(tl->extentEnd(), doc->overview->endTime());
        QImage img(tl->canvasSize(), QImage::Format_RGB32);
        {
            QPainter p(&img);
            tl->renderer().paint(p, img.size(), tl->view());
        }
        const TimelineFrame& f = tl->renderer().frame();
        QVERIFY(f.fromOverview());
        uint64_t drawn = 0;
        for (size_t k = 0; k < f.rowCount(); ++k)
            for (const auto& it : f.overviewItems(k))
                drawn += it.count;
        QVERIFY(drawn > doc->trace->eventCount()); // more than the window holds: the whole file
        // The first GPU row is painted at 95 % of the way, far past the first window.
        const LaneLayout& layout = tl->laneLayout();
        int row = -1;
        for (size_t i = 0; i < layout.rows().size(); ++i)
            if (layout.rows()[i].type == LaneRow::Type::Lane && layout.rows()[i].kind == LaneKind::GpuStream) {
                row = int(i);
                break;
            }
        QVERIFY(row >= 0);
        const TimelineView& v = tl->view();
        const TimeNs far = doc->overview->startTime() + (doc->overview->endTime() - doc->overview->startTime()) * 95 / 100;
        QVERIFY(!doc->window.contains(far, far + 1));
        const int x = v.headerWidth + int(v.mapping.toX(far));
        const int y = TimelineRenderer::widgetY(layout.rows()[size_t(row)].y, v) + layout.rows()[size_t(row)].height / 2;
        const QColor background = img.pixelColor(v.headerWidth + 2, img.height() - 5);
        QVERIFY2(img.pixelColor(x, y) != background, qPrintable(img.pixelColor(x, y).name()));
    }

    void jumpReadsTheStepsWindow()
    {
        QString error;
        auto doc = TraceDocument::open({ m_path }, &error);
        QVERIFY(doc);
        Workspace ws;
        ws.analysis()->setAsync(false);
        ws.resize(1400, 800);
        ws.setDocument(doc);
        ws.show(); // laid out, so the view's width is the canvas's
        QVERIFY(QTest::qWaitForWindowExposed(&ws));
        QSignalSpy shown(&ws, &Workspace::windowShown);
        ws.showStep(170);
        QVERIFY(ws.readingWindow());
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 10'000);
        const TraceDocument* now = ws.document();
        QVERIFY(now->large());
        TimeNs t0 = INT64_MAX, t1 = INT64_MIN;
        for (uint32_t r : doc->overview->ranks())
            for (const Step& s : doc->overview->steps(r))
                if (s.index == 170) {
                    t0 = std::min(t0, s.start);
                    t1 = std::max(t1, s.end);
                }
        QVERIFY(now->window.contains(t0, t1));
        QVERIFY(ws.statsPanel()->stepModel()->rowOfStep(170) >= 0); // the tables cover the window
        QVERIFY(ws.statsPanel()->stepModel()->rowOfStep(0) < 0);
        // The frame draws the window's events again.
        QImage img(ws.timeline()->canvasSize(), QImage::Format_RGB32);
        QPainter p(&img);
        ws.timeline()->renderer().paint(p, img.size(), ws.timeline()->view());
        QVERIFY(!ws.timeline()->renderer().frame().fromOverview());
        QVERIFY(ws.timeline()->renderer().frame().itemCount() > 0);
    }

    // While a window is read, the analysis and the statistics of the window shown wait (on few cores
    // they would hold the read up); once the new window is shown both run for it.
    void jumpHoldsTheOldWindowsWork()
    {
        QString error;
        auto doc = TraceDocument::open({ m_path }, &error);
        QVERIFY(doc);
        Workspace ws; // analysis in the background, as in the window
        ws.resize(1400, 800);
        QSignalSpy analysed(ws.analysis(), &AnalysisRunner::analyzerReady);
        QSignalSpy stats(ws.statsPanel(), &StatsPanel::statsReady);
        QSignalSpy shown(&ws, &Workspace::windowShown);
        ws.setDocument(doc);
        ws.show();
        QVERIFY(QTest::qWaitForWindowExposed(&ws));
        ws.showStep(170);
        QVERIFY(ws.readingWindow());
        QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 10'000);
        QTRY_VERIFY_WITH_TIMEOUT(ws.analysis()->ready() && !ws.statsPanel()->computing(), 10'000);
        QCOMPARE(ws.analysis()->analyzer()->ranks().size(), doc->trace->ranks().size());
        bool found = false; // the analysis is the new window's
        for (const auto& step : ws.analysis()->analyzer()->steps(ws.analysis()->analyzer()->ranks()[0]))
            found |= step.index == 170;
        QVERIFY(found);
        QVERIFY(!stats.isEmpty());
        QVERIFY(!analysed.isEmpty());
    }

    // hold() stops the background work until resume(); the result then comes as before.
    void holdAndResume()
    {
        QString error;
        auto doc = TraceDocument::open({ m_path }, &error);
        QVERIFY(doc);
        AnalysisRunner runner;
        QSignalSpy analysed(&runner, &AnalysisRunner::analyzerReady);
        runner.setTrace(doc->trace);
        runner.hold();
        QTest::qWait(500);
        QCOMPARE(analysed.count(), 0);
        QVERIFY(runner.busy());
        QVERIFY(!runner.ready());
        runner.resume();
        QTRY_COMPARE_WITH_TIMEOUT(analysed.count(), 1, 10'000);
        QVERIFY(runner.ready());
        QVERIFY(!runner.busy());

        StatsPanel panel;
        QSignalSpy stats(&panel, &StatsPanel::statsReady);
        panel.setDocument(doc->trace, doc->colors);
        panel.hold();
        QTest::qWait(500);
        QCOMPARE(stats.count(), 0);
        QVERIFY(panel.computing());
        panel.resume();
        QTRY_COMPARE_WITH_TIMEOUT(stats.count(), 1, 10'000);
        QVERIFY(!panel.computing());
        QVERIFY(panel.kernelModel()->rowCount() > 0);
    }

    // A file cut before its index (the agent killed mid-capture) opens the same way: the overview's
    // pass rebuilds the index, and a jump reads a window of it.
    void cutFileOpensThroughItsOverview()
    {
        QFile whole(m_path);
        QVERIFY(whole.open(QIODevice::ReadOnly));
        const QByteArray bytes = whole.readAll();
        const QString cutPath = m_dir.filePath(QStringLiteral("cut.gapscope"));
        QFile cut(cutPath);
        QVERIFY(cut.open(QIODevice::WriteOnly));
        cut.write(bytes.left(bytes.size() * 7 / 10));
        cut.close();
        QString error;
        auto doc = TraceDocument::open({ cutPath }, &error);
        QVERIFY2(doc, qPrintable(error));
        QVERIFY(doc->large());
        const uint32_t steps = doc->overview->stepCount();
        QVERIFY2(steps > 100 && steps < 200, qPrintable(QString::number(steps)));
        QVERIFY2(doc->trace->eventCount() < doc->overview->eventCount() * 3 / 4,
            qPrintable(QStringLiteral("%1 of %2").arg(doc->trace->eventCount()).arg(doc->overview->eventCount())));
        auto later = TraceDocument::readWindow(*doc, gapscope::model::windowFor(*doc->overview,
            doc->overview->steps(0)[steps - 5].start, doc->overview->steps(0)[steps - 5].end,
            TraceDocument::windowEvents(), 1.0).value());
        QVERIFY2(later, later ? "" : later.error().c_str());
        QVERIFY((*later)->trace->eventCount() > 0);
        bool found = false;
        for (const Step& s : (*later)->trace->steps(0))
            found |= s.index == doc->overview->steps(0)[steps - 5].index;
        QVERIFY(found);
    }

private:
    QTemporaryDir m_dir;
    QString m_path;
};

QTEST_MAIN(TstLargeTrace)
#include "tst_largetrace.moc"
