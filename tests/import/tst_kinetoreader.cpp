// SPDX-License-Identifier: MIT
// KinetoReader + KinetoEventParser on inline documents and the real fixtures: event mapping, windowing
// (any window size and a minified single-line file give the same events), every prefix of a document
// imports without error as a truncated file, malformed JSON names its byte offset, exact timestamps,
// unknown kinds counted, flows, metadata, invalid UTF-8, JSON that is not a Kineto trace or yields no
// event, another accelerator's (MTIA) device events.
#include "model/import/bytesource.h"
#include "model/import/kinetoreader.h"
#include "model/import/memorybytesource.h"

#include <QTest>

#include <map>

using namespace gapscope;
using namespace gapscope::model;
using namespace gapscope::model::importer;

namespace {

struct Staged {
    Status status;
    StagedTrace trace { "kineto", "test.json" };
    uint64_t elements = 0;
};

std::unique_ptr<Staged> stageWith(std::string json, const KinetoReader::Options& o)
{
    auto s = std::make_unique<Staged>();
    MemoryByteSource src(std::move(json), "test.json");
    KinetoReader reader(src, s->trace, o);
    s->status = reader.read();
    s->elements = reader.elements();
    return s;
}

std::unique_ptr<Staged> stage(std::string json, size_t window = 1u << 20, unsigned workers = 0)
{
    KinetoReader::Options o;
    o.windowBytes = window;
    o.workers = workers;
    return stageWith(std::move(json), o);
}

std::string readAll(const std::string& path)
{
    auto src = ByteSource::open(path);
    std::string out;
    if (!src)
        return out;
    char buf[65536];
    for (;;) {
        auto n = (*src)->read(buf, sizeof buf);
        if (!n || *n == 0)
            break;
        out.append(buf, *n);
    }
    return out;
}

// Drops every blank outside strings: a single-line file, as json.dumps() without indent writes.
std::string minify(const std::string& in)
{
    std::string out;
    bool str = false, esc = false;
    for (char c : in) {
        if (str) {
            out += c;
            esc = !esc && c == '\\';
            if (c == '"' && !esc)
                str = false;
            continue;
        }
        if (c == ' ' || c == '\n' || c == '\t' || c == '\r')
            continue;
        out += c;
        str = c == '"';
        esc = false;
    }
    return out;
}

// One line per staged event (kind, lane, start, duration, name, correlation) for comparisons.
std::vector<std::string> dump(const StagedTrace& t)
{
    std::vector<std::string> lines;
    for (uint64_t i = 0; i < t.eventCount(); ++i) {
        const StagedEvent& e = t.event(i);
        const LaneInfo& l = t.lanes()[e.lane].info;
        lines.push_back(std::to_string(int(e.kind)) + " " + std::to_string(int(l.kind)) + "/" + std::to_string(l.device)
            + "/" + std::to_string(l.stream) + " " + std::to_string(e.start) + " " + std::to_string(t.duration(i)) + " "
            + std::string(t.strings().str(e.name)) + " " + std::to_string(e.correlation));
    }
    return lines;
}

uint64_t counter(const StagedTrace& t, const std::string& name)
{
    uint64_t n = 0;
    for (const auto& [k, c] : t.counters())
        if (c.name == name)
            n += c.value;
    return n;
}

std::string kernel(int ts, int corr, const std::string& name = "k")
{
    return "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" + name
        + "\", \"pid\": 0, \"tid\": 7, \"ts\": " + std::to_string(ts)
        + ".500, \"dur\": 2.25, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": " + std::to_string(corr)
        + ", \"grid\": [4, 2, 1], \"block\": [128, 1, 1], \"registers per thread\": 32, " + "\"shared memory\": 1024}}";
}

std::string doc3()
{
    return "{\n  \"schemaVersion\": 1,\n  \"traceEvents\": [\n  " + kernel(10, 1) + ",\n  " + kernel(20, 2)
        + ",\n  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 42, \"tid\": 43, "
          "\"ts\": 9, \"dur\": 1, \"args\": {\"correlation\": 1}}\n  ],\n  \"baseTimeNanoseconds\": 1000\n}\n";
}

} // namespace

