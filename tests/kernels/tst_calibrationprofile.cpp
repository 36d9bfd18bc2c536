// SPDX-License-Identifier: MIT
// The calibration profile: JSON round trip, interpolation, spread, and that the budget model
// accepts what gapscope-calibrate writes.
#include "kernels/calibrationprofile.h"
#include "model/budget/hardware.h"

#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

using namespace gapscope;
using namespace gapscope::kernels;

class TestCalibrationProfile : public QObject {
    Q_OBJECT

    static CalibrationProfile sample()
    {
        CalibrationProfile p;
        p.created = "2026-11-30T12:00:00Z";
        p.toolVersion = "0.1.0";
        p.device.name = "NVIDIA H200";
        p.device.uuid = "GPU-0";
        p.device.smCount = 132;
        p.device.memoryBytes = 150754820096ull;
        p.device.count = 2;
        p.device.interconnect = "nvlink";
        p.hbmCopyGbs = 4300;
        p.hbmReadGbs = 4500;
        p.gemv = { { 1 << 20, 3.0 }, { 4 << 20, 4.0 }, { 64 << 20, 16.0 } };
        p.gemvFormats = { { "nvfp4", 256 << 20, 70.0 } };
        p.gemvVariants = { { "persistent+pdl", 64 << 20, 20.0 } };
        p.copyPerLaunch = { { 64 << 20, 32.0 } };
        p.readPerLaunch = { { 64 << 20, 16.5 } };
        p.gemvKernels = { { "gemv_bf16_kernel<1>", 80, 3 } };
        p.launchEagerUs = 4.6;
        p.graphFixedUs = 14;
        p.graphPerNodeUs = 0.6;
        p.allreduceRanks = 2;
        p.allreduce = { { 256, 9.0 }, { 65536, 12.0 } };
        p.bf16MatmulTflops = 760;
        p.repeats = 3;
        p.maxSpreadPct = 2.1;
        return p;
    }

private slots:
    void roundTrip()
    {
        const CalibrationProfile p = sample();
        auto q = CalibrationProfile::fromJson(json::parse(json::write(p.toJson())).value(), "x");
        QVERIFY2(q.hasValue(), q.hasValue() ? "" : q.error().c_str());
        QCOMPARE(q->device.name, p.device.name);
        QCOMPARE(q->gemv.size(), size_t(3));
        QCOMPARE(q->allreduce.back().us, 12.0);
        QCOMPARE(q->gemvFormats.front().format, std::string("nvfp4"));
        QCOMPARE(q->graphPerNodeUs, 0.6);
        const json::Value j = p.toJson();
        QCOMPARE(j["kind"].toString(), std::string("gapscope-calibration"));
        QCOMPARE(j["gemv"].at(2)["gbs"].toDouble(), double(64 << 20) / 16e3);
        QCOMPARE(j["allreduce"]["library"].toString(), std::string("nccl"));
        // Extensions: GEMV schedules and the same-size copy (gbs counts read + written bytes).
        QCOMPARE(q->gemvVariants.size(), size_t(1));
        QCOMPARE(q->gemvVariants.front().format, std::string("persistent+pdl"));
        QCOMPARE(q->gemvVariants.front().us, 20.0);
        QCOMPARE(q->copyPerLaunch.front().bytes, double(64 << 20));
        QCOMPARE(j["gemv_variants"].at(0)["gbs"].toDouble(), double(64 << 20) / 20e3);
        QCOMPARE(j["copy_per_launch"].at(0)["gbs"].toDouble(), 2.0 * double(64 << 20) / 32e3);
        // The same-size streaming read (gbs counts read bytes).
        QCOMPARE(q->readPerLaunch.size(), size_t(1));
        QCOMPARE(q->readPerLaunch.front().us, 16.5);
        QCOMPARE(j["read_per_launch"].at(0)["gbs"].toDouble(), double(64 << 20) / 16.5e3);
        QCOMPARE(q->gemvKernels.size(), size_t(1));
        QCOMPARE(q->gemvKernels.front().registers, 80);
        QCOMPARE(q->gemvKernels.front().blocksPerSm, 3);
        QCOMPARE(j["gemv_kernels"].at(0)["kernel"].toString(), std::string("gemv_bf16_kernel<1>"));
    }

    void interpolation()
    {
        const CalibrationProfile p = sample();
        QCOMPARE(p.gemvUs(512 << 10), 3.0); // below the curve: the floor
        QCOMPARE(p.gemvUs(4 << 20), 4.0); // on a point
        QVERIFY(p.gemvUs(2 << 20) > 3.0 && p.gemvUs(2 << 20) < 4.0);
        QCOMPARE(p.gemvUs(128 << 20), 32.0); // beyond: at the last point's bandwidth
        QCOMPARE(p.allreduceUs(100), 9.0);
        QCOMPARE(p.kernelFloorUs(), 3.0);
        QCOMPARE(spreadPct({ 100, 102, 101 }), 2.0 / 101 * 100);
        QCOMPARE(median({ 3, 1, 2, 10 }), 2.5);
    }

    void rejectsBadProfiles()
    {
        QVERIFY(!CalibrationProfile::fromJson(json::parse("{\"kind\":\"other\"}").value(), "p.json").hasValue());
        auto bad = CalibrationProfile::fromJson(
            json::parse(R"({"kind":"gapscope-calibration","hbm_read_gbs":1,"gemv":[{"bytes":-1,"us":2}]})").value(),
            "p.json");
        QVERIFY(!bad.hasValue());
        QVERIFY(QString::fromStdString(bad.error()).contains("p.json: gemv[0]"));
    }

    void budgetReadsIt()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("calib.json").toStdString();
        std::ofstream(path) << json::write(sample().toJson());
        auto hw = model::loadHardwareProfile(path);
        QVERIFY2(hw.hasValue(), hw.hasValue() ? "" : hw.error().c_str());
        QVERIFY(hw->calibrated);
    }
};

QTEST_GUILESS_MAIN(TestCalibrationProfile)
#include "tst_calibrationprofile.moc"
