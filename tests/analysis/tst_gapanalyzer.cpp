// SPDX-License-Identifier: MIT
// GapAnalyzer on hand-built traces (TraceBuilder): exact bars for one stream, budget bars,
// concurrent streams, collective wait across ranks, stragglers, the critical rank, missing API
// lanes, unmatched collectives, kernels straddling a step boundary, selections and bar members.
#include "model/analysis/analysisreport.h"
#include "model/analysis/gapanalyzer.h"
#include "model/format/wholegraph.h"

#include <QTest>

#include <numeric>

using namespace gapscope;
using namespace gapscope::model;

namespace {

constexpr const char* kGemm = "nvjet_tst_64x8_64x16_4x1_v_bz_TNT";
constexpr const char* kMoe = "fused_moe_kernel";
constexpr const char* kNorm = "void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*)";
constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
constexpr const char* kCustom = "my_custom_kernel";

class Builder {
public:
    LaneId gpu(uint32_t rank, uint64_t stream = 7)
    {
        return b.lane(LaneInfo { LaneKind::GpuStream, rank, "host", rank, stream, "stream", 100 + rank });
    }
    LaneId api(uint32_t rank)
    {
        return b.lane(LaneInfo { LaneKind::CpuApi, rank, "host", rank, 1000 + rank, "thread", 100 + rank });
    }
    void kernel(LaneId lane, TimeNs start, TimeNs dur, const char* name, uint32_t correlation = 0)
    {
        b.addKernel(lane, start, dur, b.intern(name), correlation ? correlation : ++corr, KernelConfig {});
    }
    void memcpy(LaneId lane, TimeNs start, TimeNs dur)
    {
        b.addMemop(lane, start, dur, MemopInfo { MemopKind::Memcpy, CopyKind::DtoH, 4096, false }, ++corr);
    }
    void apiCall(LaneId lane, TimeNs start, TimeNs dur, const char* name, uint32_t correlation = 0)
    {
        b.addApi(lane, start, dur, b.intern(name), correlation ? correlation : ++corr);
    }
    void step(uint32_t rank, uint32_t index, TimeNs start, TimeNs end)
    {
        b.addStep(rank, Step { index, start, end, StepSource::File });
    }
    Trace finish() { return b.finish(); }
    TraceBuilder b;
    uint32_t corr = 0;
};

TimeNs barNs(const GapAnalyzer::Breakdown& b, const std::string& name)
{
    for (const auto& bar : b.bars)
        if (bar.name == name)
            return bar.ns;
    qWarning("no bar '%s'", name.c_str());
    return -1;
}

TimeNs sumBars(const GapAnalyzer::Breakdown& b)
{
    return std::accumulate(
        b.bars.begin(), b.bars.end(), TimeNs(0), [](TimeNs t, const Bar& bar) { return t + bar.ns; });
}

GapAnalyzer::Breakdown stepOf(const GapAnalyzer& a, int rank, uint32_t step, bool members = false)
{
    GapAnalyzer::Selection s;
    s.kind = GapAnalyzer::Selection::Kind::Step;
    s.rank = rank;
    s.firstStep = step;
    s.members = members;
    return a.analyze(s);
}

// One rank, one stream: gemm, gap, moe, memcpy (with a host sync in flight when it ends), gap,
// unknown kernel, norm, then the step gap.
Trace singleStreamTrace(bool withApi)
{
    Builder t;
    LaneId g = t.gpu(0);
    t.kernel(g, 0, 20000, kGemm);
    t.kernel(g, 25000, 20000, kMoe);
    t.memcpy(g, 45000, 1000);
    t.kernel(g, 50000, 2000, kCustom);
    t.kernel(g, 52000, 1000, kNorm);
    t.kernel(g, 100000, 30000, kGemm);
    if (withApi) {
        LaneId a = t.api(0);
        t.apiCall(a, 1000, 3000, "cudaLaunchKernel");
        t.apiCall(a, 44000, 3000, "cudaMemcpy"); // blocking: in flight when the GPU runs dry at 46000
    }
    t.step(0, 0, 0, 53000);
    t.step(0, 1, 100000, 150000);
    return t.finish();
}

} // namespace

