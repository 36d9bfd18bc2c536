// SPDX-License-Identifier: MIT
#include "model/sql/sqlsession.h"

#include <sqlite3.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>

namespace gapscope::model::sql {

namespace {

// --- virtual tables over TraceTables -------------------------------------------------------------

// The module's client data: the tables of one trace. A table's name is its module argument.
struct VTab {
    sqlite3_vtab base {};
    const TraceTables* tables = nullptr;
    TableId id = TableId::Kernels;
};

struct VCursor {
    sqlite3_vtab_cursor base {};
    std::unique_ptr<RowCursor> rows;
    bool eof = true;
    sqlite3_int64 rowid = 0;
};

constexpr int kIdxByName = 1;

int xConnect(sqlite3* db, void* aux, int argc, const char* const* argv, sqlite3_vtab** out, char** err)
{
    if (argc < 4) {
        *err = sqlite3_mprintf("gapscope: a table name is needed");
        return SQLITE_ERROR;
    }
    const TableDef* def = nullptr;
    for (const TableDef& t : tableDefs())
        if (std::strcmp(t.name, argv[3]) == 0)
            def = &t;
    if (!def) {
        *err = sqlite3_mprintf("gapscope: no table '%s'", argv[3]);
        return SQLITE_ERROR;
    }
    const int rc = sqlite3_declare_vtab(db, createStatement(*def, "x").c_str());
    if (rc != SQLITE_OK)
        return rc;
    auto* v = new VTab;
    v->tables = static_cast<const TraceTables*>(aux);
    v->id = def->id;
    *out = &v->base;
    return SQLITE_OK;
}

int xDisconnect(sqlite3_vtab* vt)
{
    delete reinterpret_cast<VTab*>(vt);
    return SQLITE_OK;
}

int xBestIndex(sqlite3_vtab* vt, sqlite3_index_info* info)
{
    const VTab* v = reinterpret_cast<VTab*>(vt);
    info->idxNum = 0;
    // Kernels grouped by name: consumed for GROUP BY name / DISTINCT name (any direction) and for
    // ORDER BY name ascending in binary collation (the names' byte order).
    if (v->id == TableId::Kernels && info->nOrderBy == 1 && info->aOrderBy[0].iColumn == 4) {
        const int distinct = sqlite3_vtab_distinct(info);
        const char* coll = sqlite3_vtab_collation(info, 0);
        const bool binary = !coll || sqlite3_stricmp(coll, "BINARY") == 0;
        if (binary && (distinct == 1 || distinct == 2 || !info->aOrderBy[0].desc)) {
            info->orderByConsumed = 1;
            info->idxNum = kIdxByName;
        }
    }
    const uint64_t rows = v->tables->rowEstimate(v->id);
    info->estimatedRows = sqlite3_int64(rows);
    info->estimatedCost = double(rows) + (info->idxNum ? double(rows) / 4 : 0);
    info->idxStr = sqlite3_mprintf("%llu", (unsigned long long)info->colUsed);
    info->needToFreeIdxStr = 1;
    return SQLITE_OK;
}

int xOpen(sqlite3_vtab*, sqlite3_vtab_cursor** out)
{
    auto* c = new VCursor;
    *out = &c->base;
    return SQLITE_OK;
}

int xClose(sqlite3_vtab_cursor* cur)
{
    delete reinterpret_cast<VCursor*>(cur);
    return SQLITE_OK;
}

int xFilter(sqlite3_vtab_cursor* cur, int idxNum, const char* idxStr, int, sqlite3_value**)
{
    auto* c = reinterpret_cast<VCursor*>(cur);
    const VTab* v = reinterpret_cast<VTab*>(cur->pVtab);
    const uint64_t columns = idxStr ? std::strtoull(idxStr, nullptr, 10) : ~uint64_t(0);
    c->rows = v->tables->open(
        v->id, columns, idxNum == kIdxByName ? TraceTables::Order::ByName : TraceTables::Order::Natural);
    c->rowid = 0;
    c->eof = !c->rows->next();
    return SQLITE_OK;
}

int xNext(sqlite3_vtab_cursor* cur)
{
    auto* c = reinterpret_cast<VCursor*>(cur);
    c->eof = !c->rows->next();
    ++c->rowid;
    return SQLITE_OK;
}

int xEof(sqlite3_vtab_cursor* cur)
{
    return reinterpret_cast<VCursor*>(cur)->eof;
}

int xColumn(sqlite3_vtab_cursor* cur, sqlite3_context* ctx, int column)
{
    const Cell cell = reinterpret_cast<VCursor*>(cur)->rows->cell(size_t(column));
    switch (cell.kind) {
    case Cell::Kind::Null:
        sqlite3_result_null(ctx);
        break;
    case Cell::Kind::Integer:
        sqlite3_result_int64(ctx, cell.i);
        break;
    case Cell::Kind::Real:
        sqlite3_result_double(ctx, cell.d);
        break;
    case Cell::Kind::Text:
        // Stable texts (the trace's strings) live as long as the session: no copy per row.
        sqlite3_result_text(ctx, cell.s.data(), int(cell.s.size()), cell.stable ? SQLITE_STATIC : SQLITE_TRANSIENT);
        break;
    }
    return SQLITE_OK;
}

int xRowid(sqlite3_vtab_cursor* cur, sqlite3_int64* rowid)
{
    *rowid = reinterpret_cast<VCursor*>(cur)->rowid;
    return SQLITE_OK;
}

sqlite3_module makeModule()
{
    sqlite3_module m {};
    m.iVersion = 1;
    m.xCreate = xConnect;
    m.xConnect = xConnect;
    m.xBestIndex = xBestIndex;
    m.xDisconnect = xDisconnect;
    m.xDestroy = xDisconnect;
    m.xOpen = xOpen;
    m.xClose = xClose;
    m.xFilter = xFilter;
    m.xNext = xNext;
    m.xEof = xEof;
    m.xColumn = xColumn;
    m.xRowid = xRowid;
    return m;
}

const sqlite3_module kModule = makeModule();

std::string firstLine(const char* sql, size_t max = 80)
{
    std::string s;
    for (const char* p = sql; *p && s.size() < max; ++p)
        s += (*p == '\n' || *p == '\t') ? ' ' : *p;
    while (!s.empty() && s.front() == ' ')
        s.erase(s.begin());
    return s;
}

Status sqlError(sqlite3* db, const std::string& where)
{
    return Status::error(std::string(sqlite3_errmsg(db)) + " (" + where + ")");
}

ResultValue valueOf(sqlite3_stmt* st, int i)
{
    ResultValue v;
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER:
        v.type = ResultValue::Type::Integer;
        v.i = sqlite3_column_int64(st, i);
        v.text = std::to_string(v.i);
        break;
    case SQLITE_FLOAT: {
        v.type = ResultValue::Type::Real;
        v.d = sqlite3_column_double(st, i);
        char buf[40]; // the shortest text that reads back as the same double
        for (int digits = 15; digits <= 17; ++digits) {
            std::snprintf(buf, sizeof buf, "%.*g", digits, v.d);
            if (std::strtod(buf, nullptr) == v.d)
                break;
        }
        v.text = buf;
        break;
    }
    case SQLITE_TEXT:
        v.type = ResultValue::Type::Text;
        v.text.assign(reinterpret_cast<const char*>(sqlite3_column_text(st, i)), size_t(sqlite3_column_bytes(st, i)));
        break;
    case SQLITE_BLOB:
        v.type = ResultValue::Type::Blob;
        v.text.assign(static_cast<const char*>(sqlite3_column_blob(st, i)), size_t(sqlite3_column_bytes(st, i)));
        break;
    default:
        break;
    }
    return v;
}

bool hasInterned(const TableDef& t)
{
    for (const ColumnDef& c : t.columns)
        if (c.interned)
            return true;
    return false;
}

// Where a table's rows are stored in a database file: the table itself, or `<name>_rows` (interned
// texts as ids into `strings`) under a view of the table's name that joins them back.
std::string storedName(const TableDef& t)
{
    return hasInterned(t) ? std::string(t.name) + "_rows" : std::string(t.name);
}

std::string schemaOf(const TableDef& t)
{
    if (!hasInterned(t))
        return createStatement(t, std::string("\"") + t.name + "\"") + ";\n";
    std::string table = "CREATE TABLE \"" + storedName(t) + "\"(",
                view = std::string("CREATE VIEW \"") + t.name + "\" AS SELECT ";
    for (size_t i = 0; i < t.columns.size(); ++i) {
        const ColumnDef& c = t.columns[i];
        const std::string sep = i ? ", " : "";
        if (c.interned) { // a sub-select, not a join: looked up only when a query reads the column
            table += sep + "\"" + c.name + "_id\" INTEGER";
            view += sep + "(SELECT text FROM strings WHERE id = r.\"" + c.name + "_id\") AS \"" + c.name + "\"";
        } else {
            table += sep + "\"" + c.name + "\" "
                + (c.type == ColumnType::Integer     ? "INTEGER"
                        : c.type == ColumnType::Real ? "REAL"
                                                     : "TEXT");
            view += sep + "r.\"" + c.name + "\"";
        }
    }
    return table + ");\n" + view + " FROM \"" + storedName(t) + "\" r;\n";
}

} // namespace

