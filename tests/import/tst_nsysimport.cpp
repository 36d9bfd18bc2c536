// SPDX-License-Identifier: MIT
// The Nsight Systems / nvprof SQLite importer on the shapes real exports have (fixtures from
// make_nsys_fixture.py, expected figures computed there from the rows written): 100 idle processes
// that must not become ranks, two per-rank reports opened together, clocks in Hz, an old export
// (EXPORT_META_DATA, TARGET_INFO_CUDA_GPU in kHz / kB/s), an nvprof file, an export without CUDA
// activity, file names that an SQLite URI would misread, and CPU sampling: sampled call stacks become
// ranges that explain the GPU gaps no recorded host event explains. A process without GPU work is no
// rank: StagedTrace::dropProcesses takes it out with its lanes and events. An export made with
// --cuda-graph-trace=node maps every replayed kernel to the NVTX ranges open when stream capture built
// its node (graph_nodes, and NsysGraphNodes on clone chains no fixture has).
#include "model/analysis/hostattribution.h"
#include "model/base/json.h"
#include "model/import/importer.h"
#include "model/import/nsysgraphnodes.h"
#include "model/import/stagedtrace.h"
#include "model/import/traceassembler.h"
#include "model/open/traceopen.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

using namespace gapscope;
using namespace gapscope::model;

namespace {

std::string fixture(const std::string& name)
{
    return std::string(GAPSCOPE_TEST_DATA) + "/import/fixtures/nsys/" + name;
}

json::Value expected(const std::string& name)
{
    std::ifstream in(fixture(name + ".expected.json"));
    std::stringstream ss;
    ss << in.rdbuf();
    auto v = json::parse(ss.str(), name);
    return v ? *v : json::Value();
}

// The importer alone (readers only decode); `steps`: then the step pass openTrace runs after any reader.
Trace load(const std::vector<std::string>& paths, bool steps = false)
{
    auto t = steps ? openTrace(paths) : importTraces(paths, ReadOptions());
    if (!t)
        qFatal("%s", t.error().c_str());
    return std::move(*t);
}

uint64_t counter(const Trace& t, const std::string& name, const std::string& detailPart = "")
{
    uint64_t n = 0;
    for (const auto& c : t.header().counters)
        if (c.name == name && c.detail.find(detailPart) != std::string::npos)
            n += c.value;
    return n;
}

TimeNs kindTime(const Trace& t, EventKind kind)
{
    TimeNs sum = 0;
    for (const Lane& l : t.lanes())
        for (size_t i = 0; i < l.events.size(); ++i)
            if (t.kindOf(l.id, i) == kind)
                sum += l.events.duration(i);
    return sum;
}

// A graph node's ranges as one text ("decode > layer 0 > mlp").
std::string pathOf(const Trace& t, const GraphNodeInfo& node)
{
    return rangePath(node.ranges, [&t](StringId id) { return std::string(t.str(id)); });
}

// The first kernel of the first GPU lane of `rank`.
std::pair<LaneId, size_t> firstKernel(const Trace& t, uint32_t rank)
{
    const LaneId lane = t.lanesOf(rank, LaneKind::GpuStream).at(0);
    size_t k = 0;
    while (t.kindOf(lane, k) != EventKind::Kernel)
        ++k;
    return { lane, k };
}

} // namespace

class TstNsysImport : public QObject {
    Q_OBJECT
private slots:
    void idleProcessesAreNoRanks();
    void perRankReportsTogether();
    void oldExport();
    void nvprofFile();
    void nothingToImport();
    void oddFileNames_data();
    void oddFileNames();
    void sampledStacksExplainGaps();
    void droppedProcessLeavesTheOthers();
    void graphNodesTakeCaptureRanges();
    void graphNodeCloneChains();
};

