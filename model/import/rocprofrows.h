// SPDX-License-Identifier: MIT
#pragma once

// Rows of AMD's profilers (rocprofiler-sdk's `rocprofv3 --output-format json`, and rocprof v1's
// kernel trace as CSV or SQLite), as their readers hand them over, and RocprofRowConverter, which
// turns them into StagedTrace events. Separate from the file formats so the mapping is one, and is
// tested and fuzzed without files.
//
// Mapping: a process (pid) is a rank; a kernel dispatch is a kernel on the GPU lane of (process,
// device, HIP stream) when the file records streams, else (process, device, queue); a HIP API call is
// an API call on the lane `thread T HIP API` of (process, thread), its correlation id the dispatch's;
// a memory copy is a memcpy (direction, bytes) on the GPU lane of its HIP stream when the file records
// one, else on the lane `memory copies` of (process, device), the device being the GPU end of the copy
// (the destination's when both are GPUs); a ROCTx range or mark is a range on the lane `thread T ROCTx`.
// A process that made HIP calls and ran no GPU work is not a rank (dropped, counted, named).
// The device of a lane is the agent's GPU index when the file describes its agents (rocprofv3), else
// the id the file gives (rocprof v1's gpu-id). Kernel names: rocmKernelName (demangled, ".kd"
// dropped). Launch configuration: rocprofiler counts the grid in work-items; it is stored as CUDA's is,
// in workgroups (grid / workgroup, rounded up), the workgroup as the block, the group segment (LDS,
// static and dynamic together) as dynamic shared memory, the architectural VGPRs as registers.
// Times are ns on the file's own clock (rocprofiler-sdk: the host's CLOCK_BOOTTIME; rocprof v1: the HSA
// runtime's system clock; neither is wall-clock), kept as written. Rows whose end is before their start,
// or whose start is negative, are skipped and counted (import_bad_events).
//
// Invariants: finish() once, after every row. Threading: one converter per StagedTrace, one thread.

#include "model/import/stagedtrace.h"

#include <map>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gapscope::model::importer {

// An agent (a GPU or a CPU) as rocprofiler-sdk describes it.
struct RocprofAgentRow {
    int64_t handle = 0; // the id dispatches name it by
    int64_t gpuIndex = -1; // the GPU's ordinal; < 0: not a GPU
    std::string_view productName, arch; // "AMD Instinct MI350X", "gfx950"
    int64_t computeUnits = 0, clockMhz = 0, memoryBytes = 0, memoryClockMhz = 0, memoryBusBits = 0;
    int64_t pciDomain = -1, pciLocation = -1; // location: bus << 8 | device << 3 | function
};

struct RocprofDispatchRow {
    int64_t start = 0, end = 0;
    int64_t pid = 0, tid = 0;
    int64_t agent = 0; // an agent handle (rocprofv3) or the gpu-id (rocprof v1)
    int64_t queue = 0;
    int64_t stream = -1; // the HIP stream; < 0: the file records none (lanes per queue)
    int64_t correlation = 0;
    uint32_t name = 0; // kernelName() of the symbol
    int64_t grid[3] = { 0, 0, 0 }; // work-items
    int64_t workgroup[3] = { 0, 0, 0 };
    int64_t groupSegment = 0, vgprs = 0;
};

// An asynchronous memory copy (rocprofv3 `memory_copy`).
struct RocprofCopyRow {
    int64_t start = 0, end = 0, pid = 0, tid = 0, correlation = 0;
    int64_t srcAgent = -1, dstAgent = -1; // agent handles (JSON) or node ids (CSV); < 0: not recorded
    int64_t bytes = 0;
    int64_t stream = -1; // the HIP stream; < 0: the file records none
    std::string_view direction; // "MEMORY_COPY_HOST_TO_DEVICE", ...
};

// A ROCTx range or mark (rocprofv3 `marker_api`); a mark has end == start.
struct RocprofMarkerRow {
    int64_t start = 0, end = 0, pid = 0, tid = 0;
    std::string_view text;
};

struct RocprofApiRow {
    int64_t start = 0, end = 0, pid = 0, tid = 0, correlation = 0;
    std::string_view name; // "hipLaunchKernel"
};

class RocprofRowConverter {
public:
    // `source`: "rocprofv3" or "rocprof" (the trace's source and clock domain, import:<source>);
    // `tool`: the recording tool as the header names it.
    RocprofRowConverter(StagedTrace& out, const std::string& source, const std::string& tool);

    // The process of `pid`, created on first use; `name` and `host` fill what is still empty.
    uint16_t process(int64_t pid, std::string_view name = {}, std::string_view host = {});
    void agent(const RocprofAgentRow& a);
    // The pool id of the kernel name of a ROCm symbol (demangled once per distinct symbol).
    uint32_t kernelName(std::string_view symbol);
    void dispatch(const RocprofDispatchRow& r);
    void api(const RocprofApiRow& r);
    void memoryCopy(const RocprofCopyRow& r);
    // A CSV file of `path` cut inside the row at `cutAtLine` (0: not cut), or whose gzip stream ended
    // early: a warning each, counted (import_truncated); the rows before are kept.
    void truncated(const std::string& path, uint64_t cutAtLine, bool gzipEndedEarly);
    void marker(const RocprofMarkerRow& r);
    // Drops the processes without GPU work (StagedTrace::dropProcessesWithoutGpuWork), then lane names,
    // GPUs, ranks' order, counters. Call once, after every row.
    void finish();
    uint64_t dispatches() const { return m_dispatches; }
    uint64_t apiCalls() const { return m_apiCalls; }
    uint64_t copies() const { return m_copies; }
    uint64_t markers() const { return m_markers; }

private:
    bool checkTimes(int64_t start, int64_t end, const char* what);
    uint32_t deviceOf(int64_t agent);
    void nameLanes();

    StagedTrace& m_out;
    std::unordered_map<int64_t, uint16_t> m_processes; // pid -> process
    std::map<int64_t, GpuInfo> m_gpus; // GPU index -> what the file says of it
    std::unordered_map<int64_t, int64_t> m_agentDevice; // agent handle -> GPU index
    std::unordered_map<uint32_t, uint32_t> m_names; // pool id of a symbol -> of its kernel name
    std::unordered_map<uint32_t, int64_t> m_laneQueue; // GPU lane by stream -> its queue (-1: several)
    std::vector<std::string> m_archs;
    std::vector<uint64_t> m_processCalls; // per process index: its HIP API calls
    uint64_t m_dispatches = 0, m_apiCalls = 0, m_copies = 0, m_markers = 0, m_unknownAgents = 0;
    bool m_byStream = false;
};

} // namespace gapscope::model::importer
