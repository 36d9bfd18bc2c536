// SPDX-License-Identifier: MIT
#pragma once

// KinetoRawEvent: the fields of one traceEvents element that the importer uses, as KinetoFieldReader
// reads them and KinetoEventParser::dispatch consumes them. Strings are views into the input buffer
// (or into the reader's arena for strings that had escapes) and must outlive the dispatch. Times are
// nanoseconds in the file's clock; -1 / 0 mean absent as commented.

#include <cstdint>
#include <string_view>

namespace gapscope::model::importer {

struct KinetoRawEvent {
    std::string_view ph, cat, name, bp, tidText, collective, dtype, pgName, metaName, labels;
    std::string_view pidText; // a pid given as a string, unquoted
    uint64_t nameHash = 0; // StringPool::hash(name), computed where the event was read
    int64_t ts = 0, dur = -1, pid = 0, tid = 0, id = 0;
    bool hasTs = false, hasPid = false, hasTid = false, hasId = false, pidString = false, tidString = false;
    int64_t device = -1, stream = -1, correlation = 0, bytes = -1, registers = 0, sharedMemory = 0;
    int64_t graphId = 0, graphNodeId = 0, nelems = -1, waitStream = -1;
    uint32_t grid[3] = { 0, 0, 0 };
    uint32_t block[3] = { 0, 0, 0 };
    const char* bad = nullptr;
};

} // namespace gapscope::model::importer
