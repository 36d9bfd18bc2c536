// SPDX-License-Identifier: MIT
// AMD's profilers through importTraces: the CSV reader's grammar and the places of its errors, ROCm
// kernel names, the fixtures cut from the real files (fixtures/rocprof, make_rocprof_fixtures.py:
// rocprofv3 JSON with and without HIP streams, rocprof v1 CSV and SQLite of the same run), and hostile
// input - a bad line in a CSV, a CSV or JSON cut short, fields of the wrong type in JSON and SQLite,
// files with nothing to import - each failing with its place named and the records around it kept.
// Totals against an independent reading of the raw files: tests/corpus/rocprof_check.py.
#include "model/import/csvreader.h"
#include "model/import/demangle.h"
#include "model/import/importer.h"
#include "model/import/memorybytesource.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <fstream>
#include <sqlite3.h>

using namespace gapscope;
using namespace gapscope::model;

namespace {

std::string fixture(const std::string& name)
{
    return std::string(GAPSCOPE_TEST_DATA) + "/import/fixtures/rocprof/" + name;
}

Trace load(const std::string& path)
{
    auto t = importTraces({ path });
    if (!t)
        qFatal("%s", t.error().c_str());
    return std::move(*t);
}

uint64_t counter(const Trace& t, const std::string& name)
{
    uint64_t n = 0;
    for (const auto& c : t.header().counters)
        n += c.name == name ? c.value : 0;
    return n;
}

bool warned(const Trace& t, const std::string& part)
{
    for (const auto& w : t.warnings())
        if (w.find(part) != std::string::npos)
            return true;
    return false;
}

std::vector<std::string> laneNames(const Trace& t, LaneKind kind)
{
    std::vector<std::string> names;
    for (const Lane& l : t.lanes())
        if (l.info.kind == kind)
            names.push_back(l.info.name);
    return names;
}

// The records of `text` as "a|b|c" lines, a malformed one as "!line:column: error".
std::string records(const std::string& text)
{
    importer::MemoryByteSource src(text, "x.csv");
    importer::CsvReader csv(src);
    importer::CsvReader::Record r;
    std::string out;
    for (;;) {
        auto more = csv.next(r);
        if (!more || !*more)
            break;
        if (!r.error.empty()) {
            out += "!" + std::to_string(r.errorLine) + ":" + std::to_string(r.errorColumn) + ": " + r.error + "\n";
            continue;
        }
        for (size_t i = 0; i < r.fields.size(); ++i)
            out += (i ? "|" : "") + r.fields[i];
        out += "\n";
    }
    return out;
}

// A small rocprofv3 document: one process (pid 77), one MI300X agent (handle 5, GPU 0), two kernel
// symbols, and the given kernel_dispatch and hip_api elements; `symbolsLast` puts the kernel symbols
// after buffer_records; `more`: further members of buffer_records (by default two hsa_api records,
// which are not read); `processes`: further elements of rocprofiler-sdk-tool.
std::string rocprofv3(const std::string& dispatches, const std::string& api = "", bool symbolsLast = false,
    const std::string& more = R"("hsa_api":[{},{}])", const std::string& processes = "")
{
    const std::string symbols = R"("kernel_symbols":[{"kernel_id":1,"kernel_name":"_Z4gemmPfi.kd"},)"
                                R"({"kernel_id":2,"kernel_name":"__amd_rocclr_copyBuffer.kd"}])";
    std::string doc
        = R"({"rocprofiler-sdk-tool":[{"metadata":{"pid":77,"node":{"hostname":"box"},)"
          R"("command":["python","serve.py"]},"agents":[{"id":{"handle":4},"type":1,"name":"cpu"},)"
          R"({"id":{"handle":5},"type":2,"gpu_index":0,"name":"gfx942","product_name":"AMD Instinct MI300X",)"
          R"("cu_count":304,"max_engine_clk_fcompute":2100,"domain":0,"location_id":49408,)"
          R"("mem_banks":[{"size_in_bytes":206158430208,"mem_clk_max":1300,"width":8192}]}],)"
          R"("strings":{"buffer_records":[{"kind":"NONE","operations":[]},)"
          R"({"kind":"HIP_RUNTIME_API","operations":["hipLaunchKernel","hipMemcpy"]},)"
          R"({"kind":"MARKER_CORE_API","operations":["roctxMarkA","roctxRangePushA","roctxRangePop"]},)"
          R"({"kind":"MEMORY_COPY","operations":["MEMORY_COPY_NONE","MEMORY_COPY_HOST_TO_HOST",)"
          R"("MEMORY_COPY_HOST_TO_DEVICE","MEMORY_COPY_DEVICE_TO_HOST","MEMORY_COPY_DEVICE_TO_DEVICE"]}],)"
          R"("marker_api":[{"key":31,"value":"decode step 3"},{"key":32,"value":"sample"}]},)";
    if (!symbolsLast)
        doc += symbols + ",";
    doc += R"("buffer_records":{"kernel_dispatch":[)" + dispatches + R"(],"hip_api":[)" + api + "]"
        + (more.empty() ? "" : "," + more) + "}";
    if (symbolsLast)
        doc += "," + symbols;
    return doc + "}" + (processes.empty() ? "" : "," + processes) + "]}";
}

std::string dispatch(int64_t start, int64_t end, int kernel, int corr, int stream = 7)
{
    return R"({"thread_id":77,"correlation_id":{"internal":)" + std::to_string(corr)
        + R"(,"external":0},"start_timestamp":)" + std::to_string(start) + R"(,"end_timestamp":)" + std::to_string(end)
        + R"(,"dispatch_info":{"agent_id":{"handle":5},"queue_id":{"handle":3},"kernel_id":)" + std::to_string(kernel)
        + R"(,"group_segment_size":1024,"workgroup_size":{"x":256,"y":1,"z":1},"grid_size":{"x":1000,"y":2,"z":1}},)"
        + R"("stream_id":{"handle":)" + std::to_string(stream) + "}}";
}

std::string hipCall(int64_t start, int op, int corr)
{
    return R"({"kind":1,"operation":)" + std::to_string(op) + R"(,"thread_id":77,"correlation_id":{"internal":)"
        + std::to_string(corr) + R"(,"external":0},"start_timestamp":)" + std::to_string(start) + R"(,"end_timestamp":)"
        + std::to_string(start + 400) + "}";
}

const char* const kV1Header = "\"Index\",\"KernelName\",\"gpu-id\",\"queue-id\",\"queue-index\",\"pid\",\"tid\","
                              "\"grd\",\"wgr\",\"lds\",\"scr\",\"arch_vgpr\",\"accum_vgpr\",\"sgpr\",\"wave_size\","
                              "\"sig\",\"obj\",\"DispatchNs\",\"BeginNs\",\"EndNs\",\"CompleteNs\",\"DurationNs\"\n";

// A rocprof v1 row as rocprof writes it; `begin` as text (a bad value is the test's).
std::string v1Row(int i, const std::string& begin, int64_t end)
{
    return std::to_string(i) + ",\"void k<double>(double*) [clone .kd]\",2,1," + std::to_string(i)
        + ",900,901,4096,256,0,0,16,0,32,64,\"0x0\",\"0x7f\",100," + begin + "," + std::to_string(end) + ",200,50\n";
}

std::string v1Row(int i, int64_t begin)
{
    return v1Row(i, std::to_string(begin), begin + 50);
}

} // namespace

