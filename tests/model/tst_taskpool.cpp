// SPDX-License-Identifier: MIT
// TaskPool: sized once, every item once, cancellation stops the work, calls from inside the pool,
// and the loader and the analysis give the same results on one thread and on several.
#include "model/analysis/analysisreport.h"
#include "model/analysis/gapanalyzer.h"
#include "model/base/taskpool.h"
#include "model/io/tracefile.h"
#include "model/synth/synth.h"

#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using namespace gapscope;
using namespace gapscope::model;

class TstTaskPool : public QObject {
    Q_OBJECT
private slots:
    void sizedOnce();
    void everyItemOnce_data();
    void everyItemOnce();
    void cancelStopsWork();
    void cancelledBeforeStartRunsNothing();
    void nestedCallsFinish();
    void exceptionReachesCaller();
    void submitRuns();
    void analyzerCancelled();
    void analysisSameOnAnyThreadCount();
    void loadSameOnAnyThreadCount();
};

// Runs first: nothing has used the shared pool yet.
void TstTaskPool::sizedOnce()
{
    QVERIFY(TaskPool::configure(3));
    QCOMPARE(TaskPool::shared().size(), 3u);
    QVERIFY(!TaskPool::configure(5)); // too late: the pool exists
    QCOMPARE(TaskPool::shared().size(), 3u);
    QCOMPARE(&TaskPool::shared(), &TaskPool::shared());
}

void TstTaskPool::everyItemOnce_data()
{
    QTest::addColumn<unsigned>("width");
    QTest::newRow("caller only") << 1u;
    QTest::newRow("two") << 2u;
    QTest::newRow("whole pool") << 0u;
    QTest::newRow("more than the pool") << 64u;
}

void TstTaskPool::everyItemOnce()
{
    QFETCH(unsigned, width);
    TaskPool pool(4);
    std::vector<std::atomic<int>> hits(5000);
    const size_t ran = pool.parallelFor(
        hits.size(), [&](size_t i) { hits[i].fetch_add(1); }, width);
    QCOMPARE(ran, hits.size());
    for (size_t i = 0; i < hits.size(); ++i)
        QCOMPARE(hits[i].load(), 1);
}

void TstTaskPool::cancelStopsWork()
{
    TaskPool pool(3);
    CancelToken cancel;
    std::atomic<size_t> done { 0 }, afterCancel { 0 };
    constexpr size_t kItems = 10000, kCancelAt = 20;
    const size_t ran = pool.parallelFor(
        kItems,
        [&](size_t) {
            if (cancel.cancelled())
                afterCancel.fetch_add(1);
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            if (done.fetch_add(1) + 1 == kCancelAt)
                cancel.cancel();
        },
        0, cancel);
    QCOMPARE(ran, done.load());
    // Each of the 3 threads may have begun at most one item while the token was being set.
    QVERIFY2(done.load() <= kCancelAt + 3, qPrintable(QString::number(done.load())));
    QVERIFY(afterCancel.load() <= 3);
    QVERIFY(done.load() >= kCancelAt);
}

void TstTaskPool::cancelledBeforeStartRunsNothing()
{
    TaskPool pool(2);
    CancelToken cancel;
    cancel.cancel();
    std::atomic<size_t> done { 0 };
    QCOMPARE(pool.parallelFor(
                 100, [&](size_t) { done.fetch_add(1); }, 0, cancel),
        size_t(0));
    QCOMPARE(done.load(), size_t(0));
}

void TstTaskPool::nestedCallsFinish()
{
    // One worker: a job that runs a parallelFor, whose items run parallelFors, must finish on the
    // threads it has (the caller always works), not wait for a free worker.
    TaskPool pool(1);
    std::atomic<size_t> inner { 0 };
    std::atomic<bool> finished { false };
    pool.submit([&] {
        pool.parallelFor(8, [&](size_t) { pool.parallelFor(16, [&](size_t) { inner.fetch_add(1); }); });
        finished = true;
    });
    QTRY_VERIFY_WITH_TIMEOUT(finished.load(), 10000);
    QCOMPARE(inner.load(), size_t(8 * 16));
}

void TstTaskPool::exceptionReachesCaller()
{
    TaskPool pool(2);
    std::atomic<size_t> done { 0 };
    bool caught = false;
    try {
        pool.parallelFor(50, [&](size_t i) {
            done.fetch_add(1);
            if (i == 7)
                throw std::runtime_error("item 7");
        });
    } catch (const std::runtime_error& e) {
        caught = std::string(e.what()) == "item 7";
    }
    QVERIFY(caught);
    QCOMPARE(done.load(), size_t(50)); // the other items still ran
}

void TstTaskPool::submitRuns()
{
    std::atomic<int> sum { 0 };
    {
        TaskPool pool(2);
        for (int i = 1; i <= 10; ++i)
            pool.submit([&sum, i] { sum.fetch_add(i); });
    } // the destructor runs what is queued
    QCOMPARE(sum.load(), 55);
}

static Trace synthTrace()
{
    SynthOptions o;
    o.ranks = 4;
    o.steps = 6;
    o.kernelsPerStep = 60;
    o.stragglerRank = 2;
    o.stragglerDelayUs = 30;
    auto t = synthesize(o);
    if (!t)
        qFatal("%s", t.error().c_str());
    return std::move(t).value();
}

void TstTaskPool::analyzerCancelled()
{
    const Trace t = synthTrace();
    GapAnalyzer::Options o;
    o.cancel.cancel();
    GapAnalyzer a(t, KernelClassifier::builtinDefault(), StepBudget {}, o);
    QVERIFY(a.cancelled());
    GapAnalyzer full(t, KernelClassifier::builtinDefault(), StepBudget {});
    QVERIFY(!full.cancelled());
    QCOMPARE(full.ranks().size(), size_t(4));
}

void TstTaskPool::analysisSameOnAnyThreadCount()
{
    const Trace t = synthTrace();
    std::string first;
    for (unsigned threads : { 1u, 2u, 3u }) {
        GapAnalyzer::Options o;
        o.threads = threads;
        GapAnalyzer a(t, KernelClassifier::builtinDefault(), StepBudget {}, o);
        const std::string json = json::write(AnalysisReport(a, AnalysisReport::Options {}).toJson());
        QVERIFY(json.size() > 1000);
        if (first.empty())
            first = json;
        else
            QCOMPARE(json, first);
    }
}

void TstTaskPool::loadSameOnAnyThreadCount()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("synth.gapscope")).toStdString();
    QVERIFY(writeTraceFile(synthTrace(), path).isOk());
    std::string first;
    for (unsigned threads : { 1u, 2u, 3u }) {
        ReadOptions ro;
        ro.threads = threads;
        auto t = readTraceFile(path, ro);
        QVERIFY2(t, t ? "" : t.error().c_str());
        GapAnalyzer a(*t, KernelClassifier::builtinDefault(), StepBudget {});
        const std::string json = json::write(AnalysisReport(a, AnalysisReport::Options {}).toJson());
        const std::string shape = std::to_string(t->laneCount()) + "/" + std::to_string(t->eventCount()) + "\n" + json;
        if (first.empty())
            first = shape;
        else
            QCOMPARE(shape, first);
    }
}

QTEST_GUILESS_MAIN(TstTaskPool)
#include "tst_taskpool.moc"
