// SPDX-License-Identifier: MIT
#include "model/import/csvreader.h"

#include <cstring>

namespace gapscope::model::importer {

namespace {
constexpr size_t kBufferBytes = 256u << 10;
} // namespace

CsvReader::CsvReader(ByteSource& source)
    : m_source(source)
    , m_buf(std::make_unique<char[]>(kBufferBytes))
{
}

Expected<int> CsvReader::get()
{
    while (m_pos == m_size) {
        if (m_eof)
            return -1;
        auto n = m_source.read(m_buf.get(), kBufferBytes);
        if (!n)
            return n.status();
        m_pos = 0;
        m_size = *n;
        if (m_size == 0) {
            m_eof = true;
            return -1;
        }
        if (!m_started && m_size >= 3 && std::memcmp(m_buf.get(), "\xEF\xBB\xBF", 3) == 0)
            m_pos = 3; // a UTF-8 byte order mark
        m_started = true;
    }
    ++m_column;
    return static_cast<unsigned char>(m_buf[m_pos++]);
}

void CsvReader::fail(Record& r, const std::string& what, uint64_t line, uint32_t column)
{
    if (!r.error.empty())
        return;
    r.error = what;
    r.errorLine = line;
    r.errorColumn = column;
}

// Past the next line end (quotes no longer count): where reading goes on after a malformed record.
Status CsvReader::skipLine()
{
    for (;;) {
        auto c = get();
        if (!c)
            return c.status();
        if (*c < 0)
            return Status::ok();
        if (*c == '\n') {
            ++m_line;
            m_column = 0;
            return Status::ok();
        }
    }
}

void CsvReader::endField(Record& r)
{
    if (r.columns.size() <= r.fields.size())
        r.columns.push_back(m_column); // an empty field: where its separator or line end is
    r.fields.push_back(std::move(m_field));
    m_field.clear();
    m_state = State::FieldStart;
}

// One byte of a field (not a line end outside quotes). False: the record is malformed (`r.error`).
bool CsvReader::take(int c, Record& r)
{
    switch (m_state) {
    case State::FieldStart:
        r.columns.push_back(m_column);
        if (c == ',') {
            endField(r);
        } else if (c == '"') {
            m_quoteLine = m_line;
            m_quoteColumn = m_column;
            m_state = State::Quoted;
        } else {
            m_field += char(c);
            m_state = State::Unquoted;
        }
        return true;
    case State::Unquoted:
        if (c == '"') {
            fail(r, "a quote inside an unquoted field", m_line, m_column);
            return false;
        }
        if (c == ',')
            endField(r);
        else
            m_field += char(c);
        return true;
    case State::Quoted:
        if (c == '"') {
            m_state = State::QuoteInQuoted;
            return true;
        }
        if (c == '\n') {
            ++m_line;
            m_column = 0;
        }
        m_field += char(c);
        return true;
    case State::QuoteInQuoted:
        if (c == '"') {
            m_field += '"';
            m_state = State::Quoted;
        } else if (c == ',') {
            endField(r);
        } else {
            fail(r, "text after the closing quote of a field", m_line, m_column);
            return false;
        }
        return true;
    }
    return true;
}

Expected<bool> CsvReader::next(Record& r)
{
    r.fields.clear();
    r.columns.clear();
    r.error.clear();
    r.line = m_line;
    r.lineEnded = true;
    m_state = State::FieldStart;
    m_field.clear();
    for (;;) {
        auto got = get();
        if (!got)
            return got.status();
        int c = *got;
        if (c < 0) { // the end of the input: the last record may end without a line end
            r.lineEnded = false;
            if (m_state == State::Quoted)
                fail(r, "a quoted field is not closed before the end of the file", m_quoteLine, m_quoteColumn);
            if (m_state != State::FieldStart || !r.fields.empty())
                endField(r);
            return !r.fields.empty();
        }
        if (c == '\r' && m_state != State::Quoted) {
            auto lf = get();
            if (!lf)
                return lf.status();
            if (*lf != '\n') {
                fail(r, "a carriage return not followed by a line feed", m_line, m_column - (*lf >= 0));
                if (*lf >= 0)
                    return malformedLine(r);
                r.lineEnded = false;
                endField(r);
                return true;
            }
            c = '\n';
        }
        if (c == '\n' && m_state != State::Quoted) {
            const bool blank = m_state == State::FieldStart && r.fields.empty();
            ++m_line;
            m_column = 0;
            if (!blank) {
                endField(r);
                return true;
            }
            r.line = m_line;
            continue;
        }
        if (!take(c, r))
            return malformedLine(r);
    }
}

// The rest of a malformed record's line is skipped; the record comes back with what it had.
Expected<bool> CsvReader::malformedLine(Record& r)
{
    if (Status st = skipLine(); !st)
        return st;
    endField(r);
    return true;
}

Expected<CsvTable> readCsvTable(ByteSource& source, const std::string& what,
    const std::function<Status(const std::vector<std::string>& header)>& header,
    const std::function<void(const CsvReader::Record& record)>& row,
    const std::function<void(uint64_t line, uint32_t column, const std::string& why)>& bad)
{
    CsvReader csv(source);
    CsvReader::Record r;
    auto first = csv.next(r);
    if (!first)
        return first.status();
    if (!*first || !r.error.empty())
        return Status::error(source.path() + ": not a " + what + ": "
            + (*first ? "line " + std::to_string(r.errorLine) + ", column " + std::to_string(r.errorColumn) + ": "
                        + r.error
                      : std::string("an empty file")));
    CsvTable table;
    table.header = r.fields;
    if (Status st = header(table.header); !st)
        return st;
    const size_t fieldCount = table.header.size();
    for (;;) {
        auto more = csv.next(r);
        if (!more)
            return more.status();
        if (!*more)
            break;
        ++table.records;
        if (!r.lineEnded && (r.fields.size() < fieldCount || !r.error.empty())) {
            table.cutAtLine = r.line;
            break;
        }
        if (!r.error.empty())
            bad(r.errorLine, r.errorColumn, r.error);
        else if (r.fields.size() != fieldCount)
            bad(r.line, 1,
                std::to_string(r.fields.size()) + " fields where the header names " + std::to_string(fieldCount));
        else
            row(r);
    }
    return table;
}

} // namespace gapscope::model::importer