class TstRocprofImport : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    std::string write(const std::string& name, const std::string& bytes)
    {
        std::string path = m_dir.path().toStdString() + "/" + name;
        std::ofstream(path, std::ios::binary) << bytes;
        return path;
    }

private slots:
    void csvGrammar_data();
    void csvGrammar();
    void kernelNames_data();
    void kernelNames();
    void rocprofv3Fixture();
    void rocprofv3WithoutStreams();
    void rocprofv1CsvAndSqliteAgree();
    void rocprofv3Inline();
    void rocprofv3CopiesMarkersAndApiOnlyProcess();
    void rocprofv3CsvSet_data();
    void rocprofv3CsvSet();
    void rocprofv3CsvBadRowsAndNothing();
    void symbolsAfterDispatches();
    void csvBadLines();
    void csvCutShort();
    void jsonWrongTypes();
    void jsonCutShort();
    void sqliteWrongTypes();
    void sqliteDamaged();
    void nothingToImport_data();
    void nothingToImport();
};

void TstRocprofImport::csvGrammar_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("records");
    QTest::newRow("plain") << "a,b,c\n1,2,3\n"
                           << "a|b|c\n1|2|3\n";
    QTest::newRow("no final line end") << "a,b\n1,2"
                                       << "a|b\n1|2\n";
    QTest::newRow("crlf and blank lines") << "a,b\r\n\r\n1,2\r\n\n"
                                          << "a|b\n1|2\n";
    QTest::newRow("quoted with commas, quotes, line ends") << "\"x, y\",\"say \"\"hi\"\"\",\"two\nlines\"\n"
                                                           << "x, y|say \"hi\"|two\nlines\n";
    QTest::newRow("empty fields") << ",,\n\"\",x,\n"
                                  << "||\n|x|\n";
    QTest::newRow("byte order mark") << "\xEF\xBB\xBFk,v\n"
                                     << "k|v\n";
    QTest::newRow("quote inside an unquoted field") << "a,b\n1,x\"y,3\n4,5\n"
                                                    << "a|b\n!2:4: a quote inside an unquoted field\n4|5\n";
    QTest::newRow("text after the closing quote") << "a,b\n\"1\"x,2\n4,5\n"
                                                  << "a|b\n!2:4: text after the closing quote of a field\n4|5\n";
    QTest::newRow("quoted field not closed") << "a,b\n1,\"open\n"
                                             << "a|b\n!2:3: a quoted field is not closed before the end of the file\n";
    QTest::newRow("carriage return alone") << "a,b\r1,2\n3,4\n"
                                           << "!1:4: a carriage return not followed by a line feed\n3|4\n";
}

void TstRocprofImport::csvGrammar()
{
    QFETCH(QString, text);
    QFETCH(QString, records);
    QCOMPARE(QString::fromStdString(::records(text.toStdString())), records);
}

void TstRocprofImport::kernelNames_data()
{
    QTest::addColumn<QString>("symbol");
    QTest::addColumn<QString>("name");
    QTest::newRow("mangled, .kd") << "_Z4gemmPfi.kd"
                                  << "gemm(float*, int)";
    QTest::newRow("runtime blit kernel") << "__amd_rocclr_copyBuffer.kd"
                                         << "__amd_rocclr_copyBuffer";
    QTest::newRow("demangled, clone .kd") << "void k<double>(double*, int) [clone .kd]"
                                          << "void k<double>(double*, int)";
    QTest::newRow("plain") << "Cijk_Ailk_Bljk_BBS_BH_MT64x64x32"
                           << "Cijk_Ailk_Bljk_BBS_BH_MT64x64x32";
    QTest::newRow("not a valid mangling") << "_Zgarbage.kd"
                                          << "_Zgarbage";
    QTest::newRow("only the suffix") << ".kd"
                                     << ".kd";
}

