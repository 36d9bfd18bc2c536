// SPDX-License-Identifier: MIT
// Window queries and folding of one lane: fixed cases, and random lanes against brute force.
#include "model/trace/trace.h"

#include <QtTest>

#include <random>

using namespace gapscope::model;

Q_DECLARE_METATYPE(std::vector<TimeNs>)

namespace {

// A GPU lane with events (start, duration) given as pairs.
Trace lane(const std::vector<TimeNs>& pairs, LaneKind kind = LaneKind::GpuStream)
{
    TraceBuilder b;
    LaneId l = b.lane({ kind, 0, "h", 0, 1, "", 0 });
    for (size_t i = 0; i + 1 < pairs.size(); i += 2) {
        if (kind == LaneKind::Nvtx)
            b.addNvtx(l, pairs[i], pairs[i + 1], b.intern("r" + std::to_string(i / 2)), uint32_t(i / 2 % 2));
        else
            b.addKernel(l, pairs[i], pairs[i + 1], b.intern("k" + std::to_string(i / 2)), 0, {});
    }
    return b.finish();
}

std::vector<TimeNs> randomLane(std::mt19937_64& rng, size_t n, bool nested)
{
    std::vector<TimeNs> v;
    TimeNs t = 1000;
    for (size_t i = 0; i < n; ++i) {
        const TimeNs d = (rng() % 20 == 0) ? TimeNs(rng() % 200000) : TimeNs(rng() % 3000);
        v.push_back(t);
        v.push_back(d);
        t += nested ? TimeNs(rng() % 2000) : d + TimeNs(rng() % 4000);
    }
    return v;
}

} // namespace

class TestLaneSummary : public QObject {
    Q_OBJECT
private slots:
    void overlapping_data()
    {
        QTest::addColumn<std::vector<TimeNs>>("events");
        QTest::addColumn<TimeNs>("t0");
        QTest::addColumn<TimeNs>("t1");
        QTest::addColumn<int>("first");
        QTest::addColumn<int>("last");
        const std::vector<TimeNs> serial { 0, 10, 20, 10, 40, 10, 60, 10 };
        QTest::newRow("all") << serial << TimeNs(-100) << TimeNs(1000) << 0 << 4;
        QTest::newRow("middle") << serial << TimeNs(25) << TimeNs(45) << 1 << 3;
        QTest::newRow("gap only") << serial << TimeNs(31) << TimeNs(39) << 2 << 2;
        QTest::newRow("touching end excluded") << serial << TimeNs(30) << TimeNs(40) << 2 << 2;
        QTest::newRow("empty window") << serial << TimeNs(50) << TimeNs(50) << 0 << 0;
        QTest::newRow("after") << serial << TimeNs(500) << TimeNs(600) << 4 << 4;
        // A long event keeps everything after it in range while it lasts.
        const std::vector<TimeNs> nested { 0, 1000, 10, 5, 20, 5, 2000, 5 };
        QTest::newRow("inside long event") << nested << TimeNs(500) << TimeNs(600) << 0 << 3;
    }
    void overlapping()
    {
        QFETCH(std::vector<TimeNs>, events);
        QFETCH(TimeNs, t0);
        QFETCH(TimeNs, t1);
        QFETCH(int, first);
        QFETCH(int, last);
        Trace t = lane(events);
        auto [a, b] = t.lane(0).events.overlapping(t0, t1);
        QCOMPARE(int(a), first);
        QCOMPARE(int(b), last);
    }

