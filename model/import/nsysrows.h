// SPDX-License-Identifier: MIT
#pragma once

// Rows of an Nsight Systems SQLite export (`nsys export --type sqlite`), as NsysReader reads them, and
// NsysRowConverter, which turns them into StagedTrace events. Separate from the SQL so the mapping is
// tested and fuzzed without a database.
//
// Identifiers: globalTid / globalPid are nsys' serialized ids, pid = (id >> 24) & 0xFFFFFF,
// tid = id & 0xFFFFFF. Names are StringIds references (string()); NVTX text may also be inline.
// Ranks: only processes with GPU work (kernels, memcpy or memset rows, on any device) become ranks; a
// report lists every process of the host in PROCESSES, and those are only names. A process that made
// CUDA calls (runtime/driver API or synchronization rows) and no GPU work is no rank either: finish()
// drops it with its calls, counted, and names it in a warning ("process P made N CUDA calls and no GPU
// work: not a rank"). NVTX, OS runtime rows and CPU samples of a process without GPU work are skipped
// and counted, so nvtx(), osrt() and sample() rows must come after the kernel and memory rows.
// finish() stages the processes in the order of the lowest CUDA device each used (tensor-parallel
// ranks own devices in rank order), then by pid; a report records no rank, so TraceAssembler numbers
// them densely in that order.
// GPUs: rows of one device (TARGET_INFO_GPU, TARGET_INFO_CUDA_GPU) are merged, a field given by one
// row filling what the other lacks. A device that ran GPU work and has no row (an export without the
// GPU table, as one of nsys 2026.2 was) is listed by its id alone, name unknown, with a warning.
//
// Threading: one converter per StagedTrace, one thread.

#include "model/import/nsysgraphnodes.h"
#include "model/import/sampledstacks.h"
#include "model/import/stagedtrace.h"

#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>

struct sqlite3_stmt;

namespace gapscope::model::importer {

struct NsysKernelRow {
    int64_t start = 0, end = 0, deviceId = 0, streamId = 0, correlationId = 0, globalPid = 0;
    int64_t nameId = 0; // demangledName
    int64_t shortNameId = 0; // used when nameId names no string
    int64_t grid[3] = { 0, 0, 0 }, block[3] = { 0, 0, 0 };
    int64_t registersPerThread = 0, staticSharedMemory = 0, dynamicSharedMemory = 0;
    int64_t graphId = 0, graphNodeId = 0;
    // Reads grid x/y/z, block x/y/z, registersPerThread, staticSharedMemory, dynamicSharedMemory,
    // graphId and graphNodeId from the 11 columns starting at `first` (nsys and nvprof select them so).
    void readLaunchColumns(sqlite3_stmt* s, int first);
};

struct NsysMemopRow {
    bool memset = false;
    int64_t start = 0, end = 0, deviceId = 0, streamId = 0, correlationId = 0, globalPid = 0;
    int64_t bytes = 0, copyKind = 0;
};

struct NsysApiRow {
    int64_t start = 0, end = 0, globalTid = 0, correlationId = 0, nameId = 0;
};

struct NsysSyncRow {
    int64_t start = 0, end = 0, deviceId = 0, streamId = 0, correlationId = 0, globalPid = 0, globalTid = 0;
    int64_t syncType = 0;
};

struct NsysNvtxRow {
    int64_t start = 0, end = -1, globalTid = 0, eventType = 0, textId = 0;
    std::string_view text;
};

struct NsysOsrtRow { // OSRT_API: an OS runtime call (pthread_cond_wait, ioctl, read, ...)
    int64_t start = 0, end = 0, globalTid = 0, nameId = 0;
};
struct NsysSampleFrame { // SAMPLING_CALLCHAINS: one function of a sampled call stack
    int64_t symbol = 0, module = 0; // string ids
    bool unresolved = false;
};
struct NsysSampleRow { // COMPOSITE_EVENTS: a CPU sample of one thread, its stack leaf first
    int64_t start = 0, globalTid = 0;
    std::vector<NsysSampleFrame> frames;
};
struct NsysGpuRow {
    int64_t id = 0, smCount = 0, totalMemory = 0, ccMajor = 0, ccMinor = 0;
    int64_t smClockHz = 0; // readers convert: TARGET_INFO_GPU.clockRate is in Hz, older tables kHz
    double memoryBandwidth = 0; // bytes/s
    std::string_view name, uuid, busLocation;
};

class NsysRowConverter {
public:
    explicit NsysRowConverter(StagedTrace& out);