void TstNsysImport::idleProcessesAreNoRanks()
{
    const json::Value want = expected("idle_processes");
    Trace t = load({ fixture("idle_processes.sqlite") });
    QCOMPARE(int64_t(t.header().ranks.size()), want["ranks"].toInt()); // not 100 + 3, nor the CUDA API-only one
    QCOMPARE(int64_t(t.header().ranks[size_t(0)].pid), want["gpu_pid"].toInt());
    QCOMPARE(t.header().ranks[size_t(0)].rank, 0u);
    QCOMPARE(t.header().ranks[size_t(0)].worldSize, 1u);
    // The process with CUDA API rows only: no rank, its call dropped, counted and named.
    QCOMPARE(int64_t(counter(t, "import_skipped_events", "CUDA API calls and synchronization records")),
        want["api_dropped"].toInt());
    const std::string named = "process " + std::to_string(want["api_pid"].toInt()) + " (python3) made 1 CUDA call"
        + " and no GPU work: not a rank";
    QVERIFY(std::any_of(t.warnings().begin(), t.warnings().end(),
        [&](const std::string& w) { return w.find(named) != std::string::npos; }));
    QCOMPARE(t.header().ranks[size_t(0)].processName, std::string("python3"));
    QCOMPARE(int64_t(t.eventCount(EventKind::Kernel)), want["kernels"].toInt());
    QCOMPARE(kindTime(t, EventKind::Kernel), want["kernel_ns"].toInt());
    QCOMPARE(int64_t(t.eventCount(EventKind::Memcpy)), want["memcpy"].toInt());
    QCOMPARE(kindTime(t, EventKind::Memcpy), want["memcpy_ns"].toInt());
    QCOMPARE(int64_t(t.eventCount(EventKind::Api)), want["api"].toInt());
    QCOMPARE(int64_t(t.eventCount(EventKind::Nvtx)), want["nvtx"].toInt()); // domain and thread-name rows skipped
    QCOMPARE(int64_t(counter(t, "import_skipped_events", "NVTX ranges of processes without GPU work")),
        want["nvtx_skipped"].toInt());
    QCOMPARE(counter(t, "import_bad_events"), uint64_t(0)); // the domain row's negative start is no error
    QCOMPARE(int64_t(counter(t, "import_kernel_short_names")), want["short_named"].toInt());
    QCOMPARE(counter(t, "import_missing_strings"), uint64_t(0));
    const auto [lane, k] = firstKernel(t, 0);
    QCOMPARE(t.str(t.lane(lane).events.name(k)), std::string_view("short_kernel_0"));
    QCOMPARE(t.kernelConfig(lane, k)->graphId, uint64_t(5));
    QCOMPARE(t.header().gpus.size(), size_t(1));
    QCOMPARE(int64_t(t.header().gpus[size_t(0)].smClockMhz), want["sm_clock_mhz"].toInt()); // Hz, not kHz
    QCOMPARE(t.header().gpus[size_t(0)].peakMemoryBandwidthGbs, 320.064);
    QCOMPARE(t.header().toolVersion, want["tool"].toString());
    QCOMPARE(t.header().metadata.at("import.product_version"), std::string("2025.5.2.266"));
}

void TstNsysImport::perRankReportsTogether()
{
    const json::Value r0 = expected("per_rank0"), r1 = expected("per_rank1");
    Trace t = load({ fixture("per_rank0.sqlite"), fixture("per_rank1.sqlite") });
    QCOMPARE(t.header().ranks.size(), size_t(2));
    for (int i = 0; i < 2; ++i) {
        QCOMPARE(t.header().ranks[size_t(i)].rank, uint32_t(i));
        QCOMPARE(t.header().ranks[size_t(i)].worldSize, 2u);
        QCOMPARE(int64_t(t.header().ranks[size_t(i)].pid), (i ? r1 : r0)["gpu_pid"].toInt());
        QCOMPARE(int64_t(t.header().ranks[size_t(i)].deviceIndex), (i ? r1 : r0)["device"].toInt());
    }
    QVERIFY2(t.warnings().empty(), t.warnings().empty() ? "" : t.warnings()[0].c_str()); // nothing renumbered
    QCOMPARE(int64_t(t.eventCount(EventKind::Kernel)), r0["kernels"].toInt() + r1["kernels"].toInt());
}

