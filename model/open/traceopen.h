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

#include "model/io/tracefile.h"

#include <string>
#include <vector>

namespace gapscope::model {

// Then, unless options.detectSteps is false, the steps: StepFinder (model/steps) with options.stepRule, else
// the rule saved with the trace's annotations (stepRuleFor), the stored steps of a capture kept when
// neither names one.
Expected<Trace> openTrace(const std::vector<std::string>& paths, const ReadOptions& options = {});
// The rule openTrace finds the steps of `trace` by: `asked` when given, else the one saved with its
// annotations (AnnotationSet::stepRule: the user's choice in the viewer's Steps menu), else "" (stored
// steps kept, the others found by "auto"). A saved rule that does not parse is left, with a warning.
std::string stepRuleFor(Trace& trace, const std::string& asked);
// The step rule saved with the annotations of a .gapscope file, read without its events ("" when none,
// or not a rule): what decides, before reading, whether a large file can go through its overview.
std::string savedStepRule(const format::TraceReader& reader);
// The step pass of openTrace, for traces that come from elsewhere (a live snapshot): `rule` as
// StepRule::parse reads it; empty keeps stored steps and finds the others by "auto".
Status findSteps(Trace& trace, const std::string& rule);
// True when `path` starts with the .gapscope magic.
bool isGapscopeFile(const std::string& path);

} // namespace gapscope::model
