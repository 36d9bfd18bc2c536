// SPDX-License-Identifier: MIT
#pragma once

// SqliteDb: read-only access to an SQLite database for the importers (Nsight Systems exports, nvprof
// files): the table list, columns looked up by name, and SELECTs that read a missing column as NULL.
//
// The file is opened read-only and immutable (no locks, no journal), through an SQLite URI whose path
// is percent-escaped, so a file name with `%`, `?`, `#` or spaces opens that very file.
//
// Threading: one database per thread.

#include "model/base/status.h"

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace gapscope::model::importer {

class SqliteDb {
public:
    SqliteDb() = default;
    ~SqliteDb();
    SqliteDb(const SqliteDb&) = delete;
    SqliteDb& operator=(const SqliteDb&) = delete;

    // Opens `path` and reads its table list; an error names the file.
    Status open(const std::string& path);
    // The URI open() uses for `path` ("file:" + percent-escaped path + "?immutable=1").
    static std::string uriOf(const std::string& path);

    bool has(const std::string& table) const { return m_tables.count(table) != 0; }
    const std::set<std::string>& tables() const { return m_tables; }
    std::set<std::string> columns(const std::string& table) const;
    // Rows of `table` (0 when it is missing or unreadable).
    int64_t rowCount(const std::string& table) const;
    // Runs SELECT of the `wanted` columns of `table` (a missing column reads as NULL) and calls `row`
    // for each row; a missing table reads as no rows.
    Status select(const std::string& table, const std::vector<std::string>& wanted,
        const std::function<void(sqlite3_stmt*)>& row) const;
    // Runs a fixed statement of the importer's own (a join) and calls `row` for each row; `what`
    // names it in an error.
    Status query(const std::string& sql, const std::string& what, const std::function<void(sqlite3_stmt*)>& row) const;

    // Column values of the current row: NULL reads as `fallback`, 0.0 or empty.
    static int64_t num(sqlite3_stmt* st, int col, int64_t fallback = 0);
    static bool isNull(sqlite3_stmt* st, int col);
    static double real(sqlite3_stmt* st, int col);
    static std::string_view text(sqlite3_stmt* st, int col);
    static std::string_view blob(sqlite3_stmt* st, int col);

private:
    std::string m_path;
    sqlite3* m_db = nullptr;
    std::set<std::string> m_tables;
};

} // namespace gapscope::model::importer
