// SPDX-License-Identifier: MIT
#pragma once

// Fixed-size records of the injection library: what CUPTI activity records are converted into,
// what the application-thread callbacks (CUPTI callbacks, NVTX, NCCL) leave in the lock-free queues
// for the library's own thread, and nothing else. All are trivially copyable, sizes pinned below.
//
// Times are CLOCK_REALTIME nanoseconds (CUPTI's timestamps on Linux, clock_gettime in callbacks).

#include <cstdint>

namespace gapscope::capture::inject {

enum class GpuRecordKind : uint8_t { None = 0, Kernel, Memcpy, Memset, Api, Sync };

// One converted CUPTI activity record (kernel, memcpy, memset, runtime/driver API call, sync).
struct GpuRecord {
    GpuRecordKind kind = GpuRecordKind::None;
    uint8_t copyKind = 0; // pb::CopyKind (memcpy)
    uint8_t syncKind = 0; // pb::SyncKind (sync)
    uint8_t apiDomain = 0; // 0 = runtime, 1 = driver (api)
    uint32_t flags = 0; // bit 0: asynchronous (memcpy/memset)
    int64_t start = 0;
    int64_t end = 0;
    uint32_t correlation = 0;
    uint32_t device = 0;
    uint32_t context = 0;
    uint32_t stream = 0; // GPU stream; for api records the OS thread id
    uint32_t cbid = 0; // api: callback id
    uint32_t pid = 0; // api: process id
    uint64_t bytes = 0; // memcpy/memset size
    uint64_t graphId = 0;
    uint64_t graphNodeId = 0;
    const char* name = nullptr; // kernel name owned by CUPTI (stable while the module is loaded)
    uint32_t grid[3] = { 0, 0, 0 };
    uint32_t block[3] = { 0, 0, 0 };
    uint32_t registers = 0;
    uint32_t sharedStatic = 0;
    uint32_t sharedDynamic = 0;
    uint32_t reserved = 0;
};
static_assert(sizeof(GpuRecord) == 120, "GpuRecord layout changed");

// Where a step boundary was seen on the host.
enum class MarkerSource : uint8_t { GraphLaunch = 1, Nvtx = 2, AnchorLaunch = 3 };

// A step boundary seen by an application-thread callback (CUPTI callback API or NVTX).
struct StepMarker {
    int64_t time = 0; // host CLOCK_REALTIME at the boundary event
    uint32_t correlation = 0; // CUPTI correlation id of the boundary API call (0: not known, NVTX)
    uint32_t tid = 0;
    MarkerSource source = MarkerSource::GraphLaunch;
    uint8_t pad[7] = {};
    const char* symbol = nullptr; // anchor rule: kernel symbol of the launch (CUDA-owned), matched later
};
static_assert(sizeof(StepMarker) == 32, "StepMarker layout changed");

enum class NvtxOp : uint8_t { Push = 1, Pop, Start, End, Mark };

// One NVTX call (recorded only while recording).
struct NvtxRecord {
    int64_t time = 0;
    uint64_t rangeId = 0; // Start/End pairing
    uint64_t domain = 0; // nvtxDomainHandle_t value, 0 = default domain
    uint32_t tid = 0;
    NvtxOp op = NvtxOp::Push;
    uint8_t depth = 0; // push/pop nesting depth of the thread (push: depth of the new range)
    uint8_t truncated = 0;
    uint8_t pad = 0;
    char name[40] = {};
};
static_assert(sizeof(NvtxRecord) == 72, "NvtxRecord layout changed");

// One NCCL collective or point-to-point operation (from the profiler plugin).
struct CollectiveRecord {
    int64_t start = 0;
    int64_t end = 0;
    uint64_t sequence = 0;
    uint64_t count = 0;
    uint64_t comm = 0; // communicator hash / id
    const char* func = nullptr; // "AllReduce", ... (NCCL-owned static strings)
    const char* datatype = nullptr;
    const char* algorithm = nullptr;
    const char* protocol = nullptr;
    int32_t root = 0;
    int32_t peer = -1; // p2p
    uint32_t channels = 0;
    uint32_t tid = 0;
};
static_assert(sizeof(CollectiveRecord) == 88, "CollectiveRecord layout changed");

} // namespace gapscope::capture::inject
