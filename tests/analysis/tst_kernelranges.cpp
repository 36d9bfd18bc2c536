// SPDX-License-Identifier: MIT
// Kernels by annotated range (model/analysis/kernelranges.h) on a hand-built trace with known answers:
// eager kernels take the NVTX ranges open at their launch (the step marker range left out), graph
// kernels the ranges stored for their node at graph build, graph kernels without a node entry an
// inferred layer (k-th repetition of the repeating block), and the per-range table counts them.
#include "model/analysis/hostattribution.h"
#include "model/analysis/kernelranges.h"
#include "model/format/zstdcodec.h"
#include "model/io/tracefile.h"
#include "model/io/tracemetaproto.h"
#include "model/open/traceopen.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <regex>
#include <set>

#include <QTemporaryDir>
#include <QtTest>

using namespace gapscope::model;

namespace {

constexpr uint32_t kThread = 100;

struct Built {
    Trace trace;
    // expected path per kernel name (eager and captured parts), by construction
};

// Rank 0: one eager step under "decode step 0" > "decode" > "layer L" > "attention"/"mlp" (2 layers,
// 2 kernels per sub-block), then one replay of graph 5 (its nodes built under the same ranges, no step
// range), then one replay of graph 9 (no node entries: E, 3 x [A B C D F], A G).
Trace build()
{
    TraceBuilder b;
    LaneInfo nv { LaneKind::Nvtx, 0, "h", 0, kThread, "nvtx", 1 };
    LaneInfo api { LaneKind::CpuApi, 0, "h", 0, kThread, "api", 1 };
    LaneInfo gpu { LaneKind::GpuStream, 0, "h", 0, 7, "stream 7", 1 };
    const LaneId lnv = b.lane(nv), lapi = b.lane(api), lgpu = b.lane(gpu);
    auto s = [&b](const char* t) { return b.intern(t); };
    b.addNvtx(lnv, 0, 10000, s("decode step 0"), 0);
    b.addNvtx(lnv, 100, 9000, s("decode"), 1);
    uint32_t corr = 1;
    TimeNs gpuT = 20000;
    for (int layer = 0; layer < 2; ++layer) {
        const TimeNs l0 = 200 + layer * 4000;
        b.addNvtx(lnv, l0, 3800, s(("layer " + std::to_string(layer)).c_str()), 2);
        const char* blocks[] = { "attention", "mlp" };
        for (int k = 0; k < 2; ++k) {
            const TimeNs b0 = l0 + 100 + k * 1800;
            b.addNvtx(lnv, b0, 1700, s(blocks[k]), 3);
            for (int j = 0; j < 2; ++j) {
                const TimeNs t = b0 + 100 + j * 500;
                b.addApi(lapi, t, 50, s("cudaLaunchKernel"), corr);
                b.addKernel(lgpu, gpuT, 100, s(k == 0 ? "attn_kernel" : "mlp_kernel"), corr, KernelConfig {});
                gpuT += 200;
                ++corr;
            }
        }
    }
    // Graph 5: 8 nodes (ids 11..18) built under the same ranges, replayed once.
    b.addApi(lapi, 15000, 50, s("cudaGraphLaunch"), corr);
    for (int n = 0; n < 8; ++n) {
        const int layer = n / 4, k = (n / 2) % 2;
        GraphNodeInfo g;
        g.rank = 0;
        g.nodeId = 11 + uint64_t(n);
        g.graphId = 5;
        g.order = uint32_t(n);
        g.threadId = kThread;
        g.ranges = { s("decode"), s(("layer " + std::to_string(layer)).c_str()), s(k == 0 ? "attention" : "mlp") };
        b.addGraphNode(g);
        KernelConfig c;
        c.graphId = 5;
        c.graphNodeId = g.nodeId;
        b.addKernel(lgpu, gpuT, 100, s(k == 0 ? "attn_kernel" : "mlp_kernel"), corr, c);
        gpuT += 200;
    }
    ++corr;
    // Graph 9: no node entries.
    b.addApi(lapi, 16000, 50, s("cudaGraphLaunch"), corr);
    const char* seq[] = { "E", "A", "B", "C", "D", "F", "A", "B", "C", "D", "F", "A", "B", "C", "D", "F", "A", "G" };
    for (size_t n = 0; n < std::size(seq); ++n) {
        KernelConfig c;
        c.graphId = 9;
        c.graphNodeId = 101 + n;
        b.addKernel(lgpu, gpuT, 100, s(seq[n]), corr, c);
        gpuT += 200;
    }
    Trace t = b.finish();
    StepReport r;
    r.rule = "nvtx:^decode step";
    t.setStepReport(r);
    return t;
}

// The layer number a range path names (group `group` of `re`), cached per path id; -1 when none.
int layerOf(const KernelRanges& r, uint32_t id, const std::regex& re, int group, std::map<uint32_t, int>& cache)
{
    auto it = cache.find(id);
    if (it != cache.end())
        return it->second;
    std::smatch m;
    const std::string& path = r.path(id);
    const int layer = std::regex_search(path, m, re) ? std::stoi(m[group].str()) : -1;
    cache.emplace(id, layer);
    return layer;
}

std::vector<std::string> pathsOnLane(const Trace& t, const KernelRanges& r)
{
    std::vector<std::string> out;
    for (const Lane& l : t.lanes())
        if (l.info.kind == LaneKind::GpuStream)
            for (size_t i = 0; i < l.events.size(); ++i)
                out.push_back(r.path(r.pathOf(l.id, i)));
    return out;
}

} // namespace

