// SPDX-License-Identifier: MIT
#include "model/import/nvprofreader.h"

#include "model/import/cuptiapinames.h"
#include "model/import/demangle.h"

#include <sqlite3.h>

namespace gapscope::model::importer {

namespace {
const char* kApiTables[] = { "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER" };
// Synthetic string ids for API names: StringTable ids are never negative.
constexpr int64_t kRuntimeNameBase = -1;
constexpr int64_t kDriverNameBase = -(int64_t(1) << 32);

std::string uuidText(std::string_view b)
{
    if (b.size() != 16)
        return {};
    static const char* hex = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            s += '-';
        s += hex[uint8_t(b[i]) >> 4];
        s += hex[uint8_t(b[i]) & 15];
    }
    return s;
}
} // namespace

NvprofReader::NvprofReader(std::string path, const SqliteDb& db, StagedTrace& out, NsysRowConverter& rows)
    : m_path(std::move(path))
    , m_db(db)
    , m_out(out)
    , m_rows(rows)
{
}

bool NvprofReader::isNvprof(const SqliteDb& db)
{
    if (!db.has("StringTable") || db.has("StringIds"))
        return false;
    for (const auto& t : db.tables())
        if (t.rfind("CUPTI_ACTIVITY_KIND_", 0) == 0)
            return true;
    return false;
}

Status NvprofReader::read()
{
    m_out.metadata["source"] = "nvprof";
    m_rows.epochTimes();
    m_rows.gpuTable("CUPTI_ACTIVITY_KIND_DEVICE");
    using Step = Status (NvprofReader::*)();
    for (Step step : { &NvprofReader::readVersion, &NvprofReader::readDevices, &NvprofReader::readStrings })
        if (Status st = (this->*step)(); !st)
            return st;
    emitDevices();
    // API rows first: they give the GPU rows their process through the correlation id.
    for (bool driver : { false, true })
        if (Status st = readApi(driver); !st)
            return st;
    for (const char* t : { "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL", "CUPTI_ACTIVITY_KIND_KERNEL" })
        if (Status st = readKernels(t); !st)
            return st;
    for (bool memset : { false, true })
        if (Status st = readMemops(memset); !st)
            return st;
    if (Status st = readSync(); !st)
        return st;
    for (const char* t : { "CUPTI_ACTIVITY_KIND_MARKER", "CUPTI_ACTIVITY_KIND_MEMCPY2" }) // not read
        if (const int64_t n = m_db.rowCount(t); n > 0)
            m_out.count(
                format::Stat::ImportSkippedEvents, std::string("nvprof ") + t + " rows (not read)", uint64_t(n));
    if (m_unknownApis)
        m_out.count(format::Stat::ImportUnknownApiIds, m_unknownApis);
    m_rows.finish();
    if (m_rows.rankCount())
        return Status::ok();
    return Status::error(m_path
        + ": an nvprof file without GPU work, nothing to import (no kernel, memcpy or memset rows"
        + std::string(
            m_db.rowCount("CUPTI_ACTIVITY_KIND_RUNTIME") > 0 || m_db.rowCount("CUPTI_ACTIVITY_KIND_DRIVER") > 0
                ? "; its CUDA API calls alone make no rank"
                : "")
        + ")");
}

Status NvprofReader::readVersion()
{
    m_rows.exportMetadata("EXPORT_PRODUCT_NAME", "nvprof");
    return m_db.select("Version", { "version" }, [this](sqlite3_stmt* s) {
        m_rows.exportMetadata("EXPORT_SCHEMA_VERSION", std::to_string(SqliteDb::num(s, 0)));
    });
}

Status NvprofReader::readDevices()
{
    return m_db.select("CUPTI_ACTIVITY_KIND_DEVICE",
        { "id", "name", "numMultiprocessors", "globalMemorySize", "computeCapabilityMajor", "computeCapabilityMinor",
            "coreClockRate", "globalMemoryBandwidth", "uuid" },
        [this](sqlite3_stmt* s) {
            NsysGpuRow g;
            g.id = SqliteDb::num(s, 0);
            g.smCount = SqliteDb::num(s, 2);
            g.totalMemory = SqliteDb::num(s, 3);
            g.ccMajor = SqliteDb::num(s, 4);
            g.ccMinor = SqliteDb::num(s, 5);
            g.smClockHz = SqliteDb::num(s, 6) * 1000; // kHz
            g.memoryBandwidth = SqliteDb::real(s, 7) * 1000; // kB/s
            m_uuids.push_back(uuidText(SqliteDb::blob(s, 8)));
            m_devices.emplace_back(g, SqliteDb::num(s, 1, -1));
            m_deviceNames[SqliteDb::num(s, 1, -1)];
        });
}

Status NvprofReader::readStrings()
{
    return m_db.select("StringTable", { "_id_", "value" }, [this](sqlite3_stmt* s) {
        const int64_t id = SqliteDb::num(s, 0);
        const std::string_view value = SqliteDb::text(s, 1);
        auto device = m_deviceNames.find(id);
        if (device != m_deviceNames.end())
            device->second = std::string(value);
        m_rows.string(id, demangle(value));
    });
}