class TstKinetoReader : public QObject {
    Q_OBJECT
private slots:
    void kernelFieldsKept();
    void exactMicroseconds();
    void windowSizesAgree_data();
    void windowSizesAgree();
    void everyPrefixImportsAsTruncated();
    void malformed_data();
    void malformed();
    void damageDeepInsideFound_data();
    void damageDeepInsideFound();
    void unknownKindsCounted();
    void flowFillsCorrelation();
    void flowsAnywhereInTheFile();
    void metadata();
    void invalidUtf8Replaced();
    void stringIds();
    void rootArrayWithoutClosingBracket();
    void notKineto_data();
    void notKineto();
    void nothingImported_data();
    void nothingImported();
    void mtiaDeviceEvents();
};

void TstKinetoReader::kernelFieldsKept()
{
    auto s = stage(doc3());
    QVERIFY2(s->status.isOk(), s->status.message().c_str());
    const StagedTrace& t = s->trace;
    QCOMPARE(t.eventCount(), uint64_t(3));
    QCOMPARE(t.eventCount(StagedKind::Kernel), uint64_t(2));
    QCOMPARE(t.eventCount(StagedKind::Api), uint64_t(1));
    const StagedEvent& k = t.event(0);
    QCOMPARE(k.start, int64_t(10500));
    QCOMPARE(t.duration(0), int64_t(2250));
    QCOMPARE(k.correlation, 1u);
    const KernelConfig& c = t.configs()[k.aux];
    QCOMPARE(c.grid[0], 4u);
    QCOMPARE(c.grid[1], 2u);
    QCOMPARE(c.block[0], 128u);
    QCOMPARE(c.registers, 32u);
    QCOMPARE(c.sharedDynamic, 1024u);
    QCOMPARE(t.lanes()[k.lane].info.kind, LaneKind::GpuStream);
    QCOMPARE(t.lanes()[k.lane].info.stream, uint64_t(7));
    QCOMPARE(t.configs().size(), size_t(1)); // the two kernels share their launch config
    QCOMPARE(t.timeOffsetNs, int64_t(1000)); // baseTimeNanoseconds after traceEvents still applies
    QCOMPARE(t.lanes()[t.event(2).lane].info.stream, uint64_t(43));
    QCOMPARE(t.processes()[0].pid, 42u);
}

void TstKinetoReader::exactMicroseconds()
{
    auto s = stage("[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":1733301620213914.250,"
                   "\"dur\":0.0015}]");
    QVERIFY(s->status.isOk());
    QCOMPARE(s->trace.event(0).start, int64_t(1733301620213914250LL)); // a double would lose the 250 ns
    QCOMPARE(s->trace.duration(0), int64_t(2)); // 1.5 ns rounds to 2
}

void TstKinetoReader::windowSizesAgree_data()
{
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<bool>("minified");
    QTest::addColumn<int>("window");
    QTest::addColumn<int>("workers");
    for (const char* f : { "decode", "rank1" })
        for (bool mini : { false, true })
            for (int w : { 64, 777, 65536 })
                QTest::addRow("%s %s window %d", f, mini ? "minified" : "pretty", w) << f << mini << w << 0;
    for (int workers : { 1, 3 }) // element-aligned units parsed on other threads
        for (int w : { 2048, 16384, 262144 })
            QTest::addRow("decode pretty window %d, %d workers", w, workers) << "decode" << false << w << workers;
}

