// SPDX-License-Identifier: MIT
#pragma once

// ReplayTimer: whole CUDA-graph replays timed by CUDA events, for the light mode (capture
// --detail-every N); GAPSCOPE_LIGHT_EVENTS=0 in the traced process turns it off. CUPTI's own
// graph-level trace (GRAPH_TRACE) crashed graph processes inside libcupti on the H100 box
// (capture/README.md); this records no CUPTI activity at all for the replays it times, so a capture
// in this mode that details no launch leaves no graph kernels behind and CUPTI can be detached.
//
// At the entry of a graph launch that is not detailed, the launching thread records a timing event
// on the launch's stream (skipped while that stream is being captured into a graph: the event would
// become a node of the application's graph); at the launch's exit, a second one. The pair completes
// when the GPU has run everything before the replay and the replay itself: from the first to the
// second is the replay, as CUPTI's graph-level trace gives it, except that where the stream was idle
// the first event completes while the host is still submitting the launch, so the replay's start
// holds that submission (microseconds) and the gap before it is that much shorter. The library's thread resolves
// completed pairs in order into whole-replay kernel records (model/format/wholegraph.h): each time is
// the elapsed time from the previous resolved event, chained from an anchor event whose completion
// was bracketed by cuptiGetTimestamp() on the host (the best of three tries, error about the
// bracket's half width, a few microseconds), so replays lie in the clock of CUPTI's records.
//
// Events come from a fixed pool of pairs (created on first use on the launching thread, in its
// context, and reused; never destroyed while the process runs); a launch that finds none free is
// not timed and counted. Threading: begin()/end() on application threads inside CUPTI callbacks
// (no lock, no allocation after the pool's first use of a slot); start()/stop()/take() on the
// library's thread.

#include "capture/inject/records.h"

#include <cstdint>
#include <vector>

namespace gapscope::capture::inject {

namespace replaytimer {

// Whether the light mode may time replays with events (unless GAPSCOPE_LIGHT_EVENTS=0 in the traced process).
bool allowed();

// From the library's thread: time replays from now on / no more. stop() keeps what is in flight, for
// take() to resolve; the next start() drops what was never resolved.
void start();
void stop();

// From a CUPTI callback of cudaGraphLaunch / cuGraphLaunch (runtime or driver, `perThread` for the
// _ptsz variants), at its entry and exit on the launching thread. `params` is the call's parameter
// block ({exec, stream} for all four), `context` the callback's context.
void begin(void* context, const void* params, bool perThread, uint32_t correlation);
void end(bool launched);

// From the library's thread: whole-replay records of the pairs completed since the last call, in
// order (kind Kernel, graph node format::kWholeGraphNode).
void take(std::vector<GpuRecord>& out);

struct Counts {
    uint64_t timed = 0; // replays resolved into records
    uint64_t noSlot = 0; // launches not timed: every event pair in use
    uint64_t capturing = 0; // launches into a stream being captured: not timed
    uint64_t failed = 0; // a CUDA call failed: not timed
};
Counts counts();

} // namespace replaytimer

} // namespace gapscope::capture::inject