void TstNsysImport::oldExport()
{
    const json::Value want = expected("old_export");
    Trace t = load({ fixture("old_export.sqlite") });
    QCOMPARE(int64_t(t.header().ranks.size()), want["ranks"].toInt());
    QCOMPARE(int64_t(t.header().ranks[size_t(0)].pid), want["pid"].toInt());
    QCOMPARE(int64_t(t.eventCount(EventKind::Kernel)), want["kernels"].toInt());
    QCOMPARE(kindTime(t, EventKind::Kernel), want["kernel_ns"].toInt());
    QCOMPARE(int64_t(t.eventCount(EventKind::Sync)), want["sync"].toInt()); // SYNCHRONIZATION has no globalTid
    QCOMPARE(int64_t(t.eventCount(EventKind::Nvtx)), want["nvtx"].toInt());
    const LaneId nvtx = t.lanesOf(0, LaneKind::Nvtx).at(0);
    QCOMPARE(t.str(t.lane(nvtx).events.name(0)), std::string_view("acc_region")); // by textId
    QCOMPARE(t.header().gpus.size(), size_t(1));
    const model::GpuInfo& g = t.header().gpus[0];
    QCOMPARE(int64_t(g.smClockMhz), want["sm_clock_mhz"].toInt()); // coreClockRate in kHz
    QCOMPARE(g.peakMemoryBandwidthGbs, want["bandwidth_gbs"].toDouble()); // kB/s
    QCOMPARE(int64_t(g.smCount), want["sm_count"].toInt());
    QCOMPARE(int64_t(g.ccMajor), want["cc"].at(0).toInt());
    QCOMPARE(int64_t(g.ccMinor), want["cc"].at(1).toInt());
    QCOMPARE(g.name, std::string("NVIDIA GeForce RTX 3080"));
    QCOMPARE(t.header().toolVersion, want["tool"].toString()); // from EXPORT_META_DATA
}

void TstNsysImport::nvprofFile()
{
    const json::Value want = expected("nvprof");
    Trace t = load({ fixture("nvprof.nvvp") });
    QCOMPARE(t.header().source, std::string("nvprof"));
    QCOMPARE(t.header().toolVersion, want["tool"].toString());
    QCOMPARE(int64_t(t.header().ranks.size()), want["ranks"].toInt());
    QCOMPARE(int64_t(t.header().ranks[size_t(0)].pid), want["pid"].toInt());
    QCOMPARE(int64_t(t.eventCount(EventKind::Kernel)), want["kernels"].toInt());
    QCOMPARE(kindTime(t, EventKind::Kernel), want["kernel_ns"].toInt());
    QCOMPARE(int64_t(t.eventCount(EventKind::Memcpy)), want["memcpy"].toInt());
    QCOMPARE(kindTime(t, EventKind::Memcpy), want["memcpy_ns"].toInt());
    QCOMPARE(int64_t(t.eventCount(EventKind::Memset)), want["memset"].toInt());
    QCOMPARE(kindTime(t, EventKind::Memset), want["memset_ns"].toInt());
    QCOMPARE(int64_t(t.eventCount(EventKind::Api)), want["api"].toInt());
    QCOMPARE(int64_t(t.eventCount(EventKind::Sync)), want["sync"].toInt());
    QCOMPARE(int64_t(t.startTime()), want["start_ns"].toInt()); // epoch times kept as they are
    QCOMPARE(counter(t, "import_missing_strings"), uint64_t(0));
    QCOMPARE(counter(t, "import_unknown_api_ids"), uint64_t(0));
    const auto [lane, k] = firstKernel(t, 0);
    QCOMPARE(std::string(t.str(t.lane(lane).events.name(k))), want["kernel_name"].toString()); // demangled
    const EventRef api = t.launchOf(lane, k);
    QVERIFY(api.valid());
    QCOMPARE(t.str(t.lane(api.lane).events.name(api.index)), std::string_view("cudaLaunchKernel")); // cbid 211
    QCOMPARE(t.header().gpus.size(), size_t(1));
    QCOMPARE(int64_t(t.header().gpus[size_t(0)].smClockMhz), want["sm_clock_mhz"].toInt());
    QCOMPARE(t.header().gpus[size_t(0)].peakMemoryBandwidthGbs, want["bandwidth_gbs"].toDouble());
    QCOMPARE(t.header().gpus[size_t(0)].name, std::string("Tesla T4"));
    QCOMPARE(t.header().gpus[size_t(0)].uuid, want["uuid"].toString());
}

