// SPDX-License-Identifier: MIT
#pragma once

// NsysReader: reads an Nsight Systems SQLite export (`nsys export --type sqlite`) into a StagedTrace
// through NsysRowConverter.
//
// Tables read (each optional; tables are created lazily by nsys): StringIds, PROCESSES, ThreadNames,
// TARGET_INFO_GPU, TARGET_INFO_SESSION_START_TIME, CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET,
// _RUNTIME, _SYNCHRONIZATION and NVTX_EVENTS. Columns are looked up by name (PRAGMA table_info), so
// exports of other nsys versions with added or missing columns still read; a missing column reads as
// NULL (0 for numbers). A database that is not an nsys export (no CUPTI or NVTX table) is an error naming what is missing.
// The file is opened read-only and immutable.
//
// Threading: one reader per thread.

#include "model/import/nsysrows.h"
#include "model/import/stagedtrace.h"
#include "model/status.h"

#include <functional>
#include <set>
#include <string>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace gapscope::model::importer {

class NsysReader {
public:
    NsysReader(std::string path, StagedTrace& out);
    ~NsysReader();
    NsysReader(const NsysReader&) = delete;
    NsysReader& operator=(const NsysReader&) = delete;

    Status read();
    // Cheap check used by format sniffing: an SQLite file with nsys' tables.
    static bool looksLikeNsys(const std::string& path);

private:
    Status open();
    std::set<std::string> columns(const std::string& table);
    // Runs SELECT of the `wanted` columns of `table` (a missing column reads as NULL) and calls `row`
    // for each row.
    Status select(const std::string& table, const std::vector<std::string>& wanted,
        const std::function<void(sqlite3_stmt*)>& row);
    Status readStrings();
    Status readProcesses();
    Status readGpus();
    Status readKernels();
    Status readMemops(bool memset);
    Status readRuntime();
    Status readSync();
    Status readNvtx();

    std::string m_path;
    NsysRowConverter m_rows;
    sqlite3* m_db = nullptr;
    std::set<std::string> m_tables;
};

} // namespace gapscope::model::importer
