// SPDX-License-Identifier: MIT
// WindowSweep: exact decomposition of hand-built interval sets (single stream, concurrent streams,
// sync stalls, step gap, accounting clip) and a randomized comparison against a brute-force
// per-nanosecond split.
#include "model/analysis/windowsweep.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <random>

using namespace gapscope::model;
using Piece = WindowSweep::Piece;

class TstWindowSweep : public QObject {
    Q_OBJECT
private slots:
    void singleStream();
    void inGraphGap();
    void syncStallWholeGap_data();
    void syncStallWholeGap();
    void syncStallNeedsLateLaunch_data();
    void syncStallNeedsLateLaunch();
    void syncBeginsInsideTheGap_data();
    void syncBeginsInsideTheGap();
    void concurrentEqualSplit();
    void threeWayRounding();
    void accountingClip();
    void instantEventMovesStepGap();
    void unsortedInputStillAddsUp();
    void emptyWindowIsStepGap();
    void longestGapsOnly();
    void randomAgainstBruteForce();
};

namespace {

using LaunchTimeFn = TimeNs (*)(const void*, uint32_t);

WindowSweep::Result sweep(TimeNs w0, TimeNs w1, std::vector<Piece> pieces, size_t nSlots,
    std::vector<TimeInterval> syncs = {}, TimeNs clip0 = INT64_MIN, TimeNs clip1 = INT64_MAX,
    LaunchTimeFn launchTime = nullptr, const void* launchCtx = nullptr)
{
    WindowSweep s;
    WindowSweep::Input in;
    in.launchTime = launchTime;
    in.launchCtx = launchCtx;
    in.w0 = w0;
    in.w1 = w1;
    in.clip0 = std::max(clip0, w0);
    in.clip1 = std::min(clip1, w1);
    in.pieces = pieces.data();
    in.pieceCount = pieces.size();
    in.syncs = syncs.data();
    in.syncCount = syncs.size();
    in.slotCount = nSlots;
    in.gaps = WindowSweep::Input::Gaps::All;
    WindowSweep::Result r;
    s.run(in, r);
    return r;
}

TimeNs idle(const WindowSweep::Result& r, IdleKind k)
{
    return r.idleNs[size_t(k)];
}

} // namespace

void TstWindowSweep::singleStream()
{
    auto r = sweep(0, 30, { { 0, 10, 0, 0 }, { 15, 20, 1, 1 } }, 2);
    QCOMPARE(r.busyNs[0], TimeNs(10));
    QCOMPARE(r.busyNs[1], TimeNs(5));
    QCOMPARE(idle(r, IdleKind::LaunchHost), TimeNs(5));
    QCOMPARE(idle(r, IdleKind::SyncStall), TimeNs(0));
    QCOMPARE(idle(r, IdleKind::StepGap), TimeNs(10));
    QCOMPARE(r.total(), TimeNs(30));
    QCOMPARE(r.lastEventEnd, TimeNs(20));
    QCOMPARE(int(r.gaps.size()), 2);
    QCOMPARE(r.gaps[0].start, TimeNs(10));
    QCOMPARE(r.gaps[0].end, TimeNs(15));
    QCOMPARE(r.gaps[1].kind, IdleKind::StepGap);
}

void TstWindowSweep::inGraphGap()
{
    // Tags 1 and 3 continue the graph launch of the work before them: the gaps they end are in-graph,
    // even with a host sync in flight over them; the gap tag 2 ends is a launch/host gap.
    std::vector<Piece> pieces = { { 0, 10, 0, 0 }, { 12, 20, 0, 1 }, { 30, 40, 0, 2 }, { 45, 50, 0, 3 } };
    WindowSweep s;
    WindowSweep::Input in;
    in.w0 = 0;
    in.w1 = 60;
    in.clip0 = 0;
    in.clip1 = 60;
    in.pieces = pieces.data();
    in.pieceCount = pieces.size();
    std::vector<TimeInterval> syncs = { { 41, 48 } };
    in.syncs = syncs.data();
    in.syncCount = syncs.size();
    in.slotCount = 1;
    in.gaps = WindowSweep::Input::Gaps::All;
    in.inGraph = [](const void*, uint32_t tag) { return tag == 1 || tag == 3; };
    WindowSweep::Result r;
    s.run(in, r);
    QCOMPARE(idle(r, IdleKind::InGraph), TimeNs(2 + 5));
    QCOMPARE(idle(r, IdleKind::LaunchHost), TimeNs(10));
    QCOMPARE(idle(r, IdleKind::SyncStall), TimeNs(0));
    QCOMPARE(idle(r, IdleKind::StepGap), TimeNs(10));
    QCOMPARE(r.total(), TimeNs(60));
    QCOMPARE(int(r.gaps.size()), 4);
    QCOMPARE(r.gaps[0].kind, IdleKind::InGraph);
    QCOMPARE(r.gaps[0].next, 1u);
    QCOMPARE(r.gaps[1].kind, IdleKind::LaunchHost);
}