class TestKernelRanges : public QObject {
    Q_OBJECT
private slots:
    void eagerAndCapturedAgree()
    {
        const Trace t = build();
        const KernelRanges r = KernelRanges::of(t);
        const std::vector<std::string> paths = pathsOnLane(t, r);
        QCOMPARE(paths.size(), size_t(8 + 8 + 18));
        for (size_t i = 0; i < 8; ++i) {
            const std::string want
                = "decode > layer " + std::to_string(i / 4) + " > " + ((i / 2) % 2 == 0 ? "attention" : "mlp");
            QCOMPARE(QString::fromStdString(paths[i]), QString::fromStdString(want)); // eager, at launch
            QCOMPARE(QString::fromStdString(paths[8 + i]), QString::fromStdString(want)); // graph, at build
        }
        QCOMPARE(r.kernels(RangeSource::Launch), uint64_t(8));
        QCOMPARE(r.kernels(RangeSource::Capture), uint64_t(8));
    }

    void layersInferredWithoutRanges()
    {
        const Trace t = build();
        const KernelRanges r = KernelRanges::of(t);
        const std::vector<std::string> paths = pathsOnLane(t, r);
        QCOMPARE(QString::fromStdString(paths[16]), QString()); // E: before the repeating part
        for (size_t n = 1; n < 16; ++n)
            QCOMPARE(QString::fromStdString(paths[16 + n]),
                QString::fromStdString("layer " + std::to_string((n - 1) / 5) + " (inferred)"));
        QCOMPARE(QString::fromStdString(paths[16 + 16]), QString()); // the final A: after it
        QCOMPARE(QString::fromStdString(paths[16 + 17]), QString());
        QCOMPARE(r.kernels(RangeSource::Inferred), uint64_t(15));
        QCOMPARE(r.layerBlocks().size(), size_t(1));
        QCOMPARE(r.layerBlocks()[0].period, size_t(5));
        QCOMPARE(r.layerBlocks()[0].layers, size_t(3));
        QCOMPARE(r.layerBlocks()[0].first, size_t(1));
    }

    void noBlockInAShortOrIrregularSequence()
    {
        QCOMPARE(KernelRanges::findLayers({ 1, 2, 3, 4, 5, 6, 7 }).period, size_t(0));
        QCOMPARE(KernelRanges::findLayers({ 1, 2, 3, 1, 2, 3 }).period, size_t(0)); // below kMinPeriod
        const auto b = KernelRanges::findLayers({ 9, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4 });
        QCOMPARE(b.period, size_t(4));
        QCOMPARE(b.layers, size_t(4));
        QCOMPARE(b.first, size_t(1));
    }

