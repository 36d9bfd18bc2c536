// SPDX-License-Identifier: MIT
// The analysis against synth's ground truth: for each injection kind, every (rank, step) bar equals
// the truth to the nanosecond (sync stalls: see compare()), the straggler is found, and synth's
// kernel names classify as intended with the default table. Also through a written and re-read file.
#include "model/analysis/gapanalyzer.h"
#include "model/io/tracefile.h"
#include "model/synth/synth.h"

#include <QTemporaryDir>
#include <QTest>

using namespace gapscope;
using namespace gapscope::model;

Q_DECLARE_METATYPE(gapscope::model::SynthOptions)

class TstSynthTruth : public QObject {
    Q_OBJECT
private slots:
    void exactAgainstTruth_data();
    void exactAgainstTruth();
    void kernelNamesClassifyAsIntended();
    void throughAFile();
};

namespace {

SynthOptions base()
{
    SynthOptions o;
    o.ranks = 3;
    o.steps = 6;
    o.kernelsPerStep = 240;
    o.seed = 7;
    return o;
}

// Compares every truth step of every rank with the analyzer; returns "" or the first difference.
QString compare(const GapAnalyzer& a, const json::Value& truth)
{
    const SlotLayout& l = a.layout();
    int checked = 0;
    for (const auto& rankTruth : truth["ranks"].items()) {
        uint32_t rank = uint32_t(rankTruth["rank"].toInt());
        for (const auto& st : rankTruth["steps"].items()) {
            uint32_t index = uint32_t(st["index"].toInt());
            const auto* rec = a.step(rank, index);
            if (!rec)
                return QString("rank %1 step %2 missing").arg(rank).arg(index);
            auto check = [&](const char* what, TimeNs got, int64_t want) {
                return got == want
                    ? QString()
                    : QString("rank %1 step %2 %3: %4 != truth %5").arg(rank).arg(index).arg(what).arg(got).arg(want);
            };
            auto idle = [&](IdleKind k) { return rec->slotNs[l.idleSlot(k)]; };
            // Rule 3 counts a gap that starts inside a host sync as a sync stall whole; synth's truth
            // counts only the overlap with the sync and the rest as launch/host. So: the sum exactly,
            // and the split exactly where no sync overlaps a gap, else at least the truth's sync stall.
            const int64_t launch = st["launch_host_ns"].toInt(), sync = st["sync_stall_ns"].toInt();
            const TimeNs mineLaunch = idle(IdleKind::LaunchHost), mineSync = idle(IdleKind::SyncStall);
            if (sync == 0 || mineSync < sync || mineLaunch > launch) {
                for (QString d : { check("launch/host", mineLaunch, launch), check("sync stalls", mineSync, sync) })
                    if (!d.isEmpty())
                        return d;
            }
            for (QString d : { check("measured", rec->measured(), st["measured_ns"].toInt()),
                     check("launch/host + sync stalls", mineLaunch + mineSync, launch + sync),
                     check("step gap", idle(IdleKind::StepGap), st["step_gap_ns"].toInt()),
                     check("in-graph gaps", idle(IdleKind::InGraph), st["in_graph_ns"].toInt()),
                     check("collective wait", rec->slotNs[l.waitSlot()], st["collective_wait_ns"].toInt()),
                     check("memory ops", rec->slotNs[l.memopsSlot()], st["memory_ops_ns"].toInt()),
                     check("unclassified", rec->slotNs[l.unclassifiedSlot()], 0) })
                if (!d.isEmpty())
                    return d;
            for (size_t c = 0; c < l.classes.size(); ++c) {
                const json::Value* want = st["components_ns"].find(l.classes[c].name);
                QString d = check(l.classes[c].name.c_str(), rec->slotNs[c], want ? want->toInt() : 0);
                if (!d.isEmpty())
                    return d;
            }
            ++checked;
        }
    }
    return checked > 0 ? QString() : QString("no truth steps");
}

} // namespace

