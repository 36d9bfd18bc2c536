// SPDX-License-Identifier: MIT
// Kineto files end to end through importTraces: JSON that is not a Kineto trace or holds nothing to
// import is refused naming the file; an MTIA-like device trace keeps its device lanes; kernels a
// cudaGraphLaunch replayed keep its correlation, so launchOf finds that launch; warnings and
// counters survive a round trip through a .gapscope file; the ISA-L and zlib inflaters read every gzip
// shape (one member, concatenated members, cut short, corrupt) to the same bytes.
#include "model/import/bytesource.h"
#include "model/import/importer.h"
#include "model/io/tracefile.h"

#include <QTemporaryDir>
#include <QTest>

#include <cstdlib>
#include <fstream>
#include <map>

using namespace gapscope;
using namespace gapscope::model;

namespace {

std::string fixture(const std::string& name)
{
    return std::string(GAPSCOPE_TEST_DATA) + "/import/fixtures/kineto/" + name;
}

std::string fileBytes(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string writeFile(const QTemporaryDir& dir, const std::string& name, const std::string& bytes)
{
    std::string path = dir.path().toStdString() + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}

std::map<std::string, uint64_t> counters(const Trace& t)
{
    std::map<std::string, uint64_t> m;
    for (const auto& c : t.header().counters)
        m[c.name + " " + std::to_string(c.rank) + " " + c.detail] += c.value;
    return m;
}

struct Inflated {
    std::string bytes;
    std::string error;
    bool truncated = false;
};

// Reads a file through the importers' ByteSource with one inflater ("zlib" or the build's default).
Inflated inflate(const std::string& path, const char* inflater)
{
    if (inflater)
        setenv("GAPSCOPE_IMPORT_INFLATE", inflater, 1);
    else
        unsetenv("GAPSCOPE_IMPORT_INFLATE");
    Inflated out;
    auto src = importer::ByteSource::open(path);
    unsetenv("GAPSCOPE_IMPORT_INFLATE");
    if (!src) {
        out.error = src.status().message();
        return out;
    }
    char buf[70000]; // not a power of two: reads end mid-block
    for (;;) {
        auto n = (*src)->read(buf, sizeof buf);
        if (!n) {
            out.error = n.status().message();
            return out;
        }
        if (*n == 0)
            break;
        out.bytes.append(buf, *n);
    }
    out.truncated = (*src)->truncated();
    return out;
}

} // namespace

class TstKinetoImport : public QObject {
    Q_OBJECT
private slots:
    void refused_data();
    void refused();
    void mtiaDeviceLanes();
    void graphKernelsKeepTheirLaunch_data();
    void graphKernelsKeepTheirLaunch();
    void warningsSurviveConvert_data();
    void warningsSurviveConvert();
    void inflatersAgree_data();
    void inflatersAgree();
};

void TstKinetoImport::refused_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("message");
    QTest::newRow("execution trace") << "execution_trace.json"
                                     << "a PyTorch execution trace (top-level \"nodes\"), not a Kineto / Chrome trace";
    QTest::newRow("{}") << "empty_object.json"
                        << "not a Kineto / Chrome trace: the top-level object has no";
    QTest::newRow("cpu only") << "cpu_only.json"
                              << "nothing to import: no GPU kernels, memory copies, API calls or annotations among "
                                 "its 5 trace events: 2 cpu_op, 1 python_function, 1 fancy_new_kind (unknown)";
}

// Nothing importable is an error naming the file, also next to a good file.
void TstKinetoImport::refused()
{
    QFETCH(QString, file);
    QFETCH(QString, message);
    const std::string path = fixture(file.toStdString());
    QVERIFY(isImportable(path)); // JSON: the content check passes, the reader says what it is
    for (const auto& paths : { std::vector<std::string> { path }, { fixture("rank0.json.gz"), path } }) {
        auto t = importTraces(paths);
        QVERIFY(!t);
        QVERIFY2(t.error().rfind(path + ": ", 0) == 0, t.error().c_str());
        QVERIFY2(t.error().find(message.toStdString()) != std::string::npos, t.error().c_str());
    }
}

