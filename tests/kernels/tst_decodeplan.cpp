// SPDX-License-Identifier: MIT
// DecodePlan: the per-layer schedule of gapscope-decode-sim, checked against the budget model's
// byte counts for the same inputs, and its structural invariants.
#include "kernels/decodeplan.h"
#include "kernels/simoptions.h"
#include "model/budget/budget.h"
#include "model/budget/hardware.h"

#include <QtTest>
#include <cmath>
#include <map>

using namespace gapscope;
using namespace gapscope::kernels;
using model::Component;

class TestDecodePlan : public QObject {
    Q_OBJECT

private:
    static DecodePlan build(const QString& modelName, uint32_t tp, uint32_t batch, uint64_t ctx, const QString& spec)
    {
        auto cfg = model::loadModelConfig(modelName.toStdString());
        if (!cfg)
            qFatal("%s", cfg.error().c_str());
        PlanOptions o;
        o.tp = tp;
        o.batch = batch;
        o.context = ctx;
        if (Status s = parsePrecisionList(spec.toStdString(), o); !s)
            qFatal("%s", s.message().c_str());
        auto plan = DecodePlan::build(*cfg, o);
        if (!plan)
            qFatal("%s", plan.error().c_str());
        return *plan;
    }

private slots:
    void matchesBudgetBytes_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<uint>("tp");
        QTest::addColumn<uint>("batch");
        QTest::addColumn<qulonglong>("context");
        QTest::addColumn<QString>("precision");
        QTest::newRow("glm-5 tp8 nvfp4 experts") << "glm-5" << 8u << 1u << 4096ull << "all=bf16,routed_experts=nvfp4";
        QTest::newRow("glm-5 tp2 b4 fp8") << "glm-5" << 2u << 4u << 1024ull << "all=fp8-block128";
        QTest::newRow("deepseek-v3 tp8 fp8") << "deepseek-v3" << 8u << 1u << 8192ull << "all=fp8-block128";
        QTest::newRow("qwen3-30b-a3b tp2 bf16") << "qwen3-30b-a3b" << 2u << 1u << 4096ull << "all=bf16";
        QTest::newRow("qwen3-30b-a3b tp1 b8 int4") << "qwen3-30b-a3b" << 1u << 8u << 2048ull << "all=int4-g128";
        QTest::newRow("llama-3.1-70b tp8 b2 fp8") << "llama-3.1-70b" << 8u << 2u << 4096ull << "all=fp8";
        QTest::newRow("deepseek-v2-lite tp1 mxfp4") << "deepseek-v2-lite" << 1u << 1u << 512ull << "all=mxfp4";
    }

    void matchesBudgetBytes()
    {
        QFETCH(QString, model);
        QFETCH(uint, tp);
        QFETCH(uint, batch);
        QFETCH(qulonglong, context);
        QFETCH(QString, precision);
        const DecodePlan plan = build(model, tp, batch, context, precision);

        model::BudgetInputs in;
        in.model = plan.config();
        auto hw = model::loadHardwareProfile("h200-sxm");
        QVERIFY2(hw.hasValue(), hw.error().c_str());
        in.hardware = *hw;
        in.tp = tp;
        in.batch = batch;
        in.context = context;
        QVERIFY(model::applyPrecisionSpec(precision.toStdString(), in).isOk());
        auto budget = model::computeBudget(in);
        QVERIFY2(budget.hasValue(), budget.error().c_str());

        std::map<Component, double> mine; // weights and cache bytes each op reads, by component
        plan.forEachOp([&](const PlanOp& op) { mine[op.component] += double(op.weightBytes + op.cacheBytes); });
        for (Component c : { Component::Attention, Component::Indexer, Component::DenseFfn, Component::Router,
                 Component::SharedExperts, Component::RoutedExperts, Component::LmHead, Component::KvCache }) {
            const double b = budget->componentBytes(c);
            const double m = mine.count(c) ? mine.at(c) : 0.0;
            QVERIFY2(std::fabs(m - b) <= 0.002 * b + 4096,
                qPrintable(QString("%1: plan %2 bytes, budget %3")
                               .arg(model::toString(c))
                               .arg(m, 0, 'f', 0)
                               .arg(b, 0, 'f', 0)));
        }
        QCOMPARE(static_cast<uint32_t>(plan.collectiveCount()), budget->collectivesPerStep);
    }

    void layerStructure()
    {
        const DecodePlan plan = build("glm-5", 8, 2, 1024, "all=bf16");
        const auto& cfg = plan.config();
        QCOMPARE(plan.layers().size(), size_t(cfg.layers));
        uint32_t moe = 0;
        for (const auto& l : plan.layers()) {
            QCOMPARE(l.ops.front().kind, OpKind::RmsNorm);
            QCOMPARE(QString::fromStdString(l.ops.front().name), QString("input_layernorm"));
            QCOMPARE(l.ops.back().kind, OpKind::AllReduce);
            int allreduces = 0, attention = 0;
            for (const auto& op : l.ops) {
                allreduces += op.kind == OpKind::AllReduce;
                attention += op.kind == OpKind::Attention;
            }
            QCOMPARE(allreduces, 2);
            QCOMPARE(attention, 1);
            moe += l.moe;
        }
        QCOMPARE(moe, cfg.moeLayerCount());
        QCOMPARE(plan.collectiveCount(), size_t(2 * cfg.layers + 2));
        QCOMPARE(plan.expertSlots(), std::min(2u * cfg.expertsPerToken, cfg.experts));
        const double e = cfg.experts, k = cfg.expertsPerToken;
        QCOMPARE(plan.expectedTouchedExperts(), e * (1 - std::pow(1 - k / e, 2.0)));
        QCOMPARE(plan.tail().back().kind, OpKind::SampleFinal);
        QCOMPARE(plan.head().front().kind, OpKind::Embedding);
        // The MLA attention reads the whole latent cache per GPU (not divided by TP): 576 values per row.
        for (const auto& op : plan.layers()[0].ops)
            if (op.kind == OpKind::Attention) {
                QCOMPARE(op.attn.headDimK, 576u);
                QCOMPARE(op.attn.qHeads, 8u);
                QCOMPARE(op.cacheBytes, uint64_t(2) * 1024 * 576 * 2);
            }
    }

    void tp1HasNoCollectives()
    {
        const DecodePlan plan = build("qwen3-30b-a3b", 1, 1, 128, "all=bf16");
        QCOMPARE(plan.collectiveCount(), size_t(0));
        plan.forEachOp([](const PlanOp& op) { QVERIFY(op.kind != OpKind::AllReduce && op.kind != OpKind::AllGather); });
    }

    void buffersCoverEveryGemv()
    {
        const DecodePlan plan = build("deepseek-v3", 4, 3, 256, "all=bf16");
        plan.forEachOp([&](const PlanOp& op) {
            if (op.kind != OpKind::Gemv)
                return;
            const GemvOp& g = op.gemv;
            const uint32_t groups = g.indirect ? plan.expertSlots() : g.groups;
            QVERIFY(plan.bufferElems(g.in) >= g.inOffset + (groups - 1) * g.inGroupStride + 2 * g.inLd + g.layout.cols);
            QVERIFY(
                plan.bufferElems(g.out) >= g.outOffset + (groups - 1) * g.outGroupStride + 2 * g.outLd + g.layout.rows);
            QVERIFY2(g.inLd % 8 == 0 && g.inGroupStride % 8 == 0, op.name.c_str()); // 16-byte aligned activations
        });
    }

    void rejectsBadInput_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<uint>("tp");
        QTest::addColumn<uint>("batch");
        QTest::addColumn<QString>("precision");
        QTest::addColumn<QString>("message");
        QTest::newRow("batch too large") << "glm-5" << 1u << 9u << "all=bf16"
                                         << "batch";
        QTest::newRow("tp not dividing heads") << "glm-5" << 3u << 1u << "all=bf16"
                                               << "tp 3";
        QTest::newRow("fp4 kv cache") << "glm-5" << 1u << 1u << "kv_cache=nvfp4"
                                      << "kv_cache";
        QTest::newRow("fp8 embedding") << "glm-5" << 1u << 1u << "embedding=fp8"
                                       << "embedding";
    }

    void rejectsBadInput()
    {
        QFETCH(QString, model);
        QFETCH(uint, tp);
        QFETCH(uint, batch);
        QFETCH(QString, precision);
        QFETCH(QString, message);
        auto cfg = model::loadModelConfig(model.toStdString());
        QVERIFY(cfg.hasValue());
        PlanOptions o;
        o.tp = tp;
        o.batch = batch;
        QVERIFY(parsePrecisionList(precision.toStdString(), o).isOk());
        auto plan = DecodePlan::build(*cfg, o);
        QVERIFY(!plan.hasValue());
        QVERIFY2(QString::fromStdString(plan.error()).contains(message), plan.error().c_str());
    }
};

QTEST_GUILESS_MAIN(TestDecodePlan)
#include "tst_decodeplan.moc"
