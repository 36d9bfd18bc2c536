// SPDX-License-Identifier: MIT
#include "model/traceopen.h"

#include "model/format/regularfile.h"
#include "model/format/tracereader.h"

#include <fstream>

#ifdef GAPSCOPE_HAVE_IMPORTERS
#include "model/import/importer.h"
#endif

namespace gapscope::model {
namespace importer {
} // lets the using-directive below compile wherever importer.h declares importTraces

bool isGapscopeFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    char magic[8] = {};
    in.read(magic, sizeof magic);
    return in.gcount() == sizeof magic && format::TraceReader::hasMagic(magic, sizeof magic);
}

Expected<Trace> openTrace(const std::vector<std::string>& paths, const ReadOptions& options)
{
    if (paths.empty())
        return Status::error("no trace file given");
    for (const auto& p : paths) // before anything opens it: a FIFO would block, a directory is no trace
        if (Status s = format::checkRegularFile(p); !s)
            return s;
    size_t ours = 0;
    for (const auto& p : paths)
        ours += isGapscopeFile(p) ? 1 : 0;
    if (ours == paths.size()) {
        if (paths.size() > 1)
            return Status::error(
                paths[1] + ": open one .gapscope file at a time (the agent merges ranks into one file)");
        return readTraceFile(paths[0], options);
    }
    if (ours > 0)
        return Status::error("cannot mix .gapscope files with other trace formats");
#ifdef GAPSCOPE_HAVE_IMPORTERS
    using namespace importer;
    for (const auto& p : paths)
        if (!isImportable(p))
            return Status::error(p
                + ": not a .gapscope trace, and no importer recognises it "
                  "(Kineto / torch.profiler JSON, .json.gz, Nsight Systems SQLite)");
    return importTraces(paths, options);
#else
    std::ifstream probe(paths[0], std::ios::binary);
    if (!probe)
        return Status::error(paths[0] + ": cannot open");
    return Status::error(paths[0] + ": not a .gapscope trace (this build has no importers for other formats)");
#endif
}

} // namespace gapscope::model
