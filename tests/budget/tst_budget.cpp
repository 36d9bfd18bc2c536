// SPDX-License-Identifier: MIT
// computeBudget against the figures of BUDGET.md (scenarios A and B, U(B), EP busiest rank, KV bytes)
// and its invariants.
#include "model/analysis/phasebudget.h"
#include "model/budget/budget.h"
#include "model/budget/moeexperts.h"

#include <QProcess>
#include <QtTest>

#include <algorithm>
#include <random>

using namespace gapscope;
using namespace gapscope::model;

namespace {

BudgetInputs inputs(const char* modelName, const char* hw, uint32_t tp, const char* precision, const char* engine)
{
    BudgetInputs in;
    auto m = loadModelConfig(modelName);
    auto h = loadHardwareProfile(hw);
    if (!m || !h)
        qFatal("cannot load %s / %s: %s %s", modelName, hw, m.error().c_str(), h.error().c_str());
    in.model = m.value();
    in.hardware = h.value();
    in.tp = tp;
    if (!applyPrecisionSpec(precision, in).isOk() || !parseEngine(engine, in.engine))
        qFatal("bad test inputs");
    return in;
}

const BudgetItem* item(const Budget& b, const std::string& name)
{
    auto it = std::find_if(b.items.begin(), b.items.end(), [&](const BudgetItem& i) { return i.name == name; });
    return it == b.items.end() ? nullptr : &*it;
}

bool near(double got, double want, double relTol)
{
    return std::abs(got - want) <= relTol * std::abs(want);
}

} // namespace

class TestBudget : public QObject {
    Q_OBJECT
private slots:
    void scenarios_data();
    void scenarios();
    void distinctExperts_data();
    void distinctExperts();
    void busiestRankB1();
    void busiestRankMatchesEnumeration_data();
    void busiestRankMatchesEnumeration();
    void expertParallelReadsBusiestRank();
    void expertHitsHistogram();
    void mlaKvBytesPerToken();
    void dsaIndexerModes();
    void gqaKvBytes();
    void gqaQkvOneKernel();
    void itemsAddUp();
    void speculativeDecoding();
    void launchFloor();
    void prefillBudget();
    void prefillBudgetOfSteps();
    void checkpointPrecisionDefaults();
    void rejectsBadInputs_data();
    void rejectsBadInputs();
    void precisionSpecParsing();
    void cliListsPresets();
};

void TestBudget::scenarios_data()
{
    QTest::addColumn<QString>("precision");
    QTest::addColumn<QString>("engine");
    QTest::addColumn<double>("allreduceUs"); // < 0: the hardware table
    QTest::addColumn<QString>("indexer");
    QTest::addColumn<double>("wantMs");
    QTest::addColumn<double>("tolerance");
    QTest::addColumn<double>("wantWeightGB"); // 0: not checked

    // BUDGET.md, GLM-5 on 8x RTX PRO 6000, TP8, batch 1, context 0.
    QTest::newRow("A: all nvfp4, lm_head bf16, 10 us") << "all=nvfp4,lm_head=bf16"
                                                       << "none" << 10.0 << "auto" << 3.23 << 0.01 << 2.99;
    QTest::newRow("A without the indexer") << "all=nvfp4,lm_head=bf16"
                                           << "none" << 10.0 << "off" << 3.23 << 0.005 << 2.99;
    QTest::newRow("B: routed nvfp4, sglang, 10 us") << "all=bf16,routed_experts=nvfp4"
                                                    << "sglang" << 10.0 << "auto" << 6.25 << 0.02 << 0.0;
    QTest::newRow("B: 24 us (NCCL on PCIe)") << "all=bf16,routed_experts=nvfp4"
                                             << "sglang" << 24.0 << "auto" << 8.46 << 0.02 << 0.0;
    QTest::newRow("B: NCCL table of the preset") << "all=bf16,routed_experts=nvfp4"
                                                 << "sglang" << -1.0 << "auto" << 8.46 << 0.02 << 0.0;
    QTest::newRow("B without the indexer") << "all=bf16,routed_experts=nvfp4"
                                           << "sglang" << 10.0 << "off" << 6.25 << 0.005 << 8.36;
}

