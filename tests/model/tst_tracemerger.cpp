// SPDX-License-Identifier: MIT
// Several captures opened as one trace (openTrace -> TraceMerger): two synth hosts of two ranks each
// give one 4-rank trace that keeps every lane and event of both files, at their times (absolute clocks
// that overlap); colliding rank ids are renumbered with a warning; captures whose clocks disagree are
// shifted so that their first collectives end together.
#include "model/open/traceopen.h"
#include "model/synth/synth.h"

#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <tuple>

using namespace gapscope;
using namespace gapscope::model;

namespace {

std::string writeSynth(const QTemporaryDir& dir, const char* name, const std::string& host, uint32_t firstRank,
    uint64_t seed, TimeNs startNs = SynthOptions().startNs)
{
    SynthOptions o;
    o.ranks = 2;
    o.steps = 3;
    o.kernelsPerStep = 16;
    o.seed = seed;
    o.host = host;
    o.firstRank = firstRank;
    o.startNs = startNs;
    const std::string path = dir.filePath(name).toStdString();
    if (Status s = synthesizeToFile(o, path); !s)
        qFatal("%s", s.message().c_str());
    return path;
}

Trace open(const std::vector<std::string>& paths)
{
    auto t = openTrace(paths);
    if (!t)
        qFatal("%s", t.error().c_str());
    return std::move(*t);
}

// A lane by what it is (host, pid, kind, device, stream; not rank, which a merge may change):
// events, first start and last end.
using LaneId5 = std::tuple<std::string, uint32_t, int, uint32_t, uint64_t>;
struct LaneFacts {
    uint32_t rank;
    size_t events;
    TimeNs first, last;
    bool operator==(const LaneFacts& o) const
    {
        return rank == o.rank && events == o.events && first == o.first && last == o.last;
    }
};
std::map<LaneId5, LaneFacts> lanesOf(const Trace& t, TimeNs shift = 0)
{
    std::map<LaneId5, LaneFacts> out;
    for (const Lane& l : t.lanes()) {
        const LaneEvents& e = l.events;
        out[{ l.info.host, l.info.pid, int(l.info.kind), l.info.device, l.info.stream }] = { l.info.rank, e.size(),
            e.empty() ? 0 : e.start(0) + shift, e.empty() ? 0 : e.end(e.size() - 1) + shift };
    }
    return out;
}

// End of the earliest NCCL event (collective lane or nccl kernel): computed here, not by the aligner.
TimeNs firstCollectiveEnd(const Trace& t)
{
    TimeNs start = INT64_MAX, end = 0;
    for (const Lane& l : t.lanes())
        for (size_t i = 0; i < l.events.size(); ++i) {
            const EventKind k = t.kindOf(l.id, i);
            const bool nccl = k == EventKind::Collective
                || (k == EventKind::Kernel && t.str(l.events.name(i)).substr(0, 4) == "nccl");
            if (nccl && l.events.start(i) < start) {
                start = l.events.start(i);
                end = l.events.end(i);
            }
        }
    return end;
}

} // namespace

class TestTraceMerger : public QObject {
    Q_OBJECT
private slots:
    void twoHostsOneTrace()
    {
        QTemporaryDir dir;
        const std::string a = writeSynth(dir, "a.gapscope", "node-a", 0, 3),
                          b = writeSynth(dir, "b.gapscope", "node-b", 2, 4);
        const Trace ta = open({ a }), tb = open({ b });
        const Trace m = open({ a, b });
        QCOMPARE(m.ranks(), (std::vector<uint32_t> { 0, 1, 2, 3 }));
        QCOMPARE(m.laneCount(), ta.laneCount() + tb.laneCount());
        QCOMPARE(m.laneCount(), size_t(16));
        QCOMPARE(m.eventCount(), ta.eventCount() + tb.eventCount());
        for (int k = 0; k <= int(EventKind::Collective); ++k)
            QCOMPARE(m.eventCount(EventKind(k)), ta.eventCount(EventKind(k)) + tb.eventCount(EventKind(k)));
        std::map<LaneId5, LaneFacts> want = lanesOf(ta);
        want.merge(lanesOf(tb));
        QCOMPARE(want.size(), size_t(16));
        QVERIFY(lanesOf(m) == want);
        for (uint32_t r = 0; r < 4; ++r) {
            const Trace& src = r < 2 ? ta : tb;
            QCOMPARE(m.steps(r).size(), src.steps(r).size());
            QCOMPARE(m.steps(r).front().start, src.steps(r).front().start);
        }
        QCOMPARE(m.header().ranks.size(), size_t(4));
        QCOMPARE(m.header().hosts.size(), size_t(2));
        QCOMPARE(m.header().gpus.size(), size_t(4));
        for (const auto& w : m.warnings())
            QVERIFY2(w.find("renumbered") == std::string::npos, w.c_str());
    }

    void collidingRanksRenumbered()
    {
        QTemporaryDir dir;
        const std::string a = writeSynth(dir, "a.gapscope", "node-a", 0, 3),
                          c = writeSynth(dir, "c.gapscope", "node-c", 0, 5);
        const Trace tc = open({ c });
        const Trace m = open({ a, c });
        QCOMPARE(m.ranks(), (std::vector<uint32_t> { 0, 1, 2, 3 }));
        QCOMPARE(m.laneCount(), size_t(16));
        size_t renumbered = 0;
        for (const auto& w : m.warnings())
            renumbered
                += w.find("c.gapscope: rank ") != std::string::npos && w.find("renumbered to") != std::string::npos;
        QCOMPARE(renumbered, size_t(2));
        // node-c's ranks 0 and 1 became 2 and 3, lanes, steps and header alike.
        for (const Lane& l : m.lanes())
            QCOMPARE(l.info.rank >= 2, l.info.host == "node-c");
        QCOMPARE(m.steps(2).front().start, tc.steps(0).front().start);
        for (const auto& r : m.header().ranks)
            QCOMPARE(r.rank >= 2, r.host == "node-c");
    }

    void disagreeingClocksAlignOnCollectives()
    {
        QTemporaryDir dir;
        const TimeNs hour = 3600LL * 1000000000LL;
        const std::string a = writeSynth(dir, "a.gapscope", "node-a", 0, 3),
                          b = writeSynth(dir, "b.gapscope", "node-b", 2, 4, SynthOptions().startNs + hour);
        const Trace ta = open({ a }), tb = open({ b });
        const Trace m = open({ a, b });
        const TimeNs shift = firstCollectiveEnd(ta) - firstCollectiveEnd(tb);
        QVERIFY(shift < -hour / 2); // b's clock is an hour ahead
        std::map<LaneId5, LaneFacts> want = lanesOf(ta);
        want.merge(lanesOf(tb, shift));
        QVERIFY(lanesOf(m) == want);
        QCOMPARE(m.steps(2).front().start, tb.steps(2).front().start + shift);
        bool warned = false;
        for (const auto& w : m.warnings())
            warned = warned || w.find("aligned on the end of their first collective") != std::string::npos;
        QVERIFY(warned);
    }

    void oneFileUnchanged()
    {
        QTemporaryDir dir;
        const std::string a = writeSynth(dir, "a.gapscope", "node-a", 0, 3);
        const Trace t = open({ a });
        QCOMPARE(t.ranks(), (std::vector<uint32_t> { 0, 1 }));
        QVERIFY(t.warnings().empty());
    }
};

QTEST_GUILESS_MAIN(TestTraceMerger)
#include "tst_tracemerger.moc"