    void string(int64_t id, std::string_view value);
    void process(int64_t globalPid, std::string_view name);
    void threadName(int64_t globalTid, int64_t nameId);
    void kernel(const NsysKernelRow& r);
    void memop(const NsysMemopRow& r);
    void api(const NsysApiRow& r);
    void sync(const NsysSyncRow& r);
    void nvtx(const NsysNvtxRow& r);
    // An OS runtime call: a host range on the thread's CPU lane (processes with GPU work only, so these
    // rows come after the GPU rows too; the others are counted).
    void osrt(const NsysOsrtRow& r);
    // A CPU sample (rows in order of thread, then time): its call stack becomes ranges on the thread's
    // sampled lane (SampledStacks; processes with GPU work only) when finishSamples() runs.
    void sample(const NsysSampleRow& r);
    void finishSamples();
    // A CUDA_GRAPH_NODE_EVENTS row (an export made with --cuda-graph-trace=node): finish() stages one
    // GraphNodeInfo per node with its thread's NVTX ranges at creation (NsysGraphNodes), so these rows
    // come after the GPU rows too and before finish(); rows of processes without GPU work are counted.
    void graphNode(const NsysGraphNodeRow& r);
    void gpu(const NsysGpuRow& r);
    void sessionStart(int64_t utcEpochNs);
    // The rows' times are wall-clock (epoch) ns already (nvprof), not relative to a session start.
    void epochTimes();
    // A META_DATA_EXPORT / EXPORT_META_DATA row: EXPORT_PRODUCT_NAME, _VERSION and
    // EXPORT_SCHEMA_VERSION make the source's tool ("Nsight Systems 2024.6.2.25, schema 3.16.1").
    void exportMetadata(std::string_view key, std::string_view value);
    // Ranks, lane names, GPUs, tool, counters. Call once, after every row.
    void finish();
    // Processes with CUDA activity so far; after finish(), those with GPU work: the ranks of this source.
    size_t rankCount() const;
    // The table the reader takes GPUs from, as warnings name it (default TARGET_INFO_GPU).
    void gpuTable(std::string name) { m_gpuTable = std::move(name); }

private:
    uint16_t processOf(int64_t globalPidOrTid);
    uint32_t name(int64_t stringId);
    uint32_t kernelName(const NsysKernelRow& r);
    void orderProcesses();
    std::optional<uint16_t> gpuProcess(int64_t globalPidOrTid) const;
    void dropProcessesWithoutGpuWork();
    void listGpus();
    void nameLanes();
    std::string tool() const;
    uint32_t gpuLane(uint16_t process, int64_t device, int64_t stream);
    bool checkTimes(int64_t start, int64_t end, const char* what);

    StagedTrace& m_out;
    std::unordered_map<int64_t, uint32_t> m_strings; // nsys string id -> pool id
    std::unordered_map<int64_t, uint16_t> m_processes; // pid -> process index
    std::unordered_map<int64_t, std::string> m_processNames; // pid -> PROCESSES name
    std::map<int64_t, GpuInfo> m_gpus; // device -> merged rows
    std::string m_gpuTable = "TARGET_INFO_GPU";
    std::vector<uint64_t> m_apiCalls; // per process index: its CUDA API rows
    std::string m_product, m_productVersion, m_schemaVersion;
    std::unordered_map<int64_t, std::string> m_threadNames; // tid -> name
    std::unordered_map<int64_t, uint32_t> m_apiNames; // pool id -> pool id without "_v7000"
    uint64_t m_badRows = 0;
    uint64_t m_missingStrings = 0;
    uint64_t m_unterminated = 0;
    uint64_t m_marks = 0;
    uint64_t m_shortNames = 0;
    uint64_t m_nvtxWithoutGpu = 0;
    uint64_t m_osrtWithoutGpu = 0;
    std::map<int64_t, SampledStacks> m_samples; // globalTid -> its samples
    uint64_t m_samplesWithoutGpu = 0;
    NsysGraphNodes m_graphNodes;
    uint64_t m_graphNodesWithoutGpu = 0;
};

} // namespace gapscope::model::importer
