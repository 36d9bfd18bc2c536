// SPDX-License-Identifier: MIT
#include "model/open/traceopen.h"

#include "model/format/regularfile.h"
#include "model/format/tracereader.h"
#include "model/open/tracereaders.h"

#include <fstream>

namespace gapscope::model {

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
    std::vector<const TraceReaderEntry*> readers;
    for (const auto& p : paths)
        readers.push_back(TraceReaders::find(p));
    const TraceReaderEntry* gapscope = &TraceReaders::all().front();
    size_t ours = 0;
    for (const TraceReaderEntry* r : readers)
        ours += r == gapscope ? 1 : 0;
    if (ours == paths.size() && paths.size() > 1)
        return Status::error(paths[1] + ": open one .gapscope file at a time (the agent merges ranks into one file)");
    if (ours > 0 && ours < paths.size())
        return Status::error("cannot mix .gapscope files with other trace formats");
    for (size_t i = 0; i < paths.size(); ++i)
        if (!readers[i] || readers[i] != readers[0])
            return Status::error(paths[i]
                + ": not a .gapscope trace, and no importer recognises it "
                  "(Kineto / torch.profiler JSON, .json.gz, Nsight Systems SQLite)");
    return readers[0]->open(paths, options);
}

} // namespace gapscope::model