void TstSynthTruth::exactAgainstTruth_data()
{
    QTest::addColumn<SynthOptions>("options");
    SynthOptions o = base();
    QTest::newRow("clean, graph mode") << o;
    o.graphMode = false;
    QTest::newRow("clean, eager") << o;
    o = base();
    o.extraHostGapUs = 800;
    QTest::newRow("host gap between steps") << o;
    o = base();
    o.launchGapUs = 12;
    o.launchGapEvery = 7;
    QTest::newRow("launch gaps") << o;
    o.graphMode = false;
    QTest::newRow("launch gaps, eager") << o;
    o = base();
    o.syncStallUs = 300;
    QTest::newRow("sync stall") << o;
    o = base();
    o.stragglerRank = 1;
    o.stragglerDelayUs = 40;
    QTest::newRow("straggler") << o;
    o = base();
    o.slowClass = "routed_experts";
    o.slowFactor = 3;
    QTest::newRow("slow routed experts") << o;
    o = base();
    o.ranks = 4;
    o.extraHostGapUs = 200;
    o.launchGapUs = 5;
    o.launchGapEvery = 11;
    o.syncStallUs = 150;
    o.stragglerRank = 3;
    o.stragglerDelayUs = 25;
    o.slowClass = "attention_core";
    o.slowFactor = 2;
    QTest::newRow("everything at once") << o;
}

void TstSynthTruth::exactAgainstTruth()
{
    QFETCH(SynthOptions, options);
    json::Value truth;
    auto trace = synthesize(options, &truth);
    QVERIFY2(trace, trace.error().c_str());
    GapAnalyzer a(trace.value(), KernelClassifier::builtinDefault(), StepBudget {});
    QCOMPARE(a.ranks().size(), size_t(options.ranks));
    QString diff = compare(a, truth);
    QVERIFY2(diff.isEmpty(), qPrintable(diff));
    QVERIFY2(a.notes().empty(), a.notes().empty() ? "" : a.notes()[0].c_str());
    for (const auto& s : truth["stragglers"].items()) {
        uint32_t rank = uint32_t(s["rank"].toInt());
        auto st = a.stragglers();
        const auto& mine = st[rank];
        QCOMPARE(mine.rank, rank);
        QCOMPARE(int64_t(mine.lateCount), s["collectives"].toInt());
        double delayMs = double(s["delay_ns"].toInt()) / 1e6;
        QVERIFY2(std::abs(mine.meanLateMs() - delayMs) < 0.05 * delayMs,
            qPrintable(QString("mean lateness %1 ms vs injected %2 ms").arg(mine.meanLateMs()).arg(delayMs)));
        QCOMPARE(a.critical().rank, int(rank));
    }
}

void TstSynthTruth::kernelNamesClassifyAsIntended()
{
    json::Value truth;
    auto trace = synthesize(base(), &truth);
    QVERIFY2(trace, trace.error().c_str());
    const auto& k = KernelClassifier::builtinDefault();
    QVERIFY(truth["kernel_classes"].size() > 10);
    for (const auto& [name, cls] : truth["kernel_classes"].members()) {
        int c = k.classify(name);
        QVERIFY2(c >= 0 && k.classes()[size_t(c)].name == cls.toString(), name.c_str());
    }
}

void TstSynthTruth::throughAFile()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    SynthOptions o = base();
    o.syncStallUs = 100;
    o.stragglerRank = 0;
    o.stragglerDelayUs = 30;
    const std::string path = dir.filePath("t.gapscope").toStdString();
    json::Value truth;
    Status s = synthesizeToFile(o, path, &truth);
    QVERIFY2(s, s.message().c_str());
    auto trace = readTraceFile(path);
    QVERIFY2(trace, trace.error().c_str());
    GapAnalyzer a(trace.value(), KernelClassifier::builtinDefault(), StepBudget {});
    QString diff = compare(a, truth);
    QVERIFY2(diff.isEmpty(), qPrintable(diff));
}

QTEST_APPLESS_MAIN(TstSynthTruth)
#include "tst_synthtruth.moc"