void TstNsysImport::nothingToImport()
{
    auto t = importTraces({ fixture("empty.sqlite") }, ReadOptions());
    QVERIFY(!t);
    QVERIFY2(t.error().find("empty.sqlite") != std::string::npos, t.error().c_str());
    QVERIFY2(t.error().find("nothing to import") != std::string::npos, t.error().c_str());
    QVERIFY2(t.error().find("2023.3.1.92") != std::string::npos, t.error().c_str());
    QVERIFY2(t.error().find("CUPTI_ACTIVITY_KIND_KERNEL empty") != std::string::npos, t.error().c_str());
    QVERIFY2(t.error().find("CUPTI_ACTIVITY_KIND_RUNTIME missing") != std::string::npos, t.error().c_str());
}

void TstNsysImport::oddFileNames_data()
{
    QTest::addColumn<QString>("name");
    for (const char* n : { "report%41.sqlite", "a#b.sqlite", "a?b.sqlite", "with space.sqlite", "file:x.sqlite",
             "r%3Fimmutable=0.sqlite" })
        QTest::newRow(n) << n;
}

// Each name holds the two-rank report; `reportA.sqlite` next to it (what `%41` would decode to) holds
// the empty export, so opening the wrong file fails the import.
void TstNsysImport::oddFileNames()
{
    QFETCH(QString, name);
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString() + "/";
    std::filesystem::copy_file(fixture("two_ranks.sqlite"), d + name.toStdString());
    std::filesystem::copy_file(fixture("empty.sqlite"), d + "reportA.sqlite");
    std::filesystem::copy_file(fixture("empty.sqlite"), d + "a");
    std::filesystem::copy_file(fixture("empty.sqlite"), d + "r?immutable=0.sqlite");
    auto t = importTraces({ d + name.toStdString() }, ReadOptions());
    QVERIFY2(t.hasValue(), t ? "" : t.error().c_str());
    QCOMPARE(int64_t(t->eventCount(EventKind::Kernel)), expected("two_ranks")["total"]["kernels"].toInt());
}