class TstGapAnalyzer : public QObject {
    Q_OBJECT
private slots:
    void singleStreamExact();
    void budgetBars();
    void missingApiLanes();
    void queuedWorkIsNotASyncStall();
    void inGraphGapsOnlyWithinOneLaunch();
    void lightModeBarsFromDetailedSteps();
    void concurrentStreams();
    void earlyLaunchOnOneStream();
    void collectiveWaitAndStragglers();
    void collectiveWaitWithConcurrentStream();
    void unmatchedCollectives();
    void kernelAcrossStepBoundary();
    void selections();
    void membersLightUpEvents();
};

void TstGapAnalyzer::singleStreamExact()
{
    Trace trace = singleStreamTrace(true);
    GapAnalyzer a(trace, KernelClassifier::builtinDefault(), StepBudget {});
    QCOMPARE(a.ranks(), std::vector<uint32_t> { 0 });
    auto b = stepOf(a, 0, 0);
    QVERIFY(b.valid);
    QCOMPARE(b.measuredNs, TimeNs(100000));
    QCOMPARE(barNs(b, "linear"), TimeNs(20000));
    QCOMPARE(barNs(b, "routed_experts"), TimeNs(20000));
    QCOMPARE(barNs(b, "other"), TimeNs(1000));
    QCOMPARE(barNs(b, "memory ops"), TimeNs(1000));
    QCOMPARE(barNs(b, "unclassified kernels"), TimeNs(2000));
    QCOMPARE(barNs(b, "launch/host gaps"), TimeNs(5000));
    QCOMPARE(barNs(b, "sync stalls"), TimeNs(4000));
    QCOMPARE(barNs(b, "step gap"), TimeNs(47000));
    QCOMPARE(barNs(b, "collective wait"), TimeNs(0));
    QCOMPARE(sumBars(b), b.measuredNs);
    for (const auto& bar : b.bars)
        QVERIFY(bar.kind != BarKind::Budget); // no budget given
    QVERIFY(a.notes().empty());
    auto unknown = a.unclassifiedKernels();
    QCOMPARE(int(unknown.size()), 1);
    QCOMPARE(trace.str(unknown[0].name), std::string_view(kCustom));
    QCOMPARE(unknown[0].ns, TimeNs(2000));
    QCOMPARE(unknown[0].count, uint64_t(1));
    // The last step ends at its recorded end.
    auto last = stepOf(a, 0, 1);
    QCOMPARE(last.measuredNs, TimeNs(50000));
    QCOMPARE(barNs(last, "linear"), TimeNs(30000));
    QCOMPARE(barNs(last, "step gap"), TimeNs(20000));
}

void TstGapAnalyzer::budgetBars()
{
    Trace trace = singleStreamTrace(true);
    StepBudget budget;
    budget.present = true;
    budget.componentMs = { { "attention", 0.005 }, { "dense_ffn", 0.005 }, { "routed_experts", 0.010 },
        { "kv_cache", 0.003 }, { "launch_host", 0.002 }, { "draft", 0.001 } };
    GapAnalyzer a(trace, KernelClassifier::builtinDefault(), budget);
    auto b = stepOf(a, 0, 0);
    QCOMPARE(barNs(b, "linear"), TimeNs(10000));
    QCOMPARE(barNs(b, "linear inefficiency"), TimeNs(10000));
    QCOMPARE(barNs(b, "routed_experts inefficiency"), TimeNs(10000));
    QCOMPARE(barNs(b, "attention_core"), TimeNs(3000));
    QCOMPARE(barNs(b, "attention_core inefficiency"), TimeNs(-3000));
    QCOMPARE(barNs(b, "draft"), TimeNs(1000)); // a component no class covers gets its own class
    QCOMPARE(barNs(b, "draft inefficiency"), TimeNs(-1000));
    QCOMPARE(barNs(b, "launch/host floor"), TimeNs(2000));
    QCOMPARE(barNs(b, "launch/host gaps"), TimeNs(3000));
    QCOMPARE(sumBars(b), TimeNs(100000));
    // Budget bars come first and add up to the budget total.
    TimeNs budgetSum = 0;
    bool seenGap = false;
    for (const auto& bar : b.bars) {
        if (bar.kind == BarKind::Budget) {
            QVERIFY(!seenGap);
            budgetSum += bar.ns;
        } else {
            seenGap = true;
        }
    }
    QCOMPARE(budgetSum, TimeNs(26000));
}

