// SPDX-License-Identifier: MIT
// ClockSync: NTP-style offset from ping/pong; the least-delayed exchange wins and bounds the error.
#include "capture/client/clocksync.h"

#include <QtTest>

using gapscope::capture::ClockSync;

class TestClockSync : public QObject {
    Q_OBJECT
private slots:
    void estimates_data()
    {
        QTest::addColumn<qlonglong>("offset"); // true peer - local
        QTest::addColumn<qlonglong>("up"); // one-way delays
        QTest::addColumn<qlonglong>("down");
        QTest::addColumn<qlonglong>("expected");
        QTest::addColumn<qlonglong>("maxError");
        QTest::newRow("symmetric") << 5000000LL << 40000LL << 40000LL << 5000000LL << 40000LL;
        QTest::newRow("negative offset") << -12345678LL << 100000LL << 100000LL << -12345678LL << 100000LL;
        QTest::newRow("asymmetric: bounded") << 1000LL << 90000LL << 10000LL << 41000LL << 50000LL;
    }
    void estimates()
    {
        QFETCH(qlonglong, offset);
        QFETCH(qlonglong, up);
        QFETCH(qlonglong, down);
        QFETCH(qlonglong, expected);
        QFETCH(qlonglong, maxError);
        ClockSync c;
        const int64_t t1 = 1'000'000'000;
        const int64_t t2 = t1 + up + offset, t3 = t2 + 5000, t4 = t3 - offset + down;
        QVERIFY(c.add(t1, t2, t3, t4));
        QCOMPARE(c.offsetNs(), int64_t(expected));
        QCOMPARE(c.errorNs(), double(maxError));
        QVERIFY(std::llabs(c.offsetNs() - offset) <= c.errorNs());
    }
    void keepsLeastDelayedSample()
    {
        ClockSync c;
        const int64_t off = 777;
        QVERIFY(c.add(0, 500000 + off, 500000 + off, 1000000)); // slow exchange, biased
        QVERIFY(c.add(2000000, 2010000 + off, 2010000 + off, 2020000)); // fast one
        QVERIFY(c.add(3000000, 3900000 + off, 3900000 + off, 3950000)); // slow and skewed
        QCOMPARE(c.samples(), size_t(3));
        QCOMPARE(c.offsetNs(), off);
        QCOMPARE(c.delayNs(), int64_t(20000));
        QVERIFY(!c.add(10, 5, 4, 9)); // impossible timestamps are refused
    }
};

QTEST_GUILESS_MAIN(TestClockSync)
#include "tst_clocksync.moc"
