// SPDX-License-Identifier: MIT
// gapscope-cli query: SQL over a trace (model/sql: the tables, docs/SQL.md: their columns and examples).
#ifdef GAPSCOPE_HAVE_SQL
#include "args.h"
#include "command.h"
#include "largefile.h"
#include "sqlsetup.h"

#include "model/base/json.h"
#include "model/sql/sqlsession.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

namespace gapscope::cli {

namespace {

const char* const kName = "gapscope-cli query: ";

using model::sql::ResultValue;

// Text output: columns as wide as the widest of the first rows (later, wider values push the line on).
class TextOut {
public:
    void begin(const std::vector<std::string>& columns)
    {
        m_columns = columns;
        m_rows.clear();
        m_widths.assign(columns.size(), 0);
        for (size_t i = 0; i < columns.size(); ++i)
            m_widths[i] = columns[i].size();
        m_flushed = false;
    }
    bool row(const std::vector<ResultValue>& row)
    {
        if (m_flushed) {
            print(row);
            return true;
        }
        m_rows.push_back(row);
        for (size_t i = 0; i < row.size(); ++i)
            m_widths[i] = std::max(m_widths[i], shown(row[i]).size());
        if (m_rows.size() >= kWidthRows)
            flush();
        return true;
    }
    void end()
    {
        flush();
        std::printf("(%llu row%s)\n\n", (unsigned long long)m_count, m_count == 1 ? "" : "s");
        m_count = 0;
    }

private:
    static constexpr size_t kWidthRows = 1000;
    static std::string shown(const ResultValue& v) { return v.type == ResultValue::Type::Null ? "NULL" : v.text; }
    void flush()
    {
        if (m_flushed)
            return;
        std::string line, rule;
        for (size_t i = 0; i < m_columns.size(); ++i) {
            line += (i ? "  " : "") + pad(m_columns[i], i, false);
            rule += (i ? "  " : "") + std::string(m_widths[i], '-');
        }
        std::printf("%s\n%s\n", line.c_str(), rule.c_str());
        for (const auto& r : m_rows)
            print(r);
        m_rows.clear();
        m_flushed = true;
    }
    std::string pad(const std::string& s, size_t i, bool right) const
    {
        const size_t w = m_widths[i];
        if (s.size() >= w)
            return s;
        return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
    }
    void print(const std::vector<ResultValue>& row)
    {
        std::string line;
        for (size_t i = 0; i < row.size(); ++i) {
            const bool number = row[i].type == ResultValue::Type::Integer || row[i].type == ResultValue::Type::Real;
            line += (i ? "  " : "") + pad(shown(row[i]), i, number);
        }
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        std::printf("%s\n", line.c_str());
        ++m_count;
    }
    std::vector<std::string> m_columns;
    std::vector<std::vector<ResultValue>> m_rows;
    std::vector<size_t> m_widths;
    bool m_flushed = false;
    uint64_t m_count = 0;
};

std::string csvField(const ResultValue& v)
{
    if (v.type == ResultValue::Type::Null)
        return "";
    if (v.text.find_first_of(",\"\r\n") == std::string::npos)
        return v.text;
    std::string out = "\"";
    for (char c : v.text)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string jsonValue(const ResultValue& v)
{
    switch (v.type) {
    case ResultValue::Type::Null:
        return "null";
    case ResultValue::Type::Integer:
        return v.text;
    case ResultValue::Type::Real:
        return std::isfinite(v.d) ? v.text : "null";
    default: {
        std::string out;
        json::appendEscaped(out, v.text);
        return out;
    }
    }
}

int runQuery(const std::vector<std::string>& args)
{
    ArgParser p("query", "FILE... [SQL]",
        "SQL (SQLite) over the trace: tables kernels, steps, bars, collectives, host_events, gaps, counters, ranks,\n"
        "gpus, captures, labels; times in ns (docs/SQL.md lists every column, with example queries). Several files\n"
        "are one trace, as elsewhere; a database written by `export --sqlite` is queried as it is (every capture\n"
        "in it). The SQL is the last argument, or --file; several statements run in turn.\n"
        "Every event is read (a large file too); the gap analysis runs only when bars, collectives or gaps are\n"
        "asked for.");
    AnalysisFlags f;
    f.addTo(p);
    addStepRuleOption(p, f.stepRule);
    std::string sqlFile;
    bool csv = false, json = false, schema = false;
    p.flag("--tables", "print every table and column (Markdown) and exit", schema);
    p.option("--file", "Q.sql", "read the SQL from this file (then every argument is a trace)", sqlFile);
    p.flag("--csv", "CSV output (a header row, RFC 4180 quoting; a blank line between statements)", csv);
    p.flag("--json", "JSON output: per statement, an array of row objects", json);
    p.setPositionals(0, SIZE_MAX);
    if (int rc = p.parse(args); rc >= 0)
        return rc;
    if (schema) {
        std::printf("%s", model::sql::schemaMarkdown().c_str());
        return kExitOk;
    }
    if (p.positionals().empty())
        return p.usageError("give a trace and the SQL (or --file Q.sql)");
    if (!stepRuleValid("query", f.stepRule, nullptr))
        return kExitUsage;
    if (csv && json)
        return p.usageError("--csv and --json exclude each other");
    std::vector<std::string> files = p.positionals();
    std::string sql;
    if (!sqlFile.empty()) {
        std::ifstream in(sqlFile, std::ios::binary);
        if (!in)
            return p.usageError("cannot read --file " + sqlFile);
        std::stringstream ss;
        ss << in.rdbuf();
        sql = ss.str();
    } else {
        if (files.size() < 2)
            return p.usageError("give a trace and the SQL (or --file Q.sql)");
        sql = files.back();
        files.pop_back();
    }
    // A database of `export --sqlite` is queried as it is (many captures); anything else is a trace.
    const bool database = files.size() == 1 && model::sql::SqlSession::isDatabase(files[0]);
    Expected<std::unique_ptr<SqlSource>> source = std::unique_ptr<SqlSource>();
    std::optional<model::sql::TraceTables> tables;
    if (!database) {
        source = openSqlSource(p, f, files);
        if (!source) {
            std::cerr << kName << source.error() << "\n";
            return kExitFailure;
        }
        for (const auto& w : (*source)->trace.warnings())
            std::cerr << kName << "warning: " << w << "\n";
        tables.emplace((*source)->trace, (*source)->analysis(), captureInfo(files));
    }
    auto session = database ? model::sql::SqlSession::openDatabase(files[0]) : model::sql::SqlSession::open(*tables);
    if (!session) {
        std::cerr << kName << session.error() << "\n";
        return kExitFailure;
    }
    model::sql::ResultSink sink;
    TextOut text;
    std::vector<std::string> columns;
    bool firstRow = true, firstStatement = true;
    if (csv) {
        sink.begin = [&](const std::vector<std::string>& c) {
            if (!firstStatement)
                std::printf("\n");
            firstStatement = false;
            std::string line;
            for (size_t i = 0; i < c.size(); ++i)
                line += (i ? "," : "") + csvField({ ResultValue::Type::Text, 0, 0, c[i] });
            std::printf("%s\n", line.c_str());
        };
        sink.row = [&](const std::vector<ResultValue>& r) {
            std::string line;
            for (size_t i = 0; i < r.size(); ++i)
                line += (i ? "," : "") + csvField(r[i]);
            std::printf("%s\n", line.c_str());
            return true;
        };
    } else if (json) {
        sink.begin = [&](const std::vector<std::string>& c) {
            columns = c;
            firstRow = true;
            std::printf("[");
        };
        sink.row = [&](const std::vector<ResultValue>& r) {
            std::string line = firstRow ? "\n  {" : ",\n  {";
            firstRow = false;
            for (size_t i = 0; i < r.size(); ++i) {
                if (i)
                    line += ", ";
                json::appendEscaped(line, columns[i]);
                line += ": " + jsonValue(r[i]);
            }
            std::printf("%s}", line.c_str());
            return true;
        };
        sink.end = [&] { std::printf(firstRow ? "]\n" : "\n]\n"); };
    } else {
        sink.begin = [&](const std::vector<std::string>& c) { text.begin(c); };
        sink.row = [&](const std::vector<ResultValue>& r) { return text.row(r); };
        sink.end = [&] { text.end(); };
    }
    Status s = (*session)->run(sql, sink);
    std::fflush(stdout);
    if (!s) {
        std::cerr << kName << s.message() << "\n";
        return kExitUsage;
    }
    return kExitOk;
}

} // namespace

GAPSCOPE_CLI_COMMAND(query, "query", "SQL over a trace's kernels, steps, bars, collectives, gaps, ...", runQuery);

} // namespace gapscope::cli
#endif