// Three processes, their events interleaved (one longer than 2^32 ns); the middle one is dropped: the
// others keep their events in order, on renumbered lanes that lane() still finds.
void TstNsysImport::droppedProcessLeavesTheOthers()
{
    using importer::StagedKind;
    using importer::StagedTrace;
    StagedTrace t("nsys", "x.sqlite");
    std::vector<uint32_t> lanes;
    for (uint32_t pid : { 10u, 20u, 30u }) {
        importer::StagedProcess p;
        p.pid = pid;
        const uint16_t i = t.addProcess(p);
        lanes.push_back(t.lane(i, LaneKind::GpuStream, pid / 10, 7));
        lanes.push_back(t.lane(i, LaneKind::CpuApi, 0, pid));
    }
    const int64_t longDur = int64_t(1) << 33;
    for (int k = 0; k < 4; ++k)
        for (size_t l = 0; l < lanes.size(); ++l) {
            const int64_t start = 100 * k + int64_t(l);
            if (l % 2)
                t.addApi(lanes[l], start, 5, 0, uint32_t(l), ApiKind::Runtime);
            else
                t.addKernel(lanes[l], start, k == 3 && l == 4 ? longDur : 3, 0, uint32_t(l), 0);
        }
    t.addApi(lanes[2], -50, 5, 0, 2, ApiKind::Runtime); // the earliest event is the dropped process's
    QCOMPARE(t.dropProcesses({ false, true, false }), uint64_t(9));
    QCOMPARE(t.processes().size(), size_t(2));
    QCOMPARE(t.processes()[1].pid, 30u);
    QCOMPARE(t.lanes().size(), size_t(4));
    QCOMPARE(t.eventCount(), uint64_t(16));
    QCOMPARE(t.eventCount(StagedKind::Kernel), uint64_t(8));
    QCOMPARE(t.minStart(), int64_t(0));
    QCOMPARE(t.maxEnd(), 304 + longDur);
    for (uint64_t i = 0; i < t.eventCount(); ++i) {
        const importer::StagedEvent& e = t.event(i);
        const uint32_t old = e.correlation; // the lane it was staged on
        QVERIFY(old != 2 && old != 3);
        QCOMPARE(uint32_t(e.lane), old < 2 ? old : old - 2);
        QCOMPARE(e.start, int64_t(100 * (i / 4)) + old);
        QCOMPARE(t.duration(i), old % 2 ? 5 : i == 14 ? longDur : 3);
        QCOMPARE(t.lanes()[e.lane].process, uint16_t(old < 2 ? 0 : 1));
    }
    QCOMPARE(t.lastEventOf(3), uint64_t(15));
    QCOMPARE(t.lane(1, LaneKind::GpuStream, 3, 7), 2u);
    QCOMPARE(t.lane(0, LaneKind::CpuApi, 0, 10), 1u);
    QCOMPARE(t.lane(1, LaneKind::CpuApi, 0, 99), 4u); // a new one after them
}

void TstNsysImport::sampledStacksExplainGaps()
{
    const json::Value want = expected("sampled");
    Trace t = load({ fixture("sampled.sqlite") }, true);
    QCOMPARE(t.header().metadata.at("import.cpu_sampling_interval_ns"),
        std::to_string(want["sampling_interval_ns"].toInt()));
    int64_t ranges = 0;
    for (const Lane& l : t.lanes())
        if (l.info.isSampledLane()) {
            QCOMPARE(l.info.threadId(), uint64_t(3003));
            QVERIFY2(l.info.name.find("CPU samples") != std::string::npos, l.info.name.c_str());
            for (size_t i = 0; i < l.events.size(); ++i) {
                QCOMPARE(t.hostKind(l.id, i), HostKind::Sampled);
                ++ranges;
            }
        }
    QCOMPARE(ranges, want["sampled_ranges"].toInt());
    QCOMPARE(int64_t(t.stepCount()), want["steps"].toInt());
    GapAnalyzer analyzer(t, KernelClassifier::builtinDefault(), StepBudget {});
    HostAttribution host(analyzer, GapAnalyzer::Selection {});
    const HostAttribution::Rank* r = host.rank(0);
    QVERIFY(r);
    QCOMPARE(int64_t(r->gapNs), want["gap_ns"].toInt());
    QCOMPARE(int64_t(r->explainedNs), want["explained_ns"].toInt());
    QCOMPARE(int64_t(r->queuedNs), want["queued_ns"].toInt());
    const auto& rows = want["rows"].items();
    QCOMPARE(r->rows.size(), rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
        QCOMPARE(std::string(t.str(r->rows[i].name)), rows[i]["name"].toString());
        QCOMPARE(std::string(r->rows[i].kind), rows[i]["kind"].toString());
        QCOMPARE(int64_t(r->rows[i].ns), rows[i]["ns"].toInt());
        QCOMPARE(int64_t(r->rows[i].count), rows[i]["count"].toInt());
    }
}