void TestBudget::scenarios()
{
    QFETCH(QString, precision);
    QFETCH(QString, engine);
    QFETCH(double, allreduceUs);
    QFETCH(QString, indexer);
    QFETCH(double, wantMs);
    QFETCH(double, tolerance);
    QFETCH(double, wantWeightGB);
    BudgetInputs in = inputs("glm-5", "rtx-pro-6000", 8, qPrintable(precision), qPrintable(engine));
    in.allreduceUs = allreduceUs;
    QVERIFY(parseIndexerMode(indexer.toStdString(), in.indexer));
    auto b = computeBudget(in);
    QVERIFY2(b.hasValue(), b.error().c_str());
    QVERIFY2(near(b->idealMs, wantMs, tolerance), qPrintable(QString::number(b->idealMs)));
    QVERIFY(near(b->tokPerSecIdeal, 1000.0 / wantMs, tolerance * 1.01));
    if (wantWeightGB > 0)
        QVERIFY2(
            near(b->weightBytesPerGpu / 1e9, wantWeightGB, 0.002), qPrintable(QString::number(b->weightBytesPerGpu)));
    if (engine == "none") // the brief: 156 x 10 us = 1.56 ms
        QCOMPARE(b->collectivesPerStep, 156u);
    else
        QCOMPARE(b->collectivesPerStep, 158u);
    QVERIFY(b->achievableMs > b->idealMs);
}

void TestBudget::distinctExperts_data()
{
    QTest::addColumn<int>("tokens");
    QTest::addColumn<double>("want");
    QTest::newRow("B=1") << 1 << 8.0;
    QTest::newRow("B=2") << 2 << 15.8;
    QTest::newRow("B=4") << 4 << 30.5;
    QTest::newRow("B=8") << 8 << 57.4;
}

void TestBudget::distinctExperts()
{
    QFETCH(int, tokens);
    QFETCH(double, want);
    QCOMPARE(std::round(expectedDistinctExperts(256, 8, tokens) * 10) / 10, want);
}

void TestBudget::busiestRankB1()
{
    double busiest = expectedBusiestRankExperts(256, 8, 1, 8);
    QVERIFY2(std::abs(busiest - 2.5637) < 0.0005, qPrintable(QString::number(busiest, 'f', 6)));
    QCOMPARE(expectedBusiestRankExperts(256, 8, 1, 1), 8.0);
    QCOMPARE(expectedBusiestRankExperts(256, 8, 1000, 8), 32.0); // every expert touched
}

void TestBudget::busiestRankMatchesEnumeration_data()
{
    QTest::addColumn<int>("experts");
    QTest::addColumn<int>("perToken");
    QTest::addColumn<int>("tokens");
    QTest::addColumn<int>("ep");
    QTest::addColumn<double>("tolerance");
    QTest::newRow("E12 k3 B1 EP3 (exact)") << 12 << 3 << 1 << 3 << 1e-9;
    QTest::newRow("E12 k3 B1 EP4 (exact)") << 12 << 3 << 1 << 4 << 1e-9;
    QTest::newRow("E16 k2 B3 EP4 (U interpolated)") << 16 << 2 << 3 << 4 << 0.02;
}

// Brute force over every routing of B tokens (each a k-subset), which is what "simulate the
// busiest rank" means, compared with the closed form.
void TestBudget::busiestRankMatchesEnumeration()
{
    QFETCH(int, experts);
    QFETCH(int, perToken);
    QFETCH(int, tokens);
    QFETCH(int, ep);
    QFETCH(double, tolerance);
    std::vector<uint32_t> subsets;
    for (uint32_t mask = 0; mask < (1u << experts); ++mask)
        if (__builtin_popcount(mask) == perToken)
            subsets.push_back(mask);
    int per = experts / ep;
    double sum = 0, count = 0;
    std::vector<size_t> idx(tokens, 0);
    while (true) {
        uint32_t touched = 0;
        for (size_t i : idx)
            touched |= subsets[i];
        int mx = 0;
        for (int r = 0; r < ep; ++r)
            mx = std::max(mx, __builtin_popcount((touched >> (r * per)) & ((1u << per) - 1)));
        sum += mx;
        ++count;
        int t = 0;
        while (t < tokens && ++idx[t] == subsets.size())
            idx[t++] = 0;
        if (t == tokens)
            break;
    }
    double exact = sum / count;
    double got = expectedBusiestRankExperts(experts, perToken, tokens, ep);
    QVERIFY2(std::abs(got - exact) <= tolerance * exact,
        qPrintable(QString("closed form %1, enumeration %2").arg(got, 0, 'f', 6).arg(exact, 0, 'f', 6)));
}

