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

    // GQA runs q, k and v as ONE GEMV (qkv_proj, QKVParallelLinear) whose output row per token is
    // q | k | v; attention (for head dim 128) rotates q and appends k and v from
    // there itself: no rope_kv_append op.
    void gqaFusedQkv_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<uint>("tp");
        QTest::addColumn<uint>("batch");
        QTest::addColumn<uint>("qHeads"); // local
        QTest::addColumn<uint>("kvHeads"); // local
        QTest::addColumn<qulonglong>("rows"); // (qHeads + 2*kvHeads) * head_dim
        QTest::addColumn<qulonglong>("cols"); // hidden
        QTest::addColumn<int>("opsPerLayer"); // 3 fewer than q_proj, k_proj, v_proj and rope_kv_append
        // 16 heads + 2 KV heads of 128 per GPU: (16 + 2*2) * 128 rows of 2048; MoE layer 16 -> 13 ops.
        QTest::newRow("qwen3-30b-a3b tp2 b1") << "qwen3-30b-a3b" << 2u << 1u << 16u << 2u << 2560ull << 2048ull << 13;
        QTest::newRow("qwen3-30b-a3b tp2 b4") << "qwen3-30b-a3b" << 2u << 4u << 16u << 2u << 2560ull << 2048ull << 13;
        // 4 KV heads over 8 GPUs: one replicated KV head per GPU.
        QTest::newRow("qwen3-30b-a3b tp8 b1") << "qwen3-30b-a3b" << 8u << 1u << 4u << 1u << 768ull << 2048ull << 13;
        // Dense FFN layer 13 -> 10 ops.
        QTest::newRow("llama-3.1-70b tp8 b2") << "llama-3.1-70b" << 8u << 2u << 8u << 1u << 1280ull << 8192ull << 10;
    }

    void gqaFusedQkv()
    {
        QFETCH(QString, model);
        QFETCH(uint, tp);
        QFETCH(uint, batch);
        QFETCH(uint, qHeads);
        QFETCH(uint, kvHeads);
        QFETCH(qulonglong, rows);
        QFETCH(qulonglong, cols);
        QFETCH(int, opsPerLayer);
        const DecodePlan plan = build(model, tp, batch, 4096, "all=bf16");
        const auto& cfg = plan.config();
        const uint64_t hd = cfg.headDim;
        for (const auto& l : plan.layers()) {
            QCOMPARE(int(l.ops.size()), opsPerLayer);
            int qkv = 0;
            for (const auto& op : l.ops) {
                QVERIFY2(op.name != "q_proj" && op.name != "k_proj" && op.name != "v_proj", op.name.c_str());
                if (op.name == "qkv_proj") {
                    ++qkv;
                    QCOMPARE(op.kind, OpKind::Gemv);
                    QCOMPARE(op.component, Component::Attention);
                    QCOMPARE(op.gemv.layout.rows, uint64_t(rows));
                    QCOMPARE(op.gemv.layout.cols, uint64_t(cols));
                    QCOMPARE(op.gemv.in, Buf::Normed);
                    QCOMPARE(op.gemv.out, Buf::Qkv);
                    QCOMPARE(op.gemv.outLd, uint64_t(rows));
                    // The bytes the three GEMVs read before: q, k and v rows of bf16.
                    QCOMPARE(op.weightBytes, (uint64_t(qHeads) * hd + 2 * uint64_t(kvHeads) * hd) * cols * 2);
                }
                QVERIFY2(op.kind != OpKind::RopeAppend, "rope runs inside attention");
                if (op.kind == OpKind::Attention) {
                    QVERIFY(op.attn.ropeInAttention);
                    QCOMPARE(op.attn.ropeDim, uint32_t(hd));
                    QCOMPARE(op.in, Buf::Qkv);
                    QCOMPARE(op.attn.qHeads, qHeads);
                    QCOMPARE(op.attn.kvHeads, kvHeads);
                    QCOMPARE(op.attn.qOffset, uint64_t(0));
                    QCOMPARE(op.attn.kOffset, uint64_t(qHeads) * hd);
                    QCOMPARE(op.attn.vOffset, (uint64_t(qHeads) + kvHeads) * hd);
                    QCOMPARE(op.attn.tokenStride, uint64_t(rows));
                }
            }
            QCOMPARE(qkv, 1);
            QCOMPARE(QString::fromStdString(l.ops[1].name), QString("qkv_proj"));
            QCOMPARE(l.ops[2].kind, OpKind::Attention);
        }
        const size_t headTail = plan.head().size() + plan.tail().size();
        QCOMPARE(plan.kernelCount(), headTail + size_t(opsPerLayer) * cfg.layers);
        QCOMPARE(plan.bufferElems(Buf::Qkv), uint64_t(batch) * rows);
        QCOMPARE(plan.bufferElems(Buf::Q), uint64_t(0)); // MLA's buffers stay unused
        QCOMPARE(plan.bufferElems(Buf::Kv), uint64_t(0));
    }

    // The fused projection reads what q_proj, k_proj and v_proj read: the step's bytes by component,
    // its weight storage and its kernel count, as recorded from the plan with three projections.
    void gqaFusedQkvKeepsBytes()
    {
        const DecodePlan plan = build("qwen3-30b-a3b", 2, 1, 4096, "all=bf16");
        const std::map<Component, double> before { { Component::Attention, 905969664 }, { Component::Router, 25165824 },
            { Component::RoutedExperts, 1811939328 }, { Component::LmHead, 311164928 }, { Component::Embedding, 4096 },
            { Component::Other, 397312 } };
        const auto now = plan.weightBytesByComponent();
        QCOMPARE(now.size(), before.size());
        for (const auto& [c, bytes] : before) {
            QVERIFY2(now.count(c), model::toString(c));
            QCOMPARE(now.at(c), bytes);
        }
        QCOMPARE(plan.weightStorageBytes(true), uint64_t(30544891904));
        QCOMPARE(plan.weightStorageBytes(false), uint64_t(3365801984));
        QCOMPARE(plan.kernelCount(), size_t(775 - 3 * 48)); // 2 + 48 * 16 + 5 with three projections and a rope op
    }

    // Per format, the fused matrix stores what the three did, except that fp8 and nvfp4 keep one FP32
    // tensor scale for it instead of one per part (as vLLM requantises the fused weight to one scale).
    void gqaFusedQkvBytesPerFormat_data()
    {
        QTest::addColumn<QString>("precision");
        QTest::addColumn<qulonglong>("saved"); // bytes per layer fewer than q_proj + k_proj + v_proj
        QTest::newRow("bf16") << "all=bf16" << 0ull;
        QTest::newRow("fp8") << "all=fp8" << 8ull;
        QTest::newRow("fp8-block128") << "all=fp8-block128" << 0ull;
        QTest::newRow("nvfp4") << "all=nvfp4" << 8ull;
        QTest::newRow("mxfp4") << "all=mxfp4" << 0ull;
        QTest::newRow("int4-g128") << "all=int4-g128" << 0ull;
    }

    void gqaFusedQkvBytesPerFormat()
    {
        QFETCH(QString, precision);
        QFETCH(qulonglong, saved);
        const DecodePlan plan = build("llama-3.1-70b", 8, 2, 4096, precision);
        const auto& cfg = plan.config();
        const uint64_t q = uint64_t(cfg.heads / 8) * cfg.headDim, kv = uint64_t(cfg.kvHeads / 8) * cfg.headDim;
        const model::Precision prec = plan.options().precisionOf(Component::Attention);
        WeightLayout lq, lkv;
        QVERIFY(WeightLayout::make(prec, q, cfg.hidden, lq, nullptr));
        QVERIFY(WeightLayout::make(prec, kv, cfg.hidden, lkv, nullptr));
        int found = 0;
        plan.forEachOp([&](const PlanOp& op) {
            if (op.name != "qkv_proj")
                return;
            ++found;
            QCOMPARE(op.weightBytes + saved, lq.bytes() + 2 * lkv.bytes());
        });
        QCOMPARE(found, int(cfg.layers));
    }

    // MLA keeps its projections: q_a and kv_a_proj_with_mqa two GEMVs, q in Buf::Q, no fused buffer.
    void mlaKeepsSeparateProjections()
    {
        const DecodePlan plan = build("deepseek-v3", 8, 2, 1024, "all=bf16");
        for (const auto& l : plan.layers()) {
            int qa = 0, kva = 0;
            for (const auto& op : l.ops) {
                QVERIFY2(op.name != "qkv_proj", "MLA has no fused qkv_proj");
                qa += op.name == "q_a_proj";
                kva += op.name == "kv_a_proj_with_mqa";
                if (op.kind == OpKind::RopeAppend || op.kind == OpKind::Attention) {
                    QCOMPARE(op.attn.tokenStride, uint64_t(0));
                    QCOMPARE(op.attn.qOffset, uint64_t(0));
                }
                if (op.kind == OpKind::Attention) {
                    QCOMPARE(op.in, Buf::QLat);
                    QVERIFY(!op.attn.ropeInAttention); // MLA's rope_kv_append runs before it
                }
            }
            QCOMPARE(qa, 1);
            QCOMPARE(kva, 1);
        }
        QCOMPARE(plan.bufferElems(Buf::Qkv), uint64_t(0));
        QVERIFY(plan.bufferElems(Buf::Q) > 0);
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
