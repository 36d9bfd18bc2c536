// SPDX-License-Identifier: MIT
#include "model/import/nsysreader.h"

#include "model/import/nvprofreader.h"

#include <sqlite3.h>

namespace gapscope::model::importer {

namespace {
const char* kKernel = "CUPTI_ACTIVITY_KIND_KERNEL";
const char* kMemcpy = "CUPTI_ACTIVITY_KIND_MEMCPY";
const char* kMemset = "CUPTI_ACTIVITY_KIND_MEMSET";
const char* kRuntime = "CUPTI_ACTIVITY_KIND_RUNTIME";
const char* kSync = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
const char* kNvtx = "NVTX_EVENTS";
const char* kOsrt = "OSRT_API";
// Tables only an nsys export has (the CUPTI ones are shared with nvprof files).
const char* const kNsysOnly[] = { "StringIds", "META_DATA_EXPORT", "EXPORT_META_DATA", "TARGET_INFO_SESSION_START_TIME",
    "PROCESSES", "ThreadNames", "TARGET_INFO_GPU", kNvtx };
} // namespace

NsysReader::NsysReader(std::string path, StagedTrace& out)
    : m_path(std::move(path))
    , m_out(out)
    , m_rows(out)
{
}

std::string NsysReader::sourceOf(const std::string& path)
{
    SqliteDb db;
    return db.open(path) && NvprofReader::isNvprof(db) ? "nvprof" : "nsys";
}

Status NsysReader::read()
{
    if (Status st = m_db.open(m_path); !st)
        return st;
    if (NvprofReader::isNvprof(m_db))
        return NvprofReader(m_path, m_db, m_out, m_rows).read();
    bool nsys = false;
    for (const char* t : kNsysOnly)
        nsys = nsys || m_db.has(t);
    for (const char* t : { kKernel, kMemcpy, kMemset, kRuntime })
        nsys = nsys || m_db.has(t);
    if (!nsys)
        return Status::error(m_path + ": an SQLite database without Nsight Systems tables (no " + kKernel + ", "
            + kRuntime + ", " + kNvtx + " or StringIds); export with `nsys export --type sqlite`");
    return readNsys();
}

Status NsysReader::readNsys()
{
    using Step = Status (NsysReader::*)();
    for (Step step : { &NsysReader::readMetadata, &NsysReader::readStrings, &NsysReader::readProcesses,
             &NsysReader::readGpus, &NsysReader::readKernels, &NsysReader::readRuntime, &NsysReader::readSync })
        if (Status st = (this->*step)(); !st)
            return st;
    if (Status st = readMemops(false); !st)
        return st;
    if (Status st = readMemops(true); !st)
        return st;
    if (Status st = readNvtx(); !st) // after the GPU rows: it keeps only the ranges of processes with GPU work
        return st;
    if (Status st = readOsrt(); !st) // likewise
        return st;
    if (Status st = readSamples(); !st) // likewise
        return st;
    if (Status st = readGraphNodes(); !st) // likewise; after NVTX: nodes take the ranges open at creation
        return st;
    m_rows.finish();
    return m_rows.rankCount() ? Status::ok() : nothingImported();
}

Status NsysReader::nothingImported() const
{
    std::string tables;
    bool rows = false; // CUDA rows there, of processes without GPU work
    for (const char* t : { kKernel, kMemcpy, kMemset, kRuntime, kSync, kNvtx }) {
        const int64_t n = m_db.has(t) ? m_db.rowCount(t) : 0;
        rows = rows || (n > 0 && t != kNvtx);
        tables += std::string(tables.empty() ? "" : ", ") + t
            + (!m_db.has(t)  ? " missing"
                    : n == 0 ? " empty"
                             : " with " + std::to_string(n) + " row(s) of no process with GPU work");
    }
    const auto version = m_out.metadata.find("import.product_version");
    return Status::error(m_path + ": an Nsight Systems export"
        + (version != m_out.metadata.end() ? " (nsys " + version->second + ")" : std::string())
        + (rows ? " without GPU work (no kernel, memcpy or memset)" : " without CUDA activity")
        + ", nothing to import (" + tables + "); profile with `nsys profile --trace=cuda` and export again");
}

Status NsysReader::readMetadata()
{
    for (const char* table : { "META_DATA_EXPORT", "EXPORT_META_DATA" })
        if (Status st = m_db.select(table, { "name", "value" },
                [this](sqlite3_stmt* s) { m_rows.exportMetadata(SqliteDb::text(s, 0), SqliteDb::text(s, 1)); });
            !st)
            return st;
    return Status::ok();
}

Status NsysReader::readStrings()
{
    return m_db.select("StringIds", { "id", "value" },
        [this](sqlite3_stmt* s) { m_rows.string(SqliteDb::num(s, 0), SqliteDb::text(s, 1)); });
}

Status NsysReader::readProcesses()
{
    Status st = m_db.select("PROCESSES", { "globalPid", "pid", "name" },
        [this](sqlite3_stmt* s) { m_rows.process(SqliteDb::num(s, 0), SqliteDb::text(s, 2)); });
    if (!st)
        return st;
    st = m_db.select("ThreadNames", { "globalTid", "nameId" },
        [this](sqlite3_stmt* s) { m_rows.threadName(SqliteDb::num(s, 0), SqliteDb::num(s, 1)); });
    if (!st)
        return st;
    return m_db.select("TARGET_INFO_SESSION_START_TIME", { "utcEpochNs" },
        [this](sqlite3_stmt* s) { m_rows.sessionStart(SqliteDb::num(s, 0)); });
}

Status NsysReader::readGpus()
{
    Status st = m_db.select("TARGET_INFO_GPU",
        { "id", "name", "uuid", "busLocation", "smCount", "totalMemory", "computeMajor", "computeMinor", "clockRate",
            "memoryBandwidth", "cuDevice", "deviceId" },
        [this](sqlite3_stmt* s) {
            NsysGpuRow g;
            g.id = SqliteDb::num(s, 10, SqliteDb::num(s, 11, SqliteDb::num(s, 0)));
            g.name = SqliteDb::text(s, 1);
            g.uuid = SqliteDb::text(s, 2);
            g.busLocation = SqliteDb::text(s, 3);
            g.smCount = SqliteDb::num(s, 4);
            g.totalMemory = SqliteDb::num(s, 5);
            g.ccMajor = SqliteDb::num(s, 6);
            g.ccMinor = SqliteDb::num(s, 7);
            g.smClockHz = SqliteDb::num(s, 8); // Hz
            g.memoryBandwidth = SqliteDb::real(s, 9); // bytes/s
            m_rows.gpu(g);
        });
    if (!st)
        return st;
    return m_db.select("TARGET_INFO_CUDA_GPU",
        { "deviceId", "name", "pciBusId", "numMultiprocessors", "globalMemorySize", "computeCapabilityMajor",
            "computeCapabilityMinor", "coreClockRate", "globalMemoryBandwidth" },
        [this](sqlite3_stmt* s) {
            NsysGpuRow g;
            g.id = SqliteDb::num(s, 0);
            g.name = SqliteDb::text(s, 1);
            g.busLocation = SqliteDb::text(s, 2);
            g.smCount = SqliteDb::num(s, 3);
            g.totalMemory = SqliteDb::num(s, 4);
            g.ccMajor = SqliteDb::num(s, 5);
            g.ccMinor = SqliteDb::num(s, 6);
            g.smClockHz = SqliteDb::num(s, 7) * 1000; // kHz
            g.memoryBandwidth = SqliteDb::real(s, 8) * 1000; // kB/s
            m_rows.gpu(g);
        });
}

Status NsysReader::readKernels()
{
    return m_db.select(kKernel,
        { "start", "end", "deviceId", "streamId", "correlationId", "globalPid", "demangledName", "shortName", "gridX",
            "gridY", "gridZ", "blockX", "blockY", "blockZ", "registersPerThread", "staticSharedMemory",
            "dynamicSharedMemory", "graphId", "graphNodeId" },
        [this](sqlite3_stmt* s) {
            NsysKernelRow r;
            r.start = SqliteDb::num(s, 0);
            r.end = SqliteDb::num(s, 1);
            r.deviceId = SqliteDb::num(s, 2);
            r.streamId = SqliteDb::num(s, 3);
            r.correlationId = SqliteDb::num(s, 4);
            r.globalPid = SqliteDb::num(s, 5);
            r.nameId = SqliteDb::num(s, 6, -1);
            r.shortNameId = SqliteDb::num(s, 7, -1);
            r.readLaunchColumns(s, 8);
            m_rows.kernel(r);
        });
}

Status NsysReader::readMemops(bool memset)
{
    return m_db.select(memset ? kMemset : kMemcpy,
        { "start", "end", "deviceId", "streamId", "correlationId", "globalPid", "bytes",
            memset ? "value" : "copyKind" },
        [this, memset](sqlite3_stmt* s) {
            NsysMemopRow r;
            r.memset = memset;
            r.start = SqliteDb::num(s, 0);
            r.end = SqliteDb::num(s, 1);
            r.deviceId = SqliteDb::num(s, 2);
            r.streamId = SqliteDb::num(s, 3);
            r.correlationId = SqliteDb::num(s, 4);
            r.globalPid = SqliteDb::num(s, 5);
            r.bytes = SqliteDb::num(s, 6);
            r.copyKind = memset ? 0 : SqliteDb::num(s, 7);
            m_rows.memop(r);
        });
}

Status NsysReader::readRuntime()
{
    return m_db.select(kRuntime, { "start", "end", "globalTid", "correlationId", "nameId" }, [this](sqlite3_stmt* s) {
        NsysApiRow r;
        r.start = SqliteDb::num(s, 0);
        r.end = SqliteDb::num(s, 1);
        r.globalTid = SqliteDb::num(s, 2);
        r.correlationId = SqliteDb::num(s, 3);
        r.nameId = SqliteDb::num(s, 4);
        m_rows.api(r);
    });
}

Status NsysReader::readSync()
{
    return m_db.select(kSync,
        { "start", "end", "deviceId", "streamId", "correlationId", "globalPid", "globalTid", "syncType" },
        [this](sqlite3_stmt* s) {
            NsysSyncRow r;
            r.start = SqliteDb::num(s, 0);
            r.end = SqliteDb::num(s, 1);
            r.deviceId = SqliteDb::num(s, 2);
            r.streamId = SqliteDb::num(s, 3);
            r.correlationId = SqliteDb::num(s, 4);
            r.globalPid = SqliteDb::num(s, 5);
            r.globalTid = SqliteDb::num(s, 6);
            r.syncType = SqliteDb::num(s, 7);
            m_rows.sync(r);
        });
}

Status NsysReader::readNvtx()
{
    return m_db.select(kNvtx, { "start", "end", "globalTid", "eventType", "text", "textId" }, [this](sqlite3_stmt* s) {
        NsysNvtxRow r;
        r.start = SqliteDb::num(s, 0);
        r.end = SqliteDb::num(s, 1, -1);
        r.globalTid = SqliteDb::num(s, 2);
        r.eventType = SqliteDb::num(s, 3);
        r.text = SqliteDb::text(s, 4);
        r.textId = SqliteDb::num(s, 5);
        m_rows.nvtx(r);
    });
}

// CPU sampling: each COMPOSITE_EVENTS row with its SAMPLING_CALLCHAINS frames (leaf at depth 0),
// by thread and time.
Status NsysReader::readSamples()
{
    if (!m_db.has("COMPOSITE_EVENTS") || !m_db.has("SAMPLING_CALLCHAINS"))
        return Status::ok();
    NsysSampleRow row;
    int64_t id = -1;
    Status st = m_db.query("SELECT e.id, e.start, e.globalTid, c.symbol, c.module, c.unresolved FROM COMPOSITE_EVENTS e "
                           "JOIN SAMPLING_CALLCHAINS c ON c.id = e.id ORDER BY e.globalTid, e.start, e.id, c.stackDepth",
        "CPU samples (COMPOSITE_EVENTS, SAMPLING_CALLCHAINS)", [&](sqlite3_stmt* s) {
            const int64_t sample = SqliteDb::num(s, 0);
            if (sample != id) {
                if (id >= 0)
                    m_rows.sample(row);
                id = sample;
                row.start = SqliteDb::num(s, 1);
                row.globalTid = SqliteDb::num(s, 2);
                row.frames.clear();
            }
            row.frames.push_back(NsysSampleFrame { SqliteDb::num(s, 3), SqliteDb::num(s, 4), SqliteDb::num(s, 5) != 0 });
        });
    if (!st)
        return st;
    if (id >= 0)
        m_rows.sample(row);
    m_rows.finishSamples();
    return Status::ok();
}

// CUDA graph nodes, created or cloned (`--cuda-graph-trace=node`; a missing table reads as no rows).
Status NsysReader::readGraphNodes()
{
    return m_db.select("CUDA_GRAPH_NODE_EVENTS", { "start", "end", "globalTid", "graphNodeId", "originalGraphNodeId" },
        [this](sqlite3_stmt* s) {
            NsysGraphNodeRow r;
            r.start = SqliteDb::num(s, 0);
            r.end = SqliteDb::num(s, 1, r.start);
            r.globalTid = SqliteDb::num(s, 2);
            r.graphNodeId = SqliteDb::num(s, 3);
            r.originalGraphNodeId = SqliteDb::num(s, 4);
            m_rows.graphNode(r);
        });
}

Status NsysReader::readOsrt()
{
    return m_db.select(kOsrt, { "start", "end", "globalTid", "nameId" }, [this](sqlite3_stmt* s) {
        NsysOsrtRow r;
        r.start = SqliteDb::num(s, 0);
        r.end = SqliteDb::num(s, 1);
        r.globalTid = SqliteDb::num(s, 2);
        r.nameId = SqliteDb::num(s, 3);
        m_rows.osrt(r);
    });
}

} // namespace gapscope::model::importer