    void tableCountsPerRange()
    {
        const Trace t = build();
        const KernelRanges r = KernelRanges::of(t);
        const RangeTable table = rangeTable(t, r); // no steps: every kernel
        QCOMPARE(table.kernels, uint64_t(34));
        std::map<std::string, uint64_t> count;
        for (const auto& row : table.rows)
            count[row.path + "|" + toString(row.source)] = row.count;
        QCOMPARE(count["decode > layer 0 > attention|launch"], uint64_t(2));
        QCOMPARE(count["decode > layer 1 > mlp|capture"], uint64_t(2));
        QCOMPARE(count["layer 2 (inferred)|inferred"], uint64_t(5));
        QCOMPARE(count["(no range)|none"], uint64_t(3));
    }

    void nodeTableSurvivesTheFile()
    {
        const Trace t = build();
        QTemporaryDir dir;
        const std::string path = dir.filePath("ranges.gapscope").toStdString();
        QVERIFY(writeTraceFile(t, path).isOk());
        auto back = readTraceFile(path);
        QVERIFY2(bool(back), back ? "" : back.error().c_str());
        QCOMPARE(back->graphNodes().size(), size_t(8));
        const GraphNodeInfo* n = back->graphNode(0, 14);
        QVERIFY(n);
        QCOMPARE(QString::fromStdString(rangePath(n->ranges, [&](StringId id) { return back->str(id); })),
            QString("decode > layer 0 > mlp"));
        QCOMPARE(n->order, uint32_t(3));
        QCOMPARE(n->threadId, kThread);
    }

    // Captures of a real process (tests/gpu/graphnodes.sh on an H200: a Llama-shaped model, 8 layers,
    // its decode step captured as a CUDA graph under NVTX ranges per layer and sub-block, replayed;
    // fixtures/graphnodes/README.md). Every replayed kernel has its node's context, and layer inference
    // without the stored ranges names the same layer for every kernel that a "layer K" range holds.
    void realGraphCaptureInferredLayersMatchRanges()
    {
        const std::string dir = GAPSCOPE_SOURCE_DIR "/tests/analysis/fixtures/graphnodes/";
        auto t = readTraceFile(dir + "graph_ranges.gapscope");
        QVERIFY2(bool(t), t ? "" : t.error().c_str());
        const KernelRanges stored = KernelRanges::of(*t);
        KernelRangeOptions o;
        o.ignoreNodeTable = true;
        const KernelRanges inferred = KernelRanges::of(*t, o);
        QVERIFY(stored.graphKernels() > 100000);
        QCOMPARE(stored.graphKernelsWithContext(), stored.graphKernels());
        const std::regex layerRe("(^| > )layer ([0-9]+)( > |$)");
        const std::regex inferredRe("^layer ([0-9]+) \\(inferred\\)$");
        uint64_t inLayers = 0, matched = 0, outside = 0;
        std::map<uint32_t, int> storedLayer, inferredLayer;
        for (const Lane& l : t->lanes()) {
            if (l.info.kind != LaneKind::GpuStream)
                continue;
            for (size_t i = 0; i < l.events.size(); ++i) {
                const KernelConfig* c = t->kindOf(l.id, i) == EventKind::Kernel ? t->kernelConfig(l.id, i) : nullptr;
                if (!c || !c->graphNodeId)
                    continue;
                // The layer each path names (-1: none), worked out once per path.
                const int la = layerOf(stored, stored.pathOf(l.id, i), layerRe, 2, storedLayer);
                const int lb = layerOf(inferred, inferred.pathOf(l.id, i), inferredRe, 1, inferredLayer);
                const bool hasLayer = la >= 0, hasInferred = lb >= 0;
                if (hasLayer) {
                    ++inLayers;
                    if (la == lb)
                        ++matched;
                    else if (inLayers - matched < 5)
                        qWarning("stored '%s' inferred '%s'", stored.path(stored.pathOf(l.id, i)).c_str(),
                            inferred.path(inferred.pathOf(l.id, i)).c_str());
                } else if (hasInferred) {
                    ++outside; // inferred into a layer, built outside every layer range
                }
            }
        }
        QVERIFY(inLayers > 100000);
        QCOMPARE(matched, inLayers);
        QCOMPARE(outside, uint64_t(0));
        // The node table is at most 1 % of the capture's file: its entries as the file stores them
        // (serialized, zstd at the writer's level; the file compresses them inside chunks), twice: in the
        // chunks and in the OVERVIEW frame, from which every window of a large file gets them.
        std::string raw, packed;
        for (const GraphNodeInfo& n : t->graphNodes())
            raw += toProto(n, *t).SerializeAsString();
        QVERIFY(gapscope::format::ZstdCompressor(3).compress(raw.data(), raw.size(), packed).isOk());
        const double fileBytes = double(QFileInfo(QString::fromStdString(dir + "graph_ranges.gapscope")).size());
        qInfo("node table: %zu nodes, %zu bytes serialized, %zu compressed, stored twice: %.3f %% of the %.0f-byte "
              "file",
            t->graphNodes().size(), raw.size(), packed.size(), 200 * double(packed.size()) / fileBytes, fileBytes);
        QVERIFY(2 * double(packed.size()) <= 0.01 * fileBytes);
    }

