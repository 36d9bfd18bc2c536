// SPDX-License-Identifier: MIT
#pragma once

// Importers: open the traces people already have.
//   - Kineto / torch.profiler / SGLang / vLLM Chrome-trace JSON (.json or gzip .json.gz; one file per
//     rank, opened together into one trace with one rank each);
//   - Nsight Systems SQLite exports (`nsys export --type sqlite`; one report may hold several ranks) and
//     nvprof files;
//   - AMD's profilers: rocprofv3 JSON (rocprofiler-sdk, `--output-format json`), rocprof v1 kernel
//     traces as CSV or SQLite (its KERN table).
// The format is recognised from the content, not the file name. openTrace() (model/open/traceopen.h)
// dispatches here for anything that is not a .gapscope file.
//
// importTraces parses the files in parallel (ReadOptions::threads, 0 = one per file up to the
// hardware threads), aligns their clocks, assigns ranks, and returns one Trace whose warnings and
// header counters name everything skipped or damaged (unknown event kinds, a truncated file, bad
// rows). Malformed input fails with the file and byte offset. Steps are not found here: openTrace finds
// them once, after any reader (model/steps). The algorithm and mapping are described in model/import/README.md.
//
// Threading: each call is independent.

#include "model/io/tracefile.h"
#include "model/trace/trace.h"

#include <string>
#include <vector>

namespace gapscope::model {

Expected<Trace> importTraces(const std::vector<std::string>& paths, const ReadOptions& options = {});

// True when `path` looks like something importTraces reads (gzip, JSON object/array, SQLite, a Perfetto
// trace, rocprof CSV).
bool isImportable(const std::string& path);

// The formats importTraces reads, as a phrase for messages: "Kineto / Chrome-trace JSON (.json,
// .json.gz), ...".
const char* importableFormats();

} // namespace gapscope::model