void TestBudget::expertParallelReadsBusiestRank()
{
    BudgetInputs tpIn = inputs("glm-5", "rtx-pro-6000", 8, "all=bf16", "sglang");
    BudgetInputs epIn = tpIn;
    epIn.ep = 8;
    auto tp = computeBudget(tpIn);
    auto ep = computeBudget(epIn);
    QVERIFY(tp && ep);
    double ratio = item(*ep, "routed_experts")->bytes / item(*tp, "routed_experts")->bytes;
    QVERIFY2(std::abs(ratio - 2.56) < 0.01, qPrintable(QString::number(ratio))); // BUDGET.md: about 2.6x
    QVERIFY(std::abs(ep->busiestRankExperts - 2.5637) < 0.001);
}

void TestBudget::expertHitsHistogram()
{
    // Uniform counts reproduce U(B); a skewed histogram touches fewer distinct experts.
    std::vector<double> uniform(256, 10.0), skewed(256, 0.0);
    for (int e = 0; e < 16; ++e)
        skewed[e] = 100.0;
    ExpertLoad u = expertLoadFromHits({ uniform }, 8, 4, 8);
    QVERIFY(std::abs(u.distinct - expectedDistinctExperts(256, 8, 4)) < 1e-9);
    ExpertLoad s = expertLoadFromHits({ skewed }, 8, 4, 8);
    QVERIFY(s.distinct < 16.0 + 1e-9);
    QVERIFY2(std::abs(s.busiestRank - s.distinct) < 1e-9, "the 16 hot experts all live on rank 0 (32 per rank)");
    auto bad = parseExpertHits(json::parse("{\"counts\": [1, 2]}").value(), 256, "hits.json");
    QVERIFY(!bad.hasValue());
    QVERIFY(QString::fromStdString(bad.error()).contains("expected 256 counts"));
}

void TestBudget::mlaKvBytesPerToken()
{
    BudgetInputs in = inputs("glm-5", "rtx-pro-6000", 8, "all=bf16", "sglang");
    in.context = 1000;
    auto b = computeBudget(in);
    QVERIFY(b.hasValue());
    QCOMPARE(item(*b, "kv_cache")->bytes, 89856.0 * 1000); // (512 + 64) x 2 B x 78 layers, not divided by TP
    in.indexer = IndexerMode::On; // FP8 index keys: 132 B per token per layer on top
    b = computeBudget(in);
    QVERIFY(b.hasValue());
    QCOMPARE(item(*b, "kv_cache")->bytes + item(*b, "indexer.key_scan")->bytes, 100152.0 * 1000);
    in.indexer = IndexerMode::Auto;
    in.context = 100000; // DSA: only top-k latent rows, but every index key
    b = computeBudget(in);
    QVERIFY(b.hasValue());
    QCOMPARE(item(*b, "kv_cache")->bytes, 89856.0 * 2048);
    QCOMPARE(item(*b, "indexer.key_scan")->bytes, 132.0 * 78 * 100000);
}

