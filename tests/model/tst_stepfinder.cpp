// SPDX-License-Identifier: MIT
// StepFinder on synth traces whose step boundaries were removed: every rule finds the steps synth
// recorded, aligned across ranks by index; a pathological pattern is searched in linear time. The shapes
// of real engines (annotations, graph replays, eager forwards) are in tst_stepshapes.
#include "model/format/wholegraph.h"
#include "model/steps/stepfinder.h"
#include "model/synth/synth.h"

#include <QElapsedTimer>
#include <QtTest>

using namespace gapscope;
using namespace gapscope::model;

namespace {

Trace synthWithoutSteps(const SynthOptions& o, std::vector<std::vector<Step>>& truth)
{
    auto t = synthesize(o);
    if (!t)
        qFatal("%s", t.error().c_str());
    truth.clear();
    for (uint32_t r : t->ranks()) {
        truth.push_back(t->steps(r));
        t->setSteps(r, {});
    }
    return std::move(*t);
}

} // namespace

class TestStepFinder : public QObject {
    Q_OBJECT
private slots:
    void rules_data()
    {
        QTest::addColumn<QString>("rule");
        QTest::addColumn<bool>("graph");
        QTest::addColumn<int>("source");
        QTest::addColumn<int>("skipFirst"); // steps a rule cannot see (period: the first one)
        QTest::newRow("nvtx, graph mode") << "nvtx:decode" << true << int(StepSource::Nvtx) << 0;
        QTest::newRow("nvtx, eager mode") << "nvtx:decode" << false << int(StepSource::Nvtx) << 0;
        QTest::newRow("engine, eager mode") << "engine" << false << int(StepSource::Engine) << 0;
        QTest::newRow("graph launches") << "graph" << true << int(StepSource::Graph) << 0;
        QTest::newRow("anchor kernel") << "anchor:indexSelectLargeIndex" << true << int(StepSource::Anchor) << 0;
        QTest::newRow("period, graph mode") << "period" << true << int(StepSource::Auto) << 0;
        QTest::newRow("period, eager mode") << "period" << false << int(StepSource::Auto) << 0;
        QTest::newRow("auto prefers the step ranges") << "auto" << true << int(StepSource::Engine) << 0;
    }
    void rules()
    {
        QFETCH(QString, rule);
        QFETCH(bool, graph);
        QFETCH(int, source);
        QFETCH(int, skipFirst);
        SynthOptions o;
        o.ranks = 3;
        o.steps = 12;
        o.kernelsPerStep = 150;
        o.graphMode = graph;
        o.seed = 11;
        std::vector<std::vector<Step>> truth;
        Trace t = synthWithoutSteps(o, truth);
        QCOMPARE(t.stepCount(), 0u);
        auto r = StepRule::parse(rule.toStdString());
        QVERIFY(r);
        QCOMPARE(int(StepFinder(*r).find(t).source), source);
        for (uint32_t rank = 0; rank < 3; ++rank) {
            const auto& got = t.steps(rank);
            const auto& want = truth[rank];
            QCOMPARE(got.size() + size_t(skipFirst), want.size());
            for (size_t i = 0; i < got.size(); ++i) {
                const Step& w = want[i + size_t(skipFirst)];
                QCOMPARE(got[i].index, w.index);
                QCOMPARE(got[i].start, w.start);
                QCOMPARE(got[i].end, w.end);
            }
        }
    }

    void alignsRanksByIndex()
    {
        SynthOptions o;
        o.ranks = 2;
        o.steps = 6;
        o.kernelsPerStep = 100;
        std::vector<std::vector<Step>> truth;
        Trace t = synthWithoutSteps(o, truth);
        StepFinder d(StepRule { StepRule::Kind::Nvtx, "decode" });
        StepReport report;
        auto rank1 = d.findRank(t, 1, report);
        QCOMPARE(rank1.size(), size_t(6));
        QVERIFY(d.find(t).source == StepSource::Nvtx);
        QCOMPARE(t.steps(0).front().index, 0u);
        QCOMPARE(t.steps(1).front().index, 0u);
    }

    void nothingToFind()
    {
        TraceBuilder b;
        LaneId l = b.lane({ LaneKind::GpuStream, 0, "h", 0, 1, "", 0 });
        b.addKernel(l, 0, 10, b.intern("only"), 0, {});
        Trace t = b.finish();
        const StepReport r = StepFinder().find(t);
        QCOMPARE(r.source, StepSource::Unknown);
        QCOMPARE(t.stepCount(), 0u);
        QVERIFY(!r.tried.empty()); // says which rules were tried
        bool warned = false;
        for (const auto& w : t.warnings())
            warned = warned || w.rfind("steps: rank 0: ", 0) == 0;
        QVERIFY(warned);
    }

