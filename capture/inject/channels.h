// SPDX-License-Identifier: MIT
#pragma once

// Channels: everything shared between the traced application's threads (CUPTI buffer and API
// callbacks, NVTX hooks, the NCCL profiler plugin) and the injection library's own thread.
//
// The callbacks only read the atomic switches and push fixed-size records into the bounded
// lock-free queues below; a full queue costs the record (counted), never a wait. The queues and
// the buffer pool are allocated on the first arm (allocate()) and never freed while the process
// lives, so a callback racing with a disarm still writes into valid memory.
//
// Threading: switches are atomics; queues are MPMC; allocate() runs on the library's thread only.

#include "capture/inject/boundedqueue.h"
#include "capture/inject/bufferpool.h"
#include "capture/inject/records.h"

#include <atomic>
#include <cstdint>
#include <memory>

namespace gapscope::capture::inject {

struct Channels {
    // NVTX hook mode: 0 = off (return at once), 1 = step detection (push/start names only),
    // 2 = recording (every call).
    std::atomic<int> nvtxMode { 0 };
    // The NCCL plugin records collectives only while this is set.
    std::atomic<bool> ncclRecording { false };

    std::atomic<BoundedQueue<StepMarker>*> markers { nullptr };
    std::atomic<BoundedQueue<NvtxRecord>*> nvtx { nullptr };
    std::atomic<BoundedQueue<CollectiveRecord>*> collectives { nullptr };
    std::atomic<BufferPool*> pool { nullptr };

    // Losses (cumulative for the process; the session reports differences per capture).
    std::atomic<uint64_t> markersDropped { 0 };
    std::atomic<uint64_t> nvtxDropped { 0 };
    std::atomic<uint64_t> collectivesDropped { 0 };
    std::atomic<uint64_t> cuptiDropped { 0 };

    // Kernels of CUDA-graph replays were recorded since CUPTI was last attached (the recorder sets
    // it): cuptiFinalize then faults the process's next replays (H100, driver 580), so CUPTI stays.
    std::atomic<bool> graphKernelsRecorded { false };

    // Set by the NCCL plugin when NCCL loads it (version 3..5) and from its communicators.
    std::atomic<int> ncclPluginVersion { 0 };
    std::atomic<int> ncclRank { -1 };
    std::atomic<int> ncclWorldSize { 0 };

    // Allocates queues and the buffer pool once (later calls keep the first sizes).
    void allocate(size_t bufferBytes, size_t bufferCount);

    void pushMarker(const StepMarker& m)
    {
        auto* q = markers.load(std::memory_order_acquire);
        if (!q || !q->tryPush(m))
            markersDropped.fetch_add(1, std::memory_order_relaxed);
    }

private:
    std::unique_ptr<BoundedQueue<StepMarker>> m_markers;
    std::unique_ptr<BoundedQueue<NvtxRecord>> m_nvtx;
    std::unique_ptr<BoundedQueue<CollectiveRecord>> m_collectives;
    std::unique_ptr<BufferPool> m_pool;
};

// The process-wide instance used by the exported entry points and callbacks.
Channels& channels();

} // namespace gapscope::capture::inject
