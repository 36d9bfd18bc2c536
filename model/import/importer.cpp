// SPDX-License-Identifier: MIT
#include "model/import/importer.h"

#include "model/format/memorybudget.h"
#include "model/format/regularfile.h"

#include "model/base/taskpool.h"
#include "model/import/bytesource.h"
#include "model/import/perfettoreader.h"
#include "model/import/prefetchbytesource.h"
#include "model/import/rocprofcsvreader.h"
#include "model/import/sglangranks.h"
#include "model/import/stagedtrace.h"
#include "model/import/traceassembler.h"
#ifdef GAPSCOPE_HAVE_SIMDJSON
#include "model/import/kinetoreader.h"
#include "model/import/rocprofjsonreader.h"
#include "model/import/rocprofv3csvreader.h"
#endif
#ifdef GAPSCOPE_HAVE_SQLITE
#include "model/import/nsysreader.h"
#include "model/import/rocprofdbreader.h"
#endif

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <sys/stat.h>
#include <thread>

namespace gapscope::model {

using importer::ByteSource;
using importer::StagedTrace;

namespace {

enum class Format { Unknown, Json, Nsys, RocprofJson, RocprofCsv, Rocprofv3Csv, RocprofDb, Perfetto };

bool isSqlite(const std::string& path)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        return false;
    char magic[16] = {};
    const size_t n = std::fread(magic, 1, sizeof magic, f);
    std::fclose(f);
    return n == sizeof magic && std::memcmp(magic, "SQLite format 3", 16) == 0;
}

// The format of a file, from its content: SQLite (nsys, nvprof, rocprof v1), a Perfetto protobuf trace,
// JSON (Kineto, rocprofv3), rocprof v1 CSV; for gzip, of the decompressed bytes.
Format sniff(const std::string& path)
{
    if (isSqlite(path)) {
#ifdef GAPSCOPE_HAVE_SQLITE
        importer::SqliteDb db;
        if (db.open(path) && importer::RocprofDbReader::isRocprofDb(db))
            return Format::RocprofDb;
#endif
        return Format::Nsys;
    }
    auto src = ByteSource::open(path);
    if (!src)
        return Format::Unknown;
    char buf[4096];
    auto n = (*src)->read(buf, sizeof buf);
    if (!n)
        return Format::Unknown;
    // Before the text formats: a packet's length byte may be '{' after its 0x0a (a newline) tag.
    if (importer::PerfettoReader::looksLikePerfetto(buf, *n))
        return Format::Perfetto;
#ifdef GAPSCOPE_HAVE_SIMDJSON // without it, the JSON importer names the library missing
    if (importer::RocprofJsonReader::looksLikeRocprofv3(buf, *n))
        return Format::RocprofJson;
#endif
    if (importer::RocprofCsvReader::looksLikeRocprofCsv(buf, *n))
        return Format::RocprofCsv;
    if (importer::Rocprofv3CsvReader::looksLikeRocprofv3Csv(buf, *n))
        return Format::Rocprofv3Csv;
    size_t i = 0;
    if (*n >= 3 && std::memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < *n && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t'))
        ++i;
    return i < *n && (buf[i] == '{' || buf[i] == '[') ? Format::Json : Format::Unknown;
}

// Progress over all files of one import, by bytes of the files read (compressed bytes for .gz).
class SharedProgress {
public:
    SharedProgress(const std::vector<std::string>& paths, const ReadOptions& options)
        : m_callback(options.progress)
        , m_read(paths.size())
    {
        for (const auto& p : paths) {
            struct stat st { };
            m_total += ::stat(p.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
        }
    }
    // Returns false when the import is cancelled.
    bool update(size_t file, uint64_t bytes)
    {
        m_read[file].store(bytes);
        if (m_cancelled.load())
            return false;
        if (!m_callback)
            return true;
        uint64_t sum = 0;
        for (const auto& r : m_read)
            sum += r.load();
        std::lock_guard<std::mutex> lock(m_mutex);
        const double fraction = m_total ? std::min(1.0, double(sum) / double(m_total)) : 0.0;
        if (!m_callback(fraction * 0.9)) // the last tenth is the assembly
            m_cancelled.store(true);
        return !m_cancelled.load();
    }

private:
    std::function<bool(double)> m_callback;
    std::vector<std::atomic<uint64_t>> m_read;
    uint64_t m_total = 0;
    std::atomic<bool> m_cancelled { false };
    std::mutex m_mutex;
};

Status importJson(const std::string& path, StagedTrace& out, SharedProgress& progress, size_t index, unsigned workers)
{
#ifdef GAPSCOPE_HAVE_SIMDJSON
    auto src = ByteSource::open(path);
    if (!src)
        return src.status();
    std::unique_ptr<ByteSource> source = std::move(*src);
    // Inflate on a second core while parsing. A plain file is read straight into the parser's window
    // (the kernel reads ahead): a prefetch thread would only add a copy of every byte.
    if (source->compressed() && std::thread::hardware_concurrency() > 1)
        source = std::make_unique<importer::PrefetchByteSource>(std::move(source));
    importer::KinetoReader::Options options;
    options.workers = workers;
    options.failWhenEmpty = true;
    options.progress = [&progress, &out, index](uint64_t bytes) {
        return !out.overBudget() && progress.update(index, bytes); // over the budget: stop reading
    };
    importer::KinetoReader reader(*source, out, options);
    return reader.read();
#else
    (void)out;
    (void)progress;
    (void)index;
    (void)workers;
    return Status::error(path
        + ": Kineto JSON import needs simdjson, which this build lacks "
          "(install libsimdjson-dev and reconfigure)");
#endif
}

Status importNsys(const std::string& path, StagedTrace& out)
{
#ifdef GAPSCOPE_HAVE_SQLITE
    importer::NsysReader reader(path, out);
    return reader.read();
#else
    (void)out;
    return Status::error(path
        + ": Nsight Systems SQLite import needs SQLite3, which this build lacks "
          "(install libsqlite3-dev and reconfigure)");
#endif
}

// rocprof's formats: rocprofv3 JSON (simdjson), rocprof v1 CSV (no library) and SQLite (SQLite3).
Status importRocprof(Format format, const std::string& path, StagedTrace& out, SharedProgress& progress, size_t index)
{
    if (format == Format::RocprofDb) {
#ifdef GAPSCOPE_HAVE_SQLITE
        importer::SqliteDb db;
        if (Status st = db.open(path); !st)
            return st;
        return importer::RocprofDbReader(path, db, out).read();
#else
        return Status::error(path
            + ": rocprof SQLite import needs SQLite3, which this build lacks "
              "(install libsqlite3-dev and reconfigure)");
#endif
    }
    auto src = ByteSource::open(path);
    if (!src)
        return src.status();
    if (format == Format::RocprofCsv)
        return importer::RocprofCsvReader(**src, out).read();
    if (format == Format::Rocprofv3Csv)
        return importer::Rocprofv3CsvReader(**src, out).read();
#ifdef GAPSCOPE_HAVE_SIMDJSON
    importer::RocprofJsonReader::Options options;
    options.progress = [&progress, &out, index](uint64_t bytes) {
        return !out.overBudget() && progress.update(index, bytes); // over the budget: stop reading
    };
    return importer::RocprofJsonReader(**src, out, options).read();
#else
    (void)progress;
    (void)index;
    return Status::error(path
        + ": rocprofv3 JSON import needs simdjson, which this build lacks "
          "(install libsimdjson-dev and reconfigure)");
#endif
}

// A Perfetto protobuf trace (.pftrace, .perfetto-trace; plain or gzip).
Status importPerfetto(const std::string& path, StagedTrace& out, SharedProgress& progress, size_t index)
{
    auto src = ByteSource::open(path);
    if (!src)
        return src.status();
    importer::PerfettoReader::Options options;
    options.progress = [&progress, &out, index](uint64_t bytes) {
        return !out.overBudget() && progress.update(index, bytes); // over the budget: stop reading
    };
    return importer::PerfettoReader(**src, out, options).read();
}

// The StagedTrace source name of a file: "kineto", "nsys", "nvprof", "rocprofv3" or "rocprof" (the
// trace's source and clock domain, import:<source>).
std::string sourceName(const std::string& path)
{
    switch (sniff(path)) {
    case Format::Perfetto:
        return "perfetto";
    case Format::RocprofJson:
    case Format::Rocprofv3Csv:
        return "rocprofv3";
    case Format::RocprofCsv:
    case Format::RocprofDb:
        return "rocprof";
    case Format::Nsys:
#ifdef GAPSCOPE_HAVE_SQLITE
        return importer::NsysReader::sourceOf(path);
#else
        return "nsys";
#endif
    default:
        return "kineto";
    }
}

// Files that do not say their rank (no distributedInfo), named the way SGLang names its per-rank
// files ("...-TP-3.trace.json.gz", also DP/PP/EP): the rank from the name (SglangRanks). Several
// other such Kineto files on distinct devices: the rank is the device.
void ranksFromFileNames(const std::vector<std::string>& paths, std::vector<importer::StagedTrace>& staged)
{
    std::vector<importer::SglangRanks::Label> labels;
    std::vector<size_t> which;
    for (size_t i = 0; i < paths.size(); ++i) {
        importer::SglangRanks::Label l;
        const auto& procs = staged[i].processes();
        if (procs.size() == 1 && !procs[0].rank && importer::SglangRanks::parseFileName(paths[i], l)) {
            labels.push_back(l);
            which.push_back(i);
        }
    }
    const std::vector<uint32_t> ranks = importer::SglangRanks::ranksOf(labels);
    for (size_t k = 0; k < which.size(); ++k) {
        staged[which[k]].process(0).rank = ranks[k];
        staged[which[k]].count(format::Stat::ImportRankFromFileName);
    }
    // Several Kineto files of one host that say nothing else: each rank drives its own GPU.
    std::vector<size_t> rest;
    std::vector<uint32_t> devices;
    for (size_t i = 0; i < staged.size(); ++i) {
        const auto& procs = staged[i].processes();
        if (staged[i].source() == "kineto" && procs.size() == 1 && !procs[0].rank) {
            rest.push_back(i);
            devices.push_back(procs[0].device ? *procs[0].device : UINT32_MAX);
        }
    }
    std::vector<uint32_t> sorted = devices;
    std::sort(sorted.begin(), sorted.end());
    const bool distinct = std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
    if (rest.size() < 2 || !distinct || sorted.back() == UINT32_MAX)
        return;
    for (size_t k = 0; k < rest.size(); ++k) {
        staged[rest[k]].process(0).rank = devices[k];
        staged[rest[k]].count(format::Stat::ImportRankFromDevice);
    }
}

Status importOne(const std::string& path, StagedTrace& out, SharedProgress& progress, size_t index, unsigned workers)
{
    if (Status s = format::checkRegularFile(path); !s)
        return s;
    switch (const Format format = sniff(path)) {
    case Format::Json:
        return importJson(path, out, progress, index, workers);
    case Format::Nsys:
        return importNsys(path, out);
    case Format::Perfetto:
        return importPerfetto(path, out, progress, index);
    case Format::RocprofJson:
    case Format::RocprofCsv:
    case Format::Rocprofv3Csv:
    case Format::RocprofDb:
        return importRocprof(format, path, out, progress, index);
    default:
        return Status::error(path + ": not a trace gapscope reads (" + importableFormats() + ")");
    }
}

// The paths with the files of one rocprofv3 CSV set (PID_kernel_trace.csv, PID_hip_api_trace.csv, ...)
// named once: reading any of them reads the set.
std::vector<std::string> oneFilePerSet(const std::vector<std::string>& given)
{
    std::vector<std::string> paths;
    std::vector<std::string> seen;
    for (const auto& p : given) {
        const std::vector<std::string> set = importer::Rocprofv3CsvReader::setOf(p);
        if (set.size() > 1 && std::find(seen.begin(), seen.end(), set.front()) != seen.end())
            continue;
        if (set.size() > 1)
            seen.push_back(set.front());
        paths.push_back(p);
    }
    return paths;
}

} // namespace

bool isImportable(const std::string& path)
{
    return sniff(path) != Format::Unknown;
}

const char* importableFormats()
{
    return "Kineto / Chrome-trace JSON (.json, .json.gz), Nsight Systems or nvprof SQLite, a Perfetto trace "
           "(.pftrace), rocprofv3 JSON or CSV, a rocprof kernel trace (CSV, SQLite)";
}

Expected<Trace> importTraces(const std::vector<std::string>& given, const ReadOptions& options)
{
    if (given.empty())
        return Status::error("no trace file given");
    const std::vector<std::string> paths = oneFilePerSet(given);
    std::vector<StagedTrace> staged;
    staged.reserve(paths.size());
    for (const auto& p : paths)
        staged.emplace_back(sourceName(p), p);
    std::vector<std::optional<Status>> results(paths.size());
    SharedProgress progress(paths, options);
    TaskPool& pool = TaskPool::shared();
    const unsigned budget = options.threads ? std::min(options.threads, pool.size()) : pool.size();
    const size_t threads = std::min<size_t>(paths.size(), budget);
    // Threads left over parse the inside of each file (KinetoPipeline); a single core parses inline.
    const unsigned workers = budget > 1 ? std::max<unsigned>(1, budget / unsigned(threads)) : 0;
    pool.parallelFor(
        paths.size(),
        [&](size_t i) {
            results[i] = importOne(paths[i], staged[i], progress, i, workers);
            if (staged[i].overBudget())
                results[i] = Status::error(
                    paths[i] + ": " + format::MemoryBudget::exceeded(staged[i].budgetBytesNeeded(), true));
        },
        unsigned(threads));
    for (const auto& r : results)
        if (r && !*r)
            return *r;
    if (options.progress && !options.progress(0.9))
        return Status::error("import cancelled");
    ranksFromFileNames(paths, staged);
    Trace trace = importer::TraceAssembler(std::move(staged)).assemble();
    if (options.progress)
        options.progress(1.0);
    return trace;
}

} // namespace gapscope::model
