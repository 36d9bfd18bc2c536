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
    CsvReader csv(m_source);
    CsvReader::Record r;
    auto header = csv.next(r);
    if (!header)
        return header.status();
    if (!*header || !r.error.empty())
        return Status::error(m_source.path() + ": not a rocprof kernel trace: "
            + (*header ? place(r.errorLine, r.errorColumn) + ": " + r.error : std::string("an empty file")));
    const std::set<std::string> names(r.fields.begin(), r.fields.end());
    if (Status st = v1.checkColumns(names); !st)
        return st;
    const size_t fieldCount = r.fields.size();
    std::array<int, RocprofV1Rows::kColumns> index; // the CSV field of each column (-1: absent)
    for (size_t c = 0; c < RocprofV1Rows::kColumns; ++c) {
        index[c] = -1;
        for (size_t f = 0; f < r.fields.size(); ++f)
            if (r.fields[f] == RocprofV1Rows::name(RocprofV1Rows::Column(c)))
                index[c] = int(f);
    }
    uint64_t records = 0;
    for (;;) {
        auto more = csv.next(r);
        if (!more)
            return more.status();
        if (!*more)
            break;
        ++records;
        if (!r.lineEnded && (r.fields.size() < fieldCount || !r.error.empty())) {
            const std::string w = m_source.path() + ": line " + std::to_string(r.line)
                + ": the file ends inside this row (cut short?); the rows before it are kept";
            m_out.warnings.push_back(w);
            m_out.count(format::Stat::ImportTruncated, w);
            break;
        }
        if (!r.error.empty()) {
            v1.skipped(place(r.errorLine, r.errorColumn), r.error);
            continue;
        }
        if (r.fields.size() != fieldCount) {
            v1.skipped(place(r.line, 1),
                std::to_string(r.fields.size()) + " fields where the header names " + std::to_string(fieldCount));
            continue;
        }
        RocprofV1Rows::Values values;
        for (size_t c = 0; c < RocprofV1Rows::kColumns; ++c)
            values[c] = index[c] < 0 ? std::string_view() : std::string_view(r.fields[size_t(index[c])]);
        RocprofV1Rows::Column bad;
        std::string error;
        if (!v1.row(values, bad, error))
            v1.skipped(place(r.line, r.columns[size_t(index[bad])]) + " (" + RocprofV1Rows::name(bad) + ")", error);
    }
    if (m_source.truncated()) {
        const std::string w = m_source.path() + ": the gzip stream ends early; kept the rows read before it";
        m_out.warnings.push_back(w);
        m_out.count(format::Stat::ImportTruncated, w);
    }
    return v1.finish(records);
}

} // namespace gapscope::model::importer