void TstRocprofImport::kernelNames()
{
    QFETCH(QString, symbol);
    QFETCH(QString, name);
    QCOMPARE(QString::fromStdString(importer::rocmKernelName(symbol.toStdString())), name);
}

// The slice of TraceLens' MI350X run: lanes per HIP stream (named with their queue), the agents as GPUs,
// HIP API calls that launch the kernels with their correlation id.
void TstRocprofImport::rocprofv3Fixture()
{
    Trace t = load(fixture("rocprofv3.json.gz"));
    const TraceHeader& h = t.header();
    QCOMPARE(h.source, std::string("rocprofv3"));
    QCOMPARE(h.clockDomain, std::string("import:rocprofv3"));
    QCOMPARE(h.ranks.size(), size_t(1));
    QCOMPARE(h.ranks[0].pid, 908u);
    QCOMPARE(h.ranks[0].host, std::string("smci350-zts-gtu-c6-25"));
    QVERIFY(
        h.ranks[0].processName.rfind("/opt/conda/envs/py_3.10/bin/python3.10 -u /workspace/aorta/train.py", 0) == 0);
    QCOMPARE(h.metadata.at("import.gpu_arch"), std::string("gfx950"));
    QCOMPARE(h.metadata.at("import.lanes_by"), std::string("HIP stream"));
    QCOMPARE(h.gpus.size(), size_t(8)); // the CPU agents are no GPUs
    QCOMPARE(h.gpus[0].name, std::string("AMD Instinct MI350X"));
    QCOMPARE(h.gpus[0].smCount, 256u);
    QCOMPARE(h.gpus[0].smClockMhz, 2200u);
    QCOMPARE(h.gpus[0].memoryBytes, uint64_t(309220868096));
    QCOMPARE(h.gpus[0].pciBusId, std::string("0000:75:00.0")); // location_id 29952 = 0x7500
    QCOMPARE(t.eventCount(EventKind::Kernel), uint64_t(135));
    QCOMPARE(t.eventCount(EventKind::Api), uint64_t(50));
    const auto gpuLanes = laneNames(t, LaneKind::GpuStream);
    QCOMPARE(gpuLanes.size(), size_t(21));
    QVERIFY(std::find(gpuLanes.begin(), gpuLanes.end(), "stream 567 (queue 18)") != gpuLanes.end());
    QCOMPARE(laneNames(t, LaneKind::CpuApi), std::vector<std::string>({ "thread 908 HIP API" }));
    // The first dispatch: kernel 8 (__amd_rocclr_initHeap), 512 work-items in workgroups of 512.
    const size_t first = 0;
    TimeNs earliest = INT64_MAX;
    LaneId firstLane = 0;
    for (LaneId l : t.lanesOf(0, LaneKind::GpuStream))
        if (t.lane(l).events.size() && t.lane(l).events.start(0) < earliest) {
            earliest = t.lane(l).events.start(0);
            firstLane = l;
        }
    QCOMPARE(earliest, TimeNs(63857982592000)); // the file's own clock, as written
    const KernelConfig* c = t.kernelConfig(firstLane, first);
    QVERIFY(c);
    QCOMPARE(c->grid[0], 1u);
    QCOMPARE(c->block[0], 512u);
    const EventRef launch = t.launchOf(firstLane, first);
    QVERIFY(launch.valid());
    QCOMPARE(t.str(t.lane(launch.lane).events.name(launch.index)), std::string_view("hipLaunchKernel"));
    QCOMPARE(counter(t, "import_bad_events"), uint64_t(0));
    QCOMPARE(counter(t, "import_missing_strings"), uint64_t(0));
}

// rocprofiler-sdk before HIP streams were recorded: one lane per queue.
void TstRocprofImport::rocprofv3WithoutStreams()
{
    Trace t = load(fixture("rocprofv3_nostream.json"));
    QCOMPARE(t.header().metadata.at("import.lanes_by"), std::string("queue"));
    auto lanes = laneNames(t, LaneKind::GpuStream);
    std::sort(lanes.begin(), lanes.end());
    QCOMPARE(lanes, std::vector<std::string>({ "queue 16", "queue 17", "queue 18", "queue 19", "queue 20" }));
    QCOMPARE(t.eventCount(EventKind::Kernel), uint64_t(135));
}