void NvprofReader::emitDevices()
{
    for (size_t i = 0; i < m_devices.size(); ++i) {
        NsysGpuRow g = m_devices[i].first;
        g.name = m_deviceNames[m_devices[i].second];
        g.uuid = m_uuids[i];
        m_rows.gpu(g);
    }
}

int64_t NvprofReader::globalTidOf(int64_t pid, int64_t tid)
{
    if (m_firstPid < 0)
        m_firstPid = pid;
    auto it = m_threads.find({ pid, tid });
    if (it == m_threads.end()) // nvprof's thread ids are pthread ids: lanes get a small index instead
        it = m_threads.emplace(std::make_pair(pid, tid), int64_t(m_threads.size() + 1) & 0xFFFFFF).first;
    return (pid & 0xFFFFFF) << 24 | it->second;
}

int64_t NvprofReader::globalPidOf(int64_t corr) const
{
    auto it = m_corrPid.find(corr);
    const int64_t pid = it != m_corrPid.end() ? it->second : m_firstPid < 0 ? 0 : m_firstPid;
    return (pid & 0xFFFFFF) << 24;
}

Status NvprofReader::readApi(bool driver)
{
    return m_db.select(kApiTables[driver], { "start", "end", "processId", "threadId", "correlationId", "cbid" },
        [this, driver](sqlite3_stmt* s) {
            NsysApiRow r;
            r.start = SqliteDb::num(s, 0);
            r.end = SqliteDb::num(s, 1);
            const int64_t pid = SqliteDb::num(s, 2);
            r.globalTid = globalTidOf(pid, SqliteDb::num(s, 3));
            r.correlationId = SqliteDb::num(s, 4);
            const int64_t cbid = SqliteDb::num(s, 5) & 0xFFFFFFFF;
            r.nameId = (driver ? kDriverNameBase : kRuntimeNameBase) - cbid;
            m_corrPid.emplace(r.correlationId, pid);
            if (m_apiNameIds.insert(r.nameId).second) {
                const char* known = driver ? cuptiDriverApiName(cbid) : cuptiRuntimeApiName(cbid);
                if (!known)
                    ++m_unknownApis;
                m_rows.string(r.nameId,
                    known ? std::string(known)
                          : std::string(driver ? "cu driver API #" : "cuda runtime API #") + std::to_string(cbid));
            }
            m_rows.api(r);
        });
}

Status NvprofReader::readKernels(const char* table)
{
    return m_db.select(table,
        { "start", "end", "deviceId", "streamId", "correlationId", "name", "gridX", "gridY", "gridZ", "blockX",
            "blockY", "blockZ", "registersPerThread", "staticSharedMemory", "dynamicSharedMemory", "graphId",
            "graphNodeId" },
        [this](sqlite3_stmt* s) {
            NsysKernelRow r;
            r.start = SqliteDb::num(s, 0);
            r.end = SqliteDb::num(s, 1);
            r.deviceId = SqliteDb::num(s, 2);
            r.streamId = SqliteDb::num(s, 3);
            r.correlationId = SqliteDb::num(s, 4);
            r.globalPid = globalPidOf(r.correlationId);
            r.nameId = SqliteDb::num(s, 5, -1);
            r.shortNameId = -1;
            r.readLaunchColumns(s, 6);
            m_rows.kernel(r);
        });
}

Status NvprofReader::readMemops(bool memset)
{
    return m_db.select(memset ? "CUPTI_ACTIVITY_KIND_MEMSET" : "CUPTI_ACTIVITY_KIND_MEMCPY",
        { "start", "end", "deviceId", "streamId", "correlationId", "bytes", memset ? "value" : "copyKind" },
        [this, memset](sqlite3_stmt* s) {
            NsysMemopRow r;
            r.memset = memset;
            r.start = SqliteDb::num(s, 0);
            r.end = SqliteDb::num(s, 1);
            r.deviceId = SqliteDb::num(s, 2);
            r.streamId = SqliteDb::num(s, 3);
            r.correlationId = SqliteDb::num(s, 4);
            r.globalPid = globalPidOf(r.correlationId);
            r.bytes = SqliteDb::num(s, 5);
            r.copyKind = memset ? 0 : SqliteDb::num(s, 6);
            m_rows.memop(r);
        });
}

Status NvprofReader::readSync()
{
    return m_db.select("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", { "start", "end", "streamId", "correlationId", "type" },
        [this](sqlite3_stmt* s) {
            NsysSyncRow r;
            r.start = SqliteDb::num(s, 0);
            r.end = SqliteDb::num(s, 1);
            r.streamId = SqliteDb::num(s, 2);
            r.correlationId = SqliteDb::num(s, 3);
            r.globalPid = globalPidOf(r.correlationId);
            r.syncType = SqliteDb::num(s, 4);
            m_rows.sync(r);
        });
}

} // namespace gapscope::model::importer