// graph_nodes (make_nsys_fixture.py, graph_node_layout): 13 nodes built by stream capture under the main
// thread's NVTX ranges (ids 1..13), their copies made by cudaGraphInstantiate inside an "instantiate"
// range (14..26, original 1..13), 3 replays whose kernels name the copies. Each node gets the ranges
// open on the capturing thread when it was built; neither the other thread's range over the capture,
// nor "instantiate", nor the replays' "decode step N" count; each node's call is the launch it was
// captured from.
void TstNsysImport::graphNodesTakeCaptureRanges()
{
    // The layout the generator writes, in creation order: the node's kernel and its ranges.
    const std::vector<std::pair<std::string, std::string>> layout
        = { { "embed", "decode" }, { "l0_input_norm", "decode > layer 0" },
              { "l0_qkv_proj", "decode > layer 0 > attention" }, { "l0_flash_attn", "decode > layer 0 > attention" },
              { "l0_gate_up", "decode > layer 0 > mlp" }, { "l0_down_proj", "decode > layer 0 > mlp" },
              { "l1_input_norm", "decode > layer 1" }, { "l1_qkv_proj", "decode > layer 1 > attention" },
              { "l1_flash_attn", "decode > layer 1 > attention" }, { "l1_gate_up", "decode > layer 1 > mlp" },
              { "l1_down_proj", "decode > layer 1 > mlp" }, { "final_norm", "decode" }, { "lm_head", "" } };
    const uint64_t n = layout.size();
    Trace t = load({ fixture("graph_nodes.sqlite") });
    QCOMPARE(t.header().ranks.size(), size_t(1));
    QCOMPARE(t.graphNodes().size(), size_t(2 * n));
    for (uint64_t i = 0; i < 2 * n; ++i) {
        const GraphNodeInfo& g = t.graphNodes()[i];
        const bool copy = i >= n;
        QCOMPARE(g.rank, 0u);
        QCOMPARE(g.nodeId, i + 1);
        QCOMPARE(int(g.origin), int(copy ? GraphNodeOrigin::Cloned : GraphNodeOrigin::Created));
        QCOMPARE(g.originalNodeId, copy ? i + 1 - n : uint64_t(0));
        QCOMPARE(g.graphId, copy ? uint64_t(5) : uint64_t(0)); // the graph the replayed kernels name
        QCOMPARE(g.order, uint32_t(i % n));
        QCOMPARE(g.threadId, 4004u);
        QCOMPARE(pathOf(t, g), layout[i % n].second);
        // The call around the node's row on its thread: the launch into the capturing stream; a copy keeps
        // its original's.
        QCOMPARE(t.str(g.api), std::string_view("cudaLaunchKernel"));
    }
    size_t kernels = 0;
    for (LaneId lane : t.lanesOf(0, LaneKind::GpuStream))
        for (size_t k = 0; k < t.lane(lane).events.size(); ++k, ++kernels) {
            const std::string name(t.str(t.lane(lane).events.name(k)));
            const auto it
                = std::find_if(layout.begin(), layout.end(), [&name](const auto& node) { return node.first == name; });
            QVERIFY2(it != layout.end(), name.c_str());
            const KernelConfig* cfg = t.kernelConfig(lane, k);
            QVERIFY(cfg);
            QCOMPARE(cfg->graphNodeId, n + 1 + uint64_t(it - layout.begin()));
            const GraphNodeInfo* node = t.graphNode(0, cfg->graphNodeId);
            QVERIFY(node);
            QCOMPARE(pathOf(t, *node), it->second);
            const EventRef api = t.launchOf(lane, k);
            QVERIFY(api.valid());
            QCOMPARE(t.str(t.lane(api.lane).events.name(api.index)), std::string_view("cudaGraphLaunch"));
        }
    QCOMPARE(kernels, size_t(3 * n));
    QCOMPARE(counter(t, "import_bad_events"), uint64_t(0));
    QCOMPARE(counter(t, "import_skipped_events", "CUDA graph node"), uint64_t(0));
    // An export without the table has no graph nodes.
    QVERIFY(load({ fixture("two_ranks.sqlite") }).graphNodes().empty());
}