// results.csv and results.db of one rocprof v1 run are the same trace.
void TstRocprofImport::rocprofv1CsvAndSqliteAgree()
{
    Trace csv = load(fixture("rocprof1.csv"));
    Trace db = load(fixture("rocprof1.db"));
    for (const Trace* t : { &csv, &db }) {
        QCOMPARE(t->header().source, std::string("rocprof"));
        QCOMPARE(t->header().clockDomain, std::string("import:rocprof"));
        QCOMPARE(t->eventCount(EventKind::Kernel), uint64_t(60));
        QCOMPARE(laneNames(*t, LaneKind::GpuStream), std::vector<std::string>({ "queue 0" }));
        QCOMPARE(t->lanes()[0].info.device, 8u); // gpu-id, as written
        QCOMPARE(t->header().ranks[0].pid, 2046349u);
        QVERIFY(t->header().gpus.empty()); // v1 describes no agent
    }
    QCOMPARE(csv.header().toolVersion, std::string("rocprof (v1, CSV)"));
    QCOMPARE(db.header().toolVersion, std::string("rocprof (v1, SQLite)"));
    const LaneEvents& a = csv.lanes()[0].events;
    const LaneEvents& b = db.lanes()[0].events;
    for (size_t i = 0; i < a.size(); ++i) {
        QCOMPARE(a.start(i), b.start(i));
        QCOMPARE(a.duration(i), b.duration(i));
        QCOMPARE(csv.str(a.name(i)), db.str(b.name(i)));
    }
    QCOMPARE(csv.str(a.name(0)),
        std::string_view("void test_function_kernel<double>(double*, int, int, int, double, double, double)"));
    QCOMPARE(a.start(0), TimeNs(1915914098849134));
    const KernelConfig* c = csv.kernelConfig(0, 0);
    QCOMPARE(c->grid[0], 524288u); // 134217728 work-items / 256
    QCOMPARE(c->block[0], 256u);
    QCOMPARE(c->registers, 16u);
}

// The mapping on a document written here: launch configuration, API names from the strings, records of
// other kinds counted.
void TstRocprofImport::rocprofv3Inline()
{
    const std::string path = write("inline.json",
        rocprofv3(dispatch(1000, 2000, 1, 11) + "," + dispatch(2500, 2600, 2, 12, 8),
            hipCall(900, 0, 11) + "," + hipCall(2400, 1, 0) + "," + hipCall(2450, 9, 0)));
    Trace t = load(path);
    QCOMPARE(t.eventCount(EventKind::Kernel), uint64_t(2));
    QCOMPARE(t.eventCount(EventKind::Api), uint64_t(3));
    QCOMPARE(t.header().gpus.size(), size_t(1));
    QCOMPARE(t.header().gpus[0].name, std::string("AMD Instinct MI300X"));
    QCOMPARE(t.header().gpus[0].pciBusId, std::string("0000:c1:00.0"));
    QCOMPARE(t.header().gpus[0].memoryClockMhz, 1300u);
    QCOMPARE(t.header().gpus[0].memoryBusWidthBits, 8192u);
    const LaneId gemm = t.lanesOf(0, LaneKind::GpuStream)[0];
    QCOMPARE(t.lane(gemm).info.name, std::string("stream 7 (queue 3)"));
    QCOMPARE(t.str(t.lane(gemm).events.name(0)), std::string_view("gemm(float*, int)"));
    const KernelConfig* c = t.kernelConfig(gemm, 0);
    QCOMPARE(c->grid[0], 4u); // 1000 work-items in workgroups of 256: 4, the last one partial
    QCOMPARE(c->grid[1], 2u);
    QCOMPARE(c->block[0], 256u);
    QCOMPARE(c->sharedDynamic, 1024u);
    const LaneId api = t.lanesOf(0, LaneKind::CpuApi)[0];
    QCOMPARE(t.str(t.lane(api).events.name(1)), std::string_view("hipMemcpy"));
    QCOMPARE(t.str(t.lane(api).events.name(2)), std::string_view("HIP API 1:9")); // no such operation
    QCOMPARE(counter(t, "import_unknown_api_ids"), uint64_t(1));
    QCOMPARE(counter(t, "import_skipped_events"), uint64_t(2)); // the hsa_api records
    const EventRef launch = t.launchOf(gemm, 0);
    QVERIFY(launch.valid());
    QCOMPARE(t.lane(launch.lane).events.start(launch.index), TimeNs(900));
}

