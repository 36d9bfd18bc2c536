// SPDX-License-Identifier: MIT
#pragma once

// CsvReader: a strict reader of comma-separated values (RFC 4180) from a ByteSource, record by record,
// with the line and column of anything malformed.
//
// Grammar: records end with LF or CRLF (the last one may end at the end of the file); fields are
// separated by commas; a field is either unquoted (no quote, comma or line end in it) or quoted ("...",
// where "" stands for one quote and commas and line ends are data). Anything else is an error: a quote
// inside an unquoted field, text after a closing quote, a CR not followed by LF, a quoted field still
// open at the end of the file. A malformed record comes back with its error and the place (1-based
// line and column, in bytes); the reader goes on at the next line, so the records around it are kept.
// A UTF-8 byte order mark before the first record and blank lines are skipped.
//
// Memory: a read buffer and the current record, whatever the file size. Threading: one thread.

#include "model/import/bytesource.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gapscope::model::importer {

class CsvReader {
public:
    struct Record {
        std::vector<std::string> fields;
        std::vector<uint32_t> columns; // the column of each field's first byte
        uint64_t line = 0; // where the record starts
        bool lineEnded = false; // false: the input ended inside the record (a file cut short, or no final line end)
        std::string error; // empty: well formed
        uint64_t errorLine = 0;
        uint32_t errorColumn = 0;
    };

    explicit CsvReader(ByteSource& source);

    // The next record into `r`: false at the end of the input. Errors of the input itself (a read
    // failing) are the Status; a malformed record is returned with `error` set.
    Expected<bool> next(Record& r);
    // The line the reader is on (after the last record read: the number of lines read).
    uint64_t line() const { return m_line; }

private:
    enum class State { FieldStart, Unquoted, Quoted, QuoteInQuoted };
    Expected<int> get(); // the next byte, or -1 at the end of the input
    bool take(int c, Record& r);
    void endField(Record& r);
    void fail(Record& r, const std::string& what, uint64_t line, uint32_t column);
    Expected<bool> malformedLine(Record& r);
    Status skipLine();

    ByteSource& m_source;
    std::unique_ptr<char[]> m_buf;
    size_t m_pos = 0;
    size_t m_size = 0;
    uint64_t m_line = 1;
    uint32_t m_column = 0; // of the last byte read
    bool m_eof = false;
    bool m_started = false;
    State m_state = State::FieldStart; // of the record being read
    std::string m_field;
    uint64_t m_quoteLine = 0; // where the open quoted field started
    uint32_t m_quoteColumn = 0;
};

// A table in a CSV file, read the way the importers read one: the header line, then every record.
struct CsvTable {
    std::vector<std::string> header;
    uint64_t records = 0; // after the header, malformed ones included
    uint64_t cutAtLine = 0; // the line of a row the input ends inside (a file cut short); 0: none
};

// Reads the header (an empty input, or a malformed header, fails: "PATH: not a WHAT: ..."), hands it to
// `header` (which may refuse it), then each record: one with the header's field count to `row`, a
// malformed one or one with another field count to `bad(line, column, why)` (the records around it go
// on); a record the input ends inside stops the table (`cutAtLine`).
Expected<CsvTable> readCsvTable(ByteSource& source, const std::string& what,
    const std::function<Status(const std::vector<std::string>& header)>& header,
    const std::function<void(const CsvReader::Record& record)>& row,
    const std::function<void(uint64_t line, uint32_t column, const std::string& why)>& bad);

} // namespace gapscope::model::importer