void TestBudget::dsaIndexerModes()
{
    BudgetInputs in = inputs("glm-5", "rtx-pro-6000", 8, "all=bf16", "sglang");
    auto bytes = [&](IndexerMode mode, uint64_t ctx) {
        in.indexer = mode;
        in.context = ctx;
        auto b = computeBudget(in);
        return b ? b->componentBytes(Component::Indexer) : -1.0;
    };
    const double wk = 6144.0 * 128 * 2 * 78, all = 9371648.0 * 2 * 78; // replicated BF16
    QCOMPARE(bytes(IndexerMode::Off, 0), 0.0);
    QCOMPARE(bytes(IndexerMode::Auto, 0), wk);
    QCOMPARE(bytes(IndexerMode::Auto, 2048), wk);
    QCOMPARE(bytes(IndexerMode::On, 0), all);
    QCOMPARE(bytes(IndexerMode::Auto, 2049), all + 132.0 * 78 * 2049);
}

void TestBudget::gqaKvBytes()
{
    // ctx x 2 x n_kv x head_dim x bytes x layers / min(TP, n_kv)
    BudgetInputs in = inputs("llama-3.1-70b", "h100-sxm", 8, "", "sglang");
    in.context = 1000;
    auto b = computeBudget(in);
    QVERIFY(b.hasValue());
    QCOMPARE(item(*b, "kv_cache")->bytes, 1000.0 * 2 * 8 * 128 * 2 * 80 / 8);
    in = inputs("qwen3-235b-a22b", "h200-sxm", 8, "kv_cache=fp8", "sglang");
    in.context = 1000;
    in.batch = 4;
    b = computeBudget(in);
    QVERIFY(b.hasValue());
    QCOMPARE(item(*b, "kv_cache")->bytes, 4 * 1000.0 * 2 * 4 * 128 * 1 * 94 / 4);
}

void TestBudget::itemsAddUp()
{
    BudgetInputs in = inputs("deepseek-v3", "h200-sxm", 8, "", "sglang");
    in.batch = 16;
    in.context = 8192;
    auto b = computeBudget(in);
    QVERIFY(b.hasValue());
    double ideal = 0, ach = 0;
    for (const auto& it : b->items) {
        ideal += it.idealMs;
        ach += it.achievableMs;
        QVERIFY(it.bound == "memory" || it.bound == "compute" || it.bound == "latency");
        QVERIFY(it.idealMs >= 0 && it.achievableMs >= 0);
    }
    QVERIFY(std::abs(ideal - b->idealMs) < 1e-9);
    QVERIFY(std::abs(ach - b->achievableMs) < 1e-9);
    double byComponent = 0;
    for (int c = 0; c <= int(Component::Draft); ++c)
        byComponent += b->componentMs(Component(c), false);
    QVERIFY(std::abs(byComponent - b->idealMs) < 1e-9);
    QCOMPARE(b->componentMs(Component::LaunchHost, false), 0.0); // ideal: no launch cost
    QVERIFY(b->componentMs(Component::LaunchHost, true) > 0);
    QVERIFY(std::abs(b->tokPerSecIdeal - 16 * 1000.0 / b->idealMs) < 1e-6);
    QVERIFY(!b->assumptions.empty());
}

void TestBudget::speculativeDecoding()
{
    BudgetInputs in = inputs("glm-5", "h200-sxm", 8, "all=fp8", "sglang");
    auto plain = computeBudget(in);
    in.draftTokens = 3;
    in.acceptanceLength = 2.5;
    auto spec = computeBudget(in);
    QVERIFY(plain && spec);
    QVERIFY(item(*spec, "draft (MTP)") != nullptr);
    QVERIFY(spec->idealMs > plain->idealMs);
    QVERIFY(std::abs(spec->tokPerSecIdeal - 2.5 * 1000.0 / spec->idealMs) < 1e-6);
    QVERIFY(std::abs(spec->expertsPerLayer - expectedDistinctExperts(256, 8, 4)) < 1e-9); // 4 tokens verified
    in.acceptanceLength = 5; // more than draft + 1
    QVERIFY(!computeBudget(in).hasValue());
}

