// SPDX-License-Identifier: MIT
// importTraces / openTrace end to end: real torch.profiler traces (counts and total kernel time equal the
// totals Python computed from the same files), two ranks opened together (ranks, clocks, collectives,
// launch correlation), the nsys-shaped SQLite report, clock alignment of disagreeing files, truncated
// gzip, cancellation and files that are not traces.
#include "model/base/json.h"
#include "model/import/importer.h"
#include "model/open/traceopen.h"

#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <sstream>

using namespace gapscope;
using namespace gapscope::model;

namespace {

std::string fixture(const std::string& name)
{
    return std::string(GAPSCOPE_TEST_DATA) + "/import/fixtures/" + name;
}

json::Value loadJson(const std::string& path)
{
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    auto v = json::parse(ss.str(), path);
    return v ? *v : json::Value();
}

// The importers only decode; `steps`: then the step pass that openTrace runs after any reader.
Trace load(const std::vector<std::string>& paths, bool steps = false)
{
    auto t = steps ? openTrace(paths) : importTraces(paths, ReadOptions());
    if (!t)
        qFatal("%s", t.error().c_str());
    return std::move(*t);
}

TimeNs kernelTime(const Trace& t)
{
    TimeNs sum = 0;
    for (const Lane& l : t.lanes())
        for (size_t i = 0; i < l.events.size(); ++i)
            if (t.kindOf(l.id, i) == EventKind::Kernel)
                sum += l.events.duration(i);
    return sum;
}

uint64_t counter(const Trace& t, const std::string& name)
{
    uint64_t n = 0;
    for (const auto& c : t.header().counters)
        n += c.name == name ? c.value : 0;
    return n;
}

std::string writeFile(const QTemporaryDir& dir, const std::string& name, const std::string& bytes)
{
    const std::string path = dir.path().toStdString() + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}

} // namespace

class TstImporter : public QObject {
    Q_OBJECT
private slots:
    void kinetoTotals_data();
    void kinetoTotals();
    void twoRanks();
    void decodeStepsDetected();
    void nsysReport();
    void clocksAlignedOnCollective();
    void truncatedGzip();
    void cancelled();
    void notATrace();
    void openTraceDispatches();
};

void TstImporter::kinetoTotals_data()
{
    QTest::addColumn<QString>("name");
    for (const char* n : { "decode", "graph", "rank0", "rank1" })
        QTest::newRow(n) << n;
}

void TstImporter::kinetoTotals()
{
    QFETCH(QString, name);
    const std::string base = fixture("kineto/" + name.toStdString());
    const json::Value want = loadJson(base + ".totals.json");
    QVERIFY(want.isObject());
    Trace t = load({ base + ".json.gz" });
    QCOMPARE(int64_t(t.eventCount(EventKind::Kernel)), want["kernel_count"].toInt());
    QCOMPARE(int64_t(t.eventCount(EventKind::Memcpy)), want["memcpy_count"].toInt());
    QCOMPARE(int64_t(t.eventCount(EventKind::Memset)), want["memset_count"].toInt());
    QCOMPARE(int64_t(t.eventCount(EventKind::Api)), want["api_count"].toInt());
    QCOMPARE(int64_t(t.eventCount(EventKind::Nvtx)), want["range_count"].toInt());
    QCOMPARE(int64_t(t.eventCount(EventKind::Collective)), want["collective_count"].toInt());
    // Python summed float microseconds; we add exact nanoseconds: equal within rounding.
    QVERIFY(std::llabs(kernelTime(t) - want["kernel_total_ns"].toInt()) <= 1 + want["kernel_count"].toInt() / 1000);
    QCOMPARE(t.header().source, std::string("kineto"));
    QVERIFY(t.startTime() >= want["base_time_ns"].toInt());
    QVERIFY(t.warnings().empty());
    QCOMPARE(t.header().gpus.size(), size_t(want["devices"].toInt()));
    // Every kernel of a real trace resolves to the API call that launched it.
    for (const Lane& l : t.lanes())
        for (size_t i = 0; i < l.events.size(); ++i)
            if (t.kindOf(l.id, i) == EventKind::Kernel) {
                const EventRef api = t.launchOf(l.id, i);
                QVERIFY(api.valid());
                QCOMPARE(t.lane(api.lane).events.correlation(api.index), l.events.correlation(i));
            }
}