void TstWindowSweep::syncStallWholeGap_data()
{
    QTest::addColumn<TimeNs>("s0");
    QTest::addColumn<TimeNs>("s1");
    QTest::addColumn<TimeNs>("sync");
    QTest::addColumn<TimeNs>("launch");
    // The gap is [10, 15).
    QTest::newRow("in flight over the whole gap") << TimeNs(5) << TimeNs(20) << TimeNs(5) << TimeNs(0);
    QTest::newRow("returns inside the gap") << TimeNs(5) << TimeNs(11) << TimeNs(5) << TimeNs(0);
    QTest::newRow("starts at the gap start") << TimeNs(10) << TimeNs(11) << TimeNs(5) << TimeNs(0);
    // The host reached the sync after the GPU ran dry: late on its own until then, the sync's after.
    QTest::newRow("starts after the gap start") << TimeNs(11) << TimeNs(14) << TimeNs(4) << TimeNs(1);
    QTest::newRow("starts after the gap start, returns after it") << TimeNs(12) << TimeNs(20) << TimeNs(3)
                                                                  << TimeNs(2);
    QTest::newRow("starts at the gap end") << TimeNs(15) << TimeNs(18) << TimeNs(0) << TimeNs(5);
    QTest::newRow("ends at the gap start") << TimeNs(2) << TimeNs(10) << TimeNs(0) << TimeNs(5);
    QTest::newRow("only inside the step gap") << TimeNs(22) << TimeNs(28) << TimeNs(0) << TimeNs(5);
}

void TstWindowSweep::syncStallWholeGap()
{
    QFETCH(TimeNs, s0);
    QFETCH(TimeNs, s1);
    QFETCH(TimeNs, sync);
    QFETCH(TimeNs, launch);
    auto r = sweep(0, 30, { { 0, 10, 0, 0 }, { 15, 20, 0, 1 } }, 1, { { s0, s1 } });
    QCOMPARE(idle(r, IdleKind::SyncStall), sync);
    QCOMPARE(idle(r, IdleKind::LaunchHost), launch);
    QCOMPARE(idle(r, IdleKind::StepGap), TimeNs(10)); // the step gap wins over a sync in flight
    QCOMPARE(r.total(), TimeNs(30));
}

void TstWindowSweep::syncStallNeedsLateLaunch_data()
{
    // The gap is [10, 15) with a sync in flight over [5, 20); the piece after it was launched at
    // `launched`: before the GPU ran dry the work was already queued, so the sync did not hold it up.
    QTest::addColumn<TimeNs>("launched");
    QTest::addColumn<TimeNs>("sync");
    QTest::addColumn<TimeNs>("launch");
    QTest::newRow("launched after the gap began") << TimeNs(13) << TimeNs(5) << TimeNs(0);
    QTest::newRow("launched at the gap start") << TimeNs(10) << TimeNs(5) << TimeNs(0);
    QTest::newRow("queued before (host node in a graph)") << TimeNs(2) << TimeNs(0) << TimeNs(5);
    QTest::newRow("launch unknown") << WindowSweep::kUnknownLaunch << TimeNs(5) << TimeNs(0);
}

// A sync that begins inside the gap: the work after it must have been launched after the sync began.
void TstWindowSweep::syncBeginsInsideTheGap_data()
{
    QTest::addColumn<TimeNs>("launched");
    QTest::addColumn<TimeNs>("sync");
    QTest::addColumn<TimeNs>("launch");
    QTest::newRow("launched after the sync") << TimeNs(14) << TimeNs(3) << TimeNs(2);
    QTest::newRow("queued between the GPU running dry and the sync") << TimeNs(11) << TimeNs(0) << TimeNs(5);
}

void TstWindowSweep::syncBeginsInsideTheGap()
{
    QFETCH(TimeNs, launched);
    QFETCH(TimeNs, sync);
    QFETCH(TimeNs, launch);
    auto r = sweep(0, 30, { { 0, 10, 0, 0 }, { 15, 20, 0, 1 } }, 1, { { 12, 14 } }, INT64_MIN, INT64_MAX,
        [](const void* c, uint32_t tag) { return tag == 1 ? *static_cast<const TimeNs*>(c) : TimeNs(0); }, &launched);
    QCOMPARE(idle(r, IdleKind::SyncStall), sync);
    QCOMPARE(idle(r, IdleKind::LaunchHost), launch);
    QCOMPARE(r.total(), TimeNs(30));
}

