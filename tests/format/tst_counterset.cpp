// SPDX-License-Identifier: MIT
// CounterSet (model/format/counterset.h): counters added up by (name, rank), the first of a key
// keeping its severity and detail; sorted by name then rank, or in the order keys first came.
#include "model/format/counterset.h"
#include "model/format/stats.h"
#include "model/format/trace.pb.h"
#include "model/trace/tracemeta.h"

#include <QtTest>

#include <limits>

using namespace gapscope;
using format::CounterSet;
using format::Stat;

namespace {

// "name@rank=value" per counter, in the order given.
template <typename C> QString show(const std::vector<C>& counters)
{
    QStringList out;
    for (const C& c : counters) {
        using T = format::CounterTraits<C>;
        out << QString::fromStdString(T::name(c)) + "@" + QString::number(T::rank(c)) + "="
                + QString::number(T::value(c));
    }
    return out.join(' ');
}

} // namespace

class TestCounterSet : public QObject {
    Q_OBJECT
private slots:
    void empty()
    {
        CounterSet<pb::Counter> s;
        QVERIFY(s.empty());
        QCOMPARE(s.size(), size_t(0));
        QVERIFY(s.sorted().empty());
    }

    // Each row adds "name@rank=value" counters in turn; `sorted` and `added` are what comes back.
    void adds_data()
    {
        QTest::addColumn<QStringList>("in");
        QTest::addColumn<QString>("sorted");
        QTest::addColumn<QString>("added");
        QTest::newRow("one") << QStringList { "b@0=3" } << "b@0=3"
                             << "b@0=3";
        QTest::newRow("sum of one key") << QStringList { "b@0=3", "b@0=4", "b@0=0" } << "b@0=7"
                                        << "b@0=7";
        QTest::newRow("ranks apart") << QStringList { "b@1=5", "b@0=3", "b@-1=1", "b@1=2" } << "b@-1=1 b@0=3 b@1=7"
                                     << "b@1=7 b@0=3 b@-1=1";
        QTest::newRow("names apart, byte order") << QStringList { "read_events_lost@-1=2", "Z@-1=1", "agent@-1=4" }
                                                 << "Z@-1=1 agent@-1=4 read_events_lost@-1=2"
                                                 << "read_events_lost@-1=2 Z@-1=1 agent@-1=4";
        QTest::newRow("name before rank")
            << QStringList { "b@0=1", "a@5=1", "b@-1=1", "a@0=1" } << "a@0=1 a@5=1 b@-1=1 b@0=1"
            << "b@0=1 a@5=1 b@-1=1 a@0=1";
        // a most and a version add up like any counter (stats.h names no other way)
        QTest::newRow("max and version kinds sum") << QStringList { "rank_rss_growth_mb@0=100",
            "rank_rss_growth_mb@0=40", "nccl_profiler_plugin_version@0=5", "nccl_profiler_plugin_version@0=5" }
                                                   << "nccl_profiler_plugin_version@0=10 rank_rss_growth_mb@0=140"
                                                   << "rank_rss_growth_mb@0=140 nccl_profiler_plugin_version@0=10";
        QTest::newRow("wraps") << QStringList { "w@0=18446744073709551615", "w@0=2" } << "w@0=1"
                               << "w@0=1";
    }
    void adds()
    {
        QFETCH(QStringList, in);
        QFETCH(QString, sorted);
        QFETCH(QString, added);
        CounterSet<pb::Counter> wire;
        CounterSet<model::Counter> model;
        for (const QString& s : in) {
            const QString name = s.section('@', 0, 0), rest = s.section('@', 1);
            pb::Counter c;
            c.set_name(name.toStdString());
            c.set_rank(rest.section('=', 0, 0).toInt());
            c.set_value(rest.section('=', 1).toULongLong());
            wire.add(c);
            model.add(model::Counter { c.name(), c.rank(), c.value(), "info", "" });
        }
        QCOMPARE(show(wire.sorted()), sorted);
        QCOMPARE(show(wire.inOrderAdded()), added);
        QCOMPARE(show(model.sorted()), sorted);
        QCOMPARE(show(model.inOrderAdded()), added);
        QCOMPARE(wire.size(), size_t(sorted.count(' ') + 1));
    }

    // The first counter of a key keeps its severity and detail; a later detail does not split the key.
    void firstKeepsSeverityAndDetail()
    {
        CounterSet<pb::Counter> s;
        s.add(format::makeCounter(Stat::ReadFramesSkipped, 1, 2, "crc mismatch"));
        pb::Counter other = format::makeCounter(Stat::ReadFramesSkipped, 1, 5, "did not decode");
        other.set_severity("info");
        s.add(other);
        s.add(format::makeCounter(Stat::ReadFramesSkipped, 2, 1, "did not decode"));
        const std::vector<pb::Counter> out = s.sorted();
        QCOMPARE(out.size(), size_t(2));
        QCOMPARE(out[0].rank(), 1);
        QCOMPARE(out[0].value(), uint64_t(7));
        QCOMPARE(out[0].detail(), std::string("crc mismatch"));
        QCOMPARE(out[0].severity(), std::string("data_loss"));
        QCOMPARE(out[1].rank(), 2);
        QCOMPARE(out[1].detail(), std::string("did not decode"));
    }

    // Joining sets (the loader's decode threads) gives what adding every counter to one set gives.
    void joinsSets()
    {
        CounterSet<pb::Counter> a, b, all;
        const pb::Counter x = format::makeCounter(Stat::ReadEventsLost, 0, 10);
        const pb::Counter y = format::makeCounter(Stat::ReadEventsLost, 1, 3);
        const pb::Counter z = format::makeCounter(Stat::AgentDroppedEvents, -1, 4);
        a.add(x);
        a.add(y);
        b.add(z);
        b.add(x);
        for (const pb::Counter& c : { x, y, z, x })
            all.add(c);
        CounterSet<pb::Counter> joined;
        joined.add(a);
        joined.add(b);
        QCOMPARE(show(joined.sorted()), show(all.sorted()));
        QCOMPARE(
            show(joined.sorted()), QString("agent_dropped_events@-1=4 read_events_lost@0=20 read_events_lost@1=3"));
        joined.clear();
        QVERIFY(joined.empty());
        joined.add(y);
        QCOMPARE(show(joined.sorted()), QString("read_events_lost@1=3"));
    }
};

QTEST_GUILESS_MAIN(TestCounterSet)
#include "tst_counterset.moc"