void TstKinetoReader::windowSizesAgree()
{
    QFETCH(QString, fixture);
    QFETCH(bool, minified);
    QFETCH(int, window);
    QFETCH(int, workers);
    std::string json
        = readAll(std::string(GAPSCOPE_TEST_DATA) + "/import/fixtures/kineto/" + fixture.toStdString() + ".json.gz");
    QVERIFY(json.size() > 10000);
    auto reference = stage(json);
    QVERIFY2(reference->status.isOk(), reference->status.message().c_str());
    auto s = stage(minified ? minify(json) : json, size_t(window), unsigned(workers));
    QVERIFY2(s->status.isOk(), s->status.message().c_str());
    QVERIFY(s->trace.warnings.empty());
    QCOMPARE(s->elements, reference->elements);
    QCOMPARE(dump(s->trace), dump(reference->trace));
    if (workers > 0 && window >= 16384) // the workers did take part (smaller windows hold no whole unit)
        QVERIFY(s->trace.metadata.count("import.parallel_units") == 1);
}

// A file cut at any byte imports what was complete before the cut, with a truncation warning.
void TstKinetoReader::everyPrefixImportsAsTruncated()
{
    const std::string full = doc3();
    std::vector<size_t> ends; // end offset of each complete trace event
    for (size_t p = full.find("{\"ph\""); p != std::string::npos; p = full.find("{\"ph\"", p + 1)) {
        int depth = 0;
        size_t i = p;
        do
            depth += full[i] == '{' ? 1 : full[i] == '}' ? -1 : 0;
        while (depth > 0 && ++i < full.size());
        ends.push_back(i + 1);
    }
    QCOMPARE(ends.size(), size_t(3));
    for (size_t cut = 0; cut < full.size(); ++cut) {
        auto s = stage(full.substr(0, cut), 32);
        const std::string what = "cut at " + std::to_string(cut) + ": " + s->status.message();
        if (cut == 0) {
            QVERIFY2(!s->status.isOk(), what.c_str()); // an empty file is an error
            continue;
        }
        QVERIFY2(s->status.isOk(), what.c_str());
        const auto complete = uint64_t(std::count_if(ends.begin(), ends.end(), [&](size_t e) { return e <= cut; }));
        QVERIFY2(s->trace.eventCount() == complete, what.c_str());
        const bool whole = full.find_first_not_of(" \n", cut) == std::string::npos;
        QVERIFY2(whole || counter(s->trace, "import_truncated") == 1, what.c_str());
    }
}

void TstKinetoReader::malformed_data()
{
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("marker"); // the error's byte offset is where this text starts
    QTest::addColumn<QString>("message");
    const QString k = QString::fromStdString(kernel(1, 1));
    QTest::newRow("missing comma between events") << "{\"traceEvents\": [" + k + " {\"ph\": \"X\"}]}"
                                                  << "{\"ph\": \"X\"}]"
                                                  << "malformed JSON";
    QTest::newRow("mismatched bracket") << "{\"traceEvents\": [" + k + ", {\"a\": [1, 2}]}"
                                        << "}]}"
                                        << "unexpected '}'";
    QTest::newRow("missing colon") << "{\"schemaVersion\" 1, \"traceEvents\": []}"
                                   << "1, \"traceEvents\""
                                   << "expected ':'";
    QTest::newRow("not json") << "hello"
                              << "hello"
                              << "expected '{' or '['";
    QTest::newRow("bad separator") << "{\"a\": 1 \"b\": 2}"
                                   << "\"b\""
                                   << "expected ',' or '}'";
    QTest::newRow("trailing comma in event") << "{\"traceEvents\": [" + k + ", {\"ph\": \"X\",}, " + k + "]}"
                                             << "{\"ph\": \"X\",}"
                                             << "malformed JSON";
}

