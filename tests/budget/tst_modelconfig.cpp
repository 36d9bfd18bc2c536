// SPDX-License-Identifier: MIT
// ModelConfig parsing of real Hub config.json files, layerMatrices() parameter accounting and the
// quantization ignore lists.
#include "model/budget/modelconfig.h"
#include "model/budget/modelquant.h"

#include <QtTest>

using namespace gapscope;
using namespace gapscope::model;

namespace {
QString dataPath(const char* name)
{
    return QStringLiteral(GAPSCOPE_TEST_DATA "/budget/data/") + name;
}

uint64_t layerParams(const ModelConfig& m, uint32_t layer, Component c)
{
    uint64_t n = 0;
    for (const auto& w : layerMatrices(m, layer, EngineReplication::None))
        if (w.component == c)
            n += w.params();
    return n;
}
} // namespace

class TestModelConfig : public QObject {
    Q_OBJECT
private slots:
    void loadsHubConfigs_data();
    void loadsHubConfigs();
    void glm5ParameterAccounting();
    void sglangReplication();
    void gqaKvSplitsAtMostKvHeads();
    void perLayerSchedules();
    void quantization_data();
    void quantization();
    void partialIgnoreListIsNoted();
    void modulePatterns_data();
    void modulePatterns();
    void badConfigs_data();
    void badConfigs();
};

void TestModelConfig::loadsHubConfigs_data()
{
    QTest::addColumn<QString>("source"); // preset name or test data file
    QTest::addColumn<QString>("modelType");
    QTest::addColumn<int>("layers");
    QTest::addColumn<int>("hidden");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("kvHeads");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<bool>("mla");
    QTest::addColumn<int>("experts");
    QTest::addColumn<int>("perToken");
    QTest::addColumn<int>("moeLayers");
    QTest::addColumn<int>("sharedWidth");
    QTest::addColumn<int>("indexerLayers");
    QTest::addColumn<int>("vocab");
    QTest::addColumn<bool>("tied");

    auto row = [](const char* tag, QString src, const char* type, int L, int h, int H, int kv, int hd, bool mla, int E,
                   int k, int moe, int shared, int idx, int V, bool tied) {
        QTest::newRow(tag) << src << type << L << h << H << kv << hd << mla << E << k << moe << shared << idx << V
                           << tied;
    };
    row("glm-5", "glm-5", "glm_moe_dsa", 78, 6144, 64, 64, 256, true, 256, 8, 75, 2048, 78, 154880, false);
    row("deepseek-v3", "deepseek-v3", "deepseek_v3", 61, 7168, 128, 128, 192, true, 256, 8, 58, 2048, 0, 129280, false);
    row("deepseek-v3.2", dataPath("deepseek-v3.2.json"), "deepseek_v32", 61, 7168, 128, 128, 192, true, 256, 8, 58,
        2048, 61, 129280, false);
    row("deepseek-v2-lite", "deepseek-v2-lite", "deepseek_v2", 27, 2048, 16, 16, 192, true, 64, 6, 26, 2816, 0, 102400,
        false);
    row("llama-3.1-70b (head_dim derived)", "llama-3.1-70b", "llama", 80, 8192, 64, 8, 128, false, 0, 0, 0, 0, 0,
        128256, false);
    row("qwen3-235b-a22b", "qwen3-235b-a22b", "qwen3_moe", 94, 4096, 64, 4, 128, false, 128, 8, 94, 0, 0, 151936,
        false);
    row("qwen3-30b-a3b", "qwen3-30b-a3b", "qwen3_moe", 48, 2048, 32, 4, 128, false, 128, 8, 48, 0, 0, 151936, false);
    row("qwen3-0.6b (head_dim honoured)", dataPath("qwen3-0.6b.json"), "qwen3", 28, 1024, 16, 8, 128, false, 0, 0, 0, 0,
        0, 151936, true);
    row("qwen2-7b", dataPath("qwen2-7b.json"), "qwen2", 28, 3584, 28, 4, 128, false, 0, 0, 0, 0, 0, 152064, false);
    row("qwen1.5-moe (shared expert width)", dataPath("qwen1.5-moe-a2.7b.json"), "qwen2_moe", 24, 2048, 16, 16, 128,
        false, 60, 4, 24, 5632, 0, 151936, false);
    row("mixtral (expert width = intermediate)", dataPath("mixtral-8x7b.json"), "mixtral", 32, 4096, 32, 8, 128, false,
        8, 2, 32, 0, 0, 32000, false);
    row("mistral-7b", dataPath("mistral-7b.json"), "mistral", 32, 4096, 32, 8, 128, false, 0, 0, 0, 0, 0, 32000, false);
    row("glm-4.5 (glm4_moe)", dataPath("glm-4.5.json"), "glm4_moe", 92, 5120, 96, 8, 128, false, 160, 8, 89, 1536, 0,
        151552, false);
    row("text_config wrapper", dataPath("vl-wrapper.json"), "qwen2", 28, 3584, 28, 4, 128, false, 0, 0, 0, 0, 0, 152064,
        false);
}

