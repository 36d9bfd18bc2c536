// SPDX-License-Identifier: MIT
#include "model/import/rocprofjsonreader.h"

#include "model/import/jsoncursor.h"
#include "model/import/jsonscanner.h"
#include "model/import/rocprofjsonrecords.h"
#include "model/import/rocprofrows.h"

#include <cstring>

namespace gapscope::model::importer {

namespace {
constexpr const char* kTool = "rocprofiler-sdk-tool";
constexpr size_t kWholeValueLimit = 64u << 20; // metadata, strings
constexpr uint64_t kWarnedRecords = 10;
constexpr uint64_t kProgressEvery = 4096;
} // namespace

RocprofJsonReader::RocprofJsonReader(ByteSource& source, StagedTrace& out, Options options)
    : m_source(source)
    , m_out(out)
    , m_options(std::move(options))
    , m_window(std::make_unique<JsonWindow>(source, m_options.windowBytes))
    , m_cursor(std::make_unique<JsonCursor>(source, *m_window))
    , m_rows(std::make_unique<RocprofRowConverter>(out, "rocprofv3", "rocprofv3 (rocprofiler-sdk, JSON)"))
    , m_records(std::make_unique<RocprofJsonRecords>(out, *m_rows))
{
}

RocprofJsonReader::~RocprofJsonReader() = default;

bool RocprofJsonReader::looksLikeRocprofv3(const char* head, size_t n)
{
    size_t i = n >= 3 && std::memcmp(head, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    i = JsonScanner::skipWhitespace(head, i, n);
    if (i >= n || head[i] != '{')
        return false;
    i = JsonScanner::skipWhitespace(head, i + 1, n);
    const std::string key = std::string("\"") + kTool + "\"";
    return n - i >= key.size() && std::memcmp(head + i, key.data(), key.size()) == 0;
}

Status RocprofJsonReader::read()
{
    if (Status st = document(); !st)
        return st;
    if (m_cursor->truncated() || m_source.truncated()) {
        const std::string w
            = (m_cursor->truncated() ? m_cursor->truncation() : m_source.path() + ": the gzip stream ends early")
            + "; kept the " + std::to_string(m_rows->dispatches()) + " kernel dispatches and "
            + std::to_string(m_rows->apiCalls()) + " HIP API calls read before it";
        m_out.warnings.push_back(w);
        m_out.count(format::Stat::ImportTruncated, w);
    } else if (!m_sawTool) {
        return Status::error(
            m_source.path() + ": JSON without a \"" + kTool + "\" array: not a rocprofv3 (rocprofiler-sdk) JSON file");
    }
    return finish();
}

Status RocprofJsonReader::document()
{
    auto c = m_cursor->peek();
    if (!c)
        return c.status();
    if (*c == 0)
        return Status::error(m_source.path() + ": empty file");
    if (Status st = m_cursor->enter('{', "the document"); !st)
        return st;
    Status st = m_cursor->forEachMember([this](const std::string& key) {
        if (key != kTool)
            return m_cursor->skip();
        auto opened = open('[', kTool);
        if (!opened || !*opened)
            return opened.status();
        m_sawTool = true;
        return m_cursor->forEachElement([this] { return process(); });
    });
    if (!st || m_cursor->truncated())
        return st;
    auto rest = m_cursor->peek();
    if (!rest)
        return rest.status();
    if (*rest != 0) {
        const std::string w
            = m_cursor->where(m_cursor->offset()) + ": data after the end of the JSON document, ignored";
        m_out.warnings.push_back(w);
        m_out.count(format::Stat::ImportTrailingData, w);
    }
    return Status::ok();
}

// Enters the object or array that comes next; false (and the value skipped, with a warning) when it is
// another type.
Expected<bool> RocprofJsonReader::open(char bracket, const std::string& what)
{
    auto c = m_cursor->peek();
    if (!c)
        return c.status();
    if (*c == bracket || *c == 0) {
        if (Status st = m_cursor->enter(bracket, what); !st)
            return st;
        return !m_cursor->truncated();
    }
    const std::string w = m_cursor->where(m_cursor->offset()) + ": " + what + " is not "
        + (bracket == '{' ? "an object" : "an array") + "; skipped";
    m_out.warnings.push_back(w);
    m_out.count(format::Stat::ImportBadMetadata, w);
    if (Status st = m_cursor->skip(); !st)
        return st;
    return false;
}

// One element of rocprofiler-sdk-tool: one process.
Status RocprofJsonReader::process()
{
    auto opened = open('{', std::string("an element of ") + kTool);
    if (!opened || !*opened)
        return opened.status();
    m_records->beginProcess();
    if (Status st = m_cursor->forEachMember([this](const std::string& key) { return member(key); }); !st)
        return st;
    m_records->endProcess();
    return Status::ok();
}

Status RocprofJsonReader::member(const std::string& key)
{
    using Kind = RocprofJsonRecords::Kind;
    if (key == "metadata" || key == "strings")
        return record(key == "metadata" ? Kind::Metadata : Kind::Strings, key, kWholeValueLimit);
    if (key == "agents")
        return records(Kind::Agent, key);
    if (key == "kernel_symbols")
        return records(Kind::KernelSymbol, key);
    if (key != "buffer_records")
        return m_cursor->skip(); // code_objects, host_functions, counters, callback_records, summary, ...
    auto opened = open('{', key);
    if (!opened || !*opened)
        return opened.status();
    return m_cursor->forEachMember([this](const std::string& array) {
        const std::string what = "buffer_records." + array;
        if (array == "kernel_dispatch")
            return records(Kind::Dispatch, what);
        if (array == "hip_api")
            return records(Kind::HipApi, what);
        if (array == "memory_copy")
            return records(Kind::MemoryCopy, what);
        if (array == "marker_api")
            return records(Kind::Marker, what);
        auto opened = open('[', what); // another kind of record: counted, not read
        if (!opened || !*opened)
            return opened.status();
        return m_cursor->forEachElement([this, &what] {
            ++m_notRead[what];
            return m_cursor->skip();
        });
    });
}

// Each element of an array of records.
Status RocprofJsonReader::records(RocprofJsonRecords::Kind kind, const std::string& what)
{
    auto opened = open('[', what);
    if (!opened || !*opened)
        return opened.status();
    return m_cursor->forEachElement([&] { return record(kind, what, m_options.maxRecordBytes); });
}

// One record, brought whole into the window and parsed there.
Status RocprofJsonReader::record(RocprofJsonRecords::Kind kind, const std::string& what, size_t limit)
{
    const uint64_t offset = m_cursor->offset();
    auto n = m_cursor->value(limit);
    if (!n || *n == 0) // an error, or the file ends inside it
        return n.status();
    std::string error;
    if (!m_records->parse(kind, m_cursor->data(), *n, m_cursor->capacity(), error))
        badRecord(offset, what, error);
    m_cursor->consume(*n);
    if (++m_read % kProgressEvery == 0 && m_options.progress && !m_options.progress(m_source.fileBytesRead()))
        return Status::error(m_source.path() + ": import cancelled");
    return Status::ok();
}

void RocprofJsonReader::badRecord(uint64_t offset, const std::string& what, const std::string& error)
{
    if (++m_badRecords <= kWarnedRecords)
        m_out.warnings.push_back(m_cursor->where(offset) + ": a record of " + what + ": " + error + "; skipped");
    m_out.count(format::Stat::ImportBadEvents, "rocprofv3 records with a field missing or of the wrong type (skipped)");
}

Status RocprofJsonReader::finish()
{
    if (m_badRecords > kWarnedRecords)
        m_out.warnings.push_back(m_source.path() + ": " + std::to_string(m_badRecords - kWarnedRecords)
            + " more records with a field missing or of the wrong type are skipped (import_bad_events)");
    for (const auto& [what, n] : m_notRead)
        if (n)
            m_out.count(format::Stat::ImportSkippedEvents, "rocprofv3 " + what + " records (not read)", n);
    m_rows->finish();
    m_out.metadata["import.records"] = std::to_string(m_read);
    if (m_rows->dispatches() || m_rows->copies())
        return Status::ok();
    std::string skipped;
    for (const auto& [what, n] : m_notRead)
        if (n)
            skipped += ", " + std::to_string(n) + " " + what;
    return Status::error(m_source.path()
        + ": a rocprofv3 JSON file with no GPU work (no kernel dispatch or memory copy), nothing to import ("
        + std::to_string(m_rows->apiCalls()) + " HIP API calls, " + std::to_string(m_rows->markers())
        + " ROCTx markers, " + std::to_string(m_badRecords) + " unreadable records" + skipped + ")"
        + (m_cursor->truncated() ? " (the file is cut short)" : "")
        + "; record with `rocprofv3 --kernel-trace --memory-copy-trace --hip-trace --marker-trace`");
}

} // namespace gapscope::model::importer
