// SPDX-License-Identifier: MIT
// CollectiveMatcher: wait/wire split, lateness threshold, unmatched surplus, missing steps.
#include "model/analysis/collectivematcher.h"

#include <QTest>

using namespace gapscope::model;
using Occ = CollectiveMatcher::Occurrence;

class TstCollectiveMatcher : public QObject {
    Q_OBJECT
private slots:
    void waitIsTimeUntilTheLastArrives();
    void latenessThreshold_data();
    void latenessThreshold();
    void unmatchedSurplus();
    void stepMissingOnOneRank();
    void statsByStepRange();
};

void TstCollectiveMatcher::waitIsTimeUntilTheLastArrives()
{
    CollectiveMatcher m(3);
    // One collective; rank 2 starts 30 us after rank 0 and 20 us after rank 1.
    m.add(0, 7, { Occ { 1000, 50000, 1 } });
    m.add(1, 7, { Occ { 11000, 40000, 1 } });
    m.add(2, 7, { Occ { 31000, 20000, 1 } });
    m.match();
    QCOMPARE(m.occurrences(0, 7)[0].wait, TimeNs(30000));
    QCOMPARE(m.occurrences(1, 7)[0].wait, TimeNs(20000));
    QCOMPARE(m.occurrences(2, 7)[0].wait, TimeNs(0));
    // lateness = 31000 - mean(1000, 11000) = 25000
    const auto& late = m.late(7);
    QCOMPARE(int(late.size()), 1);
    QCOMPARE(late[0].rankSlot, 2u);
    QCOMPARE(late[0].lateness, TimeNs(25000));
    // A wait never exceeds the kernel: a 5 us kernel that started 30 us early waits 5 us.
    CollectiveMatcher m2(2);
    m2.add(0, 0, { Occ { 0, 5000, 1 } });
    m2.add(1, 0, { Occ { 30000, 5000, 1 } });
    m2.match();
    QCOMPARE(m2.occurrences(0, 0)[0].wait, TimeNs(5000));
}

void TstCollectiveMatcher::latenessThreshold_data()
{
    QTest::addColumn<TimeNs>("delay");
    QTest::addColumn<TimeNs>("duration");
    QTest::addColumn<bool>("late");
    QTest::newRow("below 1 us") << TimeNs(900) << TimeNs(10000) << false;
    QTest::newRow("above 1 us") << TimeNs(1100) << TimeNs(10000) << true;
    QTest::newRow("below 5% of a long kernel") << TimeNs(4000) << TimeNs(100000) << false;
    QTest::newRow("above 5% of a long kernel") << TimeNs(6000) << TimeNs(100000) << true;
}

void TstCollectiveMatcher::latenessThreshold()
{
    QFETCH(TimeNs, delay);
    QFETCH(TimeNs, duration);
    QFETCH(bool, late);
    CollectiveMatcher m(2);
    m.add(0, 0, { Occ { 0, duration, 1 } });
    m.add(1, 0, { Occ { delay, duration, 1 } });
    m.match();
    QCOMPARE(!m.late(0).empty(), late);
    auto st = m.stats(0, 0);
    QCOMPARE(st[1].lateCount, uint64_t(late ? 1 : 0));
    QCOMPARE(st[0].lateCount, uint64_t(0));
    QCOMPARE(st[0].matched, uint64_t(1));
}

void TstCollectiveMatcher::unmatchedSurplus()
{
    CollectiveMatcher m(2);
    m.add(0, 3, { Occ { 0, 100, 1 }, Occ { 1000, 100, 1 }, Occ { 2000, 100, 1 } });
    m.add(1, 3, { Occ { 50, 100, 1 }, Occ { 1040, 100, 1 } });
    m.match();
    QCOMPARE(m.occurrences(0, 3)[0].wait, TimeNs(50));
    QCOMPARE(m.occurrences(0, 3)[1].wait, TimeNs(40));
    QCOMPARE(m.occurrences(0, 3)[2].wait, TimeNs(0)); // no counterpart: nothing to wait for
    auto st = m.stats(0, 10);
    QCOMPARE(st[0].unmatched, uint64_t(1));
    QCOMPARE(st[1].unmatched, uint64_t(0));
    QCOMPARE(st[0].matched, uint64_t(2));
}

void TstCollectiveMatcher::stepMissingOnOneRank()
{
    CollectiveMatcher m(2);
    m.add(0, 1, { Occ { 0, 100, 1 } });
    m.add(0, 2, { Occ { 500, 100, 1 } });
    m.add(1, 2, { Occ { 520, 100, 1 } });
    m.match();
    QCOMPARE(m.occurrences(0, 1)[0].wait, TimeNs(0));
    QCOMPARE(m.occurrences(0, 2)[0].wait, TimeNs(20));
    QVERIFY(m.occurrences(1, 1).empty());
}

void TstCollectiveMatcher::statsByStepRange()
{
    CollectiveMatcher m(2);
    for (uint32_t s = 0; s < 10; ++s) {
        TimeNs base = TimeNs(s) * 1000000;
        m.add(0, s, { Occ { base, 10000, 1 } });
        m.add(1, s, { Occ { base + (s % 2 ? 8000 : 0), 10000, 1 } }); // late in odd steps
    }
    m.match();
    auto all = m.stats(0, 9);
    QCOMPARE(all[1].lateCount, uint64_t(5));
    QCOMPARE(all[1].lateSum, TimeNs(40000));
    QCOMPARE(all[1].lateMax, TimeNs(8000));
    QCOMPARE(all[1].matched, uint64_t(10));
    auto some = m.stats(2, 5);
    QCOMPARE(some[1].lateCount, uint64_t(2));
}

QTEST_APPLESS_MAIN(TstCollectiveMatcher)
#include "tst_collectivematcher.moc"