void TestModelConfig::loadsHubConfigs()
{
    QFETCH(QString, source);
    auto m = loadModelConfig(source.toStdString());
    QVERIFY2(m.hasValue(), m.error().c_str());
    QTEST(QString::fromStdString(m->modelType), "modelType");
    QTEST(int(m->layers), "layers");
    QTEST(int(m->hidden), "hidden");
    QTEST(int(m->heads), "heads");
    QTEST(int(m->kvHeads), "kvHeads");
    QTEST(int(m->headDim), "headDim");
    QTEST(m->isMla(), "mla");
    QTEST(int(m->experts), "experts");
    QTEST(int(m->expertsPerToken), "perToken");
    QTEST(int(m->moeLayerCount()), "moeLayers");
    QTEST(int(m->sharedIntermediate), "sharedWidth");
    QTEST(int(m->indexerLayerCount()), "indexerLayers");
    QTEST(int(m->vocab), "vocab");
    QTEST(m->tiedEmbeddings, "tied");
    QVERIFY(!m->sourceJson.empty());
}

void TestModelConfig::glm5ParameterAccounting()
{
    // BUDGET.md: MLA 165.02M, indexer 9.37M, dense FFN 226.49M, expert 37.75M, router 1.57M per layer,
    // embedding and lm_head 951.6M each, 743.9B in all, about 40.8B read per token.
    auto m = loadModelConfig("glm-5");
    QVERIFY2(m.hasValue(), m.error().c_str());
    QCOMPARE(layerParams(*m, 0, Component::Attention), uint64_t(165019648));
    QCOMPARE(layerParams(*m, 0, Component::Indexer), uint64_t(9371648));
    QCOMPARE(layerParams(*m, 0, Component::DenseFfn), uint64_t(226492416));
    QCOMPARE(layerParams(*m, 3, Component::RoutedExperts), uint64_t(37748736));
    QCOMPARE(layerParams(*m, 3, Component::SharedExperts), uint64_t(37748736));
    QCOMPARE(layerParams(*m, 3, Component::Router), uint64_t(1572864));
    QCOMPARE(layerParams(*m, 3, Component::DenseFfn), uint64_t(0));
    QCOMPARE(m->hidden * m->vocab, uint64_t(951582720));
    double total = 2.0 * m->hidden * m->vocab, perToken = m->hidden * m->vocab;
    for (uint32_t l = 0; l < m->layers; ++l) {
        double dense = 0;
        for (Component c : { Component::Attention, Component::Indexer, Component::DenseFfn, Component::Router,
                 Component::SharedExperts })
            dense += layerParams(*m, l, c);
        double expert = layerParams(*m, l, Component::RoutedExperts);
        total += dense + expert * m->experts;
        perToken += dense + expert * m->expertsPerToken;
    }
    QVERIFY2(std::abs(total / 743.9e9 - 1) < 0.001, qPrintable(QString::number(total / 1e9)));
    QVERIFY2(std::abs(perToken / 40.8e9 - 1) < 0.002, qPrintable(QString::number(perToken / 1e9)));
}

