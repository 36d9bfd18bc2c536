// SPDX-License-Identifier: MIT
#include "model/import/rocprofdbreader.h"

#include "model/import/rocprofv1rows.h"

#include <sqlite3.h>

namespace gapscope::model::importer {

namespace {
const char* const kTable = "KERN";
}

RocprofDbReader::RocprofDbReader(std::string path, const SqliteDb& db, StagedTrace& out)
    : m_path(std::move(path))
    , m_db(db)
    , m_out(out)
{
}

bool RocprofDbReader::isRocprofDb(const SqliteDb& db)
{
    return db.has(kTable) && !db.has("StringIds") && !db.has("StringTable");
}

Status RocprofDbReader::read()
{
    RocprofRowConverter rows(m_out, "rocprof", "rocprof (v1, SQLite)");
    RocprofV1Rows v1(m_out, rows, m_path);
    if (Status st = v1.checkColumns(m_db.columns(kTable)); !st)
        return st;
    std::vector<std::string> wanted;
    for (size_t c = 0; c < RocprofV1Rows::kColumns; ++c)
        wanted.emplace_back(RocprofV1Rows::name(RocprofV1Rows::Column(c)));
    uint64_t n = 0;
    Status st = m_db.select(kTable, wanted, [&](sqlite3_stmt* s) {
        ++n;
        RocprofV1Rows::Values values;
        for (size_t c = 0; c < RocprofV1Rows::kColumns; ++c)
            values[c] = SqliteDb::text(s, int(c));
        RocprofV1Rows::Column bad;
        std::string error;
        if (!v1.row(values, bad, error))
            v1.skipped(
                std::string("table ") + kTable + ", row " + std::to_string(n) + ", column " + RocprofV1Rows::name(bad),
                error);
    });
    if (!st && n == 0)
        return st;
    if (!st) { // a damaged page part way: the rows before it are kept
        const std::string w = st.message() + "; kept the " + std::to_string(n) + " rows read before it";
        m_out.warnings.push_back(w);
        m_out.count(format::Stat::ImportTruncated, w);
    }
    return v1.finish(n);
}

} // namespace gapscope::model::importer
