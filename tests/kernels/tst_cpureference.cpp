// SPDX-License-Identifier: MIT
// Number formats and the CPU references the GPU self-check compares against, on hand-computed values.
#include "kernels/cpureference.h"
#include "kernels/numerics.h"

#include <QtTest>
#include <cmath>
#include <cstring>

using namespace gapscope;
using namespace gapscope::kernels;
using model::Precision;

Q_DECLARE_METATYPE(Precision)

class TestCpuReference : public QObject {
    Q_OBJECT

private slots:
    void numberFormats()
    {
        QCOMPARE(num::e4m3ToFloat(0x38), 1.0f);
        QCOMPARE(num::e4m3ToFloat(0x7e), 448.0f);
        QCOMPARE(num::e4m3ToFloat(0x01), std::ldexp(1.0f, -9));
        QCOMPARE(num::e4m3ToFloat(0xb8), -1.0f);
        QVERIFY(std::isnan(num::e4m3ToFloat(0x7f)));
        const float e2m1[8] = { 0, 0.5f, 1, 1.5f, 2, 3, 4, 6 };
        for (uint32_t n = 0; n < 8; ++n) {
            QCOMPARE(num::e2m1ToFloat(n), e2m1[n]);
            QCOMPARE(num::e2m1ToFloat(n | 8), -e2m1[n]);
        }
        QCOMPARE(num::e8m0ToFloat(127), 1.0f);
        QCOMPARE(num::e8m0ToFloat(130), 8.0f);
        QCOMPARE(num::floatToBf16(1.0f + std::ldexp(1.0f, -8)), uint16_t(0x3f80)); // tie -> even
        QCOMPARE(num::floatToBf16(1.0f + 3 * std::ldexp(1.0f, -9)), uint16_t(0x3f81));
        QCOMPARE(num::bf16ToFloat(0xc040), -3.0f);
        QCOMPARE(num::floatToFp16(1.0f), uint16_t(0x3c00));
        QCOMPARE(num::floatToFp16(-2.5f), uint16_t(0xc100));
        QCOMPARE(num::fp16ToFloat(0x0001), std::ldexp(1.0f, -24));
        QCOMPARE(num::fp16ToFloat(num::floatToFp16(0.1f)), num::fp16ToFloat(0x2e66));
        QVERIFY(num::hashUniform(1, 2) >= -1.0f && num::hashUniform(1, 2) < 1.0f);
        QVERIFY(num::hash32(1) != num::hash32(2));
    }

    void layouts_data()
    {
        QTest::addColumn<Precision>("precision");
        QTest::addColumn<qulonglong>("bytes");
        // 256 x 4096 matrices
        QTest::newRow("bf16") << Precision::Bf16 << qulonglong(256 * 4096 * 2);
        QTest::newRow("fp8") << Precision::Fp8 << qulonglong(256 * 4096 + 4);
        QTest::newRow("fp8-block128") << Precision::Fp8Block128 << qulonglong(256 * 4096 + 2 * 32 * 4);
        QTest::newRow("nvfp4") << Precision::Nvfp4 << qulonglong(256 * 4096 / 2 + 256 * 4096 / 16 + 4);
        QTest::newRow("mxfp4") << Precision::Mxfp4 << qulonglong(256 * 4096 / 2 + 256 * 4096 / 32);
        QTest::newRow("int4-g128") << Precision::Int4G128 << qulonglong(256 * 4096 / 2 + 256 * 32 * 2 + 256 * 16);
    }

    void layouts()
    {
        QFETCH(Precision, precision);
        QFETCH(qulonglong, bytes);
        WeightLayout l;
        QVERIFY(WeightLayout::make(precision, 256, 4096, l, nullptr));
        QCOMPARE(l.bytes(), uint64_t(bytes));
        // Within 0.1% of the budget's bytes per parameter.
        QVERIFY(std::fabs(double(l.bytes()) / (256.0 * 4096) - model::bytesPerParam(precision))
            < 1e-3 * model::bytesPerParam(precision) + 1e-5);
        std::string why;
        QVERIFY(!WeightLayout::make(precision, 4, 100, l, &why));
        QVERIFY(QString::fromStdString(why).contains("multiple of"));
    }

    // One constant-valued 2 x 256 matrix per format, built byte by byte: every weight equals `w`.
    void dequantAndGemv_data()
    {
        QTest::addColumn<Precision>("precision");
        QTest::addColumn<double>("w");
        QTest::newRow("bf16") << Precision::Bf16 << 1.5;
        QTest::newRow("fp16") << Precision::Fp16 << -2.5;
        QTest::newRow("fp8") << Precision::Fp8 << 0.5;
        QTest::newRow("fp8-block128") << Precision::Fp8Block128 << 0.25;
        QTest::newRow("nvfp4") << Precision::Nvfp4 << 2.0;
        QTest::newRow("mxfp4") << Precision::Mxfp4 << 3.0;
        QTest::newRow("int4-g128") << Precision::Int4G128 << 0.5;
    }

