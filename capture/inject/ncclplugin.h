// SPDX-License-Identifier: MIT
#pragma once

// The NCCL profiler plugin inside libgapscope-inject.so (NCCL_PROFILER_PLUGIN names the library).
// NCCL ships no header for this ABI, so ncclplugin.cpp declares the structs it reads itself, after
// NCCL's ext-profiler headers: v5 (NCCL 2.26-2.28, 64-bit event type), v4 (2.25), v3 (2.23-2.24).
// NCCL looks for the highest version it knows first, so 2.28 takes ncclProfiler_v5 and older
// releases fall back to v4 or v3.
//
// What it records: one CollectiveRecord per collective (op, count, datatype, algorithm, protocol,
// channels, root, sequence number, communicator) and per point-to-point call, with host
// CLOCK_REALTIME times at NCCL's start/stop of the event. Kernel time comes from CUPTI; per-channel
// GPU timing (KernelCh, GPU global timer) is not activated: it slowed graph replays 2x (CAPTURE.md).
// The activation mask is 0 while idle, so NCCL skips the plugin entirely.
//
// Threading: NCCL calls from its own threads; handlers use a fixed slot ring and the lock-free
// collective queue. Never blocks, never allocates after init.

namespace gapscope::capture::inject {

// Switches the mask of every communicator seen so far (and of those initialised later).
void ncclSetRecording(bool on);

} // namespace gapscope::capture::inject