void TstGapAnalyzer::missingApiLanes()
{
    Trace trace = singleStreamTrace(false);
    GapAnalyzer a(trace, KernelClassifier::builtinDefault(), StepBudget {});
    auto b = stepOf(a, 0, 0);
    QCOMPARE(barNs(b, "sync stalls"), TimeNs(0));
    QCOMPARE(barNs(b, "launch/host gaps"), TimeNs(9000));
    QVERIFY(!a.hasApiLanes(0));
    QCOMPARE(int(a.notes().size()), 1);
    QVERIFY(a.notes()[0].find("launch times were not recorded") != std::string::npos);
}

void TstGapAnalyzer::queuedWorkIsNotASyncStall()
{
    // A graph step: one cudaGraphLaunch at 0 queues every kernel; the host then waits in
    // cudaStreamSynchronize for the whole step. A host node in the graph leaves the GPU idle over
    // [20000, 30000): the work after it belongs to the same graph launch as the work before it, so the
    // gap is an in-graph gap (neither the host's launching nor the sync). After the sync returns, a
    // second launch at 61000 (the host relaunching late) ends a gap that began while the sync was in
    // flight: that one is the sync's.
    Builder t;
    LaneId g = t.gpu(0);
    LaneId a = t.api(0);
    t.apiCall(a, 0, 5000, "cudaGraphLaunch", 500);
    t.apiCall(a, 6000, 55000, "cudaStreamSynchronize");
    t.apiCall(a, 61000, 1000, "cudaLaunchKernel", 600);
    t.kernel(g, 10000, 10000, kGemm, 500);
    t.kernel(g, 30000, 20000, kMoe, 500);
    t.kernel(g, 65000, 5000, kNorm, 600);
    t.step(0, 0, 10000, 70000);
    Trace trace = t.finish();
    GapAnalyzer an(trace, KernelClassifier::builtinDefault(), StepBudget {});
    auto b = stepOf(an, 0, 0);
    QCOMPARE(b.measuredNs, TimeNs(60000));
    QCOMPARE(barNs(b, "in-graph gaps"), TimeNs(10000));
    QCOMPARE(barNs(b, "launch/host gaps"), TimeNs(0));
    QCOMPARE(barNs(b, "sync stalls"), TimeNs(15000));
    QCOMPARE(sumBars(b), b.measuredNs);
}

void TstGapAnalyzer::inGraphGapsOnlyWithinOneLaunch()
{
    // Two replays of one graph (launches 700 and 701, each two kernels) and an eager kernel: the gap
    // inside a replay is in-graph; the gap before the second replay's first kernel (its launch came
    // late) and the one before the eager kernel are launch/host gaps. Without API events nothing is
    // known of launches: all three are launch/host gaps.
    for (bool withApi : { true, false }) {
        Builder t;
        LaneId g = t.gpu(0);
        if (withApi) {
            LaneId a = t.api(0);
            t.apiCall(a, 0, 1000, "cudaGraphLaunch_v10000", 700);
            t.apiCall(a, 30000, 1000, "cuGraphLaunch", 701);
            t.apiCall(a, 60000, 1000, "cudaLaunchKernel", 702);
        }
        t.kernel(g, 2000, 8000, kGemm, 700); // 2000-10000
        t.kernel(g, 13000, 7000, kMoe, 700); // in-graph gap 10000-13000
        t.kernel(g, 32000, 8000, kGemm, 701); // launch/host gap 20000-32000
        t.kernel(g, 41000, 4000, kMoe, 701); // in-graph gap 40000-41000
        t.kernel(g, 62000, 3000, kNorm, 702); // launch/host gap 45000-62000
        t.step(0, 0, 2000, 65000);
        Trace trace = t.finish();
        GapAnalyzer an(trace, KernelClassifier::builtinDefault(), StepBudget {});
        auto b = stepOf(an, 0, 0);
        QCOMPARE(b.measuredNs, TimeNs(63000));
        QCOMPARE(barNs(b, "in-graph gaps"), withApi ? TimeNs(4000) : TimeNs(0));
        QCOMPARE(barNs(b, "launch/host gaps"), withApi ? TimeNs(29000) : TimeNs(33000));
        QCOMPARE(sumBars(b), b.measuredNs);
    }
}

