// SPDX-License-Identifier: MIT
// The Nsight Systems / nvprof SQLite importer on the shapes real exports have (fixtures from
// make_nsys_fixture.py, expected figures computed there from the rows written): 100 idle processes
// that must not become ranks, two per-rank reports opened together, clocks in Hz, an old export
// (EXPORT_META_DATA, TARGET_INFO_CUDA_GPU in kHz / kB/s), an nvprof file, an export without CUDA
// activity, file names that an SQLite URI would misread, and CPU sampling: sampled call stacks become
// ranges that explain the GPU gaps no recorded host event explains. A process without GPU work is no
// rank: StagedTrace::dropProcesses takes it out with its lanes and events.
#include "model/analysis/hostattribution.h"
#include "model/base/json.h"
#include "model/import/importer.h"
#include "model/import/stagedtrace.h"
#include "model/open/traceopen.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

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

QTEST_GUILESS_MAIN(TstNsysImport)
#include "tst_nsysimport.moc"
