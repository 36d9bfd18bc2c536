// SPDX-License-Identifier: MIT
// Exact microsecond -> nanosecond parsing of Kineto timestamps, and integer parsing.
#include "model/import/decimal.h"

#include <QTest>

using namespace gapscope::model::importer;

class TstDecimal : public QObject {
    Q_OBJECT
private slots:
    void micros_data();
    void micros();
    void integers_data();
    void integers();
};

void TstDecimal::micros_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<qint64>("ns");
    QTest::newRow("epoch us, 3 decimals") << QByteArray("1733301620213914.250") << true << qint64(1733301620213914250LL);
    QTest::newRow("relative") << QByteArray("5154603958091.180  ") << true << qint64(5154603958091180LL);
    QTest::newRow("integer") << QByteArray("42") << true << qint64(42000);
    QTest::newRow("one decimal") << QByteArray("0.5") << true << qint64(500);
    QTest::newRow("rounds up") << QByteArray("1.0005") << true << qint64(1001);
    QTest::newRow("rounds down") << QByteArray("1.0004999") << true << qint64(1000);
    QTest::newRow("negative") << QByteArray("-2.5") << true << qint64(-2500);
    QTest::newRow("exponent") << QByteArray("1.5e3") << true << qint64(1500000);
    QTest::newRow("empty") << QByteArray("") << false << qint64(0);
    QTest::newRow("text") << QByteArray("abc") << false << qint64(0);
    QTest::newRow("dot only") << QByteArray("1.") << false << qint64(0);
    QTest::newRow("too large") << QByteArray("1e300") << false << qint64(0);
}

void TstDecimal::micros()
{
    QFETCH(QByteArray, text);
    QFETCH(bool, ok);
    QFETCH(qint64, ns);
    int64_t got = 0;
    QCOMPARE(parseMicrosToNanos(std::string_view(text.constData(), size_t(text.size())), got), ok);
    if (ok)
        QCOMPARE(qint64(got), ns);
}

void TstDecimal::integers_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<qint64>("value");
    QTest::newRow("plain") << QByteArray("150109880320") << true << qint64(150109880320LL);
    QTest::newRow("19 digits") << QByteArray("1790857026000000000") << true << qint64(1790857026000000000LL);
    QTest::newRow("negative") << QByteArray("-1") << true << qint64(-1);
    QTest::newRow("fraction truncated") << QByteArray("7.9") << true << qint64(7);
    QTest::newRow("quoted") << QByteArray("\"7\"") << false << qint64(0);
    QTest::newRow("minus only") << QByteArray("-") << false << qint64(0);
}

void TstDecimal::integers()
{
    QFETCH(QByteArray, text);
    QFETCH(bool, ok);
    QFETCH(qint64, value);
    int64_t got = 0;
    QCOMPARE(parseInteger(std::string_view(text.constData(), size_t(text.size())), got), ok);
    if (ok)
        QCOMPARE(qint64(got), value);
}

QTEST_GUILESS_MAIN(TstDecimal)
#include "tst_decimal.moc"
