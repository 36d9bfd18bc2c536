// SPDX-License-Identifier: MIT
#pragma once

// RocprofCsvReader: rocprof v1's kernel trace as CSV (`rocprof --timestamp on -o results.csv`; plain
// or gzip) into a StagedTrace: CsvReader's records, the header naming the columns, each row through
// RocprofV1Rows (the same as the SQLite file's KERN rows). A malformed line (CSV syntax, a field count
// that differs from the header's, a number that does not parse) is skipped with its line and column
// in a warning and counted; the rows around it are kept. The source is "rocprof".
//
// Threading: one reader per thread.

#include "model/import/bytesource.h"
#include "model/import/stagedtrace.h"

#include <string>

namespace gapscope::model::importer {

class RocprofCsvReader {
public:
    RocprofCsvReader(ByteSource& source, StagedTrace& out);
    Status read();
    // True when `head` (the first bytes of a file) starts with a rocprof v1 kernel trace header: a
    // first line that names KernelName and gpu-id among its columns.
    static bool looksLikeRocprofCsv(const char* head, size_t n);

private:
    ByteSource& m_source;
    StagedTrace& m_out;
};

} // namespace gapscope::model::importer
