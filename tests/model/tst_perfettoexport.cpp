// SPDX-License-Identifier: MIT
// The Perfetto export, read back with the protobuf library and the vendored schema (perfettodecode):
// every event of the source trace is a slice on its lane's track with its start, end, name,
// category and arguments; every launch -> GPU event pair is one flow; steps, annotations and the
// budget waterfall are where they belong; sequences, interning and clocks follow Perfetto's rules.
// Real input too: the Kineto fixture, against the totals fixture_totals.py computed with Python.
#include "../format/perfettodecode.h"

#include "model/analysis/gapanalyzer.h"
#include "model/base/json.h"
#include "model/export/exportrules.h"
#include "model/export/perfettoexport.h"
#include "model/open/traceopen.h"
#include "model/synth/synth.h"

#include <QTemporaryDir>
#include <QtTest>

#include <map>

using namespace gapscope;
using namespace gapscope::model;
using gapscope::testing::DecodedSlice;
using gapscope::testing::DecodedTrace;

namespace {

Trace synth(uint32_t ranks, uint32_t steps, uint32_t kernels, bool graphs, uint64_t seed = 3)
{
    SynthOptions o;
    o.ranks = ranks;
    o.steps = steps;
    o.kernelsPerStep = kernels;
    o.graphMode = graphs;
    o.seed = seed;
    o.syncStallUs = 20;
    auto t = synthesize(o);
    if (!t)
        qFatal("%s", t.error().c_str());
    return std::move(t).value();
}

struct Exported {
    PerfettoExportStats stats;
    DecodedTrace decoded;
};

Exported exportAndDecode(const Trace& t, const PerfettoExportOptions& o)
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("t.pftrace").toStdString();
    auto st = exportPerfetto(t, path, o);
    if (!st)
        qFatal("%s", st.error().c_str());
    const std::string bytes = gapscope::testing::readFile(path);
    if (bytes.size() != st->bytes)
        qFatal("file size %zu, stats say %llu", bytes.size(), (unsigned long long)st->bytes);
    auto d = gapscope::testing::decodePerfetto(bytes);
    if (!d)
        qFatal("%s", d.error().c_str());
    return { *st, std::move(d).value() };
}

// Arguments as the decoder shows them: numbers in decimal, vectors as "[x,y,z]".
class TextArgs final : public EventArgSink {
public:
    TextArgs(const Trace& t)
        : m_t(t)
    {
    }
    void uintArg(ArgKey k, uint64_t v) override { args[argName(k)] = std::to_string(v); }
    void dimArg(ArgKey k, const uint32_t (&x)[3], uint32_t) override
    {
        args[argName(k)] = "[" + std::to_string(x[0]) + "," + std::to_string(x[1]) + "," + std::to_string(x[2]) + "]";
    }
    void stringArg(ArgKey k, StringId v) override { args[argName(k)] = std::string(m_t.str(v)); }
    std::map<std::string, std::string> args;

private:
    const Trace& m_t;
};

// Finds the decoded track of each lane by name: "<rank title>/<lane title>".
std::map<std::string, uint64_t> tracksByPath(const DecodedTrace& d)
{
    std::map<std::string, uint64_t> out;
    for (const auto& [uuid, t] : d.tracks) {
        auto parent = d.tracks.find(t.parent);
        const std::string path = (parent == d.tracks.end() ? std::string() : parent->second.name) + "/" + t.name;
        if (!out.emplace(path, uuid).second)
            qFatal("two tracks named %s", path.c_str());
    }
    return out;
}

std::map<uint64_t, std::vector<size_t>> slicesByTrack(const DecodedTrace& d)
{
    std::map<uint64_t, std::vector<size_t>> out;
    for (size_t i = 0; i < d.slices.size(); ++i)
        out[d.slices[i].track].push_back(i);
    for (auto& [track, v] : out)
        std::stable_sort(v.begin(), v.end(), [&](size_t a, size_t b) {
            const DecodedSlice &x = d.slices[a], &y = d.slices[b];
            return x.start != y.start ? x.start < y.start : x.end - x.start > y.end - y.start;
        });
    return out;
}

