// SPDX-License-Identifier: MIT
// gapscope-decode-sim command line: values, defaults, and clear errors for bad input.
#include "kernels/simoptions.h"

#include <QtTest>

using namespace gapscope;
using namespace gapscope::kernels;

class TestSimOptions : public QObject {
    Q_OBJECT

    static std::vector<std::string> split(const QString& s)
    {
        std::vector<std::string> out;
        for (const QString& a : s.split(' ', Qt::SkipEmptyParts))
            out.push_back(a.toStdString());
        return out;
    }

private slots:
    void defaultsInjectNothing()
    {
        auto o = SimOptions::parse({});
        QVERIFY(o.hasValue());
        QVERIFY(!o->path.any());
        QCOMPARE(o->plan.tp, 1u);
        QCOMPARE(o->mode, LaunchMode::Graph);
        QCOMPARE(o->steps, 20u);
    }

    void parsesEverything()
    {
        auto o = SimOptions::parse(split("--model qwen3-30b-a3b --tp 2 --batch 4 --context=8192 --layers 3 "
                                         "--precision all=fp8,routed_experts=nvfp4,kv_cache=fp8 --steps 7 --warmup 2 "
                                         "--mode eager --nvtx --host-delay-us 12.5 --host-delay-per kernel "
                                         "--host-delay-mode thread --sync-every-layer --sync-stamps --straggler-rank 1 "
                                         "--straggler-us 40 --straggler-every 3 --slow routed_experts:2.5 "
                                         "--step-gap-us 1000 --truth t.json --seed 9 --attention-splits 32"));
        QVERIFY2(o.hasValue(), o.hasValue() ? "" : o.error().c_str());
        QCOMPARE(o->model, std::string("qwen3-30b-a3b"));
        QCOMPARE(o->plan.tp, 2u);
        QCOMPARE(o->plan.batch, 4u);
        QCOMPARE(o->plan.context, uint64_t(8192));
        QCOMPARE(o->plan.layers, 3u);
        QCOMPARE(o->plan.defaultPrecision, model::Precision::Fp8);
        QCOMPARE(o->plan.precisionOf(model::Component::RoutedExperts), model::Precision::Nvfp4);
        QCOMPARE(o->plan.precisionOf(model::Component::KvCache), model::Precision::Fp8);
        QCOMPARE(o->plan.precisionOf(model::Component::Attention), model::Precision::Fp8);
        QCOMPARE(o->mode, LaunchMode::Eager);
        QVERIFY(o->nvtx);
        QCOMPARE(o->path.hostDelayNs, uint64_t(12500));
        QCOMPARE(o->path.hostDelayScope, HostDelayScope::Kernel);
        QCOMPARE(o->path.hostDelayMode, HostDelayMode::Thread);
        QVERIFY(o->path.syncEveryLayer);
        QVERIFY(o->path.syncStamps);
        QCOMPARE(o->attentionSplits, 32u);
        QCOMPARE(o->path.stragglerRank, 1);
        QCOMPARE(o->path.stragglerNs, uint64_t(40000));
        QCOMPARE(o->path.stragglerEvery, 3u);
        QVERIFY(o->path.slow);
        QCOMPARE(o->path.slowComponent, model::Component::RoutedExperts);
        QCOMPARE(o->path.slowFactor, 2.5);
        QCOMPARE(o->path.stepGapNs, uint64_t(1000000));
        QCOMPARE(o->truthPath, std::string("t.json"));
        QCOMPARE(o->seed, uint64_t(9));
        QVERIFY(o->path.any());
        const json::Value j = o->path.toJson();
        QCOMPARE(j["straggler_ns"].toInt(), int64_t(40000));
        QCOMPARE(j["slow_component"].toString(), std::string("routed_experts"));
    }

    void rejects_data()
    {
        QTest::addColumn<QString>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown") << "--frobnicate"
                                 << "unknown argument '--frobnicate'";
        QTest::newRow("missing value") << "--tp"
                                       << "--tp needs a value";
        QTest::newRow("bad count") << "--tp two"
                                   << "--tp: 'two'";
        QTest::newRow("batch 9") << "--batch 9"
                                 << "--batch must be 1..8";
        QTest::newRow("negative delay") << "--host-delay-us -5"
                                        << "--host-delay-us: '-5'";
        QTest::newRow("straggler rank out of range") << "--tp 2 --straggler-rank 2 --straggler-us 5"
                                                     << "not below --tp 2";
        QTest::newRow("straggler without amount") << "--tp 2 --straggler-rank 1"
                                                  << "go together";
        QTest::newRow("slow without factor") << "--slow attention"
                                             << "COMPONENT:FACTOR";
        QTest::newRow("slow factor <= 1") << "--slow attention:1"
                                          << "COMPONENT:FACTOR";
        QTest::newRow("slow unknown component") << "--slow wombat:2"
                                                << "COMPONENT:FACTOR";
        QTest::newRow("thread delay in graph mode") << "--host-delay-us 5 --host-delay-mode thread"
                                                    << "--mode eager";
        QTest::newRow("bad precision") << "--precision attention=fp7"
                                       << "attention=fp7";
        QTest::newRow("bad component") << "--precision wombat=bf16"
                                       << "unknown component 'wombat'";
        QTest::newRow("bad mode") << "--mode lazy"
                                  << "eager or graph";
        QTest::newRow("zero steps") << "--steps 0"
                                    << "--steps";
        QTest::newRow("too many attention splits") << "--attention-splits 300"
                                                   << "--attention-splits must be 0..256";
    }

    void rejects()
    {
        QFETCH(QString, args);
        QFETCH(QString, message);
        auto o = SimOptions::parse(split(args));
        QVERIFY(!o.hasValue());
        QVERIFY2(QString::fromStdString(o.error()).contains(message), o.error().c_str());
    }

    void helpIsNotAnError()
    {
        bool help = false;
        auto o = SimOptions::parse({ "--help" }, &help);
        QVERIFY(!o.hasValue());
        QVERIFY(help);
        QVERIFY(QString::fromStdString(o.error()).contains("--straggler-rank"));
    }
};

QTEST_GUILESS_MAIN(TestSimOptions)
#include "tst_simoptions.moc"
