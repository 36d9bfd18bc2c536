// SPDX-License-Identifier: MIT
// diff's verdicts (model/analysis/diffverdict.h): the bootstrap interval of a difference of medians on
// samples with a known shift, its determinism, and the verdicts of a synth pair with one class made slower
// (a regression there and nowhere else), of a pair that differs only by seed (no regression), and the
// reports: the gate's exit, the JUnit counts and the Markdown verdict line.
#include "model/analysis/diffreport.h"
#include "model/analysis/diffverdict.h"
#include "model/synth/synth.h"

#include <QtTest>

#include <numeric>

using namespace gapscope::model;

namespace {

struct Side {
    Trace trace;
    std::unique_ptr<GapAnalyzer> analyzer;
};

Side analysed(uint64_t seed, const std::string& slowClass = "", double factor = 1.0)
{
    SynthOptions o;
    o.ranks = 2;
    o.steps = 60;
    o.kernelsPerStep = 120;
    o.seed = seed;
    o.slowClass = slowClass;
    o.slowFactor = factor;
    auto t = synthesize(o);
    if (!t)
        qFatal("%s", t.error().c_str());
    Side s { std::move(*t), nullptr };
    s.analyzer = std::make_unique<GapAnalyzer>(s.trace, KernelClassifier::builtinDefault(), StepBudget {});
    return s;
}

const DiffVerdicts::Verdict* find(const DiffVerdicts& v, const std::string& name)
{
    for (const auto& x : v.verdicts())
        if (!x.kernel && x.name == name)
            return &x;
    return nullptr;
}

} // namespace

class TestDiffVerdict : public QObject {
    Q_OBJECT
private slots:
    void bootstrapOfAKnownShift()
    {
        std::vector<double> a(101), b(101);
        std::iota(a.begin(), a.end(), 0.0); // median 50
        for (size_t i = 0; i < b.size(); ++i)
            b[i] = a[i] + 10; // median 60
        const auto i = DiffVerdicts::bootstrap(a, b, 2000, 0.95, 7);
        QCOMPARE(i.delta, 10.0);
        QVERIFY(i.low < 10 && i.high > 10);
        QVERIFY2(i.high - i.low < 40, qPrintable(QString("%1 .. %2").arg(i.low).arg(i.high)));
        const auto again = DiffVerdicts::bootstrap(a, b, 2000, 0.95, 7);
        QCOMPARE(again.low, i.low);
        QCOMPARE(again.high, i.high);
        // No spread: the interval is the difference itself.
        const auto flat
            = DiffVerdicts::bootstrap(std::vector<double>(20, 3.0), std::vector<double>(30, 5.0), 500, 0.95, 1);
        QCOMPARE(flat.delta, 2.0);
        QCOMPARE(flat.low, 2.0);
        QCOMPARE(flat.high, 2.0);
        // Even counts: the median is the mean of the two middle values.
        const auto even = DiffVerdicts::bootstrap({ 1, 2, 3, 4 }, { 1, 2, 3, 10 }, 0, 0.95, 1);
        QCOMPARE(even.delta, 0.0);
    }

    void slowerClassIsTheOneRegression()
    {
        Side a = analysed(11), b = analysed(12, "routed_experts", 1.10);
        TraceDiff diff(*a.analyzer, *b.analyzer);
        DiffVerdicts v(diff);
        const auto* moe = find(v, "routed_experts");
        QVERIFY(moe);
        QCOMPARE(moe->outcome, DiffVerdicts::Outcome::Regression);
        QVERIFY(moe->ciLowNs > moe->thresholdNs);
        QCOMPARE(moe->aSteps, size_t(60));
        for (const auto& x : v.verdicts())
            if (!x.kernel && x.name != "routed_experts" && x.name != "measured step")
                QVERIFY2(x.outcome != DiffVerdicts::Outcome::Regression, x.name.c_str());
        QVERIFY(v.regression());
        bool kernel = false;
        for (const auto& x : v.verdicts())
            kernel |= x.kernel && x.name == "fused_moe_kernel" && x.outcome == DiffVerdicts::Outcome::Regression;
        QVERIFY(kernel);
        DiffReport::Options o;
        o.verdicts = &v;
        DiffReport report(diff, o);
        QCOMPARE(report.gateExit(), 1);
        const std::string junit = report.junit();
        QVERIFY(junit.find("failures=\"1\"") != std::string::npos);
        QVERIFY(
            junit.find("name=\"routed_experts\" time=\"0\">\n      <failure type=\"regression\"") != std::string::npos);
        QVERIFY(report.markdown().rfind("### gapscope diff: **regression**", 0) == 0);
        const gapscope::json::Value doc = report.toJson();
        QCOMPARE(doc["gate"]["exit"].toInt(), int64_t(1));
        QCOMPARE(doc["gate"]["regressions"].size(), size_t(1));
    }

    void seedsAloneAreNoRegression()
    {
        Side a = analysed(21), b = analysed(22);
        TraceDiff diff(*a.analyzer, *b.analyzer);
        DiffVerdicts v(diff);
        QVERIFY(!v.regression());
        DiffReport::Options o;
        o.verdicts = &v;
        QCOMPARE(DiffReport(diff, o).gateExit(), 0);
        // An absolute threshold larger than any bar: nothing can be a change.
        DiffVerdicts::Options wide;
        wide.absoluteNs = 1e9;
        DiffVerdicts w(diff, wide);
        for (const auto& x : w.verdicts())
            QVERIFY(x.outcome == DiffVerdicts::Outcome::NoChange);
    }
};

QTEST_GUILESS_MAIN(TestDiffVerdict)
#include "tst_diffverdict.moc"
