// SPDX-License-Identifier: MIT
// TimelineFrame: cull + fold of the visible rows and time window (phase one of painting).
#include "views/timeline/timelineframe.h"

#include "testtrace.h"

#include <QTest>

using namespace gapscope::model;

class TstTimelineFrame : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void fold_data();
    void fold();
    void verticalCulling();
    void buffersAreReused();

private:
    Trace m_trace;
    LaneLayout m_layout;
};

void TstTimelineFrame::initTestCase()
{
    m_trace = testtrace::make();
    m_layout.build(m_trace, LaneLayoutOptions {});
}

void TstTimelineFrame::fold_data()
{
    // The trace: 4 steps of 120 us; each holds 8 kernels of 10 us, 2 us apart, then 24 us idle.
    QTest::addColumn<double>("nsPerPixel");
    QTest::addColumn<double>("offsetUs"); // view start after kT0
    QTest::addColumn<int>("width");
    QTest::addColumn<int>("items");
    QTest::addColumn<int>("firstCount");
    QTest::newRow("every kernel apart (0.1 us/px)") << 100.0 << 0.0 << 4800 << 32 << 1;
    QTest::newRow("one step per item (10 us/px)") << 10'000.0 << 0.0 << 48 << 4 << 8;
    QTest::newRow("everything in one (50 us/px)") << 50'000.0 << 0.0 << 10 << 1 << 32;
    QTest::newRow("window on step 1 only") << 100.0 << 120.0 << 1000 << 8 << 1;
    QTest::newRow("window in an idle stretch") << 10.0 << 97.0 << 2000 << 0 << 0;
    QTest::newRow("1 us/px: kernels 10 px wide") << 1000.0 << 0.0 << 480 << 32 << 1;
}

void TstTimelineFrame::fold()
{
    QFETCH(double, nsPerPixel);
    QFETCH(double, offsetUs);
    QFETCH(int, width);
    QFETCH(int, items);
    QFETCH(int, firstCount);
    TimeMapping m;
    m.origin = testtrace::kT0;
    m.offset = offsetUs * 1000;
    m.nsPerPixel = nsPerPixel;
    m.width = width;
    TimelineFrame f;
    f.build(m_trace, m_layout, m, 0, m_layout.totalHeight(), 2.0);
    const int row = m_layout.rowOfLane(*m_trace.findLane(m_trace.lane(0).info.key()));
    const int k = f.frameRowOf(row);
    QVERIFY(k >= 0);
    const auto& it = f.items(size_t(k));
    QCOMPARE(int(it.size()), items);
    if (items == 0)
        return;
    QCOMPARE(int(it[0].count), firstCount);
    uint64_t total = 0;
    for (size_t i = 0; i < it.size(); ++i) {
        total += it[i].count;
        if (i > 0)
            QVERIFY(it[i].start >= it[i - 1].end); // sorted, disjoint on a single stream
        QVERIFY(it[i].end > m.firstVisible() && it[i].start < m.lastVisible());
        QVERIFY(it[i].busy <= it[i].end - it[i].start);
    }
    // Folding never loses events: the counts add up to the events in view.
    const auto [a, b] = m_trace.lane(0).events.overlapping(m.firstVisible(), m.lastVisible());
    QCOMPARE(total, uint64_t(b - a));
    // A single event maps to exactly its kernel.
    if (it[0].count == 1) {
        const TimeNs s = m_trace.lane(0).events.start(it[0].first);
        QCOMPARE(it[0].start, s);
        QCOMPARE(it[0].end - it[0].start, TimeNs(10'000));
    }
}

void TstTimelineFrame::verticalCulling()
{
    TimeMapping m;
    m.origin = testtrace::kT0;
    m.nsPerPixel = 1000;
    m.width = 500;
    const int rank1 = m_layout.rowOfRank(1);
    QVERIFY(rank1 > 0);
    TimelineFrame f;
    f.build(m_trace, m_layout, m, m_layout.rows()[size_t(rank1)].y, m_layout.totalHeight(), 2.0);
    QVERIFY(f.rowCount() > 0);
    for (size_t k = 0; k < f.rowCount(); ++k)
        QCOMPARE(m_trace.lane(f.row(k).lane).info.rank, 1u);
    QCOMPARE(f.frameRowOf(m_layout.rowOfLane(0)), -1); // rank 0's stream is culled
}

void TstTimelineFrame::buffersAreReused()
{
    TimeMapping m;
    m.origin = testtrace::kT0;
    m.nsPerPixel = 100;
    m.width = 4800;
    TimelineFrame f;
    f.build(m_trace, m_layout, m, 0, m_layout.totalHeight());
    const auto* data = f.items(0).data();
    m.panPixels(-10);
    f.build(m_trace, m_layout, m, 0, m_layout.totalHeight());
    QCOMPARE(f.items(0).data(), data); // same storage: nothing reallocated for the next frame
}

QTEST_APPLESS_MAIN(TstTimelineFrame)
#include "tst_timelineframe.moc"