// --- SqlSession ----------------------------------------------------------------------------------

Expected<std::unique_ptr<SqlSession>> SqlSession::open(const TraceTables& tables)
{
    std::unique_ptr<SqlSession> s(new SqlSession);
    if (sqlite3_open_v2(":memory:", &s->m_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK)
        return Status::error("cannot open an in-memory SQLite database");
    if (sqlite3_create_module_v2(s->m_db, "gapscope", &kModule, const_cast<TraceTables*>(&tables), nullptr)
        != SQLITE_OK)
        return sqlError(s->m_db, "registering the tables");
    for (const TableDef& t : tableDefs()) {
        const std::string create
            = std::string("CREATE VIRTUAL TABLE temp.\"") + t.name + "\" USING gapscope(" + t.name + ")";
        if (sqlite3_exec(s->m_db, create.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
            return sqlError(s->m_db, create);
    }
    return s;
}

bool SqlSession::isDatabase(const std::string& path)
{
    char magic[16] = {};
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
        const size_t n = std::fread(magic, 1, sizeof magic, f);
        std::fclose(f);
        if (n != sizeof magic || std::memcmp(magic, "SQLite format 3", 16) != 0)
            return false;
    } else {
        return false;
    }
    sqlite3* db = nullptr;
    bool ours = false;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_stmt* st = nullptr;
        ours = sqlite3_prepare_v2(db,
                   "SELECT count(*) FROM sqlite_master WHERE name IN ('strings', 'captures', 'kernels_rows')", -1, &st,
                   nullptr)
                == SQLITE_OK
            && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 3;
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return ours;
}

Expected<std::unique_ptr<SqlSession>> SqlSession::openDatabase(const std::string& path)
{
    std::unique_ptr<SqlSession> s(new SqlSession);
    if (sqlite3_open_v2(path.c_str(), &s->m_db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
        return Status::error(path + ": " + (s->m_db ? sqlite3_errmsg(s->m_db) : "cannot open"));
    sqlite3_stmt* st = nullptr;
    int version = -1;
    if (sqlite3_prepare_v2(s->m_db, "PRAGMA user_version", -1, &st, nullptr) == SQLITE_OK
        && sqlite3_step(st) == SQLITE_ROW)
        version = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (version != SqlDatabase::kSchemaVersion)
        return Status::error(path + ": a gapscope database of schema " + std::to_string(version) + ", not "
            + std::to_string(SqlDatabase::kSchemaVersion));
    return s;
}

SqlSession::~SqlSession()
{
    sqlite3_close(m_db);
}

Status SqlSession::run(const std::string& sql, const ResultSink& sink)
{
    const char* rest = sql.c_str();
    int n = 0;
    while (rest && *rest) {
        sqlite3_stmt* st = nullptr;
        const char* start = rest;
        if (sqlite3_prepare_v2(m_db, rest, -1, &st, &rest) != SQLITE_OK)
            return sqlError(m_db, "statement " + std::to_string(n + 1) + ": " + firstLine(start));
        if (!st)
            continue; // whitespace or a comment
        ++n;
        const int cols = sqlite3_column_count(st);
        if (cols > 0 && sink.begin) {
            std::vector<std::string> names;
            names.reserve(size_t(cols));
            for (int i = 0; i < cols; ++i)
                names.emplace_back(sqlite3_column_name(st, i));
            sink.begin(names);
        }
        int rc;
        std::vector<ResultValue> row(static_cast<size_t>(cols));
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            for (int i = 0; i < cols; ++i)
                row[size_t(i)] = valueOf(st, i);
            if (sink.row && !sink.row(row)) {
                rc = SQLITE_DONE;
                break;
            }
        }
        if (rc != SQLITE_DONE) {
            Status e = sqlError(m_db, "statement " + std::to_string(n) + ": " + firstLine(start));
            sqlite3_finalize(st);
            return e;
        }
        sqlite3_finalize(st);
        if (cols > 0 && sink.end)
            sink.end();
    }
    if (n == 0)
        return Status::error("no SQL statement given");
    return Status::ok();
}

// --- SqlDatabase ---------------------------------------------------------------------------------

Expected<std::unique_ptr<SqlDatabase>> SqlDatabase::open(const std::string& path, bool append)
{
    struct stat sb { };
    const bool exists = ::stat(path.c_str(), &sb) == 0;
    if (exists && !append)
        return Status::error(path + ": exists (--append adds to it)");
    std::unique_ptr<SqlDatabase> d(new SqlDatabase);
    d->m_path = path;
    if (sqlite3_open_v2(path.c_str(), &d->m_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK)
        return Status::error(path + ": " + (d->m_db ? sqlite3_errmsg(d->m_db) : "cannot open"));
    if (exists) {
        sqlite3_stmt* st = nullptr;
        int version = -1;
        if (sqlite3_prepare_v2(d->m_db, "PRAGMA user_version", -1, &st, nullptr) == SQLITE_OK
            && sqlite3_step(st) == SQLITE_ROW)
            version = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        if (version < 0)
            return Status::error(path + ": not an SQLite database");
        if (version != kSchemaVersion)
            return Status::error(path + ": not a gapscope database of schema " + std::to_string(kSchemaVersion)
                + " (user_version " + std::to_string(version) + ")");
    }
    // Bulk writes: no journal on disk, no sync per transaction (a failed export leaves a file to delete).
    if (Status s = d->exec("PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF; PRAGMA cache_size=-65536"); !s)
        return s;
    if (!exists) {
        std::string create = "CREATE TABLE strings(id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);\n";
        for (const TableDef& t : tableDefs())
            create += schemaOf(t);
        create += "PRAGMA user_version=" + std::to_string(kSchemaVersion) + ";";
        if (Status s = d->exec(create); !s)
            return s;
    } else {
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(d->m_db, "SELECT id, text FROM strings", -1, &st, nullptr) != SQLITE_OK)
            return sqlError(d->m_db, path + ": reading its strings");
        while (sqlite3_step(st) == SQLITE_ROW)
            d->m_strings.emplace(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)),
                                     size_t(sqlite3_column_bytes(st, 1))),
                sqlite3_column_int64(st, 0));
        sqlite3_finalize(st);
    }
    if (sqlite3_prepare_v2(d->m_db, "INSERT INTO strings VALUES(?, ?)", -1, &d->m_addString, nullptr) != SQLITE_OK)
        return sqlError(d->m_db, path + ": strings");
    return d;
}

