// SPDX-License-Identifier: MIT
// AnalysisReport on a hand-built two-rank trace: each step's absolute start, and the capture's own
// cost (step time before arming vs while capturing) in JSON and text where the trace recorded it,
// absent where it did not.
#include "model/analysis/analysisreport.h"

#include <QTest>

using namespace gapscope;
using namespace gapscope::model;

namespace {

constexpr TimeNs kT0 = 1764460800000000000; // CLOCK_REALTIME-like start

Trace twoRankTrace()
{
    TraceBuilder b;
    uint32_t corr = 0;
    for (uint32_t rank = 0; rank < 2; ++rank) {
        const LaneId g = b.lane(LaneInfo { LaneKind::GpuStream, rank, "host", rank, 7, "stream", 100 + rank });
        for (uint32_t step = 0; step < 3; ++step) {
            const TimeNs s = kT0 + TimeNs(step) * 1000000;
            b.addKernel(g, s, 400000, b.intern("nvjet_tst_64x8_64x16_4x1_v_bz_TNT"), ++corr, KernelConfig {});
            b.addKernel(g, s + 500000, 300000, b.intern("fused_moe_kernel"), ++corr, KernelConfig {});
            b.addStep(rank, Step { step, s, s + 1000000, StepSource::File });
        }
    }
    RankInfo& r0 = b.header().ranks.emplace_back();
    r0.rank = 0;
    r0.hasOverhead = true;
    OverheadEvidence& o = r0.overhead;
    o.stepsBefore = 12;
    o.stepMsMedianBefore = 6.5;
    o.stepsDuring = 20;
    o.stepMsMedianDuring = 7.475;
    o.armLatencyMs = 9.25;
    RankInfo& r1 = b.header().ranks.emplace_back();
    r1.rank = 1; // no evidence recorded
    return b.finish();
}

const json::Value* rankOf(const json::Value& doc, int64_t rank)
{
    for (const auto& r : doc["ranks"].items())
        if (r["rank"].toInt() == rank)
            return &r;
    return nullptr;
}

} // namespace

class TstAnalysisReport : public QObject {
    Q_OBJECT
private slots:
    void stepsCarryTheirAbsoluteStart()
    {
        Trace trace = twoRankTrace();
        GapAnalyzer a(trace, KernelClassifier::builtinDefault(), StepBudget {});
        AnalysisReport report(a, AnalysisReport::Options {});
        const json::Value doc = report.toJson();
        const json::Value* r1 = rankOf(doc, 1);
        QVERIFY(r1);
        QCOMPARE((*r1)["steps"].size(), size_t(3));
        QCOMPARE((*r1)["steps"].at(2)["start_ns"].toInt(), int64_t(kT0 + 2000000));
        QCOMPARE((*r1)["steps"].at(2)["start_ms"].toDouble(), 2.0);
    }

    void captureOverheadWhereRecorded()
    {
        Trace trace = twoRankTrace();
        GapAnalyzer a(trace, KernelClassifier::builtinDefault(), StepBudget {});
        AnalysisReport report(a, AnalysisReport::Options {});
        const json::Value doc = report.toJson();
        const json::Value* r0 = rankOf(doc, 0);
        const json::Value* r1 = rankOf(doc, 1);
        QVERIFY(r0 && r1);
        QVERIFY((*r0).contains("capture_overhead"));
        const json::Value& c = (*r0)["capture_overhead"];
        QCOMPARE(c["steps_before"].toInt(), int64_t(12));
        QCOMPARE(c["before_ms"].toDouble(), 6.5);
        QCOMPARE(c["steps_during"].toInt(), int64_t(20));
        QCOMPARE(c["during_ms"].toDouble(), 7.475);
        QVERIFY(std::abs(c["pct"].toDouble() - 15.0) < 1e-9);
        QCOMPARE(c["arm_latency_ms"].toDouble(), 9.25);
        QVERIFY(!(*r1).contains("capture_overhead"));

        const std::string text = report.toText();
        QVERIFY2(text.find("capture overhead") != std::string::npos, text.c_str());
        // captureOverheadLine's wording (model/trace/captureoverhead.h), then the note above 5 %.
        const size_t line = text.find("rank 0: step 6.500 ms before arming (12 steps, fewer than 50); 7.475 ms while "
                                      "capturing (+15.0 %, 20 steps, fewer than 50); arm latency 9.2 ms: part of "
                                      "this rank's");
        QVERIFY2(line != std::string::npos, text.substr(text.find("capture overhead")).c_str());
        const size_t at = text.find("capture overhead");
        const std::string section = text.substr(at, text.find("\n\n", at) - at);
        QVERIFY2(section.find("rank 1:") == std::string::npos, section.c_str()); // nothing recorded there
    }

    void noEvidenceNoSection()
    {
        TraceBuilder b;
        const LaneId g = b.lane(LaneInfo { LaneKind::GpuStream, 0, "host", 0, 7, "stream", 100 });
        b.addKernel(g, kT0, 1000, b.intern("fused_moe_kernel"), 1, KernelConfig {});
        b.addStep(0, Step { 0, kT0, kT0 + 2000, StepSource::File });
        Trace trace = b.finish();
        GapAnalyzer a(trace, KernelClassifier::builtinDefault(), StepBudget {});
        AnalysisReport report(a, AnalysisReport::Options {});
        QVERIFY(report.toText().find("capture overhead") == std::string::npos);
        QVERIFY(!rankOf(report.toJson(), 0)->contains("capture_overhead"));
    }
};

QTEST_GUILESS_MAIN(TstAnalysisReport)
#include "tst_analysisreport.moc"
