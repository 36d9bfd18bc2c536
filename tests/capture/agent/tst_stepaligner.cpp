// SPDX-License-Identifier: MIT
// StepAligner: ranks whose local step counters differ still start on the same step.
#include "capture/agent/stepaligner.h"

#include <QtTest>

using gapscope::capture::StepAligner;

class TestStepAligner : public QObject {
    Q_OBJECT
private slots:
    void aligns_data()
    {
        QTest::addColumn<qlonglong>("firstB"); // rank B's local index of the reference's step 0
        QTest::addColumn<qlonglong>("jitterNs"); // B's boundaries are this much later
        QTest::addColumn<qlonglong>("periodNs");
        QTest::addColumn<qlonglong>("leadNs");
        QTest::addColumn<int>("leadSteps");
        QTest::newRow("same counters") << 0LL << 20000LL << 5000000LL << 100000000LL << 20;
        QTest::newRow("B ahead by 1000") << 1000LL << 20000LL << 5000000LL << 100000000LL << 20;
        QTest::newRow("B behind, early") << -3LL << -1500000LL << 5000000LL << 100000000LL << 20;
        QTest::newRow("slow steps: min lead") << 7LL << 100000LL << 97000000LL << 100000000LL << 2;
    }
    void aligns()
    {
        QFETCH(qlonglong, firstB);
        QFETCH(qlonglong, jitterNs);
        QFETCH(qlonglong, periodNs);
        QFETCH(qlonglong, leadNs);
        QFETCH(int, leadSteps);
        StepAligner a(2);
        const int64_t t0 = 1'700'000'000'000'000'000LL;
        for (int i = 10; i < 16; ++i)
            a.add(0, uint64_t(i), t0 + i * periodNs);
        for (int i = 11; i < 17; ++i) // B started reporting a step later and runs one step ahead
            a.add(1, uint64_t(i + 10 + firstB), t0 + i * periodNs + jitterNs);
        const char* why = nullptr;
        auto p = a.plan(leadNs, 2, 3, {}, &why);
        QVERIFY2(p.has_value(), why);
        QCOMPARE(p->periodNs, int64_t(periodNs));
        QCOMPARE(p->offset[1], -(10 + firstB));
        QCOMPARE(int(p->leadSteps), leadSteps);
        QCOMPARE(p->globalStart, uint64_t(16 + leadSteps));
        QCOMPARE(p->startLocal[0], p->globalStart);
        QCOMPARE(int64_t(p->startLocal[1]), int64_t(p->globalStart) + 10 + firstB);
        QCOMPARE(p->maxSkewNs, std::llabs(jitterNs));
    }

    void waitsForBoundaries()
    {
        StepAligner a(2);
        a.add(0, 1, 1000);
        a.add(0, 2, 2000);
        a.add(0, 3, 3000);
        const char* why = nullptr;
        QVERIFY(!a.plan(0, 2, 3, {}, &why).has_value());
        QVERIFY(QString(why).contains("waiting"));
        // An inactive (failed) rank does not hold the plan back.
        auto p = a.plan(0, 2, 3, { true, false }, &why);
        QVERIFY(p.has_value());
        QCOMPARE(p->globalStart, uint64_t(5));
        QCOMPARE(p->startLocal[1], uint64_t(0));
    }

    void refusesUnmatchedSteps()
    {
        // B's boundaries fall half a period away from A's: no safe match.
        StepAligner a(2);
        for (int i = 0; i < 5; ++i) {
            a.add(0, uint64_t(i), i * 1000000);
            a.add(1, uint64_t(i), i * 1000000 + 500000);
        }
        const char* why = nullptr;
        QVERIFY(!a.plan(0, 2, 3, {}, &why).has_value());
        QVERIFY(QString(why).contains("do not line up"));
    }

    void ignoresRepeatsAndReportsStale()
    {
        StepAligner a(1);
        a.add(0, 5, 100);
        a.add(0, 5, 200);
        a.add(0, 4, 300);
        QCOMPARE(a.boundaries(0), size_t(1));
        a.add(0, 7, 2100); // two steps later: the period counts per step
        QCOMPARE(a.medianPeriodNs(0), int64_t(1000));
        QCOMPARE(a.stale(10000, 5000).size(), size_t(1));
        QCOMPARE(a.stale(3000, 5000).size(), size_t(0));
    }
};

QTEST_GUILESS_MAIN(TestStepAligner)
#include "tst_stepaligner.moc"