// Memory copies on the GPU end's lane, ROCTx ranges and marks from strings.marker_api, and a second
// process that made HIP calls only: not a rank, named in a warning, its calls counted.
void TstRocprofImport::rocprofv3CopiesMarkersAndApiOnlyProcess()
{
    auto copy = [](int64_t start, int64_t end, int op, int src, int dst, int bytes) {
        return R"({"size":1,"kind":3,"operation":)" + std::to_string(op)
            + R"(,"thread_id":77,"correlation_id":{"internal":40,"external":0},"start_timestamp":)"
            + std::to_string(start) + R"(,"end_timestamp":)" + std::to_string(end) + R"(,"dst_agent_id":{"handle":)"
            + std::to_string(dst) + R"(},"src_agent_id":{"handle":)" + std::to_string(src) + R"(},"bytes":)"
            + std::to_string(bytes) + "}";
    };
    auto marker = [](int64_t start, int64_t end, int op, int corr) {
        return R"({"size":1,"kind":2,"operation":)" + std::to_string(op)
            + R"(,"thread_id":78,"correlation_id":{"internal":)" + std::to_string(corr)
            + R"(,"external":0},"start_timestamp":)" + std::to_string(start) + R"(,"end_timestamp":)"
            + std::to_string(end) + "}";
    };
    const std::string more = R"("memory_copy":[)" + copy(3000, 3500, 2, 4, 5, 4096) + ","
        + copy(3600, 3700, 3, 5, 4, 64) + "," + copy(3800, 3900, 1, 4, 4, 8) + R"(],"marker_api":[)"
        + marker(500, 5000, 1, 31) + "," + marker(2000, 2000, 0, 32) + "," + marker(2100, 2200, 1, 33) + "]";
    const std::string loader = R"({"metadata":{"pid":90,"command":["python","loader.py"]},"agents":[],)"
                               R"("strings":{"buffer_records":[{"kind":"NONE","operations":[]},)"
                               R"({"kind":"HIP_RUNTIME_API","operations":["hipGetDeviceCount"]}]},)"
                               R"("buffer_records":{"hip_api":[{"kind":1,"operation":0,"thread_id":90,)"
                               R"("correlation_id":{"internal":1,"external":0},"start_timestamp":100,)"
                               R"("end_timestamp":150}]}})";
    Trace t
        = load(write("copies.json", rocprofv3(dispatch(1000, 2000, 1, 11), hipCall(900, 0, 11), false, more, loader)));
    QCOMPARE(t.header().ranks.size(), size_t(1)); // the loader is not a rank
    QCOMPARE(t.header().ranks[0].pid, 77u);
    QVERIFY(warned(t, "process 90 (python loader.py) made 1 HIP call and no GPU work: not a rank"));
    QCOMPARE(counter(t, "import_skipped_events"), uint64_t(1 + 1)); // its call; the host-to-host copy
    QCOMPARE(t.eventCount(EventKind::Kernel), uint64_t(1));
    QCOMPARE(t.eventCount(EventKind::Api), uint64_t(1));
    QCOMPARE(t.eventCount(EventKind::Memcpy), uint64_t(2));
    const std::vector<LaneId> gpu = t.lanesOf(0, LaneKind::GpuStream);
    LaneId copies = kNoLane;
    for (LaneId l : gpu)
        if (t.lane(l).info.name == "memory copies")
            copies = l;
    QVERIFY(copies != kNoLane);
    const LaneEvents& c = t.lane(copies).events;
    QCOMPARE(c.size(), size_t(2));
    QCOMPARE(t.lane(copies).info.device, 0u); // agent 5 is GPU 0: the GPU end of both copies
    QCOMPARE(c.start(0), TimeNs(3000));
    QCOMPARE(c.duration(0), TimeNs(500));
    QCOMPARE(t.memop(copies, 0)->bytes, uint64_t(4096));
    QCOMPARE(t.memop(copies, 0)->copyKind, CopyKind::HtoD);
    QCOMPARE(t.memop(copies, 1)->copyKind, CopyKind::DtoH);
    const std::vector<LaneId> roctx = t.lanesOf(0, LaneKind::Nvtx);
    QCOMPARE(roctx.size(), size_t(1));
    QCOMPARE(t.lane(roctx[0]).info.name, std::string("thread 78 ROCTx"));
    const LaneEvents& m = t.lane(roctx[0]).events;
    QCOMPARE(m.size(), size_t(3));
    QCOMPARE(t.str(m.name(0)), std::string_view("decode step 3"));
    QCOMPARE(m.duration(0), TimeNs(4500));
    QCOMPARE(t.str(m.name(1)), std::string_view("sample")); // a mark: no duration
    QCOMPARE(m.duration(1), TimeNs(0));
    QCOMPARE(t.str(m.name(2)), std::string_view("roctxRangePushA")); // no message: its operation
    QCOMPARE(counter(t, "import_missing_strings"), uint64_t(1));
}

// A rocprofv3 CSV set (agent_info, kernel, HIP API, memory copy and marker traces of one process),
// opened through any of its files, in the columns of rocprofiler-sdk 0.4 (agents by number, no
// streams) and of 1.0 ("Agent 2", Stream_Id, LDS_Block_Size): the same trace.
void TstRocprofImport::rocprofv3CsvSet_data()
{
    QTest::addColumn<bool>("newer");
    QTest::addColumn<QString>("open");
    QTest::newRow("0.4, kernel trace") << false << "kernel_trace";
    QTest::newRow("0.4, marker trace") << false << "marker_api_trace";
    QTest::newRow("1.0, kernel trace") << true << "kernel_trace";
    QTest::newRow("1.0, agent info") << true << "agent_info";
}

