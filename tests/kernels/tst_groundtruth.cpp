// SPDX-License-Identifier: MIT
// The decode sim's ground-truth JSON: shape, the straggler's wait carried to the other ranks, the
// expected extra per step, and the rank-result round trip between processes.
#include "kernels/groundtruth.h"

#include <QtTest>

using namespace gapscope;
using namespace gapscope::kernels;

class TestGroundTruth : public QObject {
    Q_OBJECT

    static RankResult rank(uint32_t r, uint64_t straggler)
    {
        RankResult res;
        res.rank = r;
        res.device = "NVIDIA H200";
        for (uint32_t i = 0; i < 3; ++i) {
            StepRecord s;
            s.index = i;
            s.measuredNs = 1000000 + 1000 * i;
            s.gpuNs = 900000;
            s.hostNs = 950000;
            s.launchHostNs = 4800;
            s.syncStallNs = 700;
            s.syncs = 2;
            s.stepGapNs = i < 2 ? 2000000 : 0;
            s.stragglerNs = straggler;
            s.slowNs = 30000;
            res.steps.push_back(s);
        }
        res.cleanComponentsNs["attention"] = 12345;
        res.cleanOpNs["o_proj"] = 777;
        res.cleanOpBytes["o_proj"] = 4096;
        res.cleanOpCount["o_proj"] = 2;
        res.cleanProfiledStepNs = 987654;
        res.collectivesPerStep = 6;
        res.stragglerCollectivesPerStep = straggler ? 6 : 0;
        res.markerNs = 2100;
        res.boundaryNs = 3400;
        res.lastTokens = { 17, 42 };
        return res;
    }

private slots:
    void rankResultRoundTrip()
    {
        const RankResult a = rank(1, 55000);
        auto b = RankResult::fromJson(json::parse(json::write(a.toJson(), -1)).value());
        QVERIFY(b.hasValue());
        QCOMPARE(b->rank, 1u);
        QCOMPARE(b->steps.size(), size_t(3));
        QCOMPARE(b->steps[1].stepGapNs, uint64_t(2000000));
        QCOMPARE(b->steps[2].stragglerNs, uint64_t(55000));
        QCOMPARE(b->cleanComponentsNs.at("attention"), 12345.0);
        QCOMPARE(b->cleanOpCount.at("o_proj"), 2.0);
        QCOMPARE(b->lastTokens, (std::vector<int32_t> { 17, 42 }));
        QCOMPARE(b->markerNs, uint64_t(2100));
        QCOMPARE(b->boundaryNs, uint64_t(3400));
        QVERIFY(!RankResult::fromJson(json::Value(3)).hasValue());
    }

    void syncBoundariesTravelAndAddUpPerBoundary()
    {
        RankResult a = rank(0, 0), b = rank(1, 0);
        for (uint32_t i = 0; i < 3; ++i) {
            a.steps[i].syncIdleNs = { 100, 500, 200 };
            b.steps[i].syncIdleNs = { 400, 100, 250 };
            a.steps[i].syncStallNs = 800;
            b.steps[i].syncStallNs = 750;
            a.steps[i].startUnixNs = 1764500000000000000ull + i;
        }
        auto back = RankResult::fromJson(json::parse(json::write(a.toJson(), -1)).value());
        QVERIFY(back.hasValue());
        QCOMPARE(back->steps[1].syncIdleNs, (std::vector<uint64_t> { 100, 500, 200 }));
        QCOMPARE(back->steps[2].startUnixNs, uint64_t(1764500000000000002ull));
        // Per boundary the later rank holds both: 400 + 500 + 250, not max(800, 750).
        const auto crit = GroundTruth::syncCriticalNs({ a, b });
        QCOMPARE(crit, (std::vector<uint64_t> { 1150, 1150, 1150 }));
        // Without boundaries the largest rank's total stands.
        a.steps[0].syncIdleNs.clear();
        b.steps[0].syncIdleNs.clear();
        QCOMPARE(GroundTruth::syncCriticalNs({ a, b })[0], uint64_t(800));
        auto cfg = model::loadModelConfig("qwen3-30b-a3b");
        QVERIFY(cfg.hasValue());
        SimOptions o;
        o.plan.tp = 2;
        o.plan.layers = 2;
        auto plan = DecodePlan::build(*cfg, o.plan);
        QVERIFY(plan.hasValue());
        const json::Value t = GroundTruth::build(o, *plan, { a, b }, -1);
        const json::Value& s1 = t["ranks"].at(1)["steps"].at(1);
        QCOMPARE(s1["sync_critical_ns"].toInt(), int64_t(1150));
        QCOMPARE(s1["sync_stall_ns"].toInt(), int64_t(750)); // the rank's own idle stays per rank
        QVERIFY(!s1.contains("sync_idle_ns")); // per-boundary values stay out of the truth file
        QCOMPARE(s1["expected_extra_ns"].toInt(), int64_t(4800 + 1150 + 2000000 + 30000));
        QCOMPARE(t["ranks"].at(0)["steps"].at(2)["start_unix_ns"].toInt(), int64_t(1764500000000000002ll));
    }