    // A pattern that makes a backtracking engine take exponential time ((a*)*b on 40 a's: 2^40 ways)
    // finds its anchors at once: step patterns are searched by PatternMatcher, in linear time.
    void pathologicalPatternIsLinear()
    {
        TraceBuilder b;
        LaneId l = b.lane({ LaneKind::GpuStream, 0, "h", 0, 1, "", 0 });
        const StringId slow = b.intern(std::string(40, 'a')), anchor = b.intern(std::string(40, 'a') + "b");
        for (int i = 0; i < 4; ++i) {
            b.addKernel(l, i * 100, 10, anchor, 0, {});
            b.addKernel(l, i * 100 + 20, 10, slow, 0, {});
        }
        Trace t = b.finish();
        QElapsedTimer timer;
        timer.start();
        StepFinder d(StepRule { StepRule::Kind::Anchor, "(a*)*b" });
        QCOMPARE(d.find(t).source, StepSource::Anchor);
        QVERIFY2(timer.elapsed() < 2000, "the pattern backtracked");
        QCOMPARE(t.steps(0).size(), size_t(4));
        QCOMPARE(t.steps(0)[1].start, TimeNs(100));
    }

    // A light-mode capture that recorded kernels only (no API calls): detailed replays of graph 7, each
    // followed by eager sampling kernels, then replays recorded whole (one event each, same graph).
    // Every launch is one step, told by the graph id its kernels carry, and every step is decode: a
    // whole replay is alike to the recorded replays of its graph.
    void lightModeKernelsOnly()
    {
        TraceBuilder b;
        LaneId l = b.lane({ LaneKind::GpuStream, 0, "h", 0, 1, "", 0 });
        const StringId names[] = { b.intern("embed"), b.intern("qkv_gemm"), b.intern("attention"), b.intern("out_gemm"),
            b.intern("lm_head") };
        const StringId argmax = b.intern("argmax"), copy = b.intern("copy"), whole = b.intern(format::kWholeGraphName);
        uint32_t corr = 100;
        TimeNs t0 = 1000000;
        size_t launches = 0;
        auto detailed = [&] {
            const uint32_t c = ++corr;
            TimeNs t = t0;
            uint64_t node = 0;
            auto graphKernel = [&](StringId name) {
                KernelConfig k;
                k.graphId = 7;
                k.graphNodeId = ++node;
                b.addKernel(l, t, 5000, name, c, k);
                t += 6000;
            };
            graphKernel(names[0]);
            for (int layer = 0; layer < 4; ++layer)
                for (int k = 1; k < 4; ++k)
                    graphKernel(names[k]);
            graphKernel(names[4]);
            for (StringId e : { argmax, copy, argmax, copy }) // sampling: eager, correlations of their own
                b.addKernel(l, t += 3000, 2000, e, ++corr, {});
            t0 += 200000;
            ++launches;
        };
        auto wholeReplay = [&] {
            KernelConfig k;
            k.graphId = 7;
            k.graphNodeId = format::kWholeGraphNode;
            b.addKernel(l, t0, 90000, whole, ++corr, k);
            t0 += 200000;
            ++launches;
        };
        for (int block = 0; block < 2; ++block) {
            for (int i = 0; i < 3; ++i)
                detailed();
            for (int i = 0; i < 10; ++i)
                wholeReplay();
        }
        Trace t = b.finish();
        const StepReport r = StepFinder().find(t);
        QCOMPARE(r.source, StepSource::Graph);
        const auto& steps = t.steps(0);
        QCOMPARE(steps.size(), launches);
        for (size_t i = 0; i < steps.size(); ++i) {
            QCOMPARE(steps[i].start, TimeNs(1000000 + TimeNs(i) * 200000));
            QCOMPARE(int(steps[i].kind), int(StepKind::Decode));
        }
    }

    void badRules()
    {
        QVERIFY(!StepRule::parse("anchor"));
        QVERIFY(!StepRule::parse("nvtx"));
        QVERIFY(!StepRule::parse("graph:x"));
        QVERIFY(!StepRule::parse("anchor:(unclosed"));
        auto bad = StepRule::parse("sometimes");
        QVERIFY(!bad);
        QVERIFY(bad.error().find("auto, engine, nvtx:REGEX") != std::string::npos); // names the rules
        auto r = StepRule::parse("nvtx:^decode");
        QVERIFY(r);
        QCOMPARE(r->pattern, std::string("^decode"));
        QCOMPARE(r->toString(), std::string("nvtx:^decode"));
        for (const char* text : { "auto", "engine", "graph", "forward", "period", "file", "anchor:embed" })
            QCOMPARE(StepRule::parse(text)->toString(), std::string(text));
    }
};

QTEST_GUILESS_MAIN(TestStepFinder)
#include "tst_stepfinder.moc"