void TstRocprofImport::rocprofv3CsvSet()
{
    QFETCH(bool, newer);
    QFETCH(QString, open);
    const std::string dir = newer ? "new_" : "old_";
    write(dir + "4242_agent_info.csv",
        "\"Node_Id\",\"Logical_Node_Id\",\"Agent_Type\",\"Cu_Count\",\"Max_Engine_Clk_Fcompute\",\"Name\",\"Product_"
        "Name\"\n"
        "0,0,\"CPU\",0,3700,\"AMD EPYC 9654\",\"AMD EPYC 9654\"\n"
        "3,3,\"GPU\",304,2100,\"gfx942\",\"AMD Instinct MI300X\"\n"
        "2,2,\"GPU\",304,2100,\"gfx942\",\"AMD Instinct MI300X\"\n");
    const std::string agent2 = newer ? "\"Agent 2\"" : "2", agent3 = newer ? "\"Agent 3\"" : "3";
    std::string kernels = newer
        ? "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\","
          "\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"LDS_Block_Size\","
          "\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\","
          "\"Grid_Size_Z\"\n"
        : "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\","
          "\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"Private_Segment_Size\",\"Group_Segment_Size\","
          "\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\","
          "\"Grid_Size_Z\"\n";
    auto kernel = [&](const std::string& agent, int queue, int corr, int64_t start, int64_t end, const char* name) {
        return "\"KERNEL_DISPATCH\"," + agent + "," + std::to_string(queue) + ","
            + (newer ? std::to_string(queue + 10) + "," : std::string()) + "4242," + std::to_string(corr) + ",16,\""
            + name + "\"," + std::to_string(corr) + "," + std::to_string(start) + "," + std::to_string(end)
            + (newer ? ",512" : ",0,512") + ",64,1,1,1024,2,1\n";
    };
    kernels += kernel(agent2, 1, 1, 1000, 2000, "void addition_kernel<float>(float*, float const*, int)");
    kernels += kernel(agent3, 2, 2, 2500, 2600, "_Z15subtract_kernelPfPKfi.kd");
    write(dir + "4242_kernel_trace.csv", kernels);
    write(dir + "4242_hip_api_trace.csv",
        "\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_"
        "Timestamp\"\n"
        "\"HIP_RUNTIME_API\",\"hipLaunchKernel\",4242,4243,1,900,950\n"
        "\"HIP_RUNTIME_API\",\"hipLaunchKernel\",4242,4243,2,2400,2450\n");
    write(dir + "4242_memory_copy_trace.csv",
        "\"Kind\",\"Direction\",\"Source_Agent_Id\",\"Destination_Agent_Id\",\"Correlation_Id\",\"Start_Timestamp\","
        "\"End_Timestamp\"\n"
        "\"MEMORY_COPY\",\"MEMORY_COPY_HOST_TO_DEVICE\",0,"
            + agent3 + ",0,3000,3500\n");
    write(dir + "4242_marker_api_trace.csv",
        "\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_"
        "Timestamp\"\n"
        "\"MARKER_CORE_API\",\"forward\",4242,4243,5,800,2700\n");
    const std::string opened = m_dir.path().toStdString() + "/" + dir + "4242_" + open.toStdString() + ".csv";
    Trace t = load(opened);
    QCOMPARE(t.header().toolVersion, std::string("rocprofv3 (rocprofiler-sdk, CSV)"));
    QCOMPARE(t.header().ranks.size(), size_t(1));
    QCOMPARE(t.header().ranks[0].pid, 4242u);
    QCOMPARE(t.header().gpus.size(), size_t(2));
    QCOMPARE(t.header().gpus[1].name, std::string("AMD Instinct MI300X"));
    QCOMPARE(t.eventCount(EventKind::Kernel), uint64_t(2));
    QCOMPARE(t.eventCount(EventKind::Api), uint64_t(2));
    QCOMPARE(t.eventCount(EventKind::Memcpy), uint64_t(1));
    QCOMPARE(t.eventCount(EventKind::Nvtx), uint64_t(1));
    std::vector<std::string> names = laneNames(t, LaneKind::GpuStream);
    std::sort(names.begin(), names.end());
    if (newer)
        QCOMPARE(names, (std::vector<std::string> { "memory copies", "stream 11 (queue 1)", "stream 12 (queue 2)" }));
    else
        QCOMPARE(names, (std::vector<std::string> { "memory copies", "queue 1", "queue 2" }));
    for (LaneId l : t.lanesOf(0, LaneKind::GpuStream)) {
        const Lane& lane = t.lane(l);
        if (lane.info.name == "memory copies") {
            QCOMPARE(lane.info.device, 1u); // node 3: the second GPU by node id
        } else if (t.str(lane.events.name(0)) == "subtract_kernel(float*, float const*, int)") {
            QCOMPARE(lane.info.device, 1u);
            QCOMPARE(lane.events.start(0), TimeNs(2500));
        } else {
            QCOMPARE(
                t.str(lane.events.name(0)), std::string_view("void addition_kernel<float>(float*, float const*, int)"));
            QCOMPARE(lane.info.device, 0u); // node 2
            QCOMPARE(t.kernelConfig(l, 0)->grid[0], 16u); // 1024 work-items / 64
            QCOMPARE(t.kernelConfig(l, 0)->sharedDynamic, 512u);
            const EventRef launch = t.launchOf(l, 0);
            QVERIFY(launch.valid());
            QCOMPARE(t.lane(launch.lane).events.start(launch.index), TimeNs(900));
        }
    }
    // Every file of the set named: read once.
    std::vector<std::string> all;
    for (const char* f : { "kernel_trace", "hip_api_trace", "agent_info", "memory_copy_trace", "marker_api_trace" })
        all.push_back(m_dir.path().toStdString() + "/" + dir + "4242_" + f + ".csv");
    auto both = importTraces(all);
    QVERIFY2(both, both ? "" : both.error().c_str());
    QCOMPARE(both->eventCount(EventKind::Kernel), uint64_t(2));
    QCOMPARE(both->eventCount(EventKind::Api), uint64_t(2));
}