    void truthShape()
    {
        auto cfg = model::loadModelConfig("qwen3-30b-a3b");
        QVERIFY(cfg.hasValue());
        SimOptions o;
        o.plan.tp = 2;
        o.plan.layers = 2;
        o.path.stragglerRank = 1;
        o.path.stragglerNs = 55000;
        o.path.slow = true;
        o.path.slowComponent = model::Component::Attention;
        o.path.slowFactor = 2;
        auto plan = DecodePlan::build(*cfg, o.plan);
        QVERIFY(plan.hasValue());
        const json::Value t = GroundTruth::build(o, *plan, { rank(0, 0), rank(1, 55000) }, 1500.0);
        QCOMPARE(t["kind"].toString(), std::string("gapscope-decode-sim-truth"));
        QCOMPARE(t["version"].toInt(), int64_t(1));
        QCOMPARE(t["config"]["tp"].toInt(), int64_t(2));
        QCOMPARE(t["config"]["layers"].toInt(), int64_t(2));
        QCOMPARE(t["config"]["collectives_per_step"].toInt(), int64_t(plan->collectiveCount()));
        QCOMPARE(t["floor_ns"].toDouble(), 1.5e6);
        QCOMPARE(t["injected"]["straggler_rank"].toInt(), int64_t(1));
        QCOMPARE(t["ranks"].size(), size_t(2));
        const json::Value& s0 = t["ranks"].at(0)["steps"].at(0);
        const json::Value& s1 = t["ranks"].at(1)["steps"].at(0);
        QCOMPARE(s0["collective_wait_ns"].toInt(), int64_t(55000)); // rank 0 waits for the straggler
        QCOMPARE(s1["collective_wait_ns"].toInt(), int64_t(0));
        QCOMPARE(s0["components_ns"]["attention"].toInt(), int64_t(30000));
        // host delay + sync gaps + step gap + straggler spin + slow kernels
        QCOMPARE(s0["expected_extra_ns"].toInt(), int64_t(4800 + 700 + 2000000 + 55000 + 30000));
        QCOMPARE(s1["expected_extra_ns"].toInt(), int64_t(4800 + 700 + 2000000 + 55000 + 30000));
        QCOMPARE(t["ranks"].at(0)["median_measured_ns"].toDouble(), 1001000.0);
        QCOMPARE(t["stragglers"].size(), size_t(1));
        QCOMPARE(t["stragglers"].at(0)["delay_ns"].toInt(), int64_t(55000));
        QCOMPARE(t["stragglers"].at(0)["collectives"].toInt(), int64_t(6));
    }
};

QTEST_GUILESS_MAIN(TestGroundTruth)
#include "tst_groundtruth.moc"
