// SPDX-License-Identifier: MIT
#pragma once

// RocprofDbReader: rocprof v1's kernel trace as SQLite (`rocprof --timestamp on -o results.db`): the
// KERN table, whose columns are the CSV's, read as text through RocprofV1Rows - the same checks as the
// CSV's rows, so a value of the wrong type (text where a number belongs) is skipped with its row and
// column in a warning, and counted. A database damaged part way through the table keeps the rows read
// before the damage (import_truncated). The source is "rocprof".
//
// Threading: one reader per thread.

#include "model/import/sqlitedb.h"
#include "model/import/stagedtrace.h"

#include <string>

namespace gapscope::model::importer {

class RocprofDbReader {
public:
    RocprofDbReader(std::string path, const SqliteDb& db, StagedTrace& out);
    // A rocprof v1 database: a KERN table and none of Nsight Systems' or nvprof's.
    static bool isRocprofDb(const SqliteDb& db);
    Status read();

private:
    std::string m_path;
    const SqliteDb& m_db;
    StagedTrace& m_out;
};

} // namespace gapscope::model::importer
