// SPDX-License-Identifier: MIT
#pragma once

// PerfettoExport: writes a Trace as a native Perfetto trace (TracePacket / TrackEvent protobuf,
// model/format/perfetto_trace_subset.proto), which ui.perfetto.dev and trace_processor open without
// gapscope, and which stays small: about 10-20 bytes per kernel where Chrome JSON takes ~500.
//
// Mapping (the names and the events covered follow exportrules.h, as the Chrome JSON export does):
//   - one process track per rank ("rank N · host · GPU"), and under it one track per lane (GPU
//     stream, collectives lane, CPU thread's API calls, NVTX ranges), a "steps" track, an
//     "annotations" marker track when the trace has annotations there, and a "budget waterfall"
//     track when an analysis is given: per step the analysis' bars laid end to end over the step
//     window (a bar that gives time back, ns < 0, is an instant at its place);
//   - events are slices (BEGIN/END pairs) with their arguments as debug annotations; a launch API
//     call and each GPU event it launched are joined by a flow (flow id: lane and index of the GPU
//     event); annotations with no lane go to a global "annotations" track;
//   - names, categories, argument names and string values are interned (InternedData, iids stable
//     for the whole file: trace string id + 1, fixed tables after them);
//   - each lane is one packet sequence, cut into blocks of a few ten thousand events at points where
//     no slice is open; each block restarts the sequence (SEQ_INCREMENTAL_STATE_CLEARED, its defaults
//     and interned data again) and declares an incremental clock (id 64, equal to CLOCK_REALTIME at
//     the block's first timestamp), so timestamps are deltas; later packets carry
//     SEQ_NEEDS_INCREMENTAL_STATE. A first packet makes CLOCK_REALTIME the primary trace clock, so
//     absolute times are the trace's own;
//   - blocks are encoded on `threads` threads, zstd-compressed (zstd_compressed_packets, under the
//     512 KiB limit per packet) and written in order: memory stays bounded (a few blocks).
// Slices on one track must nest. On a GPU stream, work that starts before the work before it has
// ended (programmatic dependent launch) goes to the lane's overlap tracks with its real times
// (OverlapLayout, exportrules.h); on other lanes an event that starts inside another but ends after
// it is cut at the other's end and counted (PerfettoExportStats::clamped), not dropped.
//
// Thread-safe (reads the trace and the analysis only).

#include "model/trace/trace.h"

#include <cstdio>
#include <string>

namespace gapscope::model {

class GapAnalyzer;

struct PerfettoExportOptions {
    TimeNs from = INT64_MIN; // only events overlapping [from, to)
    TimeNs to = INT64_MAX;
    bool flows = true;
    bool compress = true; // zstd_compressed_packets; false: plain packets
    int zstdLevel = -1; // zstd's fast mode: about 14 B per kernel, encoding stays the bigger cost
    unsigned threads = 0; // threads of TaskPool::shared(); 0: 2 (encoding is memory-bound beyond)
    uint32_t blockEvents = 32768; // events per sequence block (at least)
    const GapAnalyzer* analysis = nullptr; // adds the "budget waterfall" tracks
    const AnnotationSet* annotations = nullptr; // instead of the trace's (the viewer's edited ones)
};

struct PerfettoExportStats {
    uint64_t events = 0; // trace events written (each one slice)
    uint64_t kernels = 0;
    uint64_t flows = 0;
    uint64_t steps = 0;
    uint64_t annotations = 0;
    uint64_t waterfallBars = 0;
    uint64_t clamped = 0; // events cut at the end of the enclosing event on their track
    uint64_t blocks = 0; // sequence blocks
    uint64_t rawBytes = 0; // packets before compression
    uint64_t bytes = 0; // file size
};

Expected<PerfettoExportStats> exportPerfetto(
    const Trace& trace, const std::string& path, const PerfettoExportOptions& options = {});
// To an open stream (tests, pipes).
Expected<PerfettoExportStats> exportPerfetto(
    const Trace& trace, std::FILE* out, const PerfettoExportOptions& options = {});

} // namespace gapscope::model
