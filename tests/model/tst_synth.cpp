// SPDX-License-Identifier: MIT
// synth: deterministic, consistent with its ground truth, injections land where they should, kernel
// names classify as the truth says under the default classifier, file and in-memory paths agree.
#include "../format/randomtrace.h"

#include "model/io/tracefile.h"
#include "model/synth/synth.h"
#include "model/synth/synthcatalog.h"
#include "model/trace/kernelclassifier.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

using namespace gapscope;
using namespace gapscope::model;

namespace {

SynthOptions small()
{
    SynthOptions o;
    o.ranks = 3;
    o.steps = 8;
    o.kernelsPerStep = 120;
    o.seed = 5;
    return o;
}

json::Value truthOf(const SynthOptions& o)
{
    json::Value truth;
    auto t = synthesize(o, &truth);
    if (!t)
        qFatal("%s", t.error().c_str());
    return truth;
}

int64_t sumSteps(const json::Value& truth, uint32_t rank, const char* key)
{
    int64_t s = 0;
    for (const auto& st : truth["ranks"].at(rank)["steps"].items())
        s += st[key].toInt();
    return s;
}

std::string readAll(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

} // namespace

class TestSynth : public QObject {
    Q_OBJECT
private slots:
    void deterministicForASeed()
    {
        QTemporaryDir dir;
        const std::string a = (dir.path() + "/a.gapscope").toStdString(),
                          b = (dir.path() + "/b.gapscope").toStdString(),
                          c = (dir.path() + "/c.gapscope").toStdString();
        SynthOptions o = small();
        QVERIFY(synthesizeToFile(o, a).isOk());
        QVERIFY(synthesizeToFile(o, b).isOk());
        o.seed = 6;
        QVERIFY(synthesizeToFile(o, c).isOk());
        QCOMPARE(readAll(a), readAll(b));
        QVERIFY(readAll(a) != readAll(c));
    }

    void fileAndMemoryAgree()
    {
        QTemporaryDir dir;
        const std::string p = (dir.path() + "/s.gapscope").toStdString();
        SynthOptions o = small();
        o.syncStallUs = 40;
        json::Value t1, t2;
        QVERIFY(synthesizeToFile(o, p, &t1).isOk());
        auto mem = synthesize(o, &t2);
        QVERIFY(mem.hasValue());
        auto file = readTraceFile(p);
        QVERIFY(file.hasValue());
        const std::string diff = test::compareTraces(*mem, *file);
        QVERIFY2(diff.empty(), diff.c_str());
        QCOMPARE(json::write(t1), json::write(t2));
        QCOMPARE(mem->eventCount(EventKind::Kernel), uint64_t(3 * 8 * 120));
        QCOMPARE(mem->stepCount(), 8u);
    }

    void truthAddsUp_data()
    {
        QTest::addColumn<bool>("graph");
        QTest::addColumn<double>("stall");
        QTest::addColumn<int>("straggler");
        QTest::newRow("graph") << true << 0.0 << -1;
        QTest::newRow("eager") << false << 0.0 << -1;
        QTest::newRow("graph, stall, straggler") << true << 50.0 << 1;
        QTest::newRow("eager, stall, straggler") << false << 50.0 << 2;
    }
    void truthAddsUp()
    {
        QFETCH(bool, graph);
        QFETCH(double, stall);
        QFETCH(int, straggler);
        SynthOptions o = small();
        o.graphMode = graph;
        o.syncStallUs = stall;
        o.stragglerRank = straggler;
        o.stragglerDelayUs = 30;
        o.launchGapUs = 3;
        o.launchGapEvery = 17;
        json::Value truth;
        auto t = synthesize(o, &truth);
        QVERIFY(t.hasValue());
        QCOMPARE(truth["ranks"].size(), size_t(3));
        for (const auto& r : truth["ranks"].items()) {
            const uint32_t rank = uint32_t(r["rank"].toInt());
            const auto& steps = t->steps(rank);
            QCOMPARE(r["steps"].size(), steps.size());
            for (size_t i = 0; i < steps.size(); ++i) {
                const auto& s = r["steps"].at(i);
                int64_t sum = s["launch_host_ns"].toInt() + s["sync_stall_ns"].toInt() + s["step_gap_ns"].toInt()
                    + s["in_graph_ns"].toInt() + s["collective_wait_ns"].toInt() + s["memory_ops_ns"].toInt();
                for (const auto& [k, v] : s["components_ns"].members())
                    sum += v.toInt();
                QCOMPARE(sum, s["measured_ns"].toInt());
                const TimeNs window = i + 1 < steps.size() ? steps[i + 1].start - steps[i].start : steps[i].duration();
                QCOMPARE(s["measured_ns"].toInt(), int64_t(window));
                if (stall > 0)
                    QCOMPARE(s["sync_stall_ns"].toInt(), int64_t(stall * 1000));
                else
                    QCOMPARE(s["sync_stall_ns"].toInt(), int64_t(0));
            }
        }
        if (straggler >= 0) {
            QCOMPARE(truth["stragglers"].size(), size_t(1));
            QCOMPARE(truth["stragglers"].at(0)["rank"].toInt(), int64_t(straggler));
            QVERIFY(truth["stragglers"].at(0)["collectives"].toInt() > 8 * 10);
        }
    }