void TestModelConfig::sglangReplication()
{
    auto m = loadModelConfig("glm-5");
    QVERIFY(m.hasValue());
    for (const auto& w : layerMatrices(*m, 5, EngineReplication::Sglang)) {
        bool replicated = w.name == "q_a_proj" || w.name == "kv_a_proj_with_mqa" || w.component == Component::Router
            || w.component == Component::Indexer;
        QCOMPARE(w.splitWays(8), replicated ? 1u : 8u);
    }
    for (const auto& w : layerMatrices(*m, 5, EngineReplication::None))
        QCOMPARE(w.splitWays(8), 8u);
}

void TestModelConfig::gqaKvSplitsAtMostKvHeads()
{
    auto m = loadModelConfig("qwen3-235b-a22b"); // 4 KV heads
    QVERIFY(m.hasValue());
    for (const auto& w : layerMatrices(*m, 0, EngineReplication::Sglang)) {
        if (w.name == "k_proj" || w.name == "v_proj")
            QCOMPARE(w.splitWays(8), 4u);
        if (w.name == "q_proj" || w.name == "o_proj")
            QCOMPARE(w.splitWays(8), 8u);
    }
}

void TestModelConfig::perLayerSchedules()
{
    auto m = loadModelConfig(dataPath("glm-5-indexshare.json").toStdString());
    QVERIFY2(m.hasValue(), m.error().c_str());
    QCOMPARE(m->moeLayerCount(), 75u);
    QVERIFY(!m->isMoeLayer(2));
    QVERIFY(m->isMoeLayer(3));
    QCOMPARE(m->indexerLayerCount(), 21u); // 3 + 18 "full" layers; the shared ones reuse a top-k
    QVERIFY(m->hasIndexer(6));
    QVERIFY(!m->hasIndexer(4));
    QCOMPARE(layerParams(*m, 4, Component::Indexer), uint64_t(0));
}

void TestModelConfig::quantization_data()
{
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("format");
    QTest::addColumn<QStringList>("unquantized");
    QTest::addColumn<QString>("kvFormat");
    QTest::newRow("deepseek-v3 fp8 block") << "deepseek-v3"
                                           << "fp8-block128" << QStringList {} << "";
    QTest::newRow("modelopt hf_quant_config.json")
        << dataPath("llama-3.1-8b-nvfp4-modelopt") << "nvfp4" << QStringList { "lm_head" } << "fp8";
    QTest::newRow("compressed-tensors nvfp4")
        << dataPath("qwen3-30b-a3b-nvfp4-ct.json") << "nvfp4" << QStringList { "mlp.gate", "lm_head" } << "";
    QTest::newRow("unquantized") << "glm-5"
                                 << "" << QStringList {} << "";
}

void TestModelConfig::quantization()
{
    QFETCH(QString, source);
    QFETCH(QStringList, unquantized);
    auto m = loadModelConfig(source.toStdString());
    QVERIFY2(m.hasValue(), m.error().c_str());
    QTEST(QString::fromStdString(m->quantFormat), "format");
    QStringList got;
    for (const auto& k : m->unquantizedMatrices)
        got << QString::fromStdString(k);
    QCOMPARE(got, unquantized);
    QTEST(QString::fromStdString(m->kvCacheFormat), "kvFormat");
}

void TestModelConfig::partialIgnoreListIsNoted()
{
    // hf_quant_config.json excludes "model.layers.0.self_attn*": 1 of 32 layers, counted quantized.
    auto m = loadModelConfig(dataPath("llama-3.1-8b-nvfp4-modelopt").toStdString());
    QVERIFY2(m.hasValue(), m.error().c_str());
    QCOMPARE(QString::fromStdString(m->name), QString("llama-3.1-8b-nvfp4-modelopt"));
    bool noted = false;
    for (const auto& n : m->notes)
        noted |= n == "self_attn.q_proj: left unquantized in 1 of 32 layers; counted as quantized in all";
    QVERIFY(noted);
}

