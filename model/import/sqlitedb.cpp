// SPDX-License-Identifier: MIT
#include "model/import/sqlitedb.h"

#include <sqlite3.h>

namespace gapscope::model::importer {

namespace {
std::string quoted(const std::string& name)
{
    std::string q = "\"";
    for (char c : name)
        q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

bool uriSafe(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' || c == '.'
        || c == '-' || c == '_' || c == '~';
}
} // namespace

SqliteDb::~SqliteDb()
{
    if (m_db)
        sqlite3_close(m_db);
}

std::string SqliteDb::uriOf(const std::string& path)
{
    static const char* hex = "0123456789ABCDEF";
    std::string uri = "file:";
    for (unsigned char c : path) {
        if (uriSafe(c)) {
            uri += char(c);
        } else {
            uri += '%';
            uri += hex[c >> 4];
            uri += hex[c & 15];
        }
    }
    return uri + "?immutable=1";
}

Status SqliteDb::open(const std::string& path)
{
    m_path = path;
    int rc = sqlite3_open_v2(uriOf(path).c_str(), &m_db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
    if (rc != SQLITE_OK)
        return Status::error(path + ": cannot open as SQLite: " + sqlite3_errstr(rc));
    sqlite3_stmt* st = nullptr;
    rc = sqlite3_prepare_v2(m_db, "SELECT name FROM sqlite_master WHERE type='table'", -1, &st, nullptr);
    if (rc != SQLITE_OK)
        return Status::error(path + ": not a readable SQLite database: " + sqlite3_errmsg(m_db));
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        m_tables.insert(std::string(text(st, 0)));
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return Status::error(path + ": corrupt SQLite database: " + sqlite3_errmsg(m_db));
    return Status::ok();
}

std::set<std::string> SqliteDb::columns(const std::string& table) const
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

int64_t SqliteDb::rowCount(const std::string& table) const
{
    if (!has(table))
        return 0;
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(m_db, ("SELECT count(*) FROM " + quoted(table)).c_str(), -1, &st, nullptr) != SQLITE_OK)
        return 0;
    const int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return n;
}

Status SqliteDb::select(const std::string& table, const std::vector<std::string>& wanted,
    const std::function<void(sqlite3_stmt*)>& row) const
{
    if (!has(table))
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

Status SqliteDb::query(
    const std::string& sql, const std::string& what, const std::function<void(sqlite3_stmt*)>& row) const
{
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(m_db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
        return Status::error(m_path + ": " + what + ": " + sqlite3_errmsg(m_db));
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        row(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return Status::error(m_path + ": " + what + ": " + sqlite3_errmsg(m_db));
    return Status::ok();
}

int64_t SqliteDb::num(sqlite3_stmt* st, int col, int64_t fallback)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? fallback : sqlite3_column_int64(st, col);
}

bool SqliteDb::isNull(sqlite3_stmt* st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL;
}

double SqliteDb::real(sqlite3_stmt* st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? 0.0 : sqlite3_column_double(st, col);
}

std::string_view SqliteDb::text(sqlite3_stmt* st, int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return {};
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st, col));
    return p ? std::string_view(p, static_cast<size_t>(sqlite3_column_bytes(st, col))) : std::string_view();
}

std::string_view SqliteDb::blob(sqlite3_stmt* st, int col)
{
    const auto* p = static_cast<const char*>(sqlite3_column_blob(st, col));
    return p ? std::string_view(p, static_cast<size_t>(sqlite3_column_bytes(st, col))) : std::string_view();
}

} // namespace gapscope::model::importer
