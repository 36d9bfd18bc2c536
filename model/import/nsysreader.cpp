// SPDX-License-Identifier: MIT
#include "model/import/nsysreader.h"

#include <cstdio>
#include <cstring>
#include <sqlite3.h>

namespace gapscope::model::importer {

namespace {
const char* kKernel = "CUPTI_ACTIVITY_KIND_KERNEL";
const char* kMemcpy = "CUPTI_ACTIVITY_KIND_MEMCPY";
const char* kMemset = "CUPTI_ACTIVITY_KIND_MEMSET";
const char* kRuntime = "CUPTI_ACTIVITY_KIND_RUNTIME";
const char* kSync = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
const char* kNvtx = "NVTX_EVENTS";

int64_t num(sqlite3_stmt* st, int col, int64_t fallback = 0)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? fallback : sqlite3_column_int64(st, col);
}

double real(sqlite3_stmt* st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? 0.0 : sqlite3_column_double(st, col);
}

std::string_view text(sqlite3_stmt* st, int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return {};
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st, col));
    return p ? std::string_view(p, static_cast<size_t>(sqlite3_column_bytes(st, col))) : std::string_view();
}

std::string quoted(const std::string& name)
{
    std::string q = "\"";
    for (char c : name)
        q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}
} // namespace

NsysReader::NsysReader(std::string path, StagedTrace& out)
    : m_path(std::move(path))
    , m_rows(out)
{
}

NsysReader::~NsysReader()
{
    if (m_db)
        sqlite3_close(m_db);
}

bool NsysReader::looksLikeNsys(const std::string& path)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        return false;
    char magic[16] = {};
    const size_t n = std::fread(magic, 1, sizeof magic, f);
    std::fclose(f);
    return n == sizeof magic && std::memcmp(magic, "SQLite format 3", 16) == 0;
}

Status NsysReader::open()
{
    const std::string uri = "file:" + m_path + "?immutable=1";
    int rc = sqlite3_open_v2(uri.c_str(), &m_db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
    if (rc != SQLITE_OK)
        return Status::error(m_path + ": cannot open as SQLite: " + sqlite3_errstr(rc));
    sqlite3_stmt* st = nullptr;
    rc = sqlite3_prepare_v2(m_db, "SELECT name FROM sqlite_master WHERE type='table'", -1, &st, nullptr);
    if (rc != SQLITE_OK)
        return Status::error(m_path + ": not a readable SQLite database: " + sqlite3_errmsg(m_db));
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        m_tables.insert(std::string(text(st, 0)));
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return Status::error(m_path + ": corrupt SQLite database: " + sqlite3_errmsg(m_db));
    for (const char* t : { kKernel, kMemcpy, kMemset, kRuntime, kNvtx })
        if (m_tables.count(t))
            return Status::ok();
    return Status::error(m_path + ": an SQLite database without Nsight Systems tables (no " + kKernel + ", "
        + kRuntime + " or " + kNvtx + "); export with `nsys export --type sqlite`");
}

std::set<std::string> NsysReader::columns(const std::string& table)
{
    std::set<std::string> cols;
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(m_db, ("PRAGMA table_info(" + quoted(table) + ")").c_str(), -1, &st, nullptr) != SQLITE_OK)
        return cols;
    while (sqlite3_step(st) == SQLITE_ROW)
        cols.insert(std::string(text(st, 1)));
    sqlite3_finalize(st);
    return cols;
}

