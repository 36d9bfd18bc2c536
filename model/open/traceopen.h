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

// Then, unless options.detectSteps is false, the steps: StepFinder (model/steps) with options.stepRule, the
// stored steps of a capture kept when no rule is given.
Expected<Trace> openTrace(const std::vector<std::string>& paths, const ReadOptions& options = {});
// The step pass of openTrace, for traces that come from elsewhere (a live snapshot): `rule` as
// StepRule::parse reads it; empty keeps stored steps and finds the others by "auto".
Status findSteps(Trace& trace, const std::string& rule);
// True when `path` starts with the .gapscope magic.
bool isGapscopeFile(const std::string& path);

} // namespace gapscope::model