void TstKinetoImport::mtiaDeviceLanes()
{
    auto t = importTraces({ fixture("mtia.json") });
    QVERIFY2(t.hasValue(), t.error().c_str());
    QCOMPARE(t->eventCount(EventKind::Kernel), uint64_t(5));
    std::map<std::string, TimeNs> busy; // kernel time per device lane
    for (LaneId id : t->lanesOf(0, LaneKind::GpuStream)) {
        const Lane& l = t->lane(id);
        for (size_t i = 0; i < l.events.size(); ++i)
            busy[l.info.name] += l.events.duration(i);
        QCOMPARE(l.info.device, 17u);
    }
    const std::map<std::string, TimeNs> expected { { "MTIA stream 108", 15500 + 60000 },
        { "MTIA stream 112", 100750 + 152 + 90500 } };
    QCOMPARE(busy, expected);
    QCOMPARE(t->header().gpus.size(), size_t(1));
    QCOMPARE(t->header().gpus[size_t(0)].name, std::string("ARTEMIS"));
}

void TstKinetoImport::graphKernelsKeepTheirLaunch_data()
{
    QTest::addColumn<QString>("file"); // a fixture, or the inline document below when empty
    QTest::addColumn<int>("launches");
    QTest::addColumn<int>("kernelsPerLaunch");
    QTest::addColumn<uint64_t>("firstNode"); // graph node id of the first graph kernel (0: none recorded)
    // torch.profiler on H100 (tests/gpu/fixtures.sh): a 3-kernel graph replayed 6 times, correlation in args.
    QTest::newRow("torch.profiler graph.json.gz") << "graph.json.gz" << 6 << 3 << uint64_t(0);
    // Newer Kineto: graph and node ids on the kernels; the second replay's kernels name their launch only
    // through their ac2g flow ends.
    QTest::newRow("graph ids, flows") << "" << 2 << 2 << uint64_t(14);
}

// Every kernel of a graph replay resolves (Trace::launchOf) to its cudaGraphLaunch, and each launch to
// its kernels (launchedBy).
void TstKinetoImport::graphKernelsKeepTheirLaunch()
{
    QFETCH(QString, file);
    QFETCH(int, launches);
    QFETCH(int, kernelsPerLaunch);
    QFETCH(uint64_t, firstNode);
    QTemporaryDir dir;
    std::string path = fixture(file.toStdString());
    if (file.isEmpty()) {
        std::string events;
        for (int l = 0; l < 2; ++l) {
            const std::string corr = std::to_string(40 + l), ts = std::to_string(100 * l);
            events += "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaGraphLaunch\",\"pid\":9,\"tid\":9,"
                      "\"ts\":"
                + ts + ",\"dur\":5,\"args\":{\"correlation\":" + corr + "}},";
            for (int k = 0; k < 2; ++k) {
                const std::string kts = std::to_string(100 * l + 20 + 10 * k);
                events += "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k" + std::to_string(k)
                    + "\",\"pid\":0,\"tid\":7,\"ts\":" + kts + ",\"dur\":5,\"args\":{\"device\":0,\"stream\":7,"
                    + (l == 0 ? "\"correlation\":" + corr + "," : std::string())
                    + "\"graph id\":3,\"graph node id\":" + std::to_string(14 + k) + "}},{\"ph\":\"f\",\"id\":" + corr
                    + ",\"pid\":0,\"tid\":7,\"ts\":" + kts + ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"},";
            }
        }
        events.pop_back();
        path = writeFile(dir, "graph_ids.json", "{\"traceEvents\":[" + events + "]}");
    }
    auto t = importTraces({ path });
    QVERIFY2(t.hasValue(), t.error().c_str());
    int graphKernels = 0;
    std::map<uint32_t, int> perLaunch; // by the launch's correlation
    for (LaneId lane : t->lanesOf(0, LaneKind::GpuStream))
        for (size_t k = 0; k < t->lane(lane).events.size(); ++k) {
            const EventRef api = t->launchOf(lane, k);
            if (t->kindOf(lane, k) != EventKind::Kernel || !api.valid()
                || t->str(t->lane(api.lane).events.name(api.index)) != "cudaGraphLaunch")
                continue;
            if (graphKernels++ == 0)
                QCOMPARE(t->kernelConfig(lane, k)->graphNodeId, firstNode);
            ++perLaunch[t->lane(api.lane).events.correlation(api.index)];
            QCOMPARE(int(t->launchedBy(api.lane, api.index).size()), kernelsPerLaunch);
        }
    QCOMPARE(graphKernels, launches * kernelsPerLaunch);
    QCOMPARE(int(perLaunch.size()), launches);
}