void TstGapAnalyzer::lightModeBarsFromDetailedSteps()
{
    // A light-mode capture: steps 0 and 2 recorded node by node, step 1 as one whole replay of graph 5.
    Builder t;
    LaneId g = t.gpu(0);
    t.kernel(g, 1000, 6000, kGemm); // step 0: 1000-7000, then 3000 idle
    KernelConfig whole;
    whole.graphId = 5;
    whole.graphNodeId = format::kWholeGraphNode;
    t.b.addKernel(g, 21000, 7000, t.b.intern(format::kWholeGraphName), ++t.corr, whole); // step 1: 21000-28000
    t.kernel(g, 31000, 8000, kGemm); // step 2
    t.step(0, 0, 0, 10000);
    t.step(0, 1, 20000, 30000);
    t.step(0, 2, 30000, 40000);
    Trace trace = t.finish();
    GapAnalyzer a(trace, KernelClassifier::builtinDefault(), StepBudget {});
    QVERIFY(a.layout().wholeGraphs);
    QCOMPARE(a.wholeGraphSteps(), 1u);
    QCOMPARE(a.detailedSteps(), 2u);
    QVERIFY(a.isIncomplete(1));
    QVERIFY(!a.isIncomplete(0) && !a.isIncomplete(2));
    auto one = stepOf(a, 0, 1);
    QCOMPARE(barNs(one, "graph replays, nodes not recorded"), TimeNs(7000));
    QCOMPARE(barNs(one, "unclassified kernels"), TimeNs(0));
    QCOMPARE(sumBars(one), one.measuredNs);
    GapAnalyzer::Selection all;
    all.kind = GapAnalyzer::Selection::Kind::Steps;
    all.rank = 0;
    auto mean = a.analyze(all);
    QCOMPARE(mean.steps.size(), size_t(2)); // the detailed steps only
    QCOMPARE(barNs(mean, "graph replays, nodes not recorded"), TimeNs(0));
    QCOMPARE(sumBars(mean), mean.measuredNs);
    // One note for the light mode, not one per step; the report gives step times of all three.
    int lightNotes = 0;
    for (const auto& n : a.notes()) {
        QVERIFY(n.find("ran as whole graph replays") == std::string::npos);
        lightNotes += n.find("light-mode capture") != std::string::npos;
    }
    QCOMPARE(lightNotes, 1);
    AnalysisReport report(a, AnalysisReport::Options {});
    const json::Value doc = report.toJson();
    const json::Value* lm = nullptr;
    for (const auto& r : doc["ranks"].items())
        lm = r.find("light_mode");
    QVERIFY(lm);
    QCOMPARE((*lm)["steps"].toInt(), int64_t(3));
    QCOMPARE((*lm)["steps_detailed"].toInt(), int64_t(2));
    QCOMPARE((*lm)["steps_whole_graph"].toInt(), int64_t(1));
    QCOMPARE((*lm)["step_ms_median"].toDouble(), 0.01);
    // A trace without whole replays keeps its slot layout.
    Builder plain;
    plain.kernel(plain.gpu(0), 0, 1000, kGemm);
    plain.step(0, 0, 0, 2000);
    Trace p = plain.finish();
    GapAnalyzer pa(p, KernelClassifier::builtinDefault(), StepBudget {});
    QVERIFY(!pa.layout().wholeGraphs);
    QCOMPARE(pa.wholeGraphSteps(), 0u);
}

void TstGapAnalyzer::concurrentStreams()
{
    Builder t;
    LaneId s1 = t.gpu(0, 7), s2 = t.gpu(0, 8);
    t.kernel(s1, 0, 10000, kGemm);
    t.kernel(s2, 5000, 10000, kNorm);
    t.kernel(s1, 12000, 1000, kMoe); // three-way: [12000, 13000) shared by two
    t.step(0, 0, 0, 20000);
    Trace trace = t.finish();
    GapAnalyzer a(trace, KernelClassifier::builtinDefault(), StepBudget {});
    auto b = stepOf(a, 0, 0);
    QCOMPARE(barNs(b, "linear"), TimeNs(7500));
    QCOMPARE(barNs(b, "other"), TimeNs(5000 / 2 + 2000 + 1000 / 2 + 2000));
    QCOMPARE(barNs(b, "routed_experts"), TimeNs(500));
    QCOMPARE(barNs(b, "step gap"), TimeNs(5000));
    QCOMPARE(sumBars(b), TimeNs(20000));
}