// GQA's q, k and v are one GEMV per layer: one item reading q (1/TP) + k + v (1/min(TP, kv heads)),
// one kernel per layer; MLA keeps its projections apart.
void TestBudget::gqaQkvOneKernel()
{
    // qwen3-30b-a3b: 48 layers, hidden 2048, 32 heads and 4 KV heads of 128, bf16.
    for (uint32_t tp : { 2u, 8u }) {
        BudgetInputs in = inputs("qwen3-30b-a3b", "h200-sxm", tp, "", "sglang");
        auto b = computeBudget(in);
        QVERIFY(b.hasValue());
        QVERIFY(!item(*b, "attention.q_proj") && !item(*b, "attention.k_proj") && !item(*b, "attention.v_proj"));
        const BudgetItem* qkv = item(*b, "attention.qkv_proj");
        QVERIFY(qkv != nullptr);
        const double kvWays = std::min(tp, 4u);
        const double perLayer = 2048.0 * 32 * 128 / tp * 2 + 2 * 2048.0 * 4 * 128 / kvWays * 2;
        QCOMPARE(qkv->bytes, 48 * perLayer);
        QCOMPARE(qkv->kernels, 48.0);
        // One kernel per layer at the whole GEMV's bytes: its time is that of one read of perLayer.
        QVERIFY(near(qkv->achievableMs * 1e3, 48 * in.hardware.kernelUs(perLayer), 1e-9));
    }
    BudgetInputs mla = inputs("deepseek-v3", "h200-sxm", 8, "", "sglang");
    auto b = computeBudget(mla);
    QVERIFY(b.hasValue());
    QVERIFY(!item(*b, "attention.qkv_proj"));
    QVERIFY(item(*b, "attention.q_a_proj") && item(*b, "attention.kv_a_proj_with_mqa"));
}

// A prefill of 2048 prompt tokens of Llama-3.1-70B on one H100 SXM (TP 1, BF16, batch 1, context 0),
// against an independent computation (this Python):
//   h, L, H, kv, d, I, V = 8192, 80, 64, 8, 128, 28672, 128256; T, BW, PEAK = 2048, 3350e9, 989e12
//   item = lambda params, tokens: max(params * 2 / BW, 2 * params * tokens / PEAK)
//   linear = item(L*h*(h + 2*kv*d), T) + item(L*h*h, T) + item(L*3*h*I, T)        -> 283.4939 ms
//   lm_head = item(h*V, 1)  (the last token's logits only)                        -> 0.6273 ms
//   embedding = T*h*2 / BW                                                        -> 0.01002 ms
//   attention = max(L*T*2*kv*d*2 / BW, L*H*(T*(T+1)/2)*4*d / PEAK)  (causal)       -> 5.5614 ms
//   total                                                                         -> 289.6926 ms
void TestBudget::prefillBudget()
{
    BudgetInputs in = inputs("llama-3.1-70b", "h100-sxm", 1, "all=bf16", "none");
    in.phase = BudgetPhase::Prefill;
    in.promptTokens = 2048;
    auto b = computeBudget(in);
    QVERIFY2(b, b ? "" : b.error().c_str());
    QVERIFY2(near(b->idealMs, 289.6926, 1e-5), qPrintable(QString::number(b->idealMs, 'f', 4)));
    QVERIFY(near(item(*b, "lm_head")->idealMs, 0.6273, 1e-4));
    QVERIFY(near(item(*b, "embedding")->idealMs, 0.01002, 1e-3));
    QVERIFY2(near(item(*b, "kv_cache")->idealMs, 5.5614, 1e-4), qPrintable(QString::number(item(*b, "kv_cache")->idealMs)));
    QCOMPARE(item(*b, "attention.qkv_proj")->bound, std::string("compute"));
    QCOMPARE(item(*b, "lm_head")->bound, std::string("memory"));
    QCOMPARE(b->tokensPerStep, 2048.0);
    // The decode budget of the same setup reads the same weights, memory-bound (41.5 ms, 7x shorter).
    BudgetInputs decode = in;
    decode.phase = BudgetPhase::Decode;
    auto d = computeBudget(decode);
    QVERIFY(d);
    QCOMPARE(d->weightBytesPerGpu - item(*d, "embedding")->bytes, // the embedding reads one row per token
        b->weightBytesPerGpu - item(*b, "embedding")->bytes);
    QVERIFY(near(d->idealMs, d->weightBytesPerGpu / 3350e6, 1e-6)); // decode: the weight read alone
    in.promptTokens = 0;
    QVERIFY(!computeBudget(in)); // a prefill budget needs its prompt tokens
}

