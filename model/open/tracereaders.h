// SPDX-License-Identifier: MIT
#pragma once

// TraceReaders: the formats openTrace() can read, one entry each: a name, a content test (never the
// file name) and a function that opens the files of that format into one Trace. openTrace asks the
// entries in table order and gives each file to the first that recognises it. Adding a format is one
// reader (a recognise and an open function) and one row in the table (tracereaders.cpp).
//
// `several` says whether one open() call takes several files of the format at once (the importers
// align the clocks of their files themselves); otherwise each file is opened on its own.
//
// Threading: the table is immutable; the functions are as thread-safe as the readers they call.

#include "model/io/tracefile.h"

#include <string>
#include <vector>

namespace gapscope::model {

struct TraceReaderEntry {
    const char* name;
    bool (*recognises)(const std::string& path);
    Expected<Trace> (*open)(const std::vector<std::string>& paths, const ReadOptions& options);
    bool several;
};

class TraceReaders {
public:
    static const std::vector<TraceReaderEntry>& all();
    // The first entry that recognises `path`, or nullptr.
    static const TraceReaderEntry* find(const std::string& path);
};

} // namespace gapscope::model