void TstImporter::twoRanks()
{
    Trace t = load({ fixture("kineto/rank1.json.gz"), fixture("kineto/rank0.json.gz") }); // order does not matter
    QCOMPARE(t.ranks(), std::vector<uint32_t>({ 0, 1 }));
    QCOMPARE(t.header().metadata.at("import.clock_alignment"), std::string("absolute"));
    QCOMPARE(t.header().ranks.size(), size_t(2));
    for (const auto& r : t.header().ranks) {
        QCOMPARE(r.worldSize, 2u);
        QCOMPARE(r.deviceIndex, r.rank); // rank r ran on GPU r
        QCOMPARE(r.versions.ncclVersion, std::string("2.28.9"));
    }
    for (uint32_t rank : { 0u, 1u }) {
        auto gpu = t.lanesOf(rank, LaneKind::GpuStream);
        QCOMPARE(gpu.size(), size_t(1));
        QCOMPARE(t.lane(gpu[0]).info.device, rank);
        auto coll = t.lanesOf(rank, LaneKind::Collective);
        QCOMPARE(coll.size(), size_t(1));
        const LaneEvents& c = t.lane(coll[0]).events;
        QCOMPARE(c.size(), size_t(6));
        for (size_t i = 0; i < c.size(); ++i) {
            QCOMPARE(t.str(c.name(i)), std::string_view("allreduce"));
            QCOMPARE(t.collective(coll[0], i)->sequence, uint64_t(i));
            QCOMPARE(t.collective(coll[0], i)->bytes, uint64_t(16384 * 2)); // 16384 bf16 elements
        }
    }
}

void TstImporter::decodeStepsDetected()
{
    Trace t = load({ fixture("kineto/decode.json.gz") }, true);
    QCOMPARE(t.stepCount(), 6u); // one record_function("decode_step") per step: gapscope's own step range
    QCOMPARE(t.steps(0).front().source, StepSource::Engine);
    QCOMPARE(t.steps(0).front().kind, StepKind::Decode);
    QCOMPARE(t.steps(0).front().label, std::string("decode_step"));
    QCOMPARE(importTraces({ fixture("kineto/decode.json.gz") }, ReadOptions())->stepCount(), 0u); // readers only decode
}

void TstImporter::nsysReport()
{
    const json::Value want = loadJson(fixture("nsys/two_ranks.expected.json"));
    Trace t = load({ fixture("nsys/two_ranks.sqlite") });
    QCOMPARE(t.header().source, std::string("nsys"));
    QCOMPARE(int64_t(t.eventCount(EventKind::Kernel)), want["total"]["kernels"].toInt());
    QCOMPARE(kernelTime(t), want["total"]["kernel_ns"].toInt());
    QCOMPARE(int64_t(t.eventCount(EventKind::Memcpy)), want["total"]["memcpy"].toInt());
    QCOMPARE(int64_t(t.eventCount(EventKind::Memset)), want["total"]["memset"].toInt());
    QCOMPARE(int64_t(t.eventCount(EventKind::Api)), want["total"]["api"].toInt());
    QCOMPARE(int64_t(t.eventCount(EventKind::Sync)), want["total"]["sync"].toInt());
    QCOMPARE(int64_t(t.eventCount(EventKind::Nvtx)), want["total"]["nvtx"].toInt());
    QCOMPARE(counter(t, "import_unterminated_ranges"), uint64_t(want["unterminated_ranges"].toInt()));
    QVERIFY(t.startTime() > want["session_start_ns"].toInt());
    for (const auto& r : want["ranks"].items()) { // ranks follow devices, not pids
        const auto rank = uint32_t(r["device"].toInt());
        const auto& info = t.header().ranks[size_t(rank)];
        QCOMPARE(info.rank, rank);
        QCOMPARE(int64_t(info.pid), r["pid"].toInt());
        auto nvtx = t.lanesOf(rank, LaneKind::Nvtx);
        QCOMPARE(nvtx.size(), size_t(1));
        const LaneEvents& e = t.lane(nvtx[0]).events;
        QCOMPARE(t.str(e.name(0)), std::string_view("decode_step"));
        QCOMPARE(t.nvtxDepth(nvtx[0], 0), 0u);
        QCOMPARE(t.str(e.name(1)), std::string_view("layer 0"));
        QCOMPARE(t.nvtxDepth(nvtx[0], 1), 1u);
    }
    auto gpu = t.lanesOf(0, LaneKind::GpuStream);
    QCOMPARE(gpu.size(), size_t(1));
    size_t k = 0;
    while (t.kindOf(gpu[0], k) != EventKind::Kernel)
        ++k;
    const KernelConfig* cfg = t.kernelConfig(gpu[0], k);
    QVERIFY(cfg);
    QCOMPARE(cfg->grid[0], 132u);
    QCOMPARE(cfg->graphNodeId, uint64_t(100));
    const EventRef api = t.launchOf(gpu[0], k);
    QVERIFY(api.valid());
    QCOMPARE(t.str(t.lane(api.lane).events.name(api.index)), std::string_view("cudaLaunchKernel")); // no _v7000
    QCOMPARE(t.header().gpus.size(), size_t(2));
    QCOMPARE(t.header().gpus[size_t(1)].uuid, std::string("GPU-fixture-1"));
}

