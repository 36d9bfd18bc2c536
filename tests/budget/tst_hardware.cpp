// SPDX-License-Identifier: MIT
// Precisions (bytes per parameter), hardware presets, gapscope-calibrate profiles, AllReduce tables.
#include "model/budget/hardware.h"
#include "model/budget/precision.h"

#include <QtTest>

using namespace gapscope;
using namespace gapscope::model;

namespace {
QString dataPath(const char* name)
{
    return QStringLiteral(GAPSCOPE_TEST_DATA "/budget/data/") + name;
}
} // namespace

class TestHardware : public QObject {
    Q_OBJECT
private slots:
    void precisionBytes_data();
    void precisionBytes();
    void presets_data();
    void presets();
    void allreduceTable_data();
    void allreduceTable();
    void calibrationOverlaysPreset();
    void calibrationWithoutPreset();
    void gemvCurve_data();
    void gemvCurve();
    void badProfiles_data();
    void badProfiles();
    void overrides_data();
    void overrides();
};

void TestHardware::precisionBytes_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<double>("bytes");
    QTest::addColumn<QString>("rate");
    QTest::newRow("bf16") << "bf16" << 2.0 << "bf16";
    QTest::newRow("fp16") << "fp16" << 2.0 << "bf16";
    QTest::newRow("fp8") << "fp8" << 1.0 << "fp8";
    QTest::newRow("fp8-block128") << "fp8-block128" << 1.000244140625 << "fp8";
    QTest::newRow("nvfp4") << "nvfp4" << 0.5625 << "fp4";
    QTest::newRow("mxfp4") << "mxfp4" << 0.53125 << "fp4";
    QTest::newRow("int4-g128") << "int4-g128" << 0.51953125 << "bf16";
    QTest::newRow("alias FP8_BLOCK128") << "FP8_BLOCK128" << 1.000244140625 << "fp8";
}

void TestHardware::precisionBytes()
{
    QFETCH(QString, name);
    Precision p;
    QVERIFY(parsePrecision(name.toStdString(), p));
    QTEST(bytesPerParam(p), "bytes");
    QTEST(QString(toString(mathRate(p))), "rate");
    QVERIFY(!parsePrecision("fp6", p));
}

void TestHardware::presets_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<double>("bandwidth");
    QTest::addColumn<double>("bf16");
    QTest::addColumn<double>("fp4"); // tflops(Fp4): falls back to FP8 without FP4 units
    QTest::addColumn<QString>("interconnect");
    QTest::addColumn<int>("sms");
    QTest::newRow("rtx-pro-6000") << "rtx-pro-6000" << 1792.0 << 500.0 << 2000.0 << "pcie" << 188;
    QTest::newRow("h100-sxm") << "h100-sxm" << 3350.0 << 989.0 << 1979.0 << "nvlink" << 132;
    QTest::newRow("h200-sxm") << "h200-sxm" << 4800.0 << 989.0 << 1979.0 << "nvlink" << 132;
    QTest::newRow("b200") << "b200" << 7700.0 << 2250.0 << 9000.0 << "nvlink" << 148;
}

void TestHardware::presets()
{
    QFETCH(QString, name);
    auto hw = loadHardwareProfile(name.toStdString());
    QVERIFY2(hw.hasValue(), hw.error().c_str());
    QCOMPARE(QString::fromStdString(hw->name), name);
    QCOMPARE(QString::fromStdString(hw->origin), QString("preset"));
    QTEST(hw->memoryBandwidthGbs, "bandwidth");
    QTEST(hw->tflops(MathRate::Bf16), "bf16");
    QTEST(hw->tflops(MathRate::Fp4), "fp4");
    QTEST(QString::fromStdString(hw->interconnectKind), "interconnect");
    QTEST(int(hw->smCount), "sms");
    QVERIFY(hw->allreduceTable("") != nullptr);
    QVERIFY(!hw->notes.empty());
    QVERIFY(!hw->calibrated);
}

void TestHardware::allreduceTable_data()
{
    QTest::addColumn<double>("bytes");
    QTest::addColumn<double>("us");
    // rtx-pro-6000 custom one-shot: 7.5 us (1 KB), 9.2 (8 KB), 16.5 (32 KB), 25.9 (64 KB).
    QTest::newRow("below the table: flat") << 256.0 << 7.5;
    QTest::newRow("on a point") << 8192.0 << 9.2;
    QTest::newRow("interpolated") << 20480.0 << (9.2 + 16.5) / 2;
    // Above: + 2 (N-1)/N x M / B with 54 GB/s PCIe and 8 ranks.
    QTest::newRow("extrapolated") << 65536.0 + 54e3 << 25.9 + 2.0 * 7 / 8;
}

void TestHardware::allreduceTable()
{
    QFETCH(double, bytes);
    QFETCH(double, us);
    auto hw = loadHardwareProfile("rtx-pro-6000");
    QVERIFY(hw.hasValue());
    const AllReduceTable* t = hw->allreduceTable("custom-oneshot");
    QVERIFY(t != nullptr);
    QVERIFY(std::abs(allreduceUs(*t, bytes, 8, hw->interconnectGbs) - us) < 1e-9);
    QCOMPARE(allreduceUs(*t, bytes, 1, hw->interconnectGbs), 0.0); // one rank: nothing to reduce
    QCOMPARE(QString::fromStdString(hw->allreduceTable("")->library), QString("nccl"));
}

