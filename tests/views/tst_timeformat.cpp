// SPDX-License-Identifier: MIT
// Duration formatting and ruler ticks.
#include "views/common/timeformat.h"

#include <QTest>

class TstTimeFormat : public QObject {
    Q_OBJECT
private slots:
    void duration_data();
    void duration();
    void tickStep_data();
    void tickStep();
    void ticksAreRound();
    void offsetLabels_data();
    void offsetLabels();
};

void TstTimeFormat::duration_data()
{
    QTest::addColumn<double>("ns");
    QTest::addColumn<QString>("text");
    QTest::newRow("ns") << 850.0 << "850 ns";
    QTest::newRow("us") << 12'400.0 << "12.4 us";
    QTest::newRow("ms") << 3'210'000.0 << "3.21 ms";
    QTest::newRow("hundreds of ms") << 96'500'000.0 << "96.5 ms";
    QTest::newRow("s") << 1'500'000'000.0 << "1.50 s";
    QTest::newRow("negative") << -2'500.0 << "-2.50 us";
}

void TstTimeFormat::duration()
{
    QFETCH(double, ns);
    QFETCH(QString, text);
    QCOMPARE(timeformat::duration(ns), text);
}

void TstTimeFormat::tickStep_data()
{
    QTest::addColumn<double>("nsPerPixel");
    QTest::addColumn<double>("minPixels");
    QTest::addColumn<qint64>("step");
    QTest::newRow("1 ns/px") << 1.0 << 100.0 << qint64(100);
    QTest::newRow("1 us/px") << 1000.0 << 100.0 << qint64(100'000);
    QTest::newRow("round up to 2") << 1.3 << 100.0 << qint64(200);
    QTest::newRow("round up to 5") << 3.0 << 100.0 << qint64(500);
    QTest::newRow("sub-ns") << 0.01 << 100.0 << qint64(1);
}

void TstTimeFormat::tickStep()
{
    QFETCH(double, nsPerPixel);
    QFETCH(double, minPixels);
    QFETCH(qint64, step);
    QCOMPARE(timeformat::tickStep(nsPerPixel, minPixels), step);
}

void TstTimeFormat::ticksAreRound()
{
    std::vector<timeformat::Tick> ticks;
    int64_t step = 0;
    // origin 1e9, view starts 12345 ns after it, 10 ns/px, 1000 px.
    timeformat::ticks(1'000'000'000, 12345, 10, 1000, 100, ticks, &step);
    QCOMPARE(step, int64_t(1000));
    QVERIFY(!ticks.empty());
    int majors = 0;
    for (const auto& t : ticks) {
        QVERIFY(t.x >= 0 && t.x <= 1000);
        QCOMPARE(std::abs(t.x - double(t.time - 1'000'000'000 - 12345) / 10) < 1e-9, true);
        if (t.major) {
            ++majors;
            QCOMPARE((t.time - 1'000'000'000) % 1000, 0);
        }
    }
    QCOMPARE(majors, 10); // 13000 .. 22000
}

void TstTimeFormat::offsetLabels_data()
{
    QTest::addColumn<qint64>("ns");
    QTest::addColumn<qint64>("step");
    QTest::addColumn<QString>("text");
    QTest::newRow("ms ticks") << qint64(12'000'000) << qint64(1'000'000) << "12 ms";
    QTest::newRow("100 us ticks") << qint64(12'300'000) << qint64(100'000) << "12.3 ms";
    QTest::newRow("ns ticks") << qint64(1'500) << qint64(100) << "1.5 us";
    QTest::newRow("s ticks") << qint64(2'000'000'000) << qint64(1'000'000'000) << "2 s";
}

void TstTimeFormat::offsetLabels()
{
    QFETCH(qint64, ns);
    QFETCH(qint64, step);
    QFETCH(QString, text);
    QCOMPARE(timeformat::offset(ns, step), text);
}

QTEST_APPLESS_MAIN(TstTimeFormat)
#include "tst_timeformat.moc"
