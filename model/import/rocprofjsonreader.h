// SPDX-License-Identifier: MIT
#pragma once

// RocprofJsonReader: streams a rocprofv3 JSON file (`rocprofv3 --kernel-trace --hip-trace
// --output-format json`: results.json, plain or gzip) into a StagedTrace, the source "rocprofv3".
//
// Algorithm: JsonCursor walks the document - {"rocprofiler-sdk-tool": [ one object per process ]} -
// and brings each record it reads into the window whole, where RocprofJsonRecords parses it in place:
// each process's metadata and strings (whole), its agents, kernel_symbols and, under buffer_records,
// kernel_dispatch, hip_api, memory_copy and marker_api (one element at a time). The other members are
// skipped without being held; the records of buffer_records' other arrays (hsa_api, rccl_api,
// memory_allocation, ...) are counted as not read (import_skipped_events). Memory is the window plus one record,
// whatever the file's size (the kernel dispatches of a long run are most of its bytes).
//
// Errors: JSON that is not rocprofv3's (no "rocprofiler-sdk-tool" array) fails saying what it is not;
// malformed JSON fails with the byte offset (of the decompressed data for .gz). A container of the wrong
// type (kernel_dispatch as an object) is skipped with a warning (import_bad_metadata); a record with a
// missing field or one of the wrong type is skipped, counted (import_bad_events) and, for the first ten,
// named in a warning with its byte offset and field. A file that ends early keeps what was read, with a
// warning and import_truncated. A file without GPU work (no kernel dispatch, no memory copy) fails:
// nothing to import, saying what it holds instead.
//
// Threading: one reader per thread.

#include "model/import/bytesource.h"
#include "model/import/jsonwindow.h"
#include "model/import/rocprofjsonrecords.h"
#include "model/import/stagedtrace.h"

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace gapscope::model::importer {

class JsonCursor;
class RocprofRowConverter;

class RocprofJsonReader {
public:
    struct Options {
        size_t windowBytes = 1u << 20;
        size_t maxRecordBytes = 256u << 20; // one record larger than this is an error
        std::function<bool(uint64_t fileBytesRead)> progress; // return false to cancel
    };

    RocprofJsonReader(ByteSource& source, StagedTrace& out, Options options);
    ~RocprofJsonReader();
    Status read();
    // True when `head` (the first bytes of a JSON document) opens the object with
    // "rocprofiler-sdk-tool" as its first key.
    static bool looksLikeRocprofv3(const char* head, size_t n);

private:
    Status document();
    Status process();
    Status member(const std::string& key);
    Status records(RocprofJsonRecords::Kind kind, const std::string& what);
    Status record(RocprofJsonRecords::Kind kind, const std::string& what, size_t limit);
    Expected<bool> open(char bracket, const std::string& what);
    void badRecord(uint64_t offset, const std::string& what, const std::string& error);
    Status finish();

    ByteSource& m_source;
    StagedTrace& m_out;
    Options m_options;
    std::unique_ptr<JsonWindow> m_window;
    std::unique_ptr<JsonCursor> m_cursor;
    std::unique_ptr<RocprofRowConverter> m_rows;
    std::unique_ptr<RocprofJsonRecords> m_records;
    std::map<std::string, uint64_t> m_notRead; // buffer_records arrays not read -> records
    uint64_t m_badRecords = 0;
    uint64_t m_read = 0; // records read
    bool m_sawTool = false;
};

} // namespace gapscope::model::importer