// Checks every exported event and flow against the trace.
void checkEvents(const Trace& t, const Exported& e, const PerfettoExportOptions& o)
{
    const DecodedTrace& d = e.decoded;
    const auto tracks = tracksByPath(d);
    auto byTrack = slicesByTrack(d);
    std::map<size_t, EventRef> refOf; // decoded slice -> event
    std::map<std::pair<uint32_t, uint32_t>, size_t> sliceOf; // (lane, index) -> decoded slice
    uint64_t events = 0, kernels = 0;
    for (const Lane& lane : t.lanes()) {
        const std::string path = rankTitle(t, lane.info.rank) + "/" + laneTitle(lane.info);
        auto tr = tracks.find(path);
        if (tr == tracks.end())
            qFatal("no track %s", path.c_str());
        // The lane's own track and its overlap tracks (a GPU stream's work that overlaps), in start order.
        std::vector<size_t> got = byTrack[tr->second];
        for (uint32_t k = 1;; ++k) {
            auto ov = tracks.find(rankTitle(t, lane.info.rank) + "/" + overlapTrackTitle(lane.info, k));
            if (ov == tracks.end())
                break;
            got.insert(got.end(), byTrack[ov->second].begin(), byTrack[ov->second].end());
        }
        std::stable_sort(got.begin(), got.end(), [&](size_t a, size_t b) {
            const DecodedSlice &x = d.slices[a], &y = d.slices[b];
            return x.start != y.start ? x.start < y.start : x.end - x.start > y.end - y.start;
        });
        auto [first, last] = exportedRange(lane.events, o.from, o.to);
        size_t k = 0;
        for (size_t i = first; i < last; ++i) {
            if (!isExported(lane.events, i, o.from))
                continue;
            if (k >= got.size())
                qFatal("%s: fewer slices than events", path.c_str());
            const DecodedSlice& s = d.slices[got[k]];
            QCOMPARE(int64_t(s.start), lane.events.start(i));
            if (e.stats.clamped == 0)
                QCOMPARE(int64_t(s.end), lane.events.end(i));
            const EventKind kind = t.kindOf(lane.id, i);
            QCOMPARE(s.name, std::string(exportedName(t, lane, i)));
            if (kind == EventKind::Kernel || kind == EventKind::Api || kind == EventKind::Nvtx)
                QCOMPARE(s.name, std::string(t.str(lane.events.name(i))));
            QCOMPARE(s.category, std::string(toString(kind)));
            TextArgs args(t);
            visitEventArgs(t, lane, i, args);
            QCOMPARE(s.args, args.args);
            refOf[got[k]] = EventRef { lane.id, uint32_t(i) };
            sliceOf[{ lane.id, uint32_t(i) }] = got[k];
            ++k;
            ++events;
            kernels += kind == EventKind::Kernel;
        }
        if (k != got.size())
            qFatal("%s: %zu slices for %zu events", path.c_str(), got.size(), k);
    }
    QCOMPARE(e.stats.events, events);
    QCOMPARE(e.stats.kernels, kernels);

    // Flows: each id starts on the launching API call and ends on the GPU event, once.
    std::map<uint64_t, std::pair<int64_t, int64_t>> flows; // id -> (start slice, end slice)
    for (size_t i = 0; i < d.slices.size(); ++i) {
        for (uint64_t id : d.slices[i].flows) {
            auto& f = flows.try_emplace(id, -1, -1).first->second;
            QVERIFY2(f.first < 0, "flow started twice");
            f.first = int64_t(i);
        }
        for (uint64_t id : d.slices[i].terminatingFlows) {
            auto& f = flows.try_emplace(id, -1, -1).first->second;
            QVERIFY2(f.second < 0, "flow ended twice");
            f.second = int64_t(i);
        }
    }
    uint64_t expected = 0;
    for (const auto& [slice, ref] : refOf) {
        if (t.lane(ref.lane).info.kind != LaneKind::GpuStream || !o.flows)
            continue;
        const EventRef launch = t.launchOf(ref.lane, ref.index);
        if (launch.valid() && sliceOf.count({ launch.lane, launch.index }))
            ++expected;
    }
    QCOMPARE(uint64_t(flows.size()), expected);
    QCOMPARE(e.stats.flows, expected);
    for (const auto& [id, f] : flows) {
        QVERIFY2(f.first >= 0 && f.second >= 0, "flow without both ends");
        const EventRef api = refOf.at(size_t(f.first)), gpu = refOf.at(size_t(f.second));
        const EventRef launch = t.launchOf(gpu.lane, gpu.index);
        QCOMPARE(launch.lane, api.lane);
        QCOMPARE(launch.index, api.index);
    }
}

void checkWellFormed(const Exported& e)
{
    const DecodedTrace& d = e.decoded;
    if (!d.problems.empty())
        qFatal("%zu problems, first: %s", d.problems.size(), d.problems.front().c_str());
    QCOMPARE(d.primaryClock, 1); // BUILTIN_CLOCK_REALTIME
    QVERIFY(d.largestCompressedPacket < 512 * 1024);
}

std::vector<const DecodedSlice*> onTrack(const DecodedTrace& d, const std::string& path)
{
    const auto tracks = tracksByPath(d);
    std::vector<const DecodedSlice*> out;
    auto it = tracks.find(path);
    if (it == tracks.end())
        return out;
    for (const DecodedSlice& s : d.slices)
        if (s.track == it->second)
            out.push_back(&s);
    return out;
}

} // namespace