    // In-graph gaps (idle inside a replay) are named by the capture-time range of the node after them.
    void realGraphCaptureInGraphGapsByRange()
    {
        auto t = openTrace({ GAPSCOPE_SOURCE_DIR "/tests/analysis/fixtures/graphnodes/graph_ranges.gapscope" });
        QVERIFY2(bool(t), t ? "" : t.error().c_str());
        GapAnalyzer analyzer(*t, KernelClassifier::builtinDefault(), StepBudget {});
        HostAttribution host(analyzer, GapAnalyzer::Selection {});
        QCOMPARE(host.ranks().size(), size_t(1));
        const HostAttribution::Rank& r = host.ranks()[0];
        QVERIFY(r.inGraphNs > 0);
        TimeNs sum = 0;
        size_t layerRows = 0;
        for (const auto& row : r.inGraph) {
            sum += row.ns;
            // Every kernel node was built in "decode"; copies and memsets carry no node id in the trace.
            QVERIFY2(
                row.range.rfind("decode", 0) == 0 || row.range == "(ended by a copy or memset)", row.range.c_str());
            layerRows += row.range.find("layer ") != std::string::npos;
        }
        QCOMPARE(sum, r.inGraphNs);
        QVERIFY(layerRows >= 8 * 3); // each layer, its attention and its MLP
    }

    // The done-when of graph-node attribution, on the fixtures: per range, the kernels per step of the graph
    // replays equal those of the same model run eagerly under the same ranges; torch.profiler's trace of
    // the same replays (kernels without node ids) gets the same layers by inference per replay.
    void realGraphCaptureMatchesEagerAndKineto()
    {
        const std::string dir = GAPSCOPE_SOURCE_DIR "/tests/analysis/fixtures/graphnodes/";
        auto perStep = [](const std::string& path, RangeSource want) {
            auto t = openTrace({ path });
            if (!t)
                qFatal("%s", t.error().c_str());
            const KernelRanges r = KernelRanges::of(*t);
            std::map<std::string, double> out;
            for (const RangeRow& row : rangeTable(*t, r).rows)
                if (row.source == want)
                    out[row.path] = row.medianPerStep;
            return out;
        };
        const auto graph = perStep(dir + "graph_ranges.gapscope", RangeSource::Capture);
        const auto eager = perStep(dir + "eager_ranges.gapscope", RangeSource::Launch);
        std::map<std::string, double> graphLayers, eagerLayers, perLayer;
        const std::regex layerRe("^decode > layer ([0-9]+)");
        for (const auto& [path, n] : graph) {
            std::smatch m;
            if (std::regex_search(path, m, layerRe)) {
                graphLayers[path] = n;
                perLayer["layer " + m[1].str() + " (inferred)"] += n;
            }
        }
        for (const auto& [path, n] : eager)
            if (std::regex_search(path, layerRe))
                eagerLayers[path] = n;
        QCOMPARE(graphLayers.size(), size_t(8 * 3)); // "layer K", its "attention" and its "mlp"
        QVERIFY(graphLayers == eagerLayers);
        // diff --by-range pairs the two runs' ranges by path: no layer range differs in kernels per step.
        auto table = [&dir](const char* name) {
            auto t = openTrace({ dir + name });
            if (!t)
                qFatal("%s", t.error().c_str());
            return rangeTable(*t, KernelRanges::of(*t));
        };
        size_t paired = 0;
        for (const RangeDiffRow& d : rangeDiff(table("eager_ranges.gapscope"), table("graph_ranges.gapscope"))) {
            if (d.path.find("layer ") == std::string::npos)
                continue;
            ++paired;
            QVERIFY2(d.aCount > 0 && std::abs(d.aCount - d.bCount) < 0.5, d.path.c_str()); // means over steps
        }
        QCOMPARE(paired, size_t(24));
        const auto kineto = perStep(dir + "graph_ranges_kineto.json.gz", RangeSource::Inferred);
        QCOMPARE(kineto.size(), size_t(8));
        QVERIFY(kineto == perLayer);
    }

