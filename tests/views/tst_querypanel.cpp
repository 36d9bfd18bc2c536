// SPDX-License-Identifier: MIT
// The Query dock (views/querypanel): SQL over the open trace once its analysis is ready, the rows shown,
// errors shown, and rows lit up on the timeline: kernels as themselves, gaps and steps as spans, with the
// view zoomed onto them.
#include "views/analysis/querypanel.h"
#include "views/document/tracedocument.h"
#include "views/document/workspace.h"
#include "views/timeline/timelinewidget.h"

#include "testtrace.h"

#include <QSignalSpy>
#include <QTableView>
#include <QTest>

using namespace gapscope::model;

class TstQueryPanel : public QObject {
    Q_OBJECT
private slots:
    void init()
    {
        m_ws = std::make_unique<Workspace>();
        m_ws->resize(1400, 900);
        m_ws->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_ws.get()));
        m_ws->setDocument(TraceDocument::fromTrace(testtrace::make(), QStringLiteral("test.gapscope")));
        m_panel = m_ws->queryPanel();
        QTRY_VERIFY_WITH_TIMEOUT(m_panel->ready(), 20000); // the analysis is ready
    }
    void cleanup() { m_ws.reset(); }

    void runsAndShowsRows()
    {
        // testtrace: 2 ranks x 4 steps x 8 kernels, names cycling through 4.
        QVERIFY(run("select rank, count(*) as n, sum(dur) as ns from kernels group by rank order by rank"));
        const QueryResultModel* m = m_panel->model();
        QCOMPARE(m->rowCount(), 2);
        QCOMPARE(m->headerData(1, Qt::Horizontal, Qt::DisplayRole).toString(), QStringLiteral("n"));
        QCOMPARE(m->data(m->index(0, 1), Qt::UserRole).toLongLong(), 32LL);
        QCOMPARE(m->data(m->index(1, 2), Qt::UserRole).toLongLong(), 32LL * 10'000);
        QVERIFY2(m_panel->status().contains(QStringLiteral("2 row")), qPrintable(m_panel->status()));
        // The analysis' tables too: a step's bars add up to its window.
        QVERIFY(run("select sum(b.ns) = s.window as ok from bars b join steps s using (rank, step) "
                    "where b.kind <> 'budget' and b.rank = 0 and b.step = 1"));
        QCOMPARE(m->data(m->index(0, 0), Qt::UserRole).toLongLong(), 1LL);
    }

    void errorsAreShown()
    {
        QVERIFY(run("select nope from kernels"));
        QCOMPARE(m_panel->model()->rowCount(), 0);
        QVERIFY2(m_panel->status().contains(QStringLiteral("no such column: nope")), qPrintable(m_panel->status()));
    }

    void rowsLightUpTheTimeline()
    {
        TimelineWidget* tl = m_ws->timeline();
        QVERIFY(run("select rank, name, start, dur from kernels where rank = 1 and step = 2 order by start limit 3"));
        QCOMPARE(m_panel->model()->rowCount(), 3);
        QSignalSpy spy(m_panel, &QueryPanel::highlightRequested);
        m_panel->lightUp({ 0, 1, 2 });
        QCOMPARE(spy.count(), 1);
        QCOMPARE(tl->highlight().eventCount(), size_t(3));
        QCOMPARE(tl->highlight().spanCount(), size_t(0));
        for (LaneId lane = 0; lane < tl->highlight().events.size(); ++lane)
            if (!tl->highlight().events[lane].empty()) // every lit kernel is on rank 1
                QCOMPARE(m_ws->document()->trace->lane(lane).info.rank, 1u);
        // The view moved onto them: the third kernel of step 2 is inside it.
        const TimeNs third = m_panel->model()->data(m_panel->model()->index(2, 2), Qt::UserRole).toLongLong();
        QVERIFY(tl->view().mapping.firstVisible() <= third && third <= tl->view().mapping.lastVisible());
        // A step (rank and step, no start) is its window: a span on that rank.
        QVERIFY(run("select rank, step from steps where rank = 0 and step = 3"));
        m_panel->lightUp({ 0 });
        QCOMPARE(tl->highlight().eventCount(), size_t(0));
        QCOMPARE(tl->highlight().spanCount(), size_t(1));
        QCOMPARE(tl->highlight().spans[0][0].start, m_ws->document()->trace->steps(0)[3].start);
        // A click on a row lights it up too.
        QVERIFY(run("select rank, start, dur from gaps where rank = 1 order by dur desc limit 2"));
        QVERIFY(m_panel->model()->rowCount() > 0);
        const QTableView* table = m_panel->table();
        QTest::mouseClick(
            table->viewport(), Qt::LeftButton, {}, table->visualRect(m_panel->model()->index(0, 0)).center());
        QCOMPARE(spy.count(), 3);
        QVERIFY(!tl->highlight().empty());
    }

private:
    bool run(const QString& sql)
    {
        QSignalSpy done(m_panel, &QueryPanel::finished);
        m_panel->setSql(sql);
        m_panel->run();
        return done.wait(20'000);
    }
    std::unique_ptr<Workspace> m_ws;
    QueryPanel* m_panel = nullptr;
};

QTEST_MAIN(TstQueryPanel)
#include "tst_querypanel.moc"