    void dequantAndGemv()
    {
        QFETCH(Precision, precision);
        QFETCH(double, w);
        WeightLayout l;
        QVERIFY(WeightLayout::make(precision, 2, 256, l, nullptr));
        std::vector<uint8_t> v(l.valueBytes), s(l.scaleBytes + 4);
        auto putF = [&](uint64_t off, float f) { std::memcpy(s.data() + off, &f, 4); };
        switch (precision) {
        case Precision::Bf16:
            for (size_t i = 0; i < v.size(); i += 2) {
                v[i] = 0xc0;
                v[i + 1] = 0x3f;
            } // 0x3fc0 = 1.5
            break;
        case Precision::Fp16:
            for (size_t i = 0; i < v.size(); i += 2) {
                v[i] = 0x00;
                v[i + 1] = 0xc1;
            } // 0xc100 = -2.5
            break;
        case Precision::Fp8:
            std::fill(v.begin(), v.end(), 0x38);
            putF(0, 0.5f);
            break;
        case Precision::Fp8Block128:
            std::fill(v.begin(), v.end(), 0x38);
            putF(0, 0.25f);
            putF(4, 0.25f);
            break;
        case Precision::Nvfp4:
            std::fill(v.begin(), v.end(), 0x22); // 1.0, 1.0
            std::fill(s.begin(), s.begin() + 2 * 256 / 16, 0x38); // E4M3 1.0
            putF(l.auxOffset, 2.0f);
            break;
        case Precision::Mxfp4:
            std::fill(v.begin(), v.end(), 0x33); // 1.5, 1.5
            std::fill(s.begin(), s.begin() + l.scaleBytes, 128); // 2.0
            break;
        case Precision::Int4G128:
            std::fill(v.begin(), v.end(), 0x99); // q = 9
            for (uint64_t i = 0; i < 4; ++i) {
                s[2 * i] = 0x00;
                s[2 * i + 1] = 0x38;
            } // fp16 0.5
            std::fill(s.begin() + l.auxOffset, s.begin() + l.scaleBytes, 0x88); // zero = 8
            break;
        }
        QCOMPARE(ref::weight(l, v.data(), s.data(), 1, 200), w);
        std::vector<uint16_t> x(2 * 256, num::floatToBf16(1.0f));
        x[256 + 3] = num::floatToBf16(3.0f); // token 1 differs in one element
        const auto y = ref::gemv(l, v.data(), s.data(), x.data(), 256, 2);
        QCOMPARE(y.size(), size_t(4));
        QCOMPARE(y[0], 256 * w);
        QCOMPARE(y[3], 258 * w);
    }

    void attentionAndRouting()
    {
        // Two cached rows of [k0 k1] = [1 0] and [0 1]; V rows 10 and 20. q = [0 0]: equal weights.
        std::vector<uint16_t> k = { num::floatToBf16(1), 0, 0, num::floatToBf16(1) };
        std::vector<uint16_t> v = { num::floatToBf16(10), num::floatToBf16(20) };
        auto o = ref::attentionHead({ 0, 0 }, reinterpret_cast<uint8_t*>(k.data()), 2,
            reinterpret_cast<uint8_t*>(v.data()), 1, 2, 2, 1, false, 1.0);
        QCOMPARE(o[0], 15.0);
        o = ref::attentionHead({ std::log(3.0), 0 }, reinterpret_cast<uint8_t*>(k.data()), 2,
            reinterpret_cast<uint8_t*>(v.data()), 1, 2, 2, 1, false, 1.0);
        QVERIFY(std::fabs(o[0] - 12.5) < 1e-12); // weights 3/4 and 1/4
        auto r = ref::routeTopk({ 0, std::log(3.0), std::log(2.0), -5 }, 2);
        QCOMPARE(r.experts, (std::vector<int> { 1, 2 }));
        QVERIFY(std::fabs(r.weights[0] - 0.6) < 1e-12 && std::fabs(r.weights[1] - 0.4) < 1e-12);
        QCOMPARE(ref::argmax({ 1, 5, 5, 2 }), uint64_t(1));
        double a = 1, b = 0;
        ref::rotate(a, b, 1, 0, 2, 10000);
        QVERIFY(std::fabs(a - std::cos(1.0)) < 1e-12 && std::fabs(b - std::sin(1.0)) < 1e-12);
        QCOMPARE(ref::relativeError({ 1, 2 }, { 1, 2 }), 0.0);
        QVERIFY(std::isinf(ref::relativeError({ NAN }, { 1 })));
        QCOMPARE(ref::silu(0), 0.0);
    }
};

QTEST_GUILESS_MAIN(TestCpuReference)
#include "tst_cpureference.moc"
