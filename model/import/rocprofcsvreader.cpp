// SPDX-License-Identifier: MIT
#include "model/import/rocprofcsvreader.h"

#include "model/import/csvreader.h"
#include "model/import/rocprofv1rows.h"

#include <set>

namespace gapscope::model::importer {

namespace {
const char* const kTool = "rocprof (v1, CSV)";

std::string place(uint64_t line, uint32_t column)
{
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}
} // namespace

RocprofCsvReader::RocprofCsvReader(ByteSource& source, StagedTrace& out)
    : m_source(source)
    , m_out(out)
{
}

bool RocprofCsvReader::looksLikeRocprofCsv(const char* head, size_t n)
{
    const std::string_view text(head, n);
    const std::string_view line = text.substr(0, text.find('\n'));
    auto names = [&line](std::string_view column) {
        for (const char* quote : { "\"", "" }) {
            const std::string q = std::string(quote) + std::string(column) + quote;
            const size_t at = line.find(q);
            if (at != std::string_view::npos && (at == 0 || line[at - 1] == ',' || line[at - 1] == '\xBF')
                && (at + q.size() == line.size() || line[at + q.size()] == ',' || line[at + q.size()] == '\r'))
                return true;
        }
        return false;
    };
    return names("KernelName") && names("gpu-id");
}

Status RocprofCsvReader::read()
{
    RocprofRowConverter rows(m_out, "rocprof", kTool);
    RocprofV1Rows v1(m_out, rows, m_source.path());
    std::array<int, RocprofV1Rows::kColumns> index; // the CSV field of each column (-1: absent)
    auto header = [&](const std::vector<std::string>& fields) {
        if (Status st = v1.checkColumns(std::set<std::string>(fields.begin(), fields.end())); !st)
            return st;
        for (size_t c = 0; c < RocprofV1Rows::kColumns; ++c) {
            index[c] = -1;
            for (size_t f = 0; f < fields.size(); ++f)
                if (fields[f] == RocprofV1Rows::name(RocprofV1Rows::Column(c)))
                    index[c] = int(f);
        }
        return Status::ok();
    };
    auto row = [&](const CsvReader::Record& r) {
        RocprofV1Rows::Values values;
        for (size_t c = 0; c < RocprofV1Rows::kColumns; ++c)
            values[c] = index[c] < 0 ? std::string_view() : std::string_view(r.fields[size_t(index[c])]);
        RocprofV1Rows::Column bad;
        std::string error;
        if (!v1.row(values, bad, error))
            v1.skipped(place(r.line, r.columns[size_t(index[bad])]) + " (" + RocprofV1Rows::name(bad) + ")", error);
    };
    auto table = readCsvTable(m_source, "rocprof kernel trace", header, row,
        [&](uint64_t line, uint32_t column, const std::string& why) { v1.skipped(place(line, column), why); });
    if (!table)
        return table.status();
    rows.truncated(m_source.path(), table->cutAtLine, m_source.truncated());
    return v1.finish(table->records);
}

} // namespace gapscope::model::importer