    void fold_data()
    {
        QTest::addColumn<std::vector<TimeNs>>("events");
        QTest::addColumn<double>("nsPerPixel");
        QTest::addColumn<QString>("expected"); // items "start-end:count:longest", space separated
        const std::vector<TimeNs> ev { 0, 2, 3, 2, 6, 1, 100, 50, 160, 2, 163, 4, 300, 1 };
        QTest::newRow("1 ns/px: all apart")
            << ev << 0.25 << "0-2:1:0 3-5:1:1 6-7:1:2 100-150:1:3 160-162:1:4 163-167:1:5 300-301:1:6";
        QTest::newRow("1 ns/px, 3 px: a wide event ends a run")
            << ev << 1.0 << "0-7:3:0 100-150:1:3 160-162:1:4 163-167:1:5 300-301:1:6";
        QTest::newRow("20 ns/px: runs across small gaps") << ev << 20.0 << "0-7:3:0 100-167:3:3 300-301:1:6";
        QTest::newRow("100 ns/px: everything small") << ev << 100.0 << "0-301:7:3";
    }
    void fold()
    {
        QFETCH(std::vector<TimeNs>, events);
        QFETCH(double, nsPerPixel);
        QFETCH(QString, expected);
        Trace t = lane(events);
        std::vector<FoldItem> out;
        t.lane(0).summary.fold(t.lane(0).events, -1000, 100000, nsPerPixel, 3.0, out);
        QStringList got;
        for (const auto& f : out)
            got << QString("%1-%2:%3:%4").arg(f.start).arg(f.end).arg(f.count).arg(f.longest);
        QCOMPARE(got.join(' '), expected);
    }

    void nvtxFoldsPerDepth()
    {
        // depth alternates 0,1,0,1...: ranges 0 and 2 (depth 0) fold together, 1 and 3 (depth 1) too.
        Trace t = lane({ 0, 10, 1, 5, 20, 10, 21, 5 }, LaneKind::Nvtx);
        std::vector<FoldItem> out;
        t.lane(0).summary.fold(t.lane(0).events, 0, 1000, 10.0, 3.0, out);
        QCOMPARE(out.size(), size_t(2));
        QCOMPARE(int(out[0].depth) + int(out[1].depth), 1);
        QCOMPARE(out[0].count + out[1].count, 4u);
    }

    void randomAgainstBruteForce_data()
    {
        QTest::addColumn<bool>("nested");
        QTest::addColumn<int>("seed");
        for (int s = 1; s <= 6; ++s) {
            QTest::newRow(qPrintable(QString("serial %1").arg(s))) << false << s;
            QTest::newRow(qPrintable(QString("overlapping %1").arg(s))) << true << s;
        }
    }
    void randomAgainstBruteForce()
    {
        QFETCH(bool, nested);
        QFETCH(int, seed);
        std::mt19937_64 rng { uint64_t(seed) };
        Trace t = lane(randomLane(rng, 3000 + size_t(seed) * 500, nested));
        const LaneEvents& ev = t.lane(0).events;
        const LaneSummary& sum = t.lane(0).summary;
        for (int q = 0; q < 50; ++q) {
            const TimeNs t0 = ev.start(0) + TimeNs(rng() % uint64_t(ev.end(ev.size() - 1) - ev.start(0)));
            const TimeNs t1 = t0 + 1 + TimeNs(rng() % 2000000);
            auto [a, b] = ev.overlapping(t0, t1);
            size_t overlapCount = 0;
            TimeNs busy = 0;
            for (size_t i = 0; i < ev.size(); ++i) {
                const bool ov = ev.start(i) < t1 && ev.end(i) > t0;
                if (ov) {
                    QVERIFY2(i >= a && i < b, "an overlapping event is outside overlapping()");
                    ++overlapCount;
                    busy += std::min(ev.end(i), t1) - std::max(ev.start(i), t0);
                }
            }
            auto totals = sum.totals(ev, t0, t1);
            QCOMPARE(totals.busy, busy);
            // Fold covers every overlapping event once; runs hold only narrow events.
            const double nsPerPixel = double(t1 - t0) / 1000.0;
            std::vector<FoldItem> items;
            sum.fold(ev, t0, t1, nsPerPixel, 3.0, items);
            uint64_t folded = 0;
            const TimeNs qNs = TimeNs(std::ceil(nsPerPixel * 3.0));
            for (const auto& f : items) {
                folded += f.count;
                if (f.count > 1)
                    for (uint32_t k = f.first; k < f.first + f.count; ++k)
                        QVERIFY(ev.duration(k) < qNs || ev.end(k) <= t0);
            }
            QVERIFY(folded >= overlapCount);
            QVERIFY(folded <= b - a);
            // Range aggregates against brute force.
            const size_t x = rng() % ev.size(), y = x + rng() % (ev.size() - x);
            auto r = sum.range(ev, x, y);
            TimeNs rb = 0, longest = -1;
            for (size_t i = x; i < y; ++i) {
                rb += ev.duration(i);
                longest = std::max(longest, ev.duration(i));
            }
            QCOMPARE(r.busy, rb);
            QCOMPARE(r.longestDuration, longest);
        }
    }