void TstKinetoReader::malformed()
{
    QFETCH(QString, json);
    QFETCH(QString, marker);
    QFETCH(QString, message);
    for (unsigned workers : { 0u, 2u })
        for (size_t window : { size_t(16), size_t(1) << 20 }) {
            auto s = stage(json.toStdString(), window, workers);
            QVERIFY(!s->status.isOk());
            const std::string& m = s->status.message();
            QVERIFY2(m.find(message.toStdString()) != std::string::npos, m.c_str());
            const size_t at = json.toStdString().find(marker.toStdString());
            const std::string expected = "byte " + std::to_string(at);
            const size_t got = m.find("byte ");
            QVERIFY2(got != std::string::npos, m.c_str());
            // The offset points into the offending event, at or after its start.
            const auto offset = std::stoul(m.substr(got + 5));
            QVERIFY2(offset >= at && offset <= at + marker.size(), (m + " / expected near " + expected).c_str());
        }
}

void TstKinetoReader::damageDeepInsideFound_data()
{
    QTest::addColumn<int>("workers");
    QTest::addColumn<int>("window");
    for (int workers : { 0, 1, 2 })
        for (int w : { 4096, 65536 })
            QTest::addRow("%d workers, window %d", workers, w) << workers << w;
}

// A missing comma and a truncation in the middle of a real trace: the same error offset, the same events
// kept, whether the units are parsed here or on workers.
void TstKinetoReader::damageDeepInsideFound()
{
    QFETCH(int, workers);
    QFETCH(int, window);
    const std::string json = readAll(std::string(GAPSCOPE_TEST_DATA) + "/import/fixtures/kineto/decode.json.gz");
    const size_t comma = json.find("},\n  {", json.size() * 2 / 3);
    QVERIFY(comma != std::string::npos);
    std::string broken = json;
    broken[comma + 1] = ' ';
    auto s = stage(broken, size_t(window), unsigned(workers));
    QVERIFY(!s->status.isOk());
    const std::string& m = s->status.message();
    const size_t at = m.find("byte ");
    QVERIFY2(at != std::string::npos, m.c_str());
    const auto offset = std::stoull(m.substr(at + 5));
    QVERIFY2(offset >= comma && offset <= comma + 8, (m + " / comma at " + std::to_string(comma)).c_str());

    auto whole = stage(json.substr(0, json.size() / 2), 1u << 20, 0);
    auto cut = stage(json.substr(0, json.size() / 2), size_t(window), unsigned(workers));
    QVERIFY(cut->status.isOk());
    QCOMPARE(counter(cut->trace, "import_truncated"), uint64_t(1));
    QCOMPARE(dump(cut->trace), dump(whole->trace));
}

void TstKinetoReader::unknownKindsCounted()
{
    auto s = stage("{\"traceEvents\": [" + kernel(1, 1)
        + ", {\"ph\":\"X\",\"cat\":\"mystery\",\"ts\":1,\"dur\":1}, "
          "{\"ph\":\"X\",\"cat\":\"mystery\",\"ts\":2,\"dur\":1},"
          "{\"ph\":\"B\",\"name\":\"b\",\"ts\":1}, {\"ph\":\"i\",\"name\":\"i\",\"ts\":1}, "
          "{\"ph\":\"X\",\"cat\":\"kernel\"}, 7]}");
    QVERIFY2(s->status.isOk(), s->status.message().c_str());
    QCOMPARE(s->trace.eventCount(), uint64_t(1));
    QCOMPARE(counter(s->trace, "import_unknown_event_kinds"), uint64_t(3)); // 2x cat=mystery, ph=B
    QCOMPARE(counter(s->trace, "import_skipped_events"), uint64_t(1)); // the instant
    QCOMPARE(counter(s->trace, "import_bad_events"), uint64_t(2)); // no ts, not an object
}

void TstKinetoReader::flowFillsCorrelation()
{
    auto s = stage(
        "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":5,\"dur\":1},"
        "{\"ph\":\"f\",\"id\":77,\"pid\":0,\"tid\":7,\"ts\":5,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"},"
        "{\"ph\":\"f\",\"id\":78,\"pid\":0,\"tid\":7,\"ts\":99,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}]");
    QVERIFY(s->status.isOk());
    QCOMPARE(s->trace.event(0).correlation, 77u);
    QCOMPARE(counter(s->trace, "import_flow_correlations"), uint64_t(1));
    QCOMPARE(counter(s->trace, "import_unmatched_flows"), uint64_t(1));
}

