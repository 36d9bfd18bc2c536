// SPDX-License-Identifier: MIT
// The main window's first impression: the first start (no saved settings) fills the screen's available
// area; a later start comes back at the size and state the window was closed with. At 1366x768 with
// the bundled sample every waterfall label is whole (none elided), each bar carries its value, and
// the kernel table's name column shows kernel names, not their return type. File > Compare with…
// shows the comparison in the Compare dock (the sample against itself: nothing moved) and enables
// its export.
#include "app/gui/mainwindow.h"
#include "model/analysis/kernelranges.h"
#include "model/io/tracefile.h"
#include "model/trace/kernelname.h"
#include "views/analysis/waterfallchart.h"
#include "views/analysis/waterfallpanel.h"
#include "views/common/statstable.h"
#include "views/common/timeformat.h"
#include "views/compare/bardiffmodel.h"
#include "views/compare/compareview.h"
#include "views/compare/kerneldiffmodel.h"
#include "views/document/workspace.h"
#include "views/tables/kerneltablemodel.h"
#include "views/tables/statspanel.h"
#include "views/timeline/timelinewidget.h"

#include "views/document/traceopener.h"

#include <QAction>
#include <QChart>
#include <QDockWidget>
#include <QFile>
#include <QGraphicsSimpleTextItem>
#include <QMessageBox>
#include <QProgressBar>
#include <QSignalSpy>
#include <QSplitter>
#include <QTableView>
#include <QThread>
#include <QToolButton>

#include <QApplication>
#include <QScreen>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

class TstMainWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QVERIFY(m_settingsDir.isValid());
        QCoreApplication::setOrganizationName(QStringLiteral("gapscope-test"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_mainwindow"));
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_settingsDir.path());
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_settingsDir.path());
        QSettings().clear();
    }

    void firstStartFillsTheScreen()
    {
        QVERIFY(!QSettings().contains(QStringLiteral("window/geometry")));
        MainWindow w;
        w.showAsRemembered();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.isMaximized());
        const QRect avail = w.screen()->availableGeometry();
        QTRY_COMPARE(w.frameGeometry().size(), avail.size());
        w.close();
        QVERIFY(QSettings().contains(QStringLiteral("window/geometry")));
    }

    void laterStartRestoresTheClosedGeometry()
    {
        QSize closed;
        {
            MainWindow w;
            w.showAsRemembered(); // maximised, as saved by the first start
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            QTRY_VERIFY(w.isMaximized());
            w.showNormal();
            // Restored (not maximised) at some size of its own: that size and state come back.
            const QSize avail = w.screen()->availableGeometry().size();
            w.resize(avail - QSize(40, 30));
            QTest::qWait(50);
            QVERIFY(!w.isMaximized());
            closed = w.size();
            w.close();
        }
        MainWindow w;
        w.showAsRemembered();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(!w.isMaximized());
        QCOMPARE(w.size(), closed);
    }

    void readableAt1366x768()
    {
        MainWindow w;
        w.showNormal();
        w.resize(1366, 768);
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy shown(&w, &MainWindow::documentShown);
        w.openFiles({ QStringLiteral(GAPSCOPE_RESOURCE_DIR "/samples/glm5-tp2-decode.gapscope") });
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 60000);
        WaterfallChart* chart = w.workspace()->waterfallPanel()->chart();
        QTRY_VERIFY_WITH_TIMEOUT(chart->columns().size() > 2, 60000);
        QTest::qWait(50); // layout settles
        QCOMPARE(w.size(), QSize(1366, 768));
        const auto labels = WaterfallChart::labelItems(chart->chart());
        const auto values = WaterfallChart::valueItems(chart->chart());
        QCOMPARE(labels.size(), chart->columns().size());
        QCOMPARE(values.size(), chart->columns().size());
        const QRectF plot = chart->chart()->plotArea();
        for (size_t i = 0; i < labels.size(); ++i) {
            const WaterfallColumn& col = chart->columns()[i];
            // Whole (not elided), inside the chart, left of the plot, on its bar's row.
            QCOMPARE(labels[i]->text(), col.label);
            const QRectF r = labels[i]->mapRectToItem(chart->chart(), labels[i]->boundingRect());
            QVERIFY2(r.left() >= 0 && r.right() <= plot.left() + 0.5, qPrintable(col.label));
            const QPointF centre = chart->mapToScene(chart->columnCenter(int(i)).toPoint());
            QVERIFY2(std::abs(r.center().y() - chart->chart()->mapFromScene(centre).y()) < 3, qPrintable(col.label));
            // The value beside (or on) the bar, inside the plot.
            QCOMPARE(values[i]->text(), timeformat::ms(col.value));
            const QRectF v = values[i]->mapRectToItem(chart->chart(), values[i]->boundingRect());
            QVERIFY2(v.left() >= plot.left() && v.right() <= plot.right() + 0.5, qPrintable(col.label));
        }
        // The kernel table: names in their short form, wide enough to be read whole.
        StatsPanel* stats = w.workspace()->statsPanel();
        QTRY_VERIFY_WITH_TIMEOUT(stats->kernelModel()->rowCount() > 0 && !stats->computing(), 60000);
        // The findings come first; the kernels are a tab away.
        QCOMPARE(stats->tabs()->tabText(0), QStringLiteral("Findings"));
        stats->tabs()->setCurrentWidget(stats->kernelTable());
        QTableView* view = stats->kernelTable()->view();
        QTRY_VERIFY(view->isVisible());
        stats->kernelTable()->fitColumns();
        const QFontMetrics fm(view->font());
        const int nameWidth = view->columnWidth(KernelTableModel::Name);
        for (int r = 0; r < std::min(10, view->model()->rowCount()); ++r) {
            const QModelIndex idx = view->model()->index(r, KernelTableModel::Name);
            const QString shown = idx.data().toString();
            QVERIFY2(!shown.startsWith(QLatin1String("void ")), qPrintable(shown));
            QCOMPARE(shown,
                QString::fromStdString(
                    gapscope::model::shortKernelName(idx.data(Qt::ToolTipRole).toString().toStdString())));
            QVERIFY2(fm.horizontalAdvance(shown) + 8 <= nameWidth, qPrintable(shown));
        }
        w.close();
    }

    void compareWithShowsTheCompareDock()
    {
        MainWindow w;
        w.showNormal();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QAction* compare = nullptr;
        QAction* exportComparison = nullptr;
        for (QAction* a : w.findChildren<QAction*>()) {
            if (a->text() == QStringLiteral("Compare &with…"))
                compare = a;
            if (a->text() == QStringLiteral("&Comparison image…"))
                exportComparison = a;
        }
        QVERIFY(compare && exportComparison);
        QVERIFY(!exportComparison->isEnabled());
        const QString sample = QStringLiteral(GAPSCOPE_RESOURCE_DIR "/samples/glm5-tp2-decode.gapscope");
        QSignalSpy shown(&w, &MainWindow::documentShown);
        w.openFiles({ sample });
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 60000);
        QSignalSpy compared(&w, &MainWindow::comparisonShown);
        w.compareWith({ sample });
        QTRY_VERIFY_WITH_TIMEOUT(!compared.isEmpty(), 60000);
        QVERIFY(w.compareView() && w.compareView()->isVisible());
        QVERIFY(exportComparison->isEnabled());
        const BarDiffModel* bars = w.compareView()->barModel();
        QVERIFY(bars->rowCount() > 5);
        for (int r = 0; r < bars->rowCount(); ++r)
            QCOMPARE(bars->data(bars->index(r, BarDiffModel::Delta), Qt::UserRole).toDouble(), 0.0);
        const KernelDiffModel* k = w.compareView()->kernelModel();
        QVERIFY(k->rowCount() > 10);
        for (int r = 0; r < k->rowCount(); ++r) {
            QCOMPARE(k->data(k->index(r, KernelDiffModel::Match), Qt::UserRole).toString(), QStringLiteral("exact"));
            QCOMPARE(k->data(k->index(r, KernelDiffModel::DeltaTotal), Qt::UserRole).toDouble(), 0.0);
        }
    }

    // A real CUDA-graph capture (tests/analysis/fixtures/graphnodes): under the replaying stream a row groups
    // each replay's kernels by the range their nodes were built in (decode > layer K > attention / mlp), and
    // the View menu's switch takes it away.
    void graphReplaysGroupedByRange()
    {
        MainWindow w;
        w.showNormal();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy shown(&w, &MainWindow::documentShown);
        w.openFiles(
            { QStringLiteral(GAPSCOPE_SOURCE_DIR "/tests/analysis/fixtures/graphnodes/graph_ranges.gapscope") });
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 60000);
        auto rangeRow = [&w]() -> int {
            const auto& rows = w.workspace()->timeline()->laneLayout().rows();
            for (size_t i = 1; i < rows.size(); ++i)
                if (rows[i].label.endsWith(QStringLiteral(" by range")))
                    return int(i);
            return -1;
        };
        const int r = rangeRow();
        QVERIFY(r > 0);
        const auto& rows = w.workspace()->timeline()->laneLayout().rows();
        QCOMPARE(rows[size_t(r - 1)].kind, gapscope::model::LaneKind::GpuStream);
        QCOMPARE(rows[size_t(r)].levels, 3);
        const gapscope::model::Trace& trace = *w.workspace()->document()->trace;
        QCOMPARE(gapscope::model::replayRangeStream(trace.lane(rows[size_t(r)].lane).info),
            trace.lane(rows[size_t(r - 1)].lane).info.stream);
        QAction* toggle = nullptr;
        for (QAction* a : w.findChildren<QAction*>())
            if (a->text() == QStringLiteral("Show graph replays by &range"))
                toggle = a;
        QVERIFY(toggle && toggle->isChecked());
        toggle->setChecked(false);
        QCOMPARE(rangeRow(), -1);
        toggle->setChecked(true);
        QVERIFY(rangeRow() > 0);

        // Saved, the trace leaves its derived lanes out; opened again, it gets them once, as before.
        size_t rangeLanes = 0;
        uint64_t rangeEvents = 0;
        for (const gapscope::model::Lane& l : trace.lanes())
            if (gapscope::model::isReplayRangeLane(l.info)) {
                ++rangeLanes;
                rangeEvents += l.events.size();
            }
        QVERIFY(rangeLanes > 0);
        QTemporaryDir dir;
        const QString saved = dir.filePath(QStringLiteral("saved.gapscope"));
        QVERIFY(TraceDocument::save(trace, saved).isOk());
        auto back = gapscope::model::readTraceFile(saved.toStdString());
        QVERIFY(back);
        QCOMPARE(back->laneCount() + rangeLanes, trace.laneCount());
        for (const gapscope::model::Lane& l : back->lanes())
            QVERIFY(!gapscope::model::isReplayRangeLane(l.info));
        QCOMPARE(back->eventCount() + rangeEvents, trace.eventCount());
        const auto ranges = gapscope::model::KernelRanges::of(*back);
        QVERIFY(gapscope::model::addReplayRangeLanes(*back, ranges) > 0);
        QCOMPARE(back->laneCount(), trace.laneCount());
        QCOMPARE(gapscope::model::addReplayRangeLanes(*back, ranges), uint64_t(0)); // not twice
        QCOMPARE(back->laneCount(), trace.laneCount());
    }

    void resetLayoutBringsTheDocksBack()
    {
        MainWindow w;
        w.showNormal();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const auto docks = w.findChildren<QDockWidget*>();
        QVERIFY(!docks.isEmpty());
        QList<bool> visible;
        for (QDockWidget* d : docks)
            visible << d->isVisible();
        for (QDockWidget* d : docks)
            d->hide();
        w.workspace()->splitter()->setSizes({ 10, 1000 });
        QAction* reset = nullptr;
        for (QAction* a : w.findChildren<QAction*>())
            if (a->text() == QLatin1String("&Reset layout"))
                reset = a;
        QVERIFY(reset);
        reset->trigger();
        QList<bool> after;
        for (QDockWidget* d : docks)
            after << d->isVisible();
        QCOMPARE(after, visible);
        const QList<int> sizes = w.workspace()->splitter()->sizes();
        QCOMPARE(sizes.size(), 2);
        QVERIFY2(sizes[0] > 2 * sizes[1], qPrintable(QStringLiteral("%1 %2").arg(sizes[0]).arg(sizes[1])));
        w.close();
    }

    void loadingShowsProgressAndCancels()
    {
        MainWindow w;
        w.showNormal();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(!w.loadProgress()->isVisible());
        // An open function that reports progress until it is asked to stop, as the readers do.
        auto stopped = std::make_shared<std::atomic<bool>>(false);
        TraceOpener::OpenFn open
            = [stopped](const TraceOpener::Progress& progress) -> gapscope::Expected<gapscope::model::Trace> {
            for (int i = 0; i < 20'000; ++i) {
                if (!progress(std::min(0.99, i / 200.0))) {
                    stopped->store(true);
                    return gapscope::Status::error("canceled");
                }
                QThread::msleep(1);
            }
            return gapscope::Status::error("never asked to stop");
        };
        QSignalSpy canceled(w.opener(), &TraceOpener::canceled);
        QSignalSpy shown(&w, &MainWindow::documentShown);
        w.opener()->load({ QStringLiteral("big.json.gz") }, open);
        QTRY_VERIFY(w.loadProgress()->isVisible() && w.cancelLoadButton()->isVisible());
        QTRY_VERIFY_WITH_TIMEOUT(w.loadProgress()->value() > 0, 10'000); // it moves
        QTest::mouseClick(w.cancelLoadButton(), Qt::LeftButton);
        QCOMPARE(canceled.size(), 1);
        QVERIFY(!w.loadProgress()->isVisible());
        QVERIFY(!w.cancelLoadButton()->isVisible());
        QTRY_VERIFY_WITH_TIMEOUT(stopped->load(), 10'000); // the worker was told to stop
        QTest::qWait(50);
        QVERIFY(shown.isEmpty());
        QVERIFY(!w.errorDialog()); // a cancel is no error
        w.close();
    }

    void loadErrorNamesFileAndOffset()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("malformed.json"));
        QVERIFY(QFile::copy(QStringLiteral(GAPSCOPE_TEST_DATA "/import/fixtures/kineto/malformed.json"), path));
        MainWindow w;
        w.showNormal();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.openFiles({ path });
        QTRY_VERIFY_WITH_TIMEOUT(w.errorDialog() && w.errorDialog()->isVisible(), 30'000);
        const QString text = w.errorDialog()->text() + QLatin1Char('\n') + w.errorDialog()->informativeText();
        QVERIFY2(text.contains(QLatin1String("malformed.json")), qPrintable(text));
        QVERIFY2(text.contains(QLatin1String("byte 2647")), qPrintable(text)); // where the JSON breaks
        QVERIFY(!w.loadProgress()->isVisible());
        w.errorDialog()->close();
        QTRY_VERIFY(!w.errorDialog());
        w.close();
    }

private:
    QTemporaryDir m_settingsDir;
};

QTEST_MAIN(TstMainWindow)
#include "tst_mainwindow.moc"