    void replayRangeLanesNestByPath()
    {
        Trace t = build();
        QVERIFY(hasGraphReplays(t));
        const size_t lanesBefore = t.laneCount();
        const KernelRanges r = KernelRanges::of(t);
        // Graph 5's replay: decode > layer 0|1 > attention|mlp (1 + 2 + 4); graph 9: 3 inferred layers.
        QCOMPARE(addReplayRangeLanes(t, r), uint64_t(10));
        QCOMPARE(t.laneCount(), lanesBefore + 1);
        const Lane& lane = t.lane(LaneId(lanesBefore));
        QVERIFY(isReplayRangeLane(lane.info));
        QVERIFY(lane.info.isGpuAnnotationLane());
        QCOMPARE(replayRangeStream(lane.info), uint64_t(7));
        QCOMPARE(lane.info.name, std::string("stream 7 by range"));
        std::vector<std::string> got;
        for (size_t i = 0; i < lane.events.size(); ++i)
            got.push_back(std::to_string(t.nvtxDepth(lane.id, i)) + " " + std::string(t.str(lane.events.name(i))) + " "
                + std::to_string(lane.events.start(i)) + "+" + std::to_string(lane.events.duration(i)));
        // Graph 5's kernels start at 21600 (after 8 eager ones), 200 ns apart, 100 ns long; graph 9's at 23200.
        const std::vector<std::string> want = {
            "0 decode 21600+1500",
            "1 layer 0 21600+700",
            "2 attention 21600+300",
            "2 mlp 22000+300",
            "1 layer 1 22400+700",
            "2 attention 22400+300",
            "2 mlp 22800+300",
            "0 layer 0 (inferred) 23400+900",
            "0 layer 1 (inferred) 24400+900",
            "0 layer 2 (inferred) 25400+900",
        };
        QCOMPARE(got, want);
        // A trace without graph kernels gets nothing.
        TraceBuilder b;
        const LaneId g = b.lane({ LaneKind::GpuStream, 0, "h", 0, 7, "", 1 });
        b.addKernel(g, 0, 10, b.intern("k"), 1, KernelConfig {});
        Trace eager = b.finish();
        QVERIFY(!hasGraphReplays(eager));
        QCOMPARE(addReplayRangeLanes(eager, KernelRanges::of(eager)), uint64_t(0));
    }