void TestHardware::calibrationOverlaysPreset()
{
    auto hw = loadHardwareProfile(dataPath("calibration-h200.json").toStdString());
    QVERIFY2(hw.hasValue(), hw.error().c_str());
    QVERIFY(hw->calibrated);
    QCOMPARE(QString::fromStdString(hw->name), QString("h200-sxm"));
    QCOMPARE(hw->memoryBandwidthGbs, 4800.0); // ideal column keeps the datasheet
    QCOMPARE(hw->achievableBandwidthGbs(), 4500.0);
    QCOMPARE(hw->kernelFloorUs, 3.1);
    QCOMPARE(hw->launchEagerUs, 4.6);
    QCOMPARE(hw->graphFixedUs, 14.0);
    QCOMPARE(QString::fromStdString(hw->allreduceTable("")->library), QString("nccl"));
    QCOMPARE(hw->allreduceTable("")->ranks, 2u);
    QCOMPARE(hw->measuredBf16Tflops, 760.0);
}

void TestHardware::calibrationWithoutPreset()
{
    auto hw = loadHardwareProfile(dataPath("calibration-unknown.json").toStdString());
    QVERIFY2(hw.hasValue(), hw.error().c_str());
    QCOMPARE(hw->memoryBandwidthGbs, 4500.0); // measured figures stand in for the datasheet
    QCOMPARE(hw->bf16Tflops, 760.0);
    bool noted = false;
    for (const auto& n : hw->notes)
        noted |= n.find("no datasheet preset") != std::string::npos;
    QVERIFY(noted);
}

void TestHardware::gemvCurve_data()
{
    QTest::addColumn<double>("bytes");
    QTest::addColumn<double>("us");
    QTest::newRow("below the curve: the floor") << 1000.0 << 3.1;
    QTest::newRow("interpolated") << (1048576.0 + 16777216.0) / 2 << (3.1 + 6.4) / 2;
    QTest::newRow("above: measured bandwidth") << 268435456.0 + 4.5e6 << 63.0;
}

void TestHardware::gemvCurve()
{
    QFETCH(double, bytes);
    QFETCH(double, us);
    auto hw = loadHardwareProfile(dataPath("calibration-h200.json").toStdString());
    QVERIFY(hw.hasValue());
    QVERIFY2(std::abs(hw->kernelUs(bytes) - us) < 1e-9, qPrintable(QString::number(hw->kernelUs(bytes))));
}

void TestHardware::badProfiles_data()
{
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("error");
    QTest::newRow("no bandwidth") << R"({"name": "x", "bf16_tflops": 10})"
                                  << "memory_bandwidth_gbs";
    QTest::newRow("negative bandwidth") << R"({"name": "x", "bf16_tflops": 10, "memory_bandwidth_gbs": -5})"
                                        << "memory_bandwidth_gbs";
    QTest::newRow("allreduce without points")
        << R"({"bf16_tflops": 10, "memory_bandwidth_gbs": 5, "allreduce": {"library": "nccl"}})"
        << "allreduce: points";
    QTest::newRow("bad point")
        << R"({"bf16_tflops": 10, "memory_bandwidth_gbs": 5, "allreduce": {"points": [{"bytes": 1}]}})"
        << "points[0]";
    QTest::newRow("efficiency above 1")
        << R"({"bf16_tflops": 10, "memory_bandwidth_gbs": 5, "efficiency": {"memory": 1.5}})"
        << "efficiency: memory";
    QTest::newRow("calibration version") << R"({"kind": "gapscope-calibration", "version": 7})"
                                         << "version 7";
}

void TestHardware::badProfiles()
{
    QFETCH(QString, json);
    QFETCH(QString, error);
    auto doc = json::parse(json.toStdString());
    QVERIFY(doc.hasValue());
    auto hw = parseHardwareProfile(doc.value(), "hw.json");
    QVERIFY(!hw.hasValue());
    QVERIFY2(QString::fromStdString(hw.error()).contains(error), hw.error().c_str());
    QVERIFY2(QString::fromStdString(hw.error()).startsWith("hw.json"), hw.error().c_str());
}

void TestHardware::overrides_data()
{
    QTest::addColumn<QString>("spec");
    QTest::addColumn<double>("bandwidth"); // memoryBandwidthGbs after the edit
    QTest::addColumn<double>("floor"); // kernelFloorUs after the edit
    QTest::addColumn<QString>("error"); // "" when the spec is good
    QTest::newRow("two figures") << "memory_bandwidth_gbs=4000,kernel_floor_us=3.5" << 4000.0 << 3.5 << "";
    QTest::newRow("empty") << "" << 4800.0 << 2.0 << "";
    QTest::newRow("unknown figure") << "bandwidth=1" << 4800.0 << 2.0 << "unknown figure 'bandwidth'";
    QTest::newRow("not a number") << "kernel_floor_us=fast" << 4800.0 << 2.0 << "kernel_floor_us needs a number";
    QTest::newRow("efficiency above 1") << "memory_efficiency=1.2" << 4800.0 << 2.0 << "memory_efficiency needs";
}

void TestHardware::overrides()
{
    QFETCH(QString, spec);
    QFETCH(QString, error);
    auto hw = loadHardwareProfile("h200-sxm");
    QVERIFY(hw.hasValue());
    Status st = applyHardwareOverrides(*hw, spec.toStdString());
    if (!error.isEmpty()) {
        QVERIFY(!st.isOk());
        QVERIFY2(QString::fromStdString(st.message()).contains(error), st.message().c_str());
        return;
    }
    QVERIFY2(st.isOk(), st.message().c_str());
    QTEST(hw->memoryBandwidthGbs, "bandwidth");
    QTEST(hw->kernelFloorUs, "floor");
    if (!spec.isEmpty())
        QCOMPARE(QString::fromStdString(hw->notes.back()), QString("edited: kernel_floor_us = 3.5"));
}

QTEST_GUILESS_MAIN(TestHardware)
#include "tst_hardware.moc"
