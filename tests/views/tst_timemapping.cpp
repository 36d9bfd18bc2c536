// SPDX-License-Identifier: MIT
// TimeMapping: time <-> pixel conversions, zoom around a point, pan, fit and clamping.
#include "views/timeline/timemapping.h"

#include <QTest>

using gapscope::model::TimeNs;
Q_DECLARE_METATYPE(TimeMapping)

class TstTimeMapping : public QObject {
    Q_OBJECT
private slots:
    void toX_data();
    void toX();
    void roundTripAtRealtimeEpoch();
    void zoomKeepsAnchor_data();
    void zoomKeepsAnchor();
    void pan();
    void fit_data();
    void fit();
    void clamp_data();
    void clamp();
    void resizedKeepsWindow();
};

static TimeMapping mapping(TimeNs origin, double offset, double nsPerPixel, int width)
{
    TimeMapping m;
    m.origin = origin;
    m.offset = offset;
    m.nsPerPixel = nsPerPixel;
    m.width = width;
    return m;
}

void TstTimeMapping::toX_data()
{
    QTest::addColumn<TimeMapping>("m");
    QTest::addColumn<qint64>("t");
    QTest::addColumn<double>("x");
    QTest::newRow("origin") << mapping(1000, 0, 10, 100) << qint64(1000) << 0.0;
    QTest::newRow("one pixel") << mapping(1000, 0, 10, 100) << qint64(1010) << 1.0;
    QTest::newRow("offset") << mapping(1000, 500, 10, 100) << qint64(1500) << 0.0;
    QTest::newRow("before origin") << mapping(1000, 0, 10, 100) << qint64(900) << -10.0;
    QTest::newRow("sub-ns pixels") << mapping(0, 0, 0.5, 100) << qint64(3) << 6.0;
    QTest::newRow("1 us per px") << mapping(0, 2e6, 1000, 1920) << qint64(2'000'000 + 960'000) << 960.0;
}

void TstTimeMapping::toX()
{
    QFETCH(TimeMapping, m);
    QFETCH(qint64, t);
    QFETCH(double, x);
    QCOMPARE(m.toX(t), x);
    QCOMPARE(m.toTime(x), t);
}

void TstTimeMapping::roundTripAtRealtimeEpoch()
{
    // CLOCK_REALTIME ns (~1.8e18) do not fit a double exactly; the origin keeps them exact.
    const TimeNs origin = 1'795'000'000'123'456'789LL;
    TimeMapping m = mapping(origin, 0, 1, 1920);
    for (TimeNs d : { 0LL, 1LL, 7LL, 1919LL }) {
        QCOMPARE(m.toX(origin + d), double(d));
        QCOMPARE(m.toTime(double(d)), origin + d);
    }
    QCOMPARE(m.firstVisible(), origin);
    QCOMPARE(m.lastVisible(), origin + 1920);
}

void TstTimeMapping::zoomKeepsAnchor_data()
{
    QTest::addColumn<double>("x");
    QTest::addColumn<double>("factor");
    QTest::newRow("in at left") << 0.0 << 2.0;
    QTest::newRow("in at middle") << 500.0 << 1.25;
    QTest::newRow("out at right") << 999.0 << 0.5;
    QTest::newRow("deep in") << 123.0 << 1000.0;
}

void TstTimeMapping::zoomKeepsAnchor()
{
    QFETCH(double, x);
    QFETCH(double, factor);
    TimeMapping m = mapping(5'000'000, 12345, 100, 1000);
    const TimeNs before = m.toTime(x);
    const double nsPerPixel = m.nsPerPixel;
    m.zoomAround(x, factor);
    QCOMPARE(m.nsPerPixel, nsPerPixel / factor);
    QVERIFY(std::abs(m.toX(before) - x) < 0.02);
}

void TstTimeMapping::pan()
{
    TimeMapping m = mapping(0, 10'000, 10, 100);
    m.panPixels(5); // content moves right: earlier times come into view
    QCOMPARE(m.firstVisible(), TimeNs(9'950));
    m.panPixels(-10);
    QCOMPARE(m.firstVisible(), TimeNs(10'050));
}

void TstTimeMapping::fit_data()
{
    QTest::addColumn<qint64>("t0");
    QTest::addColumn<qint64>("t1");
    QTest::addColumn<double>("margin");
    QTest::addColumn<double>("nsPerPixel");
    QTest::addColumn<double>("x0");
    QTest::newRow("exact") << qint64(1000) << qint64(11000) << 0.0 << 10.0 << 0.0;
    QTest::newRow("10% margin") << qint64(0) << qint64(8000) << 0.1 << 10.0 << 100.0;
    QTest::newRow("empty range") << qint64(500) << qint64(500) << 0.0 << 0.01 << 0.0;
}

void TstTimeMapping::fit()
{
    QFETCH(qint64, t0);
    QFETCH(qint64, t1);
    QFETCH(double, margin);
    QFETCH(double, nsPerPixel);
    QFETCH(double, x0);
    TimeMapping m = mapping(0, 0, 1, 1000);
    m.fit(t0, t1, margin);
    QCOMPARE(m.nsPerPixel, nsPerPixel);
    QVERIFY(std::abs(m.toX(t0) - x0) < 1e-6);
}

void TstTimeMapping::clamp_data()
{
    QTest::addColumn<TimeMapping>("m");
    QTest::addColumn<double>("maxNsPerPixel");
    QTest::addColumn<qint64>("firstVisibleMin");
    QTest::addColumn<qint64>("firstVisibleMax");
    // Data [0, 100000), width 100: zoomed out at most to 1100 ns/px.
    QTest::newRow("too far out") << mapping(0, 0, 1e6, 100) << 1100.0 << qint64(-100000) << qint64(100000);
    QTest::newRow("scrolled past the end") << mapping(0, 1e9, 10, 100) << 10.0 << qint64(0) << qint64(99900);
    QTest::newRow("scrolled before the start") << mapping(0, -1e9, 10, 100) << 10.0 << qint64(-900) << qint64(0);
}

void TstTimeMapping::clamp()
{
    QFETCH(TimeMapping, m);
    QFETCH(double, maxNsPerPixel);
    QFETCH(qint64, firstVisibleMin);
    QFETCH(qint64, firstVisibleMax);
    m.clampTo(0, 100000);
    QVERIFY2(m.nsPerPixel <= maxNsPerPixel + 1e-9, qPrintable(QString::number(m.nsPerPixel)));
    QVERIFY2(m.firstVisible() >= firstVisibleMin && m.firstVisible() <= firstVisibleMax,
        qPrintable(QString::number(m.firstVisible())));
    // Some of the data stays on screen.
    QVERIFY(m.lastVisible() > 0 && m.firstVisible() < 100000);
}

void TstTimeMapping::resizedKeepsWindow()
{
    const TimeMapping m = mapping(100, 50, 10, 1000);
    const TimeMapping r = m.resized(500);
    QCOMPARE(r.width, 500);
    QCOMPARE(r.firstVisible(), m.firstVisible());
    QCOMPARE(r.lastVisible(), m.lastVisible());
}

QTEST_APPLESS_MAIN(TstTimeMapping)
#include "tst_timemapping.moc"