void TstKinetoImport::warningsSurviveConvert_data()
{
    QTest::addColumn<QStringList>("files");
    QTest::addColumn<QString>("warning"); // a warning the import gives
    QTest::newRow("rank renumbered") << QStringList { "rank0.json.gz", "rank0.json.gz" }
                                     << "rank 0 is already taken by another source; renumbered";
    QTest::newRow("cut short") << QStringList { "truncated.json.gz" } << "the file ends inside";
}

// convert: the .gapscope file keeps the import's warnings and counters; reading and writing it again
// keeps them once, not twice.
void TstKinetoImport::warningsSurviveConvert()
{
    QFETCH(QStringList, files);
    QFETCH(QString, warning);
    std::vector<std::string> paths;
    for (const QString& f : files)
        paths.push_back(fixture(f.toStdString()));
    auto imported = importTraces(paths);
    QVERIFY2(imported.hasValue(), imported.error().c_str());
    bool found = false;
    for (const auto& w : imported->warnings())
        found |= w.find(warning.toStdString()) != std::string::npos;
    QVERIFY(found);
    QTemporaryDir dir;
    const std::string once = dir.path().toStdString() + "/once.gapscope";
    const std::string twice = dir.path().toStdString() + "/twice.gapscope";
    QVERIFY(writeTraceFile(*imported, once).isOk());
    auto read = readTraceFile(once);
    QVERIFY2(read.hasValue(), read.error().c_str());
    QCOMPARE(read->warnings(), imported->warnings());
    QCOMPARE(counters(*read), counters(*imported));
    QVERIFY(!counters(*read).empty());
    QVERIFY(writeTraceFile(*read, twice).isOk());
    auto again = readTraceFile(twice);
    QVERIFY2(again.hasValue(), again.error().c_str());
    QCOMPARE(again->warnings(), imported->warnings());
}

void TstKinetoImport::inflatersAgree_data()
{
    QTest::addColumn<QString>("shape");
    QTest::addColumn<bool>("truncated");
    QTest::addColumn<bool>("corrupt");
    QTest::newRow("one member") << "one" << false << false;
    QTest::newRow("two members") << "two" << false << false;
    QTest::newRow("trailing zeros") << "padded" << false << false;
    QTest::newRow("cut in the middle") << "cut" << true << false;
    QTest::newRow("cut in the trailer") << "trailer" << true << false;
    QTest::newRow("flipped bytes") << "corrupt" << false << true;
}

void TstKinetoImport::inflatersAgree()
{
    QFETCH(QString, shape);
    QFETCH(bool, truncated);
    QFETCH(bool, corrupt);
    const std::string gz = fileBytes(fixture("decode.json.gz"));
    const Inflated whole = inflate(fixture("decode.json.gz"), "zlib");
    QVERIFY2(whole.error.empty() && whole.bytes.size() > 100000, whole.error.c_str());
    std::string bytes = gz;
    if (shape == "two")
        bytes = gz + gz;
    else if (shape == "padded")
        bytes = gz + std::string(16, '\0');
    else if (shape == "cut")
        bytes = gz.substr(0, gz.size() / 2);
    else if (shape == "trailer")
        bytes = gz.substr(0, gz.size() - 3);
    else if (shape == "corrupt")
        for (size_t i = gz.size() / 2; i < gz.size() / 2 + 64; ++i)
            bytes[i] = char(~bytes[i]);
    QTemporaryDir dir;
    const std::string path = writeFile(dir, "x.json.gz", bytes);
    const Inflated zlib = inflate(path, "zlib");
    const Inflated fast = inflate(path, nullptr);
    if (corrupt) {
        for (const Inflated* r : { &zlib, &fast })
            QVERIFY2(r->error.find(path + ": corrupt gzip data near compressed byte") == 0, r->error.c_str());
        return;
    }
    QVERIFY2(zlib.error.empty(), zlib.error.c_str());
    QVERIFY2(fast.error.empty(), fast.error.c_str());
    QCOMPARE(fast.truncated, truncated);
    QCOMPARE(zlib.truncated, truncated);
    QCOMPARE(fast.bytes.size(), zlib.bytes.size());
    QVERIFY(fast.bytes == zlib.bytes);
    if (shape == "two")
        QVERIFY(fast.bytes == whole.bytes + whole.bytes);
    else if (!truncated)
        QVERIFY(fast.bytes == whole.bytes);
    else
        QVERIFY(fast.bytes.size() <= whole.bytes.size() && whole.bytes.compare(0, fast.bytes.size(), fast.bytes) == 0);
}

QTEST_GUILESS_MAIN(TstKinetoImport)
#include "tst_kinetoimport.moc"