// Flows written after every event (a vLLM trace does so) or before their event match as in place: by
// lane and time, the lane's last event no longer the only candidate.
void TstKinetoReader::flowsAnywhereInTheFile()
{
    auto flow = [](int id, int tid, int ts) {
        return "{\"ph\":\"f\",\"id\":" + std::to_string(id) + ",\"pid\":0,\"tid\":" + std::to_string(tid)
            + ",\"ts\":" + std::to_string(ts) + ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}";
    };
    auto gpu = [](const char* cat, int tid, int ts, int corr) {
        return std::string("{\"ph\":\"X\",\"cat\":\"") + cat
            + "\",\"name\":\"k\",\"pid\":0,\"tid\":" + std::to_string(tid) + ",\"ts\":" + std::to_string(ts)
            + ",\"dur\":1" + (corr ? ",\"args\":{\"correlation\":" + std::to_string(corr) + "}" : std::string()) + "}";
    };
    const std::string host = "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":9,"
                             "\"tid\":9,\"ts\":1,\"dur\":1,\"args\":{\"correlation\":3}}";
    auto s = stage("[" + flow(11, 7, 20) + "," + gpu("kernel", 7, 5, 0) + "," + gpu("kernel", 7, 10, 0) + ","
        + gpu("kernel", 8, 10, 12) + "," + gpu("gpu_memcpy", 7, 20, 0) + "," + host + "," + flow(10, 7, 10) + ","
        + flow(12, 8, 10) + "," + flow(9, 7, 5) + "," + flow(13, 7, 99) + "," + flow(14, 8, 10) + ","
        + "{\"ph\":\"f\",\"id\":3,\"pid\":9,\"tid\":9,\"ts\":1,\"cat\":\"ac2g\",\"name\":\"ac2g\"}]");
    QVERIFY2(s->status.isOk(), s->status.message().c_str());
    std::vector<uint32_t> corr;
    for (uint64_t i = 0; i < s->trace.eventCount(); ++i)
        if (s->trace.event(i).kind != StagedKind::Api)
            corr.push_back(s->trace.event(i).correlation);
    QCOMPARE(corr, (std::vector<uint32_t> { 9, 10, 12, 11 })); // the memcpy's flow came before it
    QCOMPARE(counter(s->trace, "import_flow_correlations"), uint64_t(3));
    // ts 99: no event there; 14: the kernel at (8, 10) carries 12. The flow into the runtime call: not counted.
    QCOMPARE(counter(s->trace, "import_unmatched_flows"), uint64_t(2));
}

void TstKinetoReader::metadata()
{
    auto s = stage(
        "{\"deviceProperties\": [{\"id\": 1, \"name\": \"NVIDIA H200\", \"totalGlobalMem\": 150109880320, "
        "\"computeMajor\": 9, \"computeMinor\": 0, \"numSms\": 132}], \"distributedInfo\": {\"backend\": "
        "\"nccl\", \"rank\": 3, \"world_size\": 8, \"nccl_version\": \"2.21.5\"}, \"cuda_driver_version\": 12040,"
        " \"traceEvents\": [], \"traceName\": \"x\"}");
    QVERIFY2(s->status.isOk(), s->status.message().c_str());
    const StagedProcess& p = s->trace.processes()[0];
    QCOMPARE(p.rank.value_or(99), 3u);
    QCOMPARE(p.worldSize, 8u);
    QCOMPARE(p.versions.ncclVersion, std::string("2.21.5"));
    QCOMPARE(p.versions.cudaDriverVersion, 12040);
    QCOMPARE(s->trace.gpus.size(), size_t(1));
    QCOMPARE(s->trace.gpus[0].deviceIndex, 1u);
    QCOMPARE(s->trace.gpus[0].smCount, 132u);
    QCOMPARE(s->trace.gpus[0].memoryBytes, uint64_t(150109880320ULL));
    QCOMPARE(s->trace.metadata.at("kineto.traceName"), std::string("x"));
}