void TestModelConfig::modulePatterns_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("matches");
    QTest::newRow("plain whole name") << "lm_head"
                                      << "lm_head" << true;
    QTest::newRow("plain segment suffix") << "mlp.gate"
                                          << "model.layers.3.mlp.gate" << true;
    QTest::newRow("plain is not a substring") << "mlp.gate"
                                              << "model.layers.3.mlp.gate_proj" << false;
    QTest::newRow("plain full path") << "model.layers.0.self_attn.kv_b_proj"
                                     << "model.layers.0.self_attn.kv_b_proj" << true;
    QTest::newRow("plain other layer") << "model.layers.0.self_attn.kv_b_proj"
                                       << "model.layers.10.self_attn.kv_b_proj" << false;
    QTest::newRow("glob") << "model.layers.*.mlp.gate"
                          << "model.layers.7.mlp.gate" << true;
    QTest::newRow("glob no match") << "*.shared_experts.*"
                                   << "model.layers.7.mlp.experts.0.up_proj" << false;
    QTest::newRow("regex anchored at start") << "re:.*mlp.gate$"
                                             << "model.layers.1.mlp.gate" << true;
    QTest::newRow("regex end anchor") << "re:.*mlp.gate$"
                                      << "model.layers.1.mlp.gate_proj" << false;
    QTest::newRow("regex quantified group, no match, linear time") << "re:(a*)*b"
                                                                   << std::string(20000, 'a').append("c").c_str() << false;
    QTest::newRow("regex quantified group") << "re:(layers\\.[0-9]+\\.)+mlp"
                                            << "layers.3.mlp.gate" << true;
    QTest::newRow("regex invalid") << "re:[unclosed"
                                   << "model.layers.1.mlp.gate" << false;
}

void TestModelConfig::modulePatterns()
{
    QFETCH(QString, pattern);
    QFETCH(QString, path);
    QTEST(modulePatternMatches(pattern.toStdString(), path.toStdString()), "matches");
}

void TestModelConfig::badConfigs_data()
{
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("error"); // a fragment the message must contain
    QTest::newRow("not an object") << "[1,2]"
                                   << "expected a JSON object";
    QTest::newRow("missing hidden_size") << R"({"num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10})"
                                         << "hidden_size: missing";
    QTest::newRow("negative layers")
        << R"({"hidden_size": 64, "num_hidden_layers": -3, "num_attention_heads": 2, "vocab_size": 10, "intermediate_size": 8})"
        << "num_hidden_layers: expected an integer";
    QTest::newRow("string heads")
        << R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": "8", "vocab_size": 10, "intermediate_size": 8})"
        << "num_attention_heads";
    QTest::newRow("top-k above experts")
        << R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10, "num_experts": 4, "num_experts_per_tok": 8, "moe_intermediate_size": 8})"
        << "num_experts_per_tok";
    QTest::newRow("mlp_layer_types length")
        << R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10, "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 8, "mlp_layer_types": ["dense"]})"
        << "mlp_layer_types: 1 entries for 2 layers";
    QTest::newRow("dense without intermediate")
        << R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10})"
        << "intermediate_size";
}

void TestModelConfig::badConfigs()
{
    QFETCH(QString, json);
    QFETCH(QString, error);
    auto doc = json::parse(json.toStdString(), "test.json");
    QVERIFY(doc.hasValue());
    auto m = parseModelConfig(doc.value(), "test.json");
    QVERIFY(!m.hasValue());
    QVERIFY2(QString::fromStdString(m.error()).contains(error), m.error().c_str());
    QVERIFY2(QString::fromStdString(m.error()).startsWith("test.json"), m.error().c_str());
}

QTEST_GUILESS_MAIN(TestModelConfig)
#include "tst_modelconfig.moc"