// A malformed row is skipped with its file, line and column, the rows around it kept; a set without GPU
// work is refused, saying what it read.
void TstRocprofImport::rocprofv3CsvBadRowsAndNothing()
{
    const std::string head
        = "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\","
          "\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n";
    const std::string path = write("7_kernel_trace.csv",
        head
            + "\"KERNEL_DISPATCH\",2,1,7,1,1,\"k\",1,100,200\n\"KERNEL_DISPATCH\",2,1,7,2,1,\"k\",2,1x0,400\n"
              "\"KERNEL_DISPATCH\",2,1,7,3,1,\"k\",3,500,600\n");
    Trace t = load(path);
    QCOMPARE(t.eventCount(EventKind::Kernel), uint64_t(2));
    QCOMPARE(counter(t, "import_bad_events"), uint64_t(1));
    QVERIFY2(warned(t, "7_kernel_trace.csv: line 3, column 35: Start_Timestamp: not a number; the row is skipped"),
        t.warnings().empty() ? "" : t.warnings()[0].c_str());
    QCOMPARE(t.header().ranks[0].pid, 7u); // the file name's pid
    write("8_hip_api_trace.csv",
        "\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_"
        "Timestamp\"\n"
        "\"HIP_RUNTIME_API\",\"hipGetDeviceCount\",8,8,1,100,200\n");
    auto nothing = importTraces({ m_dir.path().toStdString() + "/8_hip_api_trace.csv" });
    QVERIFY(!nothing);
    QVERIFY2(nothing.error().find("8_hip_api_trace.csv: a rocprofv3 CSV set with no GPU work (no kernel dispatch or "
                                  "memory copy), nothing to import (read 8_hip_api_trace.csv: 1 HIP API calls")
            != std::string::npos,
        nothing.error().c_str());
}

void TstRocprofImport::symbolsAfterDispatches()
{
    Trace t = load(
        write("late_symbols.json", rocprofv3(dispatch(1000, 2000, 1, 1) + "," + dispatch(3000, 3100, 3, 2), "", true)));
    const LaneEvents& e = t.lane(t.lanesOf(0, LaneKind::GpuStream)[0]).events;
    QCOMPARE(t.str(e.name(0)), std::string_view("gemm(float*, int)"));
    QCOMPARE(t.str(e.name(1)), std::string_view("<kernel 3>")); // no symbol of that id
    QCOMPARE(counter(t, "import_missing_strings"), uint64_t(1));
}

// A bad line names its place and is skipped; the rows around it are kept.
void TstRocprofImport::csvBadLines()
{
    std::string csv = kV1Header;
    for (int i = 0; i < 6; ++i)
        csv += v1Row(i, 1000 + 100 * i);
    csv += v1Row(6, "12x4", 1300);
    csv += "7,\"k\"x,2\n";
    csv += "8,k,2,1\n";
    csv += v1Row(9, 2000);
    Trace t = load(write("bad_lines.csv", csv));
    QCOMPARE(t.eventCount(EventKind::Kernel), uint64_t(7));
    QCOMPARE(counter(t, "import_bad_events"), uint64_t(3));
    QVERIFY(warned(t, "bad_lines.csv: line 8, column 96 (BeginNs): not an integer: \"12x4\"; the row is skipped"));
    QVERIFY(warned(t, "bad_lines.csv: line 9, column 6: text after the closing quote of a field; the row is skipped"));
    QVERIFY(warned(t, "bad_lines.csv: line 10, column 1: 4 fields where the header names 22; the row is skipped"));
}

void TstRocprofImport::csvCutShort()
{
    std::string csv = kV1Header;
    for (int i = 0; i < 5; ++i)
        csv += v1Row(i, 1000 + 100 * i);
    csv += v1Row(5, 1500).substr(0, 40); // the file ends inside the row
    Trace t = load(write("cut.csv", csv));
    QCOMPARE(t.eventCount(EventKind::Kernel), uint64_t(5));
    QCOMPARE(counter(t, "import_truncated"), uint64_t(1));
    QCOMPARE(counter(t, "import_bad_events"), uint64_t(0));
    QVERIFY(warned(t, "cut.csv: line 7: the file ends inside this row"));
}

// A record with a field of the wrong type is skipped with its byte offset and field; a container of
// the wrong type is skipped with a warning.
void TstRocprofImport::jsonWrongTypes()
{
    std::string bad = dispatch(3000, 3100, 1, 3);
    bad.replace(bad.find("\"start_timestamp\":3000"), 22, "\"start_timestamp\":\"3000\"");
    const std::string doc = rocprofv3(dispatch(1000, 2000, 1, 1) + "," + bad + "," + dispatch(4000, 4100, 2, 4));
    Trace t = load(write("wrong_types.json", doc));
    QCOMPARE(t.eventCount(EventKind::Kernel), uint64_t(2));
    QCOMPARE(counter(t, "import_bad_events"), uint64_t(1));
    const std::string at = "wrong_types.json: byte " + std::to_string(doc.find(bad));
    QVERIFY2(warned(t, at + ": a record of buffer_records.kernel_dispatch: start_timestamp: not an integer; skipped"),
        t.warnings().empty() ? "" : t.warnings()[0].c_str());
    std::string notArray = rocprofv3(dispatch(1000, 2000, 1, 1));
    notArray.replace(notArray.find("\"hip_api\":[]"), 12, "\"hip_api\":{}");
    Trace u = load(write("not_array.json", notArray));
    QCOMPARE(u.eventCount(EventKind::Kernel), uint64_t(1));
    QCOMPARE(counter(u, "import_bad_metadata"), uint64_t(1));
    QVERIFY(warned(u, "buffer_records.hip_api is not an array; skipped"));
}

