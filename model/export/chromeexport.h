// SPDX-License-Identifier: MIT
#pragma once

// ChromeExport: writes a Trace as Chrome trace-event JSON (chrome://tracing, Perfetto UI), streamed:
// no document is built in memory, so traces of any size export in constant memory.
//
// Mapping (names and the events covered follow exportrules.h, as the Perfetto export does):
// process = rank ("rank N · host · GPU"), thread = lane (GPU stream id, host thread id for CPU API and
// NVTX, a separate track for NCCL collectives); complete events ("ph":"X") with ts/dur in
// microseconds relative to the trace start (3 decimals: nanosecond precision survives the doubles);
// kernel grid/block, correlation ids, memop sizes and collective details in args; launch -> GPU
// flow events ("s"/"f") from each CUDA API call to the GPU events it launched; step boundaries as
// instant events on each rank. Thread-safe (reads the trace only).

#include "model/trace/trace.h"

#include <cstdio>
#include <string>

namespace gapscope::model {

struct ChromeExportOptions {
    TimeNs from = INT64_MIN; // only events overlapping [from, to)
    TimeNs to = INT64_MAX;
    bool flows = true;
};

struct ChromeExportStats {
    uint64_t events = 0; // trace events written (not counting metadata and flows)
    uint64_t flows = 0;
    uint64_t bytes = 0;
};

Expected<ChromeExportStats> exportChromeJson(
    const Trace& trace, const std::string& path, const ChromeExportOptions& options = {});
// To an open stream (tests, pipes).
Expected<ChromeExportStats> exportChromeJson(
    const Trace& trace, std::FILE* out, const ChromeExportOptions& options = {});

} // namespace gapscope::model