// Two files whose clocks disagree by an hour: aligned on the end of their first NCCL kernel.
void TstImporter::clocksAlignedOnCollective()
{
    QTemporaryDir dir;
    auto file = [&](int rank, long long base, int ncclStart) {
        const std::string nccl = "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_bf16_RING_LL\","
                                 "\"pid\":0,\"tid\":7,\"ts\":"
            + std::to_string(ncclStart) + ",\"dur\":" + std::to_string(100 - 10 * rank) + "}";
        const std::string other = "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":1,\"dur\":5}";
        return writeFile(dir, "r" + std::to_string(rank) + ".json",
            "{\"distributedInfo\":{\"rank\":" + std::to_string(rank) + ",\"world_size\":2},\"baseTimeNanoseconds\":"
                + std::to_string(base) + ",\"traceEvents\":[" + other + "," + nccl + "]}");
    };
    const long long base = 1790000000000000000LL;
    Trace t = load({ file(0, base, 50), file(1, base + 3600000000000LL, 70) });
    QCOMPARE(t.header().metadata.at("import.clock_alignment"), std::string("first-collective"));
    QVERIFY(!t.warnings().empty());
    TimeNs ends[2];
    for (uint32_t r : { 0u, 1u }) {
        const LaneEvents& e = t.lane(t.lanesOf(r, LaneKind::GpuStream)[0]).events;
        ends[r] = e.end(1);
    }
    QCOMPARE(ends[1], ends[0]);
}

void TstImporter::truncatedGzip()
{
    std::ifstream in(fixture("kineto/decode.json.gz"), std::ios::binary);
    std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    QTemporaryDir dir;
    const std::string path = writeFile(dir, "cut.json.gz", gz.substr(0, gz.size() / 2));
    Trace t = load({ path });
    QVERIFY(t.eventCount(EventKind::Kernel) > 100);
    QVERIFY(t.eventCount(EventKind::Kernel) < 1280);
    QCOMPARE(counter(t, "import_truncated"), uint64_t(1));
    QVERIFY(!t.warnings().empty());
    QVERIFY(t.warnings()[0].find("cut.json.gz") != std::string::npos);
}

void TstImporter::cancelled()
{
    ReadOptions o;
    o.progress = [](double) { return false; };
    auto t = importTraces({ fixture("kineto/decode.json.gz") }, o);
    QVERIFY(!t);
    QVERIFY2(t.error().find("cancelled") != std::string::npos, t.error().c_str());
}

void TstImporter::notATrace()
{
    QTemporaryDir dir;
    const std::string bin = writeFile(dir, "x.bin", std::string("\x01\x02\x03garbage", 10));
    QVERIFY(!isImportable(bin));
    auto t = importTraces({ bin });
    QVERIFY(!t);
    QVERIFY2(t.error().find("x.bin") != std::string::npos, t.error().c_str());
    const std::string sqlite = fixture("nsys/two_ranks.sqlite");
    QVERIFY(isImportable(sqlite));
    QVERIFY(isImportable(fixture("kineto/rank0.json.gz")));
    auto missing = importTraces({ dir.path().toStdString() + "/none.json" });
    QVERIFY(!missing);
}

void TstImporter::openTraceDispatches()
{
    auto t = openTrace({ fixture("kineto/rank0.json.gz"), fixture("kineto/rank1.json.gz") });
    QVERIFY2(t.hasValue(), t.error().c_str());
    QCOMPARE(t->ranks().size(), size_t(2));
}

QTEST_GUILESS_MAIN(TstImporter)
#include "tst_importer.moc"