// NsysGraphNodes on rows the fixture lacks: a clone of a clone takes the ranges of the node at the
// root of its chain, a clone whose original the export lacks has none, chains that loop are counted,
// a later row of a node does not count, a row of a process the trace has not is left out.
void TstNsysImport::graphNodeCloneChains()
{
    importer::StagedTrace s("nsys", "rows.sqlite");
    importer::StagedProcess p;
    p.pid = 7;
    p.device = 0;
    const uint16_t process = s.addProcess(p);
    const uint32_t nvtx = s.lane(process, LaneKind::Nvtx, 0, 7);
    s.addRange(nvtx, 0, 50, s.strings().intern("before"));
    s.addRange(nvtx, 100, 900, s.strings().intern("outer"));
    s.addRange(nvtx, 150, 10, s.strings().intern("inner")); // [150, 160]: encloses a node built at 150
    s.addRange(s.lane(process, LaneKind::Nvtx, 0, 8), 0, 1000, s.strings().intern("other thread"));
    KernelConfig c;
    c.graphId = 9;
    c.graphNodeId = 3;
    s.addKernel(s.lane(process, LaneKind::GpuStream, 0, 7), 5000, 100, s.strings().intern("k"), 1, s.config(c));
    const int64_t tid = (int64_t(7) << 24) | 7;
    importer::NsysGraphNodes nodes;
    for (const importer::NsysGraphNodeRow& r : std::vector<importer::NsysGraphNodeRow> { { 700, 710, tid, 3, 2 },
             { 150, 160, tid, 1, 0 }, { 600, 600, tid, 2, 1 }, { 800, 800, tid, 4, 99 }, { 810, 810, tid, 5, 6 },
             { 820, 820, tid, 6, 5 }, { 2000, 2000, tid, 1, 0 }, { 100, 100, (int64_t(8) << 24) | 8, 10, 0 } })
        nodes.add(r);
    QCOMPARE(nodes.finish(s), uint64_t(2)); // nodes 5 and 6
    std::vector<importer::StagedTrace> sources;
    sources.push_back(std::move(s));
    Trace t = importer::TraceAssembler(std::move(sources)).assemble();
    QCOMPARE(t.graphNodes().size(), size_t(6));
    const std::vector<std::tuple<uint64_t, uint64_t, uint64_t, uint32_t, std::string>> want
        = { // node, original, graph, thread, ranges
              { 1, 0, 0, 7, "outer > inner" }, { 2, 1, 0, 7, "outer > inner" }, { 3, 2, 9, 7, "outer > inner" },
              { 4, 99, 0, 0, "" }, { 5, 6, 0, 0, "" }, { 6, 5, 0, 0, "" }
          };
    for (size_t i = 0; i < want.size(); ++i) {
        const GraphNodeInfo& g = t.graphNodes()[i];
        QCOMPARE(g.nodeId, std::get<0>(want[i]));
        QCOMPARE(g.originalNodeId, std::get<1>(want[i]));
        QCOMPARE(int(g.origin), int(std::get<1>(want[i]) ? GraphNodeOrigin::Cloned : GraphNodeOrigin::Created));
        QCOMPARE(g.graphId, std::get<2>(want[i]));
        QCOMPARE(g.threadId, std::get<3>(want[i]));
        QCOMPARE(pathOf(t, g), std::get<4>(want[i]));
        QCOMPARE(g.order, 0u);
    }
}

QTEST_GUILESS_MAIN(TstNsysImport)
#include "tst_nsysimport.moc"
