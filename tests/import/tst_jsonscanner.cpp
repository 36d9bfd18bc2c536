// SPDX-License-Identifier: MIT
// JsonScanner: where a value ends (complete, needs more bytes, invalid) fed whole and byte by byte,
// and the UTF-8 repair used on bad strings.
#include "model/import/jsonscanner.h"

#include <QTest>

using namespace gapscope::model::importer;
using State = JsonScanner::State;
Q_DECLARE_METATYPE(State)

class TstJsonScanner : public QObject {
    Q_OBJECT
private slots:
    void valueEnd_data();
    void valueEnd();
    void repairUtf8_data();
    void repairUtf8();
    void repairSurrogates_data();
    void repairSurrogates();
};

void TstJsonScanner::valueEnd_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<bool>("atEnd");
    QTest::addColumn<State>("state");
    QTest::addColumn<int>("used");
    QTest::newRow("object") << QByteArray("{\"a\": [1, {\"b\": \"}\"}]} tail") << false << State::Complete << 22;
    QTest::newRow("string with escapes") << QByteArray("\"a\\\"b\\\\\" ,") << false << State::Complete << 8;
    QTest::newRow("number then comma") << QByteArray("  12.5e3, 7") << false << State::Complete << 8;
    QTest::newRow("number at the end") << QByteArray("12") << false << State::NeedMore << 2;
    QTest::newRow("number at stream end") << QByteArray("12") << true << State::Complete << 2;
    QTest::newRow("open object") << QByteArray("{\"a\": [1, 2") << false << State::NeedMore << 11;
    QTest::newRow("open string") << QByteArray("{\"a\": \"xy") << false << State::NeedMore << 9;
    QTest::newRow("mismatch") << QByteArray("{\"a\": [1}") << false << State::Invalid << 8;
    QTest::newRow("stray close") << QByteArray(" ]") << false << State::Invalid << 1;
    QTest::newRow("blank only") << QByteArray("   ") << false << State::NeedMore << 3;
}

void TstJsonScanner::valueEnd()
{
    QFETCH(QByteArray, input);
    QFETCH(bool, atEnd);
    QFETCH(State, state);
    QFETCH(int, used);
    JsonScanner whole;
    size_t n = 0;
    QCOMPARE(whole.feed(input.constData(), size_t(input.size()), n, atEnd), state);
    QCOMPARE(int(n), used);
    if (state == State::Invalid)
        QVERIFY(whole.error() != nullptr);
    // Fed one byte at a time, the scanner reaches the same verdict at the same byte.
    JsonScanner bytewise;
    State s = State::NeedMore;
    int consumed = 0;
    for (int i = 0; i < input.size() && s == State::NeedMore; ++i) {
        size_t u = 0;
        s = bytewise.feed(input.constData() + i, 1, u, atEnd && i + 1 == input.size());
        consumed = i + int(u);
    }
    if (state != State::NeedMore || atEnd) {
        QCOMPARE(s, state);
        QCOMPARE(consumed, used);
    }
}

void TstJsonScanner::repairUtf8_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QByteArray>("output");
    QTest::addColumn<int>("replaced");
    QTest::addColumn<bool>("cutTail");
    QTest::newRow("ascii") << QByteArray("abc") << QByteArray("abc") << 0 << false;
    QTest::newRow("valid multibyte") << QByteArray("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80")
                                     << QByteArray("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80") << 0 << false;
    QTest::newRow("stray bytes") << QByteArray("a\xff\xfe"
                                               "b")
                                 << QByteArray("a??b") << 2 << false;
    QTest::newRow("overlong") << QByteArray("\xc0\xaf") << QByteArray("??") << 2 << false;
    QTest::newRow("surrogate") << QByteArray("\xed\xa0\x80") << QByteArray("???") << 3 << false;
    QTest::newRow("cut at the end") << QByteArray("ab\xe2\x82") << QByteArray("ab\xe2\x82") << 0 << true;
}

void TstJsonScanner::repairUtf8()
{
    QFETCH(QByteArray, input);
    QFETCH(QByteArray, output);
    QFETCH(int, replaced);
    QFETCH(bool, cutTail);
    QByteArray data = input;
    bool tail = false;
    QCOMPARE(int(JsonScanner::repairUtf8(data.data(), size_t(data.size()), tail)), replaced);
    QCOMPARE(data, output);
    QCOMPARE(tail, cutTail);
}

void TstJsonScanner::repairSurrogates_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QByteArray>("output");
    QTest::addColumn<int>("replaced");
    QTest::newRow("no escapes") << QByteArray(R"({"a":"b"})") << QByteArray(R"({"a":"b"})") << 0;
    QTest::newRow("lone high") << QByteArray(R"({"a":"x\ud800y"})") << QByteArray(R"({"a":"x\ufffdy"})") << 1;
    QTest::newRow("lone low") << QByteArray(R"({"a":"\uDC01"})") << QByteArray(R"({"a":"\ufffd"})") << 1;
    QTest::newRow("pair kept") << QByteArray(R"({"a":"\ud83d\ude00"})") << QByteArray(R"({"a":"\ud83d\ude00"})") << 0;
    QTest::newRow("high then high") << QByteArray(R"(["\ud800\ud83d\ude00"])")
                                    << QByteArray(R"(["\ufffd\ud83d\ude00"])") << 1;
    QTest::newRow("escaped backslash") << QByteArray(R"(["\\ud800"])") << QByteArray(R"(["\\ud800"])") << 0;
    QTest::newRow("other escapes") << QByteArray(R"(["\n\u00e9\""])") << QByteArray(R"(["\n\u00e9\""])") << 0;
    QTest::newRow("partner past the end") << QByteArray(R"(["\ud800\ud)") << QByteArray(R"(["\ud800\ud)") << 0;
}

void TstJsonScanner::repairSurrogates()
{
    QFETCH(QByteArray, input);
    QFETCH(QByteArray, output);
    QFETCH(int, replaced);
    QByteArray data = input;
    QCOMPARE(int(JsonScanner::repairSurrogates(data.data(), size_t(data.size()))), replaced);
    QCOMPARE(data, output);
}

QTEST_GUILESS_MAIN(TstJsonScanner)
#include "tst_jsonscanner.moc"