class TestPerfettoExport : public QObject {
    Q_OBJECT
private slots:
    void roundTrip_data()
    {
        QTest::addColumn<bool>("graphs");
        QTest::addColumn<bool>("compress");
        QTest::addColumn<bool>("flows");
        QTest::addColumn<uint32_t>("blockEvents");
        QTest::newRow("graphs") << true << true << true << 32768u;
        QTest::newRow("eager") << false << true << true << 32768u;
        QTest::newRow("eager, small blocks") << false << true << true << 50u;
        QTest::newRow("plain packets") << true << false << true << 100u;
        QTest::newRow("no flows") << false << true << false << 32768u;
    }
    void roundTrip()
    {
        QFETCH(bool, graphs);
        QFETCH(bool, compress);
        QFETCH(bool, flows);
        QFETCH(uint32_t, blockEvents);
        const Trace t = synth(3, 4, 80, graphs);
        PerfettoExportOptions o;
        o.compress = compress;
        o.flows = flows;
        o.blockEvents = blockEvents;
        const Exported e = exportAndDecode(t, o);
        checkWellFormed(e);
        QCOMPARE(e.stats.clamped, uint64_t(0));
        QVERIFY(e.stats.kernels == t.eventCount(EventKind::Kernel));
        checkEvents(t, e, o);
        QCOMPARE(e.decoded.compressedPackets > 0, compress);
        if (blockEvents < 100)
            QVERIFY(e.stats.blocks > t.laneCount());
        // Steps: one slice per step on the rank's steps track.
        for (uint32_t r : t.ranks()) {
            const auto steps = onTrack(e.decoded, rankTitle(t, r) + "/steps");
            QCOMPARE(steps.size(), t.steps(r).size());
            for (size_t i = 0; i < steps.size(); ++i) {
                QCOMPARE(int64_t(steps[i]->start), t.steps(r)[i].start);
                QCOMPARE(int64_t(steps[i]->end), t.steps(r)[i].end);
                QCOMPARE(steps[i]->name, "step " + std::to_string(t.steps(r)[i].index));
            }
        }
    }

    void stepRange()
    {
        const Trace t = synth(2, 6, 60, true);
        PerfettoExportOptions o;
        o.from = t.steps(0)[2].start;
        o.to = t.steps(0)[3].end;
        const Exported e = exportAndDecode(t, o);
        checkWellFormed(e);
        checkEvents(t, e, o);
        QVERIFY(e.stats.kernels < t.eventCount(EventKind::Kernel));
        QVERIFY(e.stats.kernels >= 2 * 60);
    }

    void annotationsAndWaterfall()
    {
        Trace t = synth(2, 3, 60, true);
        Annotation* a = &t.mutableAnnotations().notes.emplace_back();
        a->startNs = t.steps(1)[1].start;
        a->endNs = t.steps(1)[1].start;
        a->laneKey = t.lane(t.lanesOf(1, LaneKind::GpuStream).at(0)).info.key();
        a->text = "slow here";
        a->author = "me";
        Annotation* g = &t.mutableAnnotations().notes.emplace_back();
        g->startNs = t.startTime();
        g->endNs = t.startTime() + 1000;
        g->text = "whole trace";
        GapAnalyzer an(t, KernelClassifier::builtinDefault(), StepBudget {});
        PerfettoExportOptions o;
        o.analysis = &an;
        const Exported e = exportAndDecode(t, o);
        checkWellFormed(e);
        QCOMPARE(e.stats.annotations, uint64_t(2));
        const auto marks = onTrack(e.decoded, rankTitle(t, 1) + "/annotations");
        QCOMPARE(marks.size(), size_t(1));
        QVERIFY(marks[0]->instant);
        QCOMPARE(marks[0]->name, std::string("slow here"));
        QCOMPARE(marks[0]->args.at("author"), std::string("me"));
        const auto global = onTrack(e.decoded, "/annotations");
        QCOMPARE(global.size(), size_t(1));
        QCOMPARE(global[0]->end - global[0]->start, uint64_t(1000));
        // Waterfall: per step, the non-zero bars of the analysis, laid end to end from the step start.
        for (uint32_t r : an.ranks()) {
            const auto bars = onTrack(e.decoded, rankTitle(t, r) + "/budget waterfall");
            size_t k = 0;
            for (const auto& rec : an.steps(r)) {
                GapAnalyzer::Selection sel;
                sel.kind = GapAnalyzer::Selection::Kind::Step;
                sel.rank = int(r);
                sel.firstStep = rec.index;
                uint64_t at = uint64_t(rec.start);
                for (const Bar& b : an.analyze(sel).bars) {
                    if (b.ns == 0)
                        continue;
                    QVERIFY(k < bars.size());
                    QCOMPARE(bars[k]->name, b.name);
                    QCOMPARE(bars[k]->start, at);
                    QCOMPARE(bars[k]->args.at("ns"), std::to_string(b.ns));
                    at = bars[k]->end;
                    ++k;
                }
                QCOMPARE(at, uint64_t(rec.end)); // bars add up to the measured step
            }
            QCOMPARE(k, bars.size());
        }
    }