void TstWindowSweep::syncStallNeedsLateLaunch()
{
    QFETCH(TimeNs, launched);
    QFETCH(TimeNs, sync);
    QFETCH(TimeNs, launch);
    struct Ctx {
        TimeNs launched;
        int asked = 0;
    } ctx { launched };
    auto r = sweep(0, 30, { { 0, 10, 0, 0 }, { 15, 20, 0, 1 } }, 1, { { 5, 20 } }, INT64_MIN, INT64_MAX,
        [](const void* c, uint32_t tag) {
            auto* x = static_cast<Ctx*>(const_cast<void*>(c));
            ++x->asked;
            return tag == 1 ? x->launched : TimeNs(0);
        },
        &ctx);
    QCOMPARE(idle(r, IdleKind::SyncStall), sync);
    QCOMPARE(idle(r, IdleKind::LaunchHost), launch);
    QCOMPARE(idle(r, IdleKind::StepGap), TimeNs(10));
    QCOMPARE(ctx.asked, 1); // only for the gap a sync overlaps
}

void TstWindowSweep::concurrentEqualSplit()
{
    // [0,10) on one stream and [4,14) on another: 4 + 3 alone/shared for the first, 3 + 4 for the
    // second -> 7 each exactly.
    auto r = sweep(0, 20, { { 0, 10, 0, 0 }, { 4, 14, 1, 1 } }, 2);
    QCOMPARE(r.busyNs[0], TimeNs(7));
    QCOMPARE(r.busyNs[1], TimeNs(7));
    QCOMPARE(idle(r, IdleKind::StepGap), TimeNs(6));
    // 5 ns overlap: 2.5 each, so 7.5 and 7.5 -> 8 and 7 (equal remainders: lower slot first).
    r = sweep(0, 20, { { 0, 10, 0, 0 }, { 5, 15, 1, 1 } }, 2);
    QCOMPARE(r.busyNs[0] + r.busyNs[1], TimeNs(15));
    QCOMPARE(r.busyNs[0], TimeNs(8));
    QCOMPARE(r.busyNs[1], TimeNs(7));
    QCOMPARE(r.total(), TimeNs(20));
}

void TstWindowSweep::threeWayRounding()
{
    // Three pieces over the same 10 ns: 10/3 each; slots add up to 10 exactly.
    auto r = sweep(0, 10, { { 0, 10, 0, 0 }, { 0, 10, 1, 1 }, { 0, 10, 2, 2 } }, 3);
    QCOMPARE(r.busyNs[0] + r.busyNs[1] + r.busyNs[2], TimeNs(10));
    for (int s = 0; s < 3; ++s)
        QVERIFY(r.busyNs[size_t(s)] == 3 || r.busyNs[size_t(s)] == 4);
    // Two of them in the same slot: 20/3 and 10/3 -> 7 and 3.
    r = sweep(0, 10, { { 0, 10, 0, 0 }, { 0, 10, 0, 1 }, { 0, 10, 1, 2 } }, 2);
    QCOMPARE(r.busyNs[0], TimeNs(7));
    QCOMPARE(r.busyNs[1], TimeNs(3));
}

void TstWindowSweep::accountingClip()
{
    auto r = sweep(0, 30, { { 0, 10, 0, 0 }, { 15, 20, 1, 1 } }, 2, {}, 5, 25);
    QCOMPARE(r.busyNs[0], TimeNs(5));
    QCOMPARE(r.busyNs[1], TimeNs(5));
    QCOMPARE(idle(r, IdleKind::LaunchHost), TimeNs(5));
    QCOMPARE(idle(r, IdleKind::StepGap), TimeNs(5));
    QCOMPARE(r.total(), TimeNs(20));
    // A clip that ends inside a gap still classifies the gap on the whole window.
    r = sweep(0, 30, { { 0, 10, 0, 0 }, { 15, 20, 1, 1 } }, 2, {}, 12, 13);
    QCOMPARE(idle(r, IdleKind::LaunchHost), TimeNs(1));
    QCOMPARE(r.total(), TimeNs(1));
}

void TstWindowSweep::instantEventMovesStepGap()
{
    auto r = sweep(0, 30, { { 0, 10, 0, 0 }, { 25, 25, 0, 1 } }, 1);
    QCOMPARE(idle(r, IdleKind::LaunchHost), TimeNs(15));
    QCOMPARE(idle(r, IdleKind::StepGap), TimeNs(5));
    QCOMPARE(r.lastEventEnd, TimeNs(25));
}