// Programmatic dependent launch: on one stream the next kernel starts (and waits) before the one
// before it ends; the overlap belongs to the earlier kernel, whichever stream layout feeds it.
void TstGapAnalyzer::earlyLaunchOnOneStream()
{
    for (bool second : { false, true }) {
        Builder t;
        LaneId s1 = t.gpu(0, 7);
        t.kernel(s1, 0, 10000, kMoe);
        t.kernel(s1, 6000, 7000, kNorm); // launched early: waits until 10000, works until 13000
        t.kernel(s1, 12000, 500, kGemm); // inside the norm's time: counts from 13000, so nothing
        t.kernel(s1, 15000, 2000, kGemm);
        if (second) // a second busy stream takes the path that merges the streams' pieces
            t.kernel(t.gpu(0, 8), 18000, 1000, kCustom);
        t.step(0, 0, 0, 20000);
        Trace trace = t.finish();
        GapAnalyzer a(trace, KernelClassifier::builtinDefault(), StepBudget {});
        auto b = stepOf(a, 0, 0);
        QCOMPARE(barNs(b, "routed_experts"), TimeNs(10000));
        QCOMPARE(barNs(b, "other"), TimeNs(3000));
        QCOMPARE(barNs(b, "linear"), TimeNs(2000));
        QCOMPARE(barNs(b, "launch/host gaps"), TimeNs(second ? 3000 : 2000));
        QCOMPARE(barNs(b, "step gap"), TimeNs(second ? 1000 : 3000));
        QCOMPARE(sumBars(b), TimeNs(20000));
    }
}

void TstGapAnalyzer::collectiveWaitAndStragglers()
{
    Builder t;
    for (uint32_t rank = 0; rank < 2; ++rank) {
        LaneId g = t.gpu(rank);
        t.api(rank);
        for (uint32_t s = 0; s < 3; ++s) {
            TimeNs base = TimeNs(s) * 100000;
            // Rank 1 computes 18 us longer before the all-reduce in steps 0 and 1.
            TimeNs pre = rank == 1 && s < 2 ? 28000 : 10000;
            t.kernel(g, base, pre, kGemm);
            t.kernel(g, base + pre, 40000 - pre, kAllReduce);
            t.kernel(g, base + 40000, 10000, kGemm);
            t.step(rank, s, base, base + 50000);
        }
    }
    Trace trace = t.finish();
    GapAnalyzer a(trace, KernelClassifier::builtinDefault(), StepBudget {});
    auto r0 = stepOf(a, 0, 0), r1 = stepOf(a, 1, 0);
    QCOMPARE(barNs(r0, "collective wait"), TimeNs(18000));
    QCOMPARE(barNs(r0, "collectives"), TimeNs(12000));
    QCOMPARE(barNs(r1, "collective wait"), TimeNs(0));
    QCOMPARE(barNs(r1, "collectives"), TimeNs(12000));
    QCOMPARE(sumBars(r0), TimeNs(100000));
    // Step 2: nobody is late; both wire 30 us.
    QCOMPARE(barNs(stepOf(a, 0, 2), "collective wait"), TimeNs(0));
    QCOMPARE(a.criticalRank(0), 1);
    QCOMPARE(a.criticalRank(1), 1);
    QCOMPARE(a.criticalRank(2), 0); // tie on wait and time: lowest rank
    auto crit = a.critical();
    QCOMPARE(crit.rank, 1);
    QCOMPARE(crit.steps, 2u);
    QCOMPARE(crit.total, 3u);
    auto st = a.stragglers();
    QCOMPARE(int(st.size()), 2);
    QCOMPARE(st[1].rank, 1u);
    QCOMPARE(st[1].lateCount, uint64_t(2));
    QCOMPARE(st[1].meanLateMs(), 0.018);
    QCOMPARE(st[1].op, std::string("AllReduce"));
    QCOMPARE(st[1].matched, uint64_t(3));
    QCOMPARE(st[0].lateCount, uint64_t(0));
    // The critical-rank selection takes each step from its critical rank.
    GapAnalyzer::Selection sel;
    sel.rank = GapAnalyzer::kCriticalRank;
    auto all = a.analyze(sel);
    QCOMPARE(int(all.steps.size()), 3);
    QCOMPARE(all.steps[0], std::make_pair(1u, 0u));
    QCOMPARE(all.steps[2], std::make_pair(0u, 2u));
    QCOMPARE(barNs(all, "collective wait"), TimeNs(0));
}