void TstRocprofImport::jsonCutShort()
{
    std::string doc
        = rocprofv3(dispatch(1000, 2000, 1, 1) + "," + dispatch(3000, 3100, 2, 2) + "," + dispatch(4000, 4100, 2, 3));
    doc.resize(doc.rfind("\"start_timestamp\":4000")); // inside the third dispatch
    Trace t = load(write("cut.json", doc));
    QCOMPARE(t.eventCount(EventKind::Kernel), uint64_t(2));
    QCOMPARE(counter(t, "import_truncated"), uint64_t(1));
    QVERIFY(warned(t,
        "cut.json: byte " + std::to_string(doc.rfind("{\"thread_id\""))
            + ": the file ends inside the value that starts there; kept the 2 kernel dispatches and 0 HIP API calls"));
}

void TstRocprofImport::sqliteWrongTypes()
{
    const std::string path = m_dir.path().toStdString() + "/wrong_types.db";
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const char* sql = "CREATE TABLE KERN (\"Index\" INTEGER, \"KernelName\" TEXT, \"gpu-id\" INTEGER, \"queue-id\" "
                      "INTEGER, \"pid\" INTEGER, \"tid\" INTEGER, \"grd\" INTEGER, \"wgr\" INTEGER, \"BeginNs\" "
                      "INTEGER, \"EndNs\" INTEGER);"
                      "INSERT INTO KERN VALUES (0, '\"k(int) [clone .kd]\"', 1, 0, 5, 5, 64, 64, 100, 200);"
                      "INSERT INTO KERN VALUES (1, '\"k(int) [clone .kd]\"', 1, 0, 5, 5, 64, 64, 'soon', 400);"
                      "INSERT INTO KERN VALUES (2, '\"k(int) [clone .kd]\"', 1, 0, 5, 5, 1.5, 64, 500, 600);"
                      "INSERT INTO KERN VALUES (3, '\"k(int) [clone .kd]\"', 1, 0, 5, 5, 64, 64, 700, 800);";
    QCOMPARE(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    Trace t = load(path);
    QCOMPARE(t.eventCount(EventKind::Kernel), uint64_t(2));
    QCOMPARE(counter(t, "import_bad_events"), uint64_t(2));
    QVERIFY(
        warned(t, "wrong_types.db: table KERN, row 2, column BeginNs: not an integer: \"soon\"; the row is skipped"));
    QVERIFY(warned(t, "wrong_types.db: table KERN, row 3, column grd: not an integer: \"1.5\"; the row is skipped"));
    QCOMPARE(t.str(t.lanes()[0].events.name(0)), std::string_view("k(int)"));
}

// A database whose last page is damaged: the rows of the pages before it are kept.
void TstRocprofImport::sqliteDamaged()
{
    const std::string path = m_dir.path().toStdString() + "/damaged.db";
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    std::string sql
        = "CREATE TABLE KERN (\"KernelName\" TEXT, \"pid\" INTEGER, \"BeginNs\" INTEGER, \"EndNs\" INTEGER);"
          "BEGIN;";
    for (int i = 0; i < 2000; ++i)
        sql += "INSERT INTO KERN VALUES ('\"k(int) [clone .kd]\"', 5, " + std::to_string(1000 + 100 * i) + ", "
            + std::to_string(1050 + 100 * i) + ");";
    QCOMPARE(sqlite3_exec(db, (sql + "COMMIT;").c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    const auto size = int64_t(f.tellg());
    QVERIFY(size >= 8 * 4096);
    f.seekp(size - 4096); // the last leaf page of the table
    f << std::string(4096, '\xff');
    f.close();
    Trace t = load(path);
    QVERIFY(t.eventCount(EventKind::Kernel) > 1000);
    QVERIFY(t.eventCount(EventKind::Kernel) < 2000);
    QCOMPARE(counter(t, "import_truncated"), uint64_t(1));
    QVERIFY(warned(t,
        "damaged.db: table KERN: database disk image is malformed; kept the "
            + std::to_string(t.eventCount(EventKind::Kernel)) + " rows read before it"));
}

void TstRocprofImport::nothingToImport_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("content");
    QTest::addColumn<QString>("error");
    QTest::newRow("csv header only")
        << "header.csv" << kV1Header
        << "a rocprof kernel trace without any kernel dispatch, nothing to import (0 rows, 0 of them malformed)";
    QTest::newRow("csv without times") << "no_times.csv"
                                       << "\"Index\",\"KernelName\",\"gpu-id\"\n0,k,1\n"
                                       << "a rocprof kernel trace without BeginNs, EndNs, nothing to import";
    QTest::newRow("json without records") << "empty.json" << QString::fromStdString(rocprofv3(""))
                                          << "a rocprofv3 JSON file with no GPU work (no kernel dispatch or "
                                             "memory copy), nothing to import (0 HIP API calls, 0 ROCTx markers, 0 "
                                             "unreadable records, 2 buffer_records.hsa_api)";
    QTest::newRow("json tool not an array") << "tool.json"
                                            << "{\"rocprofiler-sdk-tool\": 5}"
                                            << "not a rocprofv3 (rocprofiler-sdk) JSON file";
}

void TstRocprofImport::nothingToImport()
{
    QFETCH(QString, name);
    QFETCH(QString, content);
    QFETCH(QString, error);
    auto t = importTraces({ write(name.toStdString(), content.toStdString()) });
    QVERIFY(!t);
    QVERIFY2(t.error().find(error.toStdString()) != std::string::npos, t.error().c_str());
    QVERIFY2(t.error().find(name.toStdString()) != std::string::npos, t.error().c_str());
}

QTEST_GUILESS_MAIN(TstRocprofImport)
#include "tst_rocprofimport.moc"
