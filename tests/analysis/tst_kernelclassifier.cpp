// SPDX-License-Identifier: MIT
// KernelClassifier and PatternMatcher: the default table on real kernel names (kernelnames.tsv),
// first-match order, user tables, errors, the stored (protobuf) form, and the fast POSIX path
// agreeing with ECMAScript std::regex.
#include "model/trace/kernelclassifier.h"

#include <QFile>
#include <QTest>

#include <regex>

using namespace gapscope;
using namespace gapscope::model;

class TstKernelClassifier : public QObject {
    Q_OBJECT
private slots:
    void defaultTableLoads();
    void realKernelNames_data();
    void realKernelNames();
    void firstMatchWins();
    void classesWithComponents();
    void errors_data();
    void errors();
    void protoRoundTrip();
    void resourceFileMatchesBuiltin();
    void posixPathAgreesWithEcmaScript();
};

void TstKernelClassifier::defaultTableLoads()
{
    const auto& k = KernelClassifier::builtinDefault();
    QVERIFY(k.rules().size() >= 8);
    QCOMPARE(k.origin(), std::string("default"));
    QVERIFY(k.collectivesClass() >= 0);
    const char* expected[]
        = { "collectives", "sampling", "routed_experts", "attention_core", "linear", "other", "embedding" };
    for (const char* c : expected)
        QVERIFY2(k.findClass(c) >= 0, c);
    // Every budget component but launch_host/draft belongs to exactly one default class.
    for (const auto& comp : KernelClassifier::budgetComponentNames()) {
        if (comp == "launch_host" || comp == "draft")
            continue;
        int owners = 0;
        for (const auto& c : k.classes())
            owners += std::count(c.components.begin(), c.components.end(), comp) ? 1 : 0;
        QVERIFY2(owners == 1, comp.c_str());
    }
}

void TstKernelClassifier::realKernelNames_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("expected");
    QFile f(QStringLiteral(GAPSCOPE_TEST_DATA "/analysis/kernelnames.tsv"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    int row = 0;
    while (!f.atEnd()) {
        QString line = QString::fromUtf8(f.readLine()).trimmed();
        if (line.isEmpty() || line.startsWith('#'))
            continue;
        int tab = line.indexOf('\t');
        QVERIFY(tab > 0);
        QString expected = line.left(tab), name = line.mid(tab + 1);
        QTest::newRow(qPrintable(QString("%1 %2").arg(++row).arg(name.left(60)))) << name << expected;
    }
    QVERIFY(row > 60);
}

void TstKernelClassifier::realKernelNames()
{
    QFETCH(QString, name);
    QFETCH(QString, expected);
    const auto& k = KernelClassifier::builtinDefault();
    int c = k.classify(name.toStdString());
    QString got = c < 0 ? QStringLiteral("unclassified") : QString::fromStdString(k.classes()[size_t(c)].name);
    QCOMPARE(got, expected);
}

void TstKernelClassifier::firstMatchWins()
{
    auto k = KernelClassifier::fromRules({ { "moe", "routed_experts", "" }, { "gemm", "dense_ffn", "" } }, "test");
    QVERIFY2(k, k.error().c_str());
    QCOMPARE(k->classify("grouped_gemm_moe_kernel"), k->findClass("routed_experts"));
    QCOMPARE(k->classify("plain_GEMM_kernel"), k->findClass("dense_ffn")); // case-insensitive
    QCOMPARE(k->classify("rmsnorm"), KernelClassifier::kUnclassified);
    QCOMPARE(k->matchRule("x_moe_gemm"), 0);
}

void TstKernelClassifier::classesWithComponents()
{
    auto k = KernelClassifier::fromRules(
        { { "gemm", "linear=attention+dense_ffn", "" }, { "gemv", "linear", "" }, { "norm", "norms", "" } }, "test");
    QVERIFY2(k, k.error().c_str());
    QCOMPARE(int(k->classes().size()), 2);
    QCOMPARE(k->classes()[0].components, (std::vector<std::string> { "attention", "dense_ffn" }));
    QVERIFY(k->classes()[1].components.empty()); // a class without a budget of its own
    QCOMPARE(k->classify("gemv2T"), 0);
    QCOMPARE(k->classOfRule(1), 0);
    QCOMPARE(k->collectivesClass(), -1);
}

void TstKernelClassifier::errors_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<QString>("component");
    QTest::addColumn<QString>("message");
    QTest::newRow("bad regex") << "gemm("
                               << "other"
                               << "rule 2: regular expression 'gemm(': ";
    QTest::newRow("lookahead") << "gemm(?=x)"
                               << "other"
                               << "lookahead and lookbehind are not supported";
    QTest::newRow("empty pattern") << ""
                                   << "other"
                                   << "rule 2: empty pattern";
    QTest::newRow("unknown component") << "x"
                                       << "mine=attention+bogus"
                                       << "unknown budget component 'bogus'";
    QTest::newRow("component twice") << "x"
                                     << "mine=attention"
                                     << "'attention' is in both class 'attention'";
    QTest::newRow("launch_host") << "x"
                                 << "launch_host"
                                 << "'launch_host' is GPU idle time";
    QTest::newRow("redefined") << "x"
                               << "attention=attention+indexer"
                               << "different components";
}