// Prefill steps against the prefill budget of their own prompt tokens: the mean of the steps' budgets
// (512 and 1536 tokens: checked against the two computed apart); a step that does not say
// takes the setting; none saying and no setting: no budget, and why.
void TestBudget::prefillBudgetOfSteps()
{
    TraceBuilder tb;
    const LaneId l = tb.lane({ LaneKind::GpuStream, 0, "h", 0, 7, "", 0 });
    tb.addKernel(l, 0, 10, tb.intern("k"), 0, {});
    const uint32_t tokens[] = { 512, 1536, 0 };
    for (uint32_t i = 0; i < 4; ++i) {
        Step s { i, TimeNs(i) * 1000, TimeNs(i) * 1000 + 900, StepSource::Engine };
        s.kind = i < 3 ? StepKind::Prefill : StepKind::Decode;
        s.tokens = i < 3 ? tokens[i] : 1;
        s.batch = 1;
        tb.addStep(0, s);
    }
    const Trace t = tb.finish();
    BudgetInputs in = inputs("llama-3.1-70b", "h100-sxm", 1, "all=bf16", "none");
    auto apart = [&](uint64_t n) {
        BudgetInputs x = in;
        x.phase = BudgetPhase::Prefill;
        x.promptTokens = n;
        return computeBudget(x)->idealMs;
    };
    auto b = budgetForSteps(t, StepKind::Prefill, in, false, "llama on h100");
    QVERIFY(b && b->present);
    QCOMPARE(b->phase, std::string("prefill"));
    QCOMPARE(b->promptSteps, 2u); // the third says nothing and there is no setting
    QCOMPARE(b->promptTokens, 1024.0);
    QCOMPARE(b->promptTokensFrom, std::string("steps"));
    QVERIFY(near(b->totalMs(), (apart(512) + apart(1536)) / 2, 1e-9));
    in.promptTokens = 4096; // the setting for the step that does not say
    b = budgetForSteps(t, StepKind::Prefill, in, false, "llama on h100");
    QCOMPARE(b->promptSteps, 3u);
    QCOMPARE(b->promptTokensFrom, std::string("steps and setting"));
    QVERIFY(near(b->totalMs(), (apart(512) + apart(1536) + apart(4096)) / 3, 1e-9));
    auto decode = budgetForSteps(t, StepKind::Decode, in, false, "llama on h100");
    QVERIFY(decode && decode->present);
    QCOMPARE(decode->phase, std::string("decode"));
    BudgetInputs d = in;
    QVERIFY(near(decode->totalMs(), computeBudget(d)->idealMs, 1e-12));
    TraceBuilder none;
    const LaneId nl = none.lane({ LaneKind::GpuStream, 0, "h", 0, 7, "", 0 });
    none.addKernel(nl, 0, 10, none.intern("k"), 0, {});
    Step p { 0, 0, 900, StepSource::Forward };
    p.kind = StepKind::Prefill;
    none.addStep(0, p);
    in.promptTokens = 0;
    auto unknown = budgetForSteps(none.finish(), StepKind::Prefill, in, false, "llama on h100");
    QVERIFY(unknown && !unknown->present);
    QVERIFY2(unknown->why.find("prefill budget unknown") == 0, unknown->why.c_str());
}

void TestBudget::launchFloor()
{
    BudgetInputs in = inputs("qwen3-30b-a3b", "h200-sxm", 1, "", "sglang");
    auto graphs = computeBudget(in);
    in.cudaGraphs = false;
    auto eager = computeBudget(in);
    QVERIFY(graphs && eager);
    const BudgetItem* g = item(*graphs, "launch/host floor");
    QVERIFY(g != nullptr);
    QVERIFY(std::abs(g->achievableMs * 1e3 - (15.0 + 0.6 * graphs->kernelsPerStep)) < 1e-6);
    // Eager: kernels x 5 us of CPU minus the GPU time they hide behind.
    double gpu = eager->achievableMs - item(*eager, "launch/host floor")->achievableMs;
    double want = std::max(0.0, eager->kernelsPerStep * 5e-3 - gpu);
    QVERIFY(std::abs(item(*eager, "launch/host floor")->achievableMs - want) < 1e-9);
    QCOMPARE(graphs->idealMs, eager->idealMs);
}

