// SPDX-License-Identifier: MIT
// BudgetInputs <-> pb::BudgetSettings: a trace stores the settings and restores the same budget.
#include "model/budget/budgetsettings.h"
#include "model/format/trace.pb.h"
#include "model/io/tracemetaproto.h"

#include <QtTest>

using namespace gapscope;
using namespace gapscope::model;

class TestBudgetSettings : public QObject {
    Q_OBJECT
private slots:
    void roundTrip_data();
    void roundTrip();
    void presetNamesWithoutJson();
    void badSettings();
};

void TestBudgetSettings::roundTrip_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("hw");
    QTest::addColumn<QString>("precision");
    QTest::addColumn<int>("ep");
    QTest::addColumn<double>("allreduceUs");
    QTest::newRow("glm-5 scenario A") << "glm-5"
                                      << "rtx-pro-6000"
                                      << "all=nvfp4,lm_head=bf16" << 1 << 10.0;
    QTest::newRow("deepseek-v3 EP, table") << "deepseek-v3"
                                           << "h200-sxm"
                                           << "kv_cache=fp8" << 8 << -1.0;
    QTest::newRow("calibrated box") << "qwen3-30b-a3b"
                                    << QStringLiteral(GAPSCOPE_TEST_DATA "/budget/data/calibration-h200.json") << ""
                                    << 1 << 0.0;
}

void TestBudgetSettings::roundTrip()
{
    QFETCH(QString, model);
    QFETCH(QString, hw);
    QFETCH(QString, precision);
    QFETCH(int, ep);
    QFETCH(double, allreduceUs);
    BudgetInputs in;
    in.model = loadModelConfig(model.toStdString()).value();
    in.hardware = loadHardwareProfile(hw.toStdString()).value();
    in.modelSource = model.toStdString();
    in.hardwareSource = hw.toStdString();
    QVERIFY(applyPrecisionSpec(precision.toStdString(), in).isOk());
    in.tp = 8;
    in.ep = uint32_t(ep);
    in.batch = 3;
    in.context = 5000;
    in.allreduceUs = allreduceUs;
    in.cudaGraphs = false;
    in.indexer = IndexerMode::On;
    in.engine = EngineReplication::None;
    in.edgeCollectives = true;
    in.draftTokens = 2;
    in.acceptanceLength = 1.7;
    in.extraKernelsPerLayer = 5;
    in.hardwareOverrides = "memory_efficiency=0.9,graph_fixed_us=20";
    QVERIFY(applyHardwareOverrides(in.hardware, in.hardwareOverrides).isOk());
    auto before = computeBudget(in);
    QVERIFY2(before.hasValue(), before.error().c_str());

    BudgetSettings settings = toBudgetSettings(in);
    pb::BudgetSettings reread;
    QVERIFY(reread.ParseFromString(toProto(settings).SerializeAsString())); // as stored in a trace file
    QVERIFY(fromProto(reread) == settings);
    auto restored = fromBudgetSettings(fromProto(reread));
    QVERIFY2(restored.hasValue(), restored.error().c_str());
    QCOMPARE(precisionSpec(*restored), precisionSpec(in));
    QCOMPARE(restored->allreduceUs, allreduceUs < 0 ? -1.0 : allreduceUs);
    QCOMPARE(restored->hardware.calibrated, in.hardware.calibrated);
    QCOMPARE(restored->hardware.memoryEfficiency, 0.9);
    QCOMPARE(restored->hardware.graphFixedUs, 20.0);
    auto after = computeBudget(*restored);
    QVERIFY2(after.hasValue(), after.error().c_str());
    QCOMPARE(after->idealMs, before->idealMs);
    QCOMPARE(after->achievableMs, before->achievableMs);
    QCOMPARE(after->items.size(), before->items.size());
    QCOMPARE(after->assumptions, before->assumptions);
}

void TestBudgetSettings::presetNamesWithoutJson()
{
    BudgetSettings s;
    s.model = "glm-5";
    s.hardware = "b200";
    s.tp = 8;
    s.precision["routed_experts"] = "nvfp4";
    auto in = fromBudgetSettings(s);
    QVERIFY2(in.hasValue(), in.error().c_str());
    QCOMPARE(in->model.layers, 78u);
    QCOMPARE(in->hardware.memoryBandwidthGbs, 7700.0);
    QCOMPARE(in->allreduceUs, -1.0); // unset: the hardware table
    QCOMPARE(in->precision.at(Component::RoutedExperts), Precision::Nvfp4);
}

void TestBudgetSettings::badSettings()
{
    BudgetSettings s;
    s.model = "glm-5";
    s.hardware = "b200";
    s.engine = "tensorrt";
    auto in = fromBudgetSettings(s);
    QVERIFY(!in.hasValue());
    QVERIFY(QString::fromStdString(in.error()).contains("engine 'tensorrt'"));
    s.engine = "sglang";
    s.modelConfigJson = "{not json";
    in = fromBudgetSettings(s);
    QVERIFY(!in.hasValue());
    QVERIFY(QString::fromStdString(in.error()).contains("model config"));
}

QTEST_GUILESS_MAIN(TestBudgetSettings)
#include "tst_budgetsettings.moc"