    // Durations near INT64_MAX (a fuzzed file): busy totals hold at INT64_MAX instead of overflowing,
    // through single events (few), the pyramid's nodes (many) and a fold.
    void busySaturates_data()
    {
        QTest::addColumn<int>("events");
        QTest::addColumn<TimeNs>("duration");
        QTest::newRow("3 events, one by one") << 3 << TimeNs(INT64_MAX - 1000);
        QTest::newRow("200 events, by summary nodes") << 200 << TimeNs(INT64_MAX - 1000);
        QTest::newRow("200 events of INT64_MAX / 4") << 200 << TimeNs(INT64_MAX / 4);
    }
    void busySaturates()
    {
        QFETCH(int, events);
        QFETCH(TimeNs, duration);
        std::vector<TimeNs> pairs;
        for (int i = 0; i < events; ++i)
            pairs.insert(pairs.end(), { TimeNs(i), duration });
        Trace t = lane(pairs);
        const LaneEvents& ev = t.lane(0).events;
        const LaneSummary& sum = t.lane(0).summary;
        const LaneSummary::Range r = sum.range(ev, 0, ev.size());
        QCOMPARE(r.busy, TimeNs(INT64_MAX));
        QCOMPARE(r.longestDuration, duration);
        QCOMPARE(r.maxEnd, TimeNs(events - 1) + duration);
        QCOMPARE(sum.totals(ev, 0, INT64_MAX).busy, TimeNs(INT64_MAX));
        std::vector<FoldItem> out; // every event narrower than the fold threshold (2^62 ns): one run
        sum.fold(ev, 0, INT64_MAX, double(int64_t(1) << 62), 1.0, out);
        QCOMPARE(out.size(), duration < (int64_t(1) << 62) ? size_t(1) : size_t(events));
        QCOMPARE(out.back().busy, duration < (int64_t(1) << 62) ? TimeNs(INT64_MAX) : duration);
        QCOMPARE(addSaturated(INT64_MIN + 5, -10), TimeNs(INT64_MIN));
        QCOMPARE(addSaturated(40, -2), TimeNs(38)); // sane sums as before
    }

    void foldCostFollowsPixels()
    {
        // A million tiny back-to-back events, folded for a 2000-pixel screen: few items.
        TraceBuilder b;
        LaneId l = b.lane({ LaneKind::GpuStream, 0, "h", 0, 1, "", 0 });
        StringId n = b.intern("k");
        for (TimeNs i = 0; i < 1000000; ++i)
            b.addKernel(l, i * 10, 5 + (i % 3), n, 0, {});
        Trace t = b.finish();
        std::vector<FoldItem> out;
        t.lane(0).summary.fold(t.lane(0).events, 0, 10000000, 10000000.0 / 2000, 3.0, out);
        QCOMPARE(out.size(), size_t(1));
        QCOMPARE(out[0].count, 1000000u);
        // A long event every 100k events splits the run: items ~ long events * 2 + 1.
        TraceBuilder b2;
        l = b2.lane({ LaneKind::GpuStream, 0, "h", 0, 1, "", 0 });
        n = b2.intern("k");
        TimeNs t0 = 0;
        for (int i = 0; i < 1000000; ++i) {
            const TimeNs d = (i % 100000 == 99999) ? 200000 : 5;
            b2.addKernel(l, t0, d, n, 0, {});
            t0 += d + 5;
        }
        Trace t2 = b2.finish();
        t2.lane(0).summary.fold(t2.lane(0).events, 0, t0, double(t0) / 2000, 3.0, out);
        QCOMPARE(out.size(), size_t(20));
    }
};

QTEST_GUILESS_MAIN(TestLaneSummary)
#include "tst_lanesummary.moc"