void TstWindowSweep::unsortedInputStillAddsUp()
{
    auto r = sweep(0, 40, { { 10, 20, 0, 0 }, { 0, 15, 1, 1 }, { 30, 35, 0, 2 } }, 2);
    QCOMPARE(r.total(), TimeNs(40));
    QCOMPARE(idle(r, IdleKind::StepGap), TimeNs(5));
}

void TstWindowSweep::emptyWindowIsStepGap()
{
    auto r = sweep(100, 150, {}, 3);
    QCOMPARE(idle(r, IdleKind::StepGap), TimeNs(50));
    QCOMPARE(r.total(), TimeNs(50));
    QCOMPARE(r.lastEventEnd, TimeNs(100));
}

void TstWindowSweep::longestGapsOnly()
{
    std::vector<Piece> pieces;
    const TimeNs gaps[] = { 5, 9, 2, 9, 7, 1 }; // idle before each piece
    TimeNs t = 0;
    for (uint32_t i = 0; i < 6; ++i) {
        t += gaps[i];
        pieces.push_back({ t, t + 10, 0, i });
        t += 10;
    }
    WindowSweep s;
    WindowSweep::Input in;
    in.w0 = 0;
    in.w1 = t + 4; // step gap 4
    in.clip0 = in.w0;
    in.clip1 = in.w1;
    in.pieces = pieces.data();
    in.pieceCount = pieces.size();
    in.slotCount = 1;
    in.gaps = WindowSweep::Input::Gaps::Longest;
    WindowSweep::Result r;
    s.run(in, r);
    QCOMPARE(int(r.gaps.size()), 3);
    QCOMPARE(r.gaps[0].end - r.gaps[0].start, TimeNs(9));
    QCOMPARE(r.gaps[0].start, TimeNs(15)); // the earlier of the two 9 ns gaps first
    QCOMPARE(r.gaps[1].end - r.gaps[1].start, TimeNs(9));
    QCOMPARE(r.gaps[2].end - r.gaps[2].start, TimeNs(7));
    QCOMPARE(r.idleNs[size_t(IdleKind::LaunchHost)], TimeNs(33));
    in.gaps = WindowSweep::Input::Gaps::None;
    s.run(in, r);
    QVERIFY(r.gaps.empty());
    QCOMPARE(r.total(), in.w1);
}

void TstWindowSweep::randomAgainstBruteForce()
{
    std::mt19937 rng(12345);
    for (int round = 0; round < 300; ++round) {
        const TimeNs w1 = 50 + TimeNs(rng() % 400);
        const size_t nSlots = 1 + rng() % 4;
        std::vector<Piece> pieces;
        int n = int(rng() % 12);
        for (int i = 0; i < n; ++i) {
            TimeNs a = TimeNs(rng() % uint64_t(w1)), len = TimeNs(rng() % 80);
            pieces.push_back({ a, std::min(w1, a + len), uint32_t(rng() % nSlots), uint32_t(i) });
        }
        std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return a.start < b.start; });
        std::vector<TimeInterval> syncs;
        if (rng() % 2)
            syncs.push_back({ TimeNs(rng() % uint64_t(w1)), TimeNs(rng() % uint64_t(w1)) + w1 / 4 });
        if (!syncs.empty() && syncs[0].end <= syncs[0].start)
            syncs.clear();
        auto r = sweep(0, w1, pieces, nSlots, syncs);
        QCOMPARE(r.total(), w1);
        // Brute force: every ns is shared equally among the pieces covering it.
        std::vector<double> exact(nSlots, 0);
        TimeNs busy = 0;
        for (TimeNs t = 0; t < w1; ++t) {
            int k = 0;
            for (const auto& p : pieces)
                k += p.start <= t && t < p.end;
            busy += k > 0;
            for (const auto& p : pieces)
                if (p.start <= t && t < p.end)
                    exact[p.slot] += 1.0 / k;
        }
        TimeNs busySum = 0;
        for (size_t s = 0; s < nSlots; ++s) {
            QVERIFY2(std::abs(double(r.busyNs[s]) - exact[s]) < 1.0,
                qPrintable(QString("round %1 slot %2: %3 vs %4").arg(round).arg(s).arg(r.busyNs[s]).arg(exact[s])));
            busySum += r.busyNs[s];
        }
        QCOMPARE(busySum, busy);
    }
}

QTEST_APPLESS_MAIN(TstWindowSweep)
#include "tst_windowsweep.moc"