void TstKinetoReader::invalidUtf8Replaced()
{
    auto s = stage("[" + kernel(1, 1, "bad\xff\xfename") + "]");
    QVERIFY2(s->status.isOk(), s->status.message().c_str());
    QCOMPARE(s->trace.strings().str(s->trace.event(0).name), std::string_view("bad??name"));
    QCOMPARE(counter(s->trace, "import_invalid_utf8"), uint64_t(2));
}

void TstKinetoReader::stringIds()
{
    auto s = stage(
        "[{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"step \\\"1\\\"\",\"pid\":\"Spans\",\"tid\":\"a\","
        "\"ts\":1,\"dur\":3}, {\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":\"stream 9\","
        "\"ts\":1,\"dur\":3}]");
    QVERIFY2(s->status.isOk(), s->status.message().c_str());
    QCOMPARE(s->trace.strings().str(s->trace.event(0).name), std::string_view("step \"1\"")); // escapes decoded
    QCOMPARE(s->trace.lanes()[s->trace.event(1).lane].info.stream, uint64_t(9)); // older Kineto "stream 9"
}

void TstKinetoReader::rootArrayWithoutClosingBracket()
{
    auto s = stage("[" + kernel(1, 1) + ",\n" + kernel(2, 2) + ",\n");
    QVERIFY(s->status.isOk());
    QCOMPARE(s->trace.eventCount(), uint64_t(2));
    QCOMPARE(counter(s->trace, "import_truncated"), uint64_t(0)); // Chrome's array format may omit ']'
}

void TstKinetoReader::notKineto_data()
{
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("message"); // empty: imports (a cut file keeps what it read)
    QTest::newRow("empty object") << "{}"
                                  << "not a Kineto / Chrome trace: the top-level object has no \"traceEvents\"";
    QTest::newRow("other JSON") << "{\"a\": [1, 2], \"b\": {\"c\": 3}}"
                                << "no \"traceEvents\" array";
    QTest::newRow("traceEvents not an array") << "{\"traceEvents\": 7}"
                                              << "no \"traceEvents\" array";
    QTest::newRow("execution trace")
        << "{\"schema\": \"1.0.1\", \"pid\": 1, \"nodes\": [{\"name\": \"aten::add\", \"id\": 5}], \"finish_ts\": 9}"
        << "a PyTorch execution trace (top-level \"nodes\"), not a Kineto / Chrome trace";
    QTest::newRow("cut before traceEvents") << "{\"schemaVersion\": 1, \"deviceProp"
                                            << "";
    QTest::newRow("empty events") << "{\"traceEvents\": []}"
                                  << "";
    QTest::newRow("root array") << "[]"
                                << "";
}

// A whole object without traceEvents is not a Kineto trace; without failWhenEmpty, an empty one is fine.
void TstKinetoReader::notKineto()
{
    QFETCH(QString, json);
    QFETCH(QString, message);
    auto s = stage(json.toStdString());
    if (message.isEmpty()) {
        QVERIFY2(s->status.isOk(), s->status.message().c_str());
        QCOMPARE(s->trace.eventCount(), uint64_t(0));
        return;
    }
    QVERIFY(!s->status.isOk());
    const std::string& m = s->status.message();
    QVERIFY2(m.rfind("test.json: ", 0) == 0, m.c_str());
    QVERIFY2(m.find(message.toStdString()) != std::string::npos, m.c_str());
}

