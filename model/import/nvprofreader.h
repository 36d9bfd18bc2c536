// SPDX-License-Identifier: MIT
#pragma once

// NvprofReader: reads an nvprof file (`nvprof -o x.nvvp` / `--export-profile`, an SQLite database of
// CUPTI activity records) into a StagedTrace through the same NsysRowConverter as nsys exports.
//
// nvprof's schema is CUPTI's records as tables: StringTable (`_id_`, value) instead of StringIds;
// CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (and _KERNEL when kernels were serialised) with `name` a
// StringTable id of the mangled name (demangled here); _MEMCPY, _MEMSET; _RUNTIME and _DRIVER with a
// callback id (`cbid`, named through cuptiapinames.h) and processId / threadId; _SYNCHRONIZATION
// (`type`); _DEVICE (coreClockRate in kHz, globalMemoryBandwidth in kB/s, name a StringTable id);
// Version. GPU rows carry no process: each takes the process of the API call with its correlation
// id, else the file's first process (nvprof writes one file per profiled process). Times are
// wall-clock ns. NVTX ranges (CUPTI_ACTIVITY_KIND_MARKER pairs) and peer copies (_MEMCPY2) are not
// read: their rows are counted as skipped.
//
// Threading: one reader per thread.

#include "model/base/status.h"
#include "model/import/nsysrows.h"
#include "model/import/sqlitedb.h"
#include "model/import/stagedtrace.h"

#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace gapscope::model::importer {

class NvprofReader {
public:
    NvprofReader(std::string path, const SqliteDb& db, StagedTrace& out, NsysRowConverter& rows);

    // An nvprof file: StringTable and CUPTI activity tables, no nsys StringIds.
    static bool isNvprof(const SqliteDb& db);
    Status read();

private:
    Status readVersion();
    Status readDevices();
    Status readStrings();
    void emitDevices();
    Status readApi(bool driver);
    Status readKernels(const char* table);
    Status readMemops(bool memset);
    Status readSync();
    // nsys-style global id of the process (and thread) of correlation id `corr`.
    int64_t globalPidOf(int64_t corr) const;
    int64_t globalTidOf(int64_t pid, int64_t tid);

    std::string m_path;
    const SqliteDb& m_db;
    StagedTrace& m_out;
    NsysRowConverter& m_rows;
    std::unordered_map<int64_t, int64_t> m_corrPid; // correlation id -> pid
    std::unordered_set<int64_t> m_apiNameIds; // API name string ids registered
    std::map<std::pair<int64_t, int64_t>, int64_t> m_threads; // (pid, threadId) -> thread index
    std::vector<std::pair<NsysGpuRow, int64_t>> m_devices; // row, StringTable id of its name
    std::map<int64_t, std::string> m_deviceNames;
    std::vector<std::string> m_uuids;
    int64_t m_firstPid = -1;
    uint64_t m_unknownApis = 0;
};

} // namespace gapscope::model::importer
