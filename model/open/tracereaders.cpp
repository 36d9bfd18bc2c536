// SPDX-License-Identifier: MIT
#include "model/open/tracereaders.h"

#include "model/import/importer.h"
#include "model/open/traceopen.h"

namespace gapscope::model {
namespace {

Expected<Trace> openGapscope(const std::vector<std::string>& paths, const ReadOptions& options)
{
    return readTraceFile(paths.front(), options);
}

} // namespace

const std::vector<TraceReaderEntry>& TraceReaders::all()
{
    static const std::vector<TraceReaderEntry> table {
        { "gapscope", isGapscopeFile, openGapscope, false },
        { "import", isImportable, importTraces, true }, // Kineto / Chrome JSON (.gz), nsys and nvprof SQLite
    };
    return table;
}

const TraceReaderEntry* TraceReaders::find(const std::string& path)
{
    for (const TraceReaderEntry& e : all())
        if (e.recognises(path))
            return &e;
    return nullptr;
}

} // namespace gapscope::model