SqlDatabase::~SqlDatabase()
{
    sqlite3_finalize(m_addString);
    sqlite3_close(m_db);
}

int64_t SqlDatabase::intern(std::string_view text)
{
    auto it = m_strings.find(std::string(text));
    if (it != m_strings.end())
        return it->second;
    const int64_t id = int64_t(m_strings.size()) + 1;
    sqlite3_bind_int64(m_addString, 1, id);
    sqlite3_bind_text(m_addString, 2, text.data(), int(text.size()), SQLITE_TRANSIENT);
    const int rc = sqlite3_step(m_addString);
    sqlite3_reset(m_addString);
    if (rc != SQLITE_DONE)
        return -1;
    m_strings.emplace(std::string(text), id);
    return id;
}

Status SqlDatabase::exec(const std::string& sql)
{
    char* err = nullptr;
    if (sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
        Status s = Status::error(m_path + ": " + (err ? err : "SQLite error") + " (" + firstLine(sql.c_str()) + ")");
        sqlite3_free(err);
        return s;
    }
    return Status::ok();
}

int64_t SqlDatabase::nextCaptureId() const
{
    sqlite3_stmt* st = nullptr;
    int64_t next = 1;
    if (sqlite3_prepare_v2(m_db, "SELECT max(capture) FROM captures", -1, &st, nullptr) == SQLITE_OK
        && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        next = sqlite3_column_int64(st, 0) + 1;
    sqlite3_finalize(st);
    return next;
}

Status SqlDatabase::write(const TraceTables& tables, const std::vector<TableId>& which)
{
    if (Status s = exec("BEGIN"); !s)
        return s;
    for (const TableDef& t : tableDefs()) {
        if (!which.empty() && std::find(which.begin(), which.end(), t.id) == which.end())
            continue;
        std::string insert = std::string("INSERT INTO \"") + storedName(t) + "\" VALUES(";
        for (size_t i = 0; i < t.columns.size(); ++i)
            insert += i ? ",?" : "?";
        insert += ")";
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(m_db, insert.c_str(), -1, &st, nullptr) != SQLITE_OK)
            return sqlError(m_db, m_path + ": " + insert);
        auto rows = tables.open(t.id);
        while (rows->next()) {
            for (size_t i = 0; i < t.columns.size(); ++i) {
                const Cell c = rows->cell(i);
                const int k = int(i) + 1;
                switch (c.kind) {
                case Cell::Kind::Null:
                    sqlite3_bind_null(st, k);
                    break;
                case Cell::Kind::Integer:
                    sqlite3_bind_int64(st, k, c.i);
                    break;
                case Cell::Kind::Real:
                    sqlite3_bind_double(st, k, c.d);
                    break;
                case Cell::Kind::Text:
                    if (t.columns[i].interned) {
                        const int64_t id = intern(c.s);
                        if (id < 0) {
                            sqlite3_finalize(st);
                            return sqlError(m_db, m_path + ": writing strings");
                        }
                        sqlite3_bind_int64(st, k, id);
                    } else {
                        sqlite3_bind_text(st, k, c.s.data(), int(c.s.size()), SQLITE_STATIC); // stepped before it moves
                    }
                    break;
                }
            }
            if (sqlite3_step(st) != SQLITE_DONE) {
                Status e = sqlError(m_db, m_path + ": writing " + t.name);
                sqlite3_finalize(st);
                return e;
            }
            sqlite3_reset(st);
        }
        sqlite3_finalize(st);
    }
    return exec("COMMIT");
}

Status SqlDatabase::finish()
{
    // The small tables by step; the large ones by capture only (a query of one capture, or grouped by
    // capture, reads its rows in order without a sort; more would double the file).
    return exec("CREATE INDEX IF NOT EXISTS steps_step ON steps(capture, rank, step);"
                "CREATE INDEX IF NOT EXISTS bars_step ON bars(capture, rank, step);"
                "CREATE INDEX IF NOT EXISTS collectives_key ON collectives_rows(capture, communicator, seq);"
                "CREATE INDEX IF NOT EXISTS kernels_capture ON kernels_rows(capture);"
                "CREATE INDEX IF NOT EXISTS gaps_capture ON gaps_rows(capture);"
                "CREATE INDEX IF NOT EXISTS host_events_capture ON host_events_rows(capture);");
}

} // namespace gapscope::model::sql