void TstGapAnalyzer::collectiveWaitWithConcurrentStream()
{
    Builder t;
    LaneId comm0 = t.gpu(0, 9), compute0 = t.gpu(0, 7), g1 = t.gpu(1, 7);
    t.api(0);
    t.api(1);
    t.kernel(compute0, 0, 20000, kGemm); // overlaps the first half of rank 0's wait
    t.kernel(comm0, 10000, 30000, kAllReduce); // waits 18 us for rank 1
    t.kernel(g1, 0, 28000, kGemm);
    t.kernel(g1, 28000, 12000, kAllReduce);
    t.step(0, 0, 0, 50000);
    t.step(1, 0, 0, 50000);
    Trace trace = t.finish();
    GapAnalyzer a(trace, KernelClassifier::builtinDefault(), StepBudget {});
    auto b = stepOf(a, 0, 0);
    // [0,10) gemm; [10,20) gemm + wait share 5/5; [20,28) wait; [28,40) wire; [40,50) step gap (us).
    QCOMPARE(barNs(b, "linear"), TimeNs(15000));
    QCOMPARE(barNs(b, "collective wait"), TimeNs(13000));
    QCOMPARE(barNs(b, "collectives"), TimeNs(12000));
    QCOMPARE(barNs(b, "step gap"), TimeNs(10000));
    QCOMPARE(sumBars(b), TimeNs(50000));
    // The members sweep (all pieces) gives the same bars.
    auto m = stepOf(a, 0, 0, true);
    for (size_t i = 0; i < b.bars.size(); ++i)
        QCOMPARE(m.bars[i].ns, b.bars[i].ns);
    QCOMPARE(barNs(stepOf(a, 1, 0), "collective wait"), TimeNs(0));
}

void TstGapAnalyzer::unmatchedCollectives()
{
    Builder t;
    for (uint32_t rank = 0; rank < 2; ++rank) {
        LaneId g = t.gpu(rank);
        t.api(rank);
        t.kernel(g, 0, 5000, kAllReduce);
        if (rank == 0)
            t.kernel(g, 6000, 5000, kAllReduce); // rank 1 has no second collective
        t.step(rank, 0, 0, 20000);
    }
    Trace trace = t.finish();
    GapAnalyzer a(trace, KernelClassifier::builtinDefault(), StepBudget {});
    auto st = a.stragglers();
    QCOMPARE(st[0].unmatched, uint64_t(1));
    QCOMPARE(st[1].unmatched, uint64_t(0));
    QCOMPARE(barNs(stepOf(a, 0, 0), "collectives"), TimeNs(10000));
    bool noted = false;
    for (const auto& n : a.notes())
        noted = noted || n.find("rank 0: 1 collective kernels have no counterpart") != std::string::npos;
    QVERIFY(noted);
}

void TstGapAnalyzer::kernelAcrossStepBoundary()
{
    Builder t;
    LaneId g = t.gpu(0);
    t.api(0);
    t.kernel(g, 0, 5000, kGemm);
    t.kernel(g, 90000, 20000, kMoe); // [90000, 110000) straddles the boundary at 100000
    t.step(0, 0, 0, 100000);
    t.step(0, 1, 100000, 120000);
    Trace trace = t.finish();
    GapAnalyzer a(trace, KernelClassifier::builtinDefault(), StepBudget {});
    auto s0 = stepOf(a, 0, 0), s1 = stepOf(a, 0, 1);
    QCOMPARE(barNs(s0, "routed_experts"), TimeNs(10000));
    QCOMPARE(barNs(s0, "step gap"), TimeNs(0));
    QCOMPARE(barNs(s1, "routed_experts"), TimeNs(10000));
    QCOMPARE(barNs(s1, "step gap"), TimeNs(10000));
}