    // Slices must nest per track. A kernel that starts before the one before it on its stream has ended
    // (programmatic dependent launch) goes to the lane's overlap track with its real times; a third one
    // over both takes a second overlap track; a host range that overlaps is cut and counted.
    void overlapGoesToItsOwnTrack()
    {
        TraceBuilder b;
        LaneInfo info;
        info.kind = LaneKind::GpuStream;
        info.stream = 7;
        info.name = "stream 7";
        const LaneId lane = b.lane(info);
        LaneInfo nvtxInfo;
        nvtxInfo.kind = LaneKind::Nvtx;
        nvtxInfo.stream = 42;
        nvtxInfo.name = "thread 42";
        const LaneId nvtx = b.lane(nvtxInfo);
        const StringId k = b.intern("k");
        const TimeNs t0 = 1764460800000000000;
        b.addKernel(lane, t0, 100, k, 1, KernelConfig {});
        b.addKernel(lane, t0 + 50, 100, k, 2, KernelConfig {}); // overlaps the first: overlap track 1
        b.addKernel(lane, t0 + 60, 20, k, 3, KernelConfig {}); // inside both: overlap track 2
        b.addKernel(lane, t0 + 200, 10, k, 4, KernelConfig {}); // back on the lane's own track
        b.addNvtx(nvtx, t0, 100, k, 0);
        b.addNvtx(nvtx, t0 + 50, 100, k, 0); // a host range that overlaps: cut at t0 + 100
        const Trace t = b.finish();
        const Exported e = exportAndDecode(t, PerfettoExportOptions {});
        checkWellFormed(e);
        QCOMPARE(e.stats.clamped, uint64_t(1)); // the NVTX range only
        QCOMPARE(e.stats.kernels, uint64_t(4));
        const auto tracks = tracksByPath(e.decoded);
        const std::string rank = rankTitle(t, 0) + "/";
        const uint64_t own = tracks.at(rank + laneTitle(info));
        const uint64_t ov1 = tracks.at(rank + overlapTrackTitle(info, 1));
        const uint64_t ov2 = tracks.at(rank + overlapTrackTitle(info, 2));
        QVERIFY(tracks.count(rank + overlapTrackTitle(info, 3)) == 0);
        std::map<uint64_t, std::vector<std::pair<uint64_t, uint64_t>>> kernels; // track -> (start, end)
        for (const DecodedSlice& s : e.decoded.slices)
            if (s.category == "kernel")
                kernels[s.track].push_back({ s.start - uint64_t(t0), s.end - uint64_t(t0) });
        using V = std::vector<std::pair<uint64_t, uint64_t>>;
        QCOMPARE(kernels[own], (V { { 0, 100 }, { 200, 210 } }));
        QCOMPARE(kernels[ov1], (V { { 50, 150 } }));
        QCOMPARE(kernels[ov2], (V { { 60, 80 } }));
    }

    // A real torch.profiler trace, checked against totals computed with Python's json module.
    void kinetoFixture()
    {
        const std::string dir = std::string(GAPSCOPE_TEST_DATA) + "/import/fixtures/kineto/";
        auto t = openTrace({ dir + "rank0.json.gz" });
        QVERIFY2(t.hasValue(), t.hasValue() ? "" : t.error().c_str());
        PerfettoExportOptions o;
        const Exported e = exportAndDecode(*t, o);
        checkWellFormed(e);
        checkEvents(*t, e, o);
        auto totals = json::parse(gapscope::testing::readFile(dir + "rank0.totals.json"));
        QVERIFY(totals.hasValue());
        std::map<std::string, int64_t> byCategory, kernelNs;
        for (const DecodedSlice& s : e.decoded.slices) {
            ++byCategory[s.category];
            if (s.category == "kernel")
                kernelNs["kernel"] += int64_t(s.end - s.start);
        }
        QCOMPARE(byCategory["kernel"], (*totals)["kernel_count"].toInt());
        QCOMPARE(kernelNs["kernel"], (*totals)["kernel_total_ns"].toInt());
        QCOMPARE(byCategory["api"] + byCategory["sync"], (*totals)["api_count"].toInt());
        QCOMPARE(byCategory["collective"], (*totals)["collective_count"].toInt());
        QVERIFY(e.stats.flows > 0);
    }
};

QTEST_GUILESS_MAIN(TestPerfettoExport)
#include "tst_perfettoexport.moc"