    void injectionsLandInTheirBars()
    {
        const json::Value base = truthOf(small());
        SynthOptions o = small();
        o.extraHostGapUs = 700;
        const json::Value gap = truthOf(o);
        // Same random draws: the step gap grows by exactly the injected time (every step but the last).
        const int64_t steps = 8 - 1;
        QCOMPARE(sumSteps(gap, 0, "step_gap_ns") - sumSteps(base, 0, "step_gap_ns"), steps * 700000);
        QCOMPARE(sumSteps(gap, 0, "launch_host_ns"), sumSteps(base, 0, "launch_host_ns"));

        o = small();
        o.stragglerRank = 2;
        o.stragglerDelayUs = 100;
        const json::Value late = truthOf(o);
        // The others wait for rank 2 at every collective (about 100 us each); rank 2 waits little.
        const int64_t collectives = 8 * 10; // at least
        QVERIFY(
            sumSteps(late, 0, "collective_wait_ns") - sumSteps(base, 0, "collective_wait_ns") > collectives * 90000);
        QVERIFY(sumSteps(late, 2, "collective_wait_ns") < sumSteps(late, 0, "collective_wait_ns") / 10);

        o = small();
        o.slowClass = "routed_experts";
        o.slowFactor = 2.0;
        const json::Value slow = truthOf(o);
        auto comp = [](const json::Value& t, const char* c) {
            int64_t s = 0;
            for (const auto& st : t["ranks"].at(0)["steps"].items())
                s += st["components_ns"][c].toInt();
            return s;
        };
        const double ratio = double(comp(slow, "routed_experts")) / double(comp(base, "routed_experts"));
        QVERIFY2(ratio > 1.95 && ratio < 2.05, qPrintable(QString::number(ratio)));
        QCOMPARE(comp(slow, "attention_core"), comp(base, "attention_core"));
    }

    void kernelNamesClassifyAsTheTruthSays()
    {
        const KernelClassifier& c = KernelClassifier::builtinDefault();
        for (const auto& t : synth::allTemplates()) {
            const int cls = c.classify(t.name);
            QVERIFY2(cls >= 0, t.name);
            QCOMPARE(c.classes()[size_t(cls)].name, std::string(t.cls));
        }
    }

    void kernelSequenceHasTheRequestedLength_data()
    {
        QTest::addColumn<uint32_t>("kernels");
        for (uint32_t k : { 8u, 23u, 24u, 200u, 1500u, 5000u })
            QTest::newRow(qPrintable(QString::number(k))) << k;
    }
    void kernelSequenceHasTheRequestedLength()
    {
        QFETCH(uint32_t, kernels);
        uint32_t layers = 0;
        QCOMPARE(uint32_t(synth::stepSequence(kernels, &layers).size()), kernels);
        QVERIFY(kernels < 60 || layers > 1);
    }

    void badOptions()
    {
        SynthOptions o = small();
        o.ranks = 0;
        QVERIFY(!validate(o).isOk());
        o = small();
        o.stragglerRank = 3;
        QVERIFY(!validate(o).isOk());
        o = small();
        o.slowClass = "nonsense";
        QVERIFY(!validate(o).isOk());
        QVERIFY(!synthesize(o).hasValue());
    }
};

QTEST_GUILESS_MAIN(TestSynth)
#include "tst_synth.moc"