void TstGapAnalyzer::selections()
{
    Builder t;
    LaneId g = t.gpu(0);
    t.api(0);
    const TimeNs lengths[] = { 100000, 120000, 110000, 130000 };
    TimeNs base = 0;
    for (uint32_t s = 0; s < 4; ++s) {
        t.kernel(g, base, 50000, kGemm);
        t.step(0, s, base, base + 50000);
        base += lengths[s];
    }
    t.step(0, 4, base, base + 10);
    Trace trace = t.finish();
    StepBudget budget;
    budget.present = true;
    budget.componentMs = { { "dense_ffn", 0.040 } };
    GapAnalyzer a(trace, KernelClassifier::builtinDefault(), budget);
    GapAnalyzer::Selection sel;
    sel.rank = 0;
    sel.kind = GapAnalyzer::Selection::Kind::Median;
    sel.lastStep = 3;
    auto median = a.analyze(sel);
    QCOMPARE(int(median.steps.size()), 1);
    QCOMPARE(median.steps[0].second, 2u); // 110 us: the lower median of 100, 110, 120, 130
    QCOMPARE(median.measuredNs, TimeNs(110000));
    sel.kind = GapAnalyzer::Selection::Kind::Steps;
    sel.firstStep = 1;
    sel.lastStep = 2;
    auto two = a.analyze(sel);
    QCOMPARE(two.measuredNs, TimeNs(230000));
    QCOMPARE(two.budgetSteps, 2.0);
    QCOMPARE(barNs(two, "linear"), TimeNs(80000));
    QCOMPARE(barNs(two, "linear inefficiency"), TimeNs(20000));
    QCOMPARE(sumBars(two), TimeNs(230000));
    // Time range [50 us, 150 us): the step gap of step 0 and the first 50 us of step 1.
    sel.kind = GapAnalyzer::Selection::Kind::Range;
    sel.t0 = 50000;
    sel.t1 = 150000;
    auto range = a.analyze(sel);
    QCOMPARE(range.measuredNs, TimeNs(100000));
    QCOMPARE(barNs(range, "step gap"), TimeNs(50000));
    QCOMPARE(range.budgetSteps, 0.5 + 50000.0 / 120000.0);
    QCOMPARE(sumBars(range), TimeNs(100000));
    // Unknown rank or step: an empty, invalid breakdown whose bars are all zero.
    sel.kind = GapAnalyzer::Selection::Kind::Step;
    sel.rank = 5;
    QVERIFY(!a.analyze(sel).valid);
}

void TstGapAnalyzer::membersLightUpEvents()
{
    Trace trace = singleStreamTrace(true);
    GapAnalyzer a(trace, KernelClassifier::builtinDefault(), StepBudget {});
    auto b = stepOf(a, 0, 0, true);
    QCOMPARE(b.members.size(), b.bars.size());
    auto members = [&](const std::string& name) -> const GapAnalyzer::Members& {
        for (size_t i = 0; i < b.bars.size(); ++i)
            if (b.bars[i].name == name)
                return b.members[i];
        static GapAnalyzer::Members none;
        return none;
    };
    QCOMPARE(int(members("linear").events.size()), 1);
    QCOMPARE(members("linear").events[0].index, 0u);
    QCOMPARE(trace.str(trace.lane(members("routed_experts").events[0].lane).events.name(1)), std::string_view(kMoe));
    QCOMPARE(int(members("memory ops").events.size()), 1);
    QCOMPARE(int(members("sync stalls").idle.size()), 1);
    QCOMPARE(members("sync stalls").idle[0].start, TimeNs(46000));
    QCOMPARE(members("sync stalls").idle[0].end, TimeNs(50000));
    QCOMPARE(int(members("step gap").idle.size()), 1);
    // The largest gaps, with the kernel after each.
    auto gaps = a.largestGaps(0, 0, 0, 2);
    QCOMPARE(int(gaps.size()), 2);
    QCOMPARE(gaps[0].kind, IdleKind::StepGap);
    QCOMPARE(gaps[1].kind, IdleKind::LaunchHost);
    QCOMPARE(gaps[1].duration(), TimeNs(5000));
    QVERIFY(gaps[1].next.valid());
    QCOMPARE(gaps[1].next.index, 1u); // the moe kernel
}

QTEST_APPLESS_MAIN(TstGapAnalyzer)
#include "tst_gapanalyzer.moc"
