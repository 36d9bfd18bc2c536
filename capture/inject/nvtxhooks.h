// SPDX-License-Identifier: MIT
#pragma once

// NVTX hooks: libgapscope-inject.so is also an NVTX injection library (NVTX_INJECTION64_PATH names
// it; gapscope-agent launch sets it). NVTX then calls our handlers for push/pop, start/end and
// marks, in every domain. While the channels say "off" a handler returns at once; for step
// detection it queues push/start names; while recording it queues every call (fixed-size records,
// names cut at 39 bytes and flagged). Matching names against the step pattern happens on the
// library's own thread, never here.
//
// Threading: handlers run on application threads; they touch only thread-locals, atomics and the
// lock-free NVTX queue. String and domain registrations allocate (rare, once per string).

#include <cstdint>
#include <string>
#include <vector>

namespace gapscope::capture::inject {

// Current time in the trace clock (CLOCK_REALTIME ns) and the OS thread id (cached per thread).
int64_t nowRealtimeNs();
uint32_t currentTid();

// True once NVTX has called InitializeInjectionNvtx2 in this process.
bool nvtxHooksInstalled();

// The calling thread's open NVTX push/pop ranges (all domains), outermost first, kept while
// setNvtxStackKept(true) (graphnodes.h reads it when the thread builds a graph node). Each level
// costs a copy of its name (at most kNvtxStackNameBytes - 1 bytes) at push; levels past
// kNvtxStackDepth read "…".
constexpr int kNvtxStackDepth = 32;
constexpr int kNvtxStackNameBytes = 64;
void setNvtxStackKept(bool on);
std::vector<std::string> nvtxStackOfThisThread();

} // namespace gapscope::capture::inject