void TstKernelClassifier::errors()
{
    QFETCH(QString, pattern);
    QFETCH(QString, component);
    QFETCH(QString, message);
    auto k = KernelClassifier::fromRules(
        { { "attn", "attention", "" }, { pattern.toStdString(), component.toStdString(), "" } }, "my.json");
    QVERIFY(!k);
    QVERIFY2(k.error().find(message.toStdString()) != std::string::npos, k.error().c_str());
    QVERIFY2(k.error().rfind("my.json", 0) == 0, k.error().c_str());
}

void TstKernelClassifier::protoRoundTrip()
{
    const auto& k = KernelClassifier::builtinDefault();
    model::ClassifierTable t = k.toTable();
    QCOMPARE(t.rules.size(), k.rules().size());
    QCOMPARE(t.origin, std::string("default"));
    auto back = KernelClassifier::fromTable(t);
    QVERIFY2(back, back.error().c_str());
    QCOMPARE(back->classes().size(), k.classes().size());
    for (size_t i = 0; i < k.rules().size(); ++i) {
        QCOMPARE(back->rules()[i].pattern, k.rules()[i].pattern);
        QCOMPARE(back->rules()[i].component, k.rules()[i].component);
    }
    auto json = KernelClassifier::fromJson(k.toJson(), "again");
    QVERIFY2(json, json.error().c_str());
    QCOMPARE(json->rules().size(), k.rules().size());
}

void TstKernelClassifier::resourceFileMatchesBuiltin()
{
    auto file = KernelClassifier::fromFile(GAPSCOPE_SOURCE_DIR "/resources/classifier/default.json");
    QVERIFY2(file, file.error().c_str());
    QCOMPARE(file->rules().size(), KernelClassifier::builtinDefault().rules().size());
    auto missing = KernelClassifier::fromFile("/nonexistent/classifier.json");
    QVERIFY(!missing);
    QVERIFY(missing.error().find("/nonexistent/classifier.json") != std::string::npos);
}

void TstKernelClassifier::posixPathAgreesWithEcmaScript()
{
    // Every supported pattern gives the same yes/no as ECMAScript std::regex on every name.
    const char* patterns[] = { "nccl", "(^|[^a-z])all_?reduce", "\\bgemm", "gemm\\b", "gemm\\d+", "\\w+_kernel$",
        "fused.*moe", "^void", "kernel$", "a{2}", "a{2,}x", "x{1,3}?y", "(?:rms|layer)_?norm", "[0-9]x[0-9]", "[\\d]x",
        "[\\w.]+::", "\\s\\S", "\\D\\W", "a+?b", "[a\\-z]", "[\\]a]", "\\.cu", "x\\x41", "(ab|cd)*e", "gemv\\t",
        "[^a-z]", "\\/" };
    const char* names[] = { "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "void vllm::all_reduce_kernel", "small_reduce",
        "cutlass gemm128", "fused_moe_kernel", "void foo", "foo kernel", "aa", "RMS_Norm", "tile 8x4", "GEMM", "aax",
        "xxy", "7x", "a.b::", "a b", "-", "]", "file.cu", "xA", "ababcde", "{", "a{,2}", "gemv\t", "/", "x-y",
        "at::native::reduce_kernel<512>(at::native::ReduceOp)" };
    for (const char* p : patterns) {
        auto m = PatternMatcher::compile(p);
        QVERIFY2(m, qPrintable(QString("%1: %2").arg(p, QString::fromStdString(m.error()))));
        std::regex re(p, std::regex::ECMAScript | std::regex::icase);
        for (const char* n : names)
            QVERIFY2(m->search(n) == std::regex_search(n, re),
                qPrintable(QString("%1 (ERE %2) on %3").arg(p, QString::fromStdString(m->ere()), n)));
    }
    // What is refused, with a reason, instead of risking a search that never ends.
    const std::pair<const char*, const char*> refused[] = { { "a(?=b)", "lookahead" }, { "(a)\\1", "back-references" },
        { "(a{2}){3}", "counted repetition of a group" }, { "a{101}", "above 100" }, { "[[:alpha:]]", "POSIX classes" },
        { "[]a]", "empty character class" }, { "\\u0041", "not supported" },
        { "a++", "quantifier after a quantifier" }, { "a{2}*", "quantifier after a quantifier" },
        { "((((((((a)+)+)+)+)+)+)+)+", "repeated groups" } };
    for (const auto& [p, why] : refused) {
        auto m = PatternMatcher::compile(p);
        QVERIFY2(!m, p);
        QVERIFY2(m.error().find(why) != std::string::npos, m.error().c_str());
    }
    QVERIFY(!PatternMatcher::compile(std::string(PatternMatcher::kMaxPatternLength + 1, 'a')));
    QVERIFY(!PatternMatcher::compile(std::string(40, '(') + "a" + std::string(40, ')')));
    // Linear time on the kind of pattern that makes a backtracking engine run for ever.
    auto slow = PatternMatcher::compile("(a*)*b");
    QVERIFY(slow);
    QVERIFY(!slow->search(std::string(20000, 'a')));
}

QTEST_APPLESS_MAIN(TstKernelClassifier)
#include "tst_kernelclassifier.moc"
