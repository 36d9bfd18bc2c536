// SPDX-License-Identifier: MIT
#pragma once

// openTrace: opens whatever trace the user has, by content (not by file name): each file goes to the
// first reader of TraceReaders (model/open/tracereaders.h) that recognises it: .gapscope files through
// readTraceFile; Kineto / torch.profiler JSON (.json, .json.gz) and Nsight Systems SQLite through the
// importers (model/import/importer.h). Several paths: one trace. Foreign files are imported together
// (e.g. one Kineto file per rank, aligned by the importer); each .gapscope file is read on its own;
// when that makes several parts (two hosts' captures, or a capture and an import), TraceMerger
// (model/open/tracemerger.h) joins them: ranks of all, clocks aligned by collective ends, rank ids
// that collide renumbered with a warning.

#include "model/tracefile.h"

#include <string>
#include <vector>

namespace gapscope::model {

Expected<Trace> openTrace(const std::vector<std::string>& paths, const ReadOptions& options = {});
// True when `path` starts with the .gapscope magic.
bool isGapscopeFile(const std::string& path);

} // namespace gapscope::model