Status NsysReader::select(const std::string& table, const std::vector<std::string>& wanted,
    const std::function<void(sqlite3_stmt*)>& row)
{
    if (!m_tables.count(table))
        return Status::ok();
    const auto have = columns(table);
    std::string sql = "SELECT ";
    for (size_t i = 0; i < wanted.size(); ++i)
        sql += (i ? ", " : "") + (have.count(wanted[i]) ? quoted(wanted[i]) : std::string("NULL"));
    sql += " FROM " + quoted(table);
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(m_db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
        return Status::error(m_path + ": table " + table + ": " + sqlite3_errmsg(m_db));
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        row(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return Status::error(m_path + ": table " + table + ": " + sqlite3_errmsg(m_db));
    return Status::ok();
}

Status NsysReader::read()
{
    if (Status st = open(); !st)
        return st;
    using Step = Status (NsysReader::*)();
    for (Step step : { &NsysReader::readStrings, &NsysReader::readProcesses, &NsysReader::readGpus,
             &NsysReader::readKernels, &NsysReader::readRuntime, &NsysReader::readSync, &NsysReader::readNvtx })
        if (Status st = (this->*step)(); !st)
            return st;
    if (Status st = readMemops(false); !st)
        return st;
    if (Status st = readMemops(true); !st)
        return st;
    m_rows.finish();
    return Status::ok();
}

Status NsysReader::readStrings()
{
    return select("StringIds", { "id", "value" }, [this](sqlite3_stmt* s) { m_rows.string(num(s, 0), text(s, 1)); });
}

Status NsysReader::readProcesses()
{
    Status st = select("PROCESSES", { "globalPid", "pid", "name" }, [this](sqlite3_stmt* s) {
        m_rows.process(num(s, 0), text(s, 2));
    });
    if (!st)
        return st;
    st = select("ThreadNames", { "globalTid", "nameId" }, [this](sqlite3_stmt* s) {
        m_rows.threadName(num(s, 0), num(s, 1));
    });
    if (!st)
        return st;
    return select("TARGET_INFO_SESSION_START_TIME", { "utcEpochNs" },
        [this](sqlite3_stmt* s) { m_rows.sessionStart(num(s, 0)); });
}

Status NsysReader::readGpus()
{
    return select("TARGET_INFO_GPU",
        { "id", "name", "uuid", "busLocation", "smCount", "totalMemory", "computeMajor", "computeMinor",
            "clockRate", "memoryBandwidth", "cuDevice" },
        [this](sqlite3_stmt* s) {
            NsysGpuRow g;
            g.id = num(s, 10, num(s, 0));
            g.name = text(s, 1);
            g.uuid = text(s, 2);
            g.busLocation = text(s, 3);
            g.smCount = num(s, 4);
            g.totalMemory = num(s, 5);
            g.ccMajor = num(s, 6);
            g.ccMinor = num(s, 7);
            g.clockRateKhz = num(s, 8);
            g.memoryBandwidth = real(s, 9);
            m_rows.gpu(g);
        });
}

Status NsysReader::readKernels()
{
    return select(kKernel,
        { "start", "end", "deviceId", "streamId", "correlationId", "globalPid", "demangledName", "shortName", "gridX",
            "gridY", "gridZ", "blockX", "blockY", "blockZ", "registersPerThread", "staticSharedMemory",
            "dynamicSharedMemory", "graphId", "graphNodeId" },
        [this](sqlite3_stmt* s) {
            NsysKernelRow r;
            r.start = num(s, 0);
            r.end = num(s, 1);
            r.deviceId = num(s, 2);
            r.streamId = num(s, 3);
            r.correlationId = num(s, 4);
            r.globalPid = num(s, 5);
            r.nameId = num(s, 6, num(s, 7));
            for (int i = 0; i < 3; ++i) {
                r.grid[i] = num(s, 8 + i);
                r.block[i] = num(s, 11 + i);
            }
            r.registersPerThread = num(s, 14);
            r.staticSharedMemory = num(s, 15);
            r.dynamicSharedMemory = num(s, 16);
            r.graphId = num(s, 17);
            r.graphNodeId = num(s, 18);
            m_rows.kernel(r);
        });
}

Status NsysReader::readMemops(bool memset)
{
    return select(memset ? kMemset : kMemcpy,
        { "start", "end", "deviceId", "streamId", "correlationId", "globalPid", "bytes", memset ? "value" : "copyKind" },
        [this, memset](sqlite3_stmt* s) {
            NsysMemopRow r;
            r.memset = memset;
            r.start = num(s, 0);
            r.end = num(s, 1);
            r.deviceId = num(s, 2);
            r.streamId = num(s, 3);
            r.correlationId = num(s, 4);
            r.globalPid = num(s, 5);
            r.bytes = num(s, 6);
            r.copyKind = memset ? 0 : num(s, 7);
            m_rows.memop(r);
        });
}

Status NsysReader::readRuntime()
{
    return select(kRuntime, { "start", "end", "globalTid", "correlationId", "nameId" }, [this](sqlite3_stmt* s) {
        NsysApiRow r;
        r.start = num(s, 0);
        r.end = num(s, 1);
        r.globalTid = num(s, 2);
        r.correlationId = num(s, 3);
        r.nameId = num(s, 4);
        m_rows.api(r);
    });
}

Status NsysReader::readSync()
{
    return select(kSync, { "start", "end", "deviceId", "streamId", "correlationId", "globalPid", "globalTid", "syncType" },
        [this](sqlite3_stmt* s) {
            NsysSyncRow r;
            r.start = num(s, 0);
            r.end = num(s, 1);
            r.deviceId = num(s, 2);
            r.streamId = num(s, 3);
            r.correlationId = num(s, 4);
            r.globalPid = num(s, 5);
            r.globalTid = num(s, 6);
            r.syncType = num(s, 7);
            m_rows.sync(r);
        });
}

Status NsysReader::readNvtx()
{
    return select(kNvtx, { "start", "end", "globalTid", "eventType", "text", "textId" }, [this](sqlite3_stmt* s) {
        NsysNvtxRow r;
        r.start = num(s, 0);
        r.end = num(s, 1, -1);
        r.globalTid = num(s, 2);
        r.eventType = num(s, 3);
        r.text = text(s, 4);
        r.textId = num(s, 5);
        m_rows.nvtx(r);
    });
}

} // namespace gapscope::model::importer