    void realGraphCaptureReplayRangesHoldEachLayersKernels()
    {
        const std::string dir = GAPSCOPE_SOURCE_DIR "/tests/analysis/fixtures/graphnodes/";
        auto t = openTrace({ dir + "graph_ranges.gapscope" });
        QVERIFY2(bool(t), t ? "" : t.error().c_str());
        const size_t lanesBefore = t->laneCount();
        const std::vector<Step> stepsBefore = t->steps(0);
        QElapsedTimer timer;
        timer.start();
        const KernelRanges r = KernelRanges::of(*t);
        const qint64 rangesNs = timer.nsecsElapsed();
        const uint64_t added = addReplayRangeLanes(*t, r);
        QVERIFY(added > 0);
        qInfo("kernel ranges %.1f ms, replay-range lanes %.1f ms (%llu ranges) for %llu kernels",
            double(rangesNs) / 1e6, double(timer.nsecsElapsed() - rangesNs) / 1e6, (unsigned long long)added,
            (unsigned long long)t->eventCount(EventKind::Kernel));
        std::set<uint32_t> replays; // graph launches whose kernels have a stored range
        for (LaneId id = 0; id < lanesBefore; ++id)
            for (size_t i = 0; i < t->lane(id).events.size(); ++i)
                if (r.source(r.pathOf(id, i)) == RangeSource::Capture)
                    replays.insert(t->lane(id).events.correlation(i));
        // Per "layer K" range (depth 1) the kernels of its stream inside it: 41 (18 outside the sub-blocks,
        // 17 attention, 6 MLP), but in the replays cut by the capture's window (the first and the last).
        size_t decode = 0, layers = 0, cut = 0;
        for (LaneId id = LaneId(lanesBefore); id < t->laneCount(); ++id) {
            const Lane& lane = t->lane(id);
            QVERIFY(isReplayRangeLane(lane.info));
            const Lane* gpu = nullptr;
            for (LaneId k = 0; k < lanesBefore; ++k)
                if (t->lane(k).info.kind == LaneKind::GpuStream
                    && t->lane(k).info.stream == replayRangeStream(lane.info))
                    gpu = &t->lane(k);
            QVERIFY(gpu);
            size_t replaysOnLane = 0;
            for (size_t i = 0; i < lane.events.size(); ++i)
                replaysOnLane += t->nvtxDepth(id, i) == 0 && t->str(lane.events.name(i)) == "decode";
            size_t k = 0, replay = 0;
            for (size_t i = 0; i < lane.events.size(); ++i) {
                const uint32_t depth = t->nvtxDepth(id, i);
                const std::string_view name = t->str(lane.events.name(i));
                if (depth == 0 && name == "decode") {
                    ++decode;
                    ++replay;
                }
                if (depth != 1 || name.substr(0, 6) != "layer ")
                    continue;
                while (k < gpu->events.size() && gpu->events.start(k) < lane.events.start(i))
                    ++k;
                size_t kernels = 0;
                for (size_t j = k; j < gpu->events.size() && gpu->events.start(j) < lane.events.end(i); ++j)
                    ++kernels;
                ++layers;
                if (replay == 1 || replay == replaysOnLane)
                    cut += kernels != 41;
                else
                    QVERIFY2(kernels == 41, (std::string(name) + ": " + std::to_string(kernels)).c_str());
            }
        }
        QVERIFY(cut <= 2);
        QVERIFY(layers >= 8 * (decode - 2));
        QCOMPARE(decode, replays.size()); // one "decode" range per replay
        // The grouping lanes are no step markers: the steps stay as they were.
        QCOMPARE(t->steps(0).size(), stepsBefore.size());
    }

    void realGraphCaptureWithoutRangesInfersEightLayers()
    {
        auto t = openTrace({ GAPSCOPE_SOURCE_DIR "/tests/analysis/fixtures/graphnodes/graph_noranges.gapscope" });
        QVERIFY2(bool(t), t ? "" : t.error().c_str());
        const KernelRanges r = KernelRanges::of(*t);
        size_t layers = 0;
        for (const auto& b : r.layerBlocks())
            layers = std::max(layers, b.layers);
        QCOMPARE(layers, size_t(8));
        const RangeTable table = rangeTable(*t, r);
        for (const RangeRow& row : table.rows) {
            if (row.source == RangeSource::Inferred)
                QCOMPARE(row.medianPerStep, double(r.layerBlocks()[0].period));
            // Built under a library's own range only (CUB's NVTX ranges around its scans), never a layer's.
            if (row.source == RangeSource::Capture)
                QVERIFY2(row.path.find("layer") == std::string::npos, row.path.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestKernelRanges)
#include "tst_kernelranges.moc"
