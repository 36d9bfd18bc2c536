// SPDX-License-Identifier: MIT
// OwnTime: the one-stream rule on hand-worked streams (events as start,end pairs in stream order and
// the own time each must get), and the seed of an earlier event still running.
#include "model/trace/owntime.h"

#include <QTest>

using namespace gapscope::model;
using Events = QList<QPair<qint64, qint64>>;
using Owns = QList<qint64>;

class TstOwnTime : public QObject {
    Q_OBJECT
private slots:
    void stream_data();
    void stream();
    void seed();
};

void TstOwnTime::stream_data()
{
    QTest::addColumn<Events>("events");
    QTest::addColumn<Owns>("owns");
    QTest::newRow("back to back") << Events { { 0, 10 }, { 10, 30 }, { 40, 45 } } << Owns { 10, 20, 5 };
    // A kernel launched early (PDL) starts at 5 while the first runs to 10: it counts from 10.
    QTest::newRow("early launch") << Events { { 0, 10 }, { 5, 25 } } << Owns { 10, 15 };
    // Wholly inside an earlier event: no own time, never negative.
    QTest::newRow("nested") << Events { { 0, 100 }, { 10, 20 }, { 30, 120 } } << Owns { 100, 0, 20 };
    // The latest end counts, not the previous event's: {10,20} ends before {0,50} does.
    QTest::newRow("latest end") << Events { { 0, 50 }, { 10, 20 }, { 40, 60 } } << Owns { 50, 0, 10 };
    QTest::newRow("zero length") << Events { { 5, 5 }, { 5, 8 } } << Owns { 0, 3 };
}

void TstOwnTime::stream()
{
    QFETCH(Events, events);
    QFETCH(Owns, owns);
    OwnTime byDuration, byStart;
    for (int i = 0; i < events.size(); ++i) {
        const auto [s, e] = events[i];
        QCOMPARE(byDuration.duration(s, e), owns[i]);
        QCOMPARE(byStart.start(s, e), e - owns[i]);
    }
}

void TstOwnTime::seed()
{
    OwnTime stream;
    stream.seed(30); // an event before the scope, running to 30
    QCOMPARE(stream.duration(20, 50), qint64(20));
    QCOMPARE(stream.duration(60, 70), qint64(10));
}

QTEST_GUILESS_MAIN(TstOwnTime)
#include "tst_owntime.moc"