void TstKinetoReader::nothingImported_data()
{
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("message"); // empty: the file yields events
    const std::string cpuOp
        = "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}";
    const std::string odd = "{\"ph\":\"X\",\"cat\":\"odd\",\"name\":\"o\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}";
    QTest::newRow("no events") << "{\"traceEvents\": []}"
                               << "nothing to import: no GPU kernels, memory copies, "
                                  "API calls or annotations among its 0 trace events";
    QTest::newRow("cpu ops only") << QString::fromStdString("[" + cpuOp + "," + cpuOp + "," + odd + "]")
                                  << "among its 3 trace events: 2 cpu_op, 1 odd (unknown)";
    QTest::newRow("metadata only")
        << "{\"traceEvents\": [{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": {\"name\": \"p\"}}]}"
        << "among its 1 trace events";
    QTest::newRow("cut inside the first event") << "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"ker"
                                                << "0 trace events (the file is cut short)";
    QTest::newRow("one kernel") << QString::fromStdString("[" + kernel(1, 1) + "]") << "";
}

void TstKinetoReader::nothingImported()
{
    QFETCH(QString, json);
    QFETCH(QString, message);
    KinetoReader::Options o;
    o.failWhenEmpty = true;
    auto s = stageWith(json.toStdString(), o);
    if (message.isEmpty()) {
        QVERIFY2(s->status.isOk(), s->status.message().c_str());
        QCOMPARE(s->trace.eventCount(), uint64_t(1));
        return;
    }
    QVERIFY(!s->status.isOk());
    QVERIFY2(s->status.message().find(message.toStdString()) != std::string::npos, s->status.message().c_str());
}

// MTIA: device events become kernel-like events on "MTIA stream N" lanes, their runtime calls API calls
// on the thread's "MTIA API" lane; a flow names the correlation of a device event whose args lack one.
void TstKinetoReader::mtiaDeviceEvents()
{
    auto s = stage(readAll(std::string(GAPSCOPE_TEST_DATA) + "/import/fixtures/kineto/mtia.json"));
    QVERIFY2(s->status.isOk(), s->status.message().c_str());
    const StagedTrace& t = s->trace;
    QCOMPARE(t.eventCount(StagedKind::Kernel), uint64_t(5));
    QCOMPARE(t.eventCount(StagedKind::Api), uint64_t(2));
    QCOMPARE(t.eventCount(StagedKind::Range), uint64_t(2));
    QCOMPARE(counter(t, "import_unknown_event_kinds"), uint64_t(0));
    QCOMPARE(counter(t, "import_flow_correlations"), uint64_t(1));
    std::map<std::string, uint64_t> kernelsByLane;
    for (uint64_t i = 0; i < t.eventCount(); ++i)
        if (t.event(i).kind == StagedKind::Kernel)
            ++kernelsByLane[t.lanes()[t.event(i).lane].info.name];
    const std::map<std::string, uint64_t> expected { { "MTIA stream 108", 2 }, { "MTIA stream 112", 3 } };
    QCOMPARE(kernelsByLane, expected);
    bool apiLane = false;
    for (const StagedLane& l : t.lanes())
        apiLane |= l.info.kind == LaneKind::CpuApi && l.info.name == "thread 1837 (_M_merge-0-5-10) MTIA API";
    QVERIFY(apiLane);
    // dma_request: 701805173020.250 us after the base, 15.5 us long, correlation 501 from its flow.
    uint64_t d = t.eventCount();
    for (uint64_t i = 0; i < t.eventCount(); ++i)
        if (t.strings().str(t.event(i).name) == "dma_request")
            d = i;
    QVERIFY(d < t.eventCount());
    const StagedEvent& dma = t.event(d);
    QCOMPARE(dma.start, int64_t(701805173020250));
    QCOMPARE(t.duration(d), int64_t(15500));
    QCOMPARE(dma.correlation, 501u);
    QCOMPARE(t.lanes()[dma.lane].info.device, 17u);
    QCOMPARE(t.processes()[0].device.value_or(0), 17u);
}

QTEST_GUILESS_MAIN(TstKinetoReader)
#include "tst_kinetoreader.moc"