void TestBudget::checkpointPrecisionDefaults()
{
    BudgetInputs in = inputs("deepseek-v3", "h200-sxm", 8, "", "sglang");
    auto b = computeBudget(in);
    QVERIFY(b.hasValue());
    // FP8 block-128 checkpoint: decoder linear layers at 1.000244 B/param, lm_head stays BF16.
    double qb = item(*b, "attention.q_b_proj")->bytes;
    QVERIFY(std::abs(qb / (1536.0 * 128 * 192 / 8 * 61) - (1 + 4.0 / 16384)) < 1e-9);
    QCOMPARE(item(*b, "lm_head")->bytes, 7168.0 * 129280 / 8 * 2);
    in.allPrecision = Precision::Nvfp4; // the user's choice wins over the checkpoint
    b = computeBudget(in);
    QVERIFY(std::abs(item(*b, "attention.q_b_proj")->bytes / (1536.0 * 128 * 192 / 8 * 61) - 0.5625) < 1e-9);
}

void TestBudget::rejectsBadInputs_data()
{
    QTest::addColumn<int>("tp");
    QTest::addColumn<int>("ep");
    QTest::addColumn<int>("batch");
    QTest::addColumn<QString>("error");
    QTest::newRow("ep does not divide tp") << 8 << 3 << 1 << "--ep must divide --tp";
    QTest::newRow("zero batch") << 8 << 1 << 0 << "--batch";
    QTest::newRow("zero tp") << 0 << 1 << 1 << "--tp";
}

void TestBudget::rejectsBadInputs()
{
    QFETCH(int, tp);
    QFETCH(int, ep);
    QFETCH(int, batch);
    QFETCH(QString, error);
    BudgetInputs in = inputs("glm-5", "b200", 8, "", "sglang");
    in.tp = tp;
    in.ep = ep;
    in.batch = batch;
    auto b = computeBudget(in);
    QVERIFY(!b.hasValue());
    QVERIFY2(QString::fromStdString(b.error()).contains(error), b.error().c_str());
    BudgetInputs dense = inputs("llama-3.1-70b", "b200", 8, "", "sglang");
    dense.ep = 2;
    QVERIFY(!computeBudget(dense).hasValue()); // EP needs experts
}

void TestBudget::precisionSpecParsing()
{
    BudgetInputs in;
    QVERIFY(applyPrecisionSpec("routed_experts=nvfp4,all=bf16,kv_cache=fp8", in).isOk());
    QCOMPARE(precisionSpec(in), std::string("all=bf16,routed_experts=nvfp4,kv_cache=fp8"));
    Status bad = applyPrecisionSpec("attention=fp6", in);
    QVERIFY(!bad.isOk());
    QVERIFY(QString::fromStdString(bad.message()).contains("unknown format 'fp6'"));
    bad = applyPrecisionSpec("attn=fp8", in);
    QVERIFY(QString::fromStdString(bad.message()).contains("unknown component 'attn'"));
    QVERIFY(!applyPrecisionSpec("fp8", in).isOk());
}

void TestBudget::cliListsPresets()
{
    QProcess p;
    p.start(QStringLiteral(GAPSCOPE_BINARY_DIR "/app/gapscope-cli"), { "budget", "--list" });
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 0);
    QString out = QString::fromUtf8(p.readAllStandardOutput());
    for (const char* name : { "glm-5", "deepseek-v3", "llama-3.1-70b", "qwen3-235b-a22b", "deepseek-v2-lite",
             "qwen3-30b-a3b", "rtx-pro-6000", "h100-sxm", "h200-sxm", "b200" })
        QVERIFY2(out.contains(QString("  ") + name + " "), name);
    QVERIFY(out.contains("PCIe"));
}

QTEST_GUILESS_MAIN(TestBudget)
#include "tst_budget.moc"
