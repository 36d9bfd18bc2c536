// SPDX-License-Identifier: MIT
#pragma once

// SQL over traces, on SQLite in process.
//
// SqlSession: an in-memory SQLite connection whose tables (sqltables.h: kernels, steps, bars, ...) are
// virtual tables over one trace and its analysis: nothing is copied into SQLite; a query walks the
// trace's columns. The kernels table hands its rows grouped by name when a query groups or orders by
// `name` alone, so that SQLite aggregates as the rows come instead of sorting millions of them.
//
// SqlDatabase: the same tables written into an SQLite database file (`export --sqlite`), any number of
// traces one after the other (`--append`), each with its own `capture` id; what DuckDB's SQLite
// scanner, pandas or Grafana's SQLite source read as is. A table with long repeated texts (kernel and
// host event names) is stored as `<table>_rows` with those texts as ids into `strings(id, text)`, under
// a view of the table's name with the query's columns. Rows go in a transaction per write(); memory
// is SQLite's page cache, the distinct strings, and the rows of one table being written.
//
// Errors are values (Status / Expected) naming the statement or the file. Threading: one thread per
// session or database.

#include "model/base/status.h"
#include "model/sql/sqltables.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace gapscope::model::sql {

// One result row's values as text (NULL: `null` true), with each column's SQLite type.
struct ResultValue {
    enum class Type : uint8_t { Null, Integer, Real, Text, Blob };
    Type type = Type::Null;
    int64_t i = 0;
    double d = 0;
    std::string text; // Text, Blob (as is); Integer and Real printed
};

// What a statement gives: its column names once, then each row.
struct ResultSink {
    std::function<void(const std::vector<std::string>& columns)> begin;
    std::function<bool(const std::vector<ResultValue>& row)> row; // false: stop this statement
    std::function<void()> end;
};

class SqlSession {
public:
    // An in-memory connection with the tables of `tables` (which must outlive the session).
    static Expected<std::unique_ptr<SqlSession>> open(const TraceTables& tables);
    ~SqlSession();
    SqlSession(const SqlSession&) = delete;
    SqlSession& operator=(const SqlSession&) = delete;

    // A database written by SqlDatabase (export --sqlite), read only: the same tables over many captures.
    // Nothing (no error) when `path` is not such a database (another SQLite file, e.g. an nsys export).
    static Expected<std::unique_ptr<SqlSession>> openDatabase(const std::string& path);
    static bool isDatabase(const std::string& path);

    // Runs every statement of `sql` in turn; each one with result columns goes to `sink`. The first
    // error stops it: "near "selct": syntax error (statement 2: selct ...)".
    Status run(const std::string& sql, const ResultSink& sink);
    sqlite3* db() const { return m_db; }

private:
    SqlSession() = default;
    sqlite3* m_db = nullptr;
};

class SqlDatabase {
public:
    // Creates `path` with the tables (an existing file is an error unless `append`), or with `append`
    // opens it and checks that it holds gapscope's tables of this schema version.
    static Expected<std::unique_ptr<SqlDatabase>> open(const std::string& path, bool append);
    ~SqlDatabase();
    SqlDatabase(const SqlDatabase&) = delete;
    SqlDatabase& operator=(const SqlDatabase&) = delete;

    // The capture id the next trace gets: one more than the largest in the file.
    int64_t nextCaptureId() const;
    // Writes the rows of the tables `which` (default: all) of one trace or one part of it.
    Status write(const TraceTables& tables, const std::vector<TableId>& which = {});
    // Adds indexes on (capture, rank, step) and commits.
    Status finish();
    sqlite3* db() const { return m_db; }

    static constexpr int kSchemaVersion = 1;

private:
    SqlDatabase() = default;
    Status exec(const std::string& sql);
    int64_t intern(std::string_view text); // its id in `strings` (added when new); -1 on error
    sqlite3* m_db = nullptr;
    sqlite3_stmt* m_addString = nullptr;
    std::unordered_map<std::string, int64_t> m_strings;
    std::string m_path;
};

} // namespace gapscope::model::sql
