// SPDX-License-Identifier: MIT
// Step detection on synth traces whose step boundaries were removed: every rule finds the steps synth
// recorded, aligned across ranks by index; a pathological pattern is searched in linear time.
#include "model/stepdetector.h"
#include "model/synth.h"

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

class TestStepDetector : public QObject {
    Q_OBJECT
private slots:
    void rules_data()
    {
        QTest::addColumn<QString>("rule");
        QTest::addColumn<bool>("graph");
        QTest::addColumn<int>("source");
        QTest::addColumn<int>("skipFirst"); // steps a rule cannot see (period: the first one)
        QTest::newRow("nvtx, graph mode") << "nvtx" << true << int(StepSource::Nvtx) << 0;
        QTest::newRow("nvtx, eager mode") << "nvtx" << false << int(StepSource::Nvtx) << 0;
        QTest::newRow("graph launches") << "graph" << true << int(StepSource::Graph) << 0;
        QTest::newRow("anchor kernel") << "anchor:indexSelectLargeIndex" << true << int(StepSource::Anchor) << 0;
        QTest::newRow("period, graph mode") << "period" << true << int(StepSource::Auto) << 0;
        QTest::newRow("period, eager mode") << "period" << false << int(StepSource::Auto) << 0;
        QTest::newRow("auto prefers nvtx") << "auto" << true << int(StepSource::Nvtx) << 0;
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
        StepRule r;
        QVERIFY(StepRule::parse(rule.toStdString(), r));
        StepDetector d(r);
        QCOMPARE(int(d.detect(t)), source);
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
        StepDetector d(StepRule { StepRule::Kind::Nvtx, "" });
        StepSource src = StepSource::Unknown;
        auto rank1 = d.detectRank(t, 1, src);
        QCOMPARE(rank1.size(), size_t(6));
        QVERIFY(d.detect(t) == StepSource::Nvtx);
        QCOMPARE(t.steps(0).front().index, 0u);
        QCOMPARE(t.steps(1).front().index, 0u);
    }

    void nothingToFind()
    {
        TraceBuilder b;
        LaneId l = b.lane({ LaneKind::GpuStream, 0, "h", 0, 1, "", 0 });
        b.addKernel(l, 0, 10, b.intern("only"), 0, {});
        Trace t = b.finish();
        QCOMPARE(StepDetector().detect(t), StepSource::Unknown);
        QCOMPARE(t.stepCount(), 0u);
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
        StepDetector d(StepRule { StepRule::Kind::Anchor, "(a*)*b" });
        QCOMPARE(d.detect(t), StepSource::Anchor);
        QVERIFY2(timer.elapsed() < 2000, "the pattern backtracked");
        QCOMPARE(t.steps(0).size(), size_t(4));
        QCOMPARE(t.steps(0)[1].start, TimeNs(100));
    }

    void badRules()
    {
        StepRule r;
        QVERIFY(!StepRule::parse("anchor", r));
        QVERIFY(!StepRule::parse("sometimes", r));
        QVERIFY(StepRule::parse("nvtx:^decode", r));
        QCOMPARE(r.pattern, std::string("^decode"));
    }
};

QTEST_GUILESS_MAIN(TestStepDetector)
#include "tst_stepdetector.moc"
