// SPDX-License-Identifier: MIT
#pragma once

// StagedTrace: what one import source (a Kineto file, an nsys report) yields before the trace is
// assembled. Parsers append events here in any order, in the source's own clock and with source-local
// string, lane and launch-config ids; TraceAssembler later aligns the sources' clocks, assigns ranks
// and feeds a TraceBuilder, freeing this storage block by block as it goes.
//
// Memory: 32 bytes per event (StagedEvent) in fixed-size blocks (no doubling copies), plus side tables
// for what only some events carry (memop sizes, sync kinds, collective details, durations >= 4.29 s)
// and deduplicated launch configs. Everything a source says about an event is kept: name, start,
// duration, correlation id, launch config (grid, block, registers, shared memory, graph ids), stream,
// device, memop kind and size.
//
// Invariants: every event's lane < laneCount(); lane's process < processCount(); aux indexes the side
// table of its kind. Threading: one thread fills one StagedTrace; different ones are independent.

#include "model/format/memorybudget.h"
#include "model/format/stats.h"
#include "model/import/stringpool.h"
#include "model/trace/trace.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace gapscope::model::importer {

// Times are kept within +-2^62 ns (146 years) so sums of times and durations never overflow.
constexpr int64_t kMaxTimeNs = (int64_t(1) << 62) - 1; // two of them still add up without overflow
inline int64_t clampTime(int64_t t)
{
    return t > kMaxTimeNs ? kMaxTimeNs : t < -kMaxTimeNs ? -kMaxTimeNs : t;
}
inline int64_t addTimes(int64_t a, int64_t b)
{
    return clampTime(clampTime(a) + clampTime(b));
}

enum class StagedKind : uint8_t { Kernel, Memcpy, Memset, Api, Sync, Range, Collective, Host };
constexpr size_t kStagedKinds = 8;

struct StagedEvent {
    int64_t start; // ns, source clock (TraceAssembler adds the source's offset)
    uint32_t duration; // ns; kLongDuration: the real value is in the long-duration table
    uint32_t name; // StringPool id
    uint32_t correlation; // CUDA correlation id, 0 = none
    uint32_t aux; // kind-specific: config / memop / sync / collective index, ApiKind, range / host depth
    uint16_t lane;
    StagedKind kind;
    uint8_t flags; // host events: HostKind
};
static_assert(sizeof(StagedEvent) == 32, "StagedEvent must stay 32 bytes");

// One process of the source: a rank once assembled.
struct StagedProcess {
    std::optional<uint32_t> rank; // as recorded by the source (distributedInfo, NCCL), if at all
    uint32_t worldSize = 0;
    uint32_t pid = 0;
    std::string host;
    std::string name;
    std::optional<uint32_t> device; // first CUDA device its GPU events ran on
    VersionInfo versions;
};

struct StagedLane {
    LaneInfo info; // rank is filled in by TraceAssembler from the process
    uint16_t process = 0;
    uint64_t events = 0;
    uint32_t ownPid = 0; // a host thread of another pid than its process's (0: the process's)
};

class StagedTrace {
public:
    static constexpr uint32_t kLongDuration = 0xFFFFFFFFu;
    static constexpr uint32_t kNoLane = 0xFFFFFFFFu;
    static constexpr size_t kBlockEvents = 1 << 16;

    StagedTrace(std::string source, std::string path);
    StagedTrace(StagedTrace&&) noexcept;
    StagedTrace& operator=(StagedTrace&&) noexcept;
    ~StagedTrace();

    const std::string& source() const { return m_source; } // "kineto", "nsys"
    const std::string& path() const { return m_path; }

    StringPool& strings() { return m_strings; }
    const StringPool& strings() const { return m_strings; }

    // Processes and lanes.
    uint16_t addProcess(StagedProcess p);
    StagedProcess& process(uint16_t i) { return m_processes[i]; }
    const std::vector<StagedProcess>& processes() const { return m_processes; }
    // Puts the processes in `order` (a permutation: order[i] is the current index of the new i-th
    // process) and renumbers the lanes' processes to match.
    void reorderProcesses(const std::vector<uint16_t>& order);
    // Puts the processes in the order of the lowest device each ran GPU work on (tensor-parallel ranks
    // own devices in rank order), then by pid; processes without GPU work last. For sources that record
    // no rank (nsys, rocprof): TraceAssembler numbers their processes densely in this order.
    void orderProcessesByDevice();
    // Removes the processes flagged in `drop` (indexed as now), with their lanes and events; the others
    // keep their order, lanes and events (renumbered). What the removed events took of the memory
    // budget and of the side tables stays taken until this trace is freed. Returns the events removed.
    uint64_t dropProcesses(const std::vector<bool>& drop);
    // A process that made API calls (a launcher's device count, a data loader) and ran no GPU work (its
    // `device` unset) would be an empty rank, and a rank count that is no parallelism: such processes are
    // dropped with their events, counted (import_skipped_events, as `skippedWhat`) and named in a warning
    // ("process P (name) made N <api> calls and no GPU work: not a rank"; the first ten, the rest
    // together). `calls[i]`: the API calls of process i; `names(pid)`: a process's name, if known.
    // Returns the events removed.
    uint64_t dropProcessesWithoutGpuWork(const std::string& api, const std::vector<uint64_t>& calls,
        const std::function<std::string(const StagedProcess&)>& names, const std::string& skippedWhat);
    // Finds or creates the lane (kind, device, stream) of `process`; kNoLane when the source has more
    // than 65535 lanes (counted, events dropped).
    // `pid`: a host thread's own pid when the source names one other than its process's (a file whose
    // host events come from several pids keeps their threads apart); 0: the process's.
    uint32_t lane(uint16_t process, LaneKind kind, uint32_t device, uint64_t stream, uint32_t pid = 0);
    StagedLane& laneAt(uint32_t i) { return m_lanes[i]; }
    const std::vector<StagedLane>& lanes() const { return m_lanes; }

    // Side tables.
    uint32_t config(const KernelConfig& c);
    const std::vector<KernelConfig>& configs() const { return m_configs; }
    const MemopInfo& memop(uint32_t i) const { return m_memops[i]; }
    const SyncInfo& sync(uint32_t i) const { return m_syncs[i]; }
    const CollectiveInfo& collective(uint32_t i) const { return m_collectives[i]; } // string ids are local
    CollectiveInfo& collectiveAt(uint32_t i) { return m_collectives[i]; }

    // Events. Negative durations are clamped to 0 and counted.
    void addKernel(uint32_t lane, int64_t start, int64_t dur, uint32_t name, uint32_t corr, uint32_t config);
    void addMemop(uint32_t lane, int64_t start, int64_t dur, uint32_t name, uint32_t corr, const MemopInfo& info);
    void addApi(uint32_t lane, int64_t start, int64_t dur, uint32_t name, uint32_t corr, ApiKind kind);
    void addSync(uint32_t lane, int64_t start, int64_t dur, uint32_t name, uint32_t corr, const SyncInfo& info);
    void addRange(uint32_t lane, int64_t start, int64_t dur, uint32_t name);
    // A host-side range (operator, Python frame, OS call) on a CpuThread lane; its depth is set on assembly.
    void addHost(uint32_t lane, int64_t start, int64_t dur, uint32_t name, HostKind kind);
    void addCollective(uint32_t lane, int64_t start, int64_t dur, uint32_t name, const CollectiveInfo& info);

    uint64_t eventCount() const { return m_count; }
    uint64_t eventCount(StagedKind kind) const { return m_kindCount[static_cast<size_t>(kind)]; }
    StagedEvent& event(uint64_t i) { return m_blocks[i / kBlockEvents][i % kBlockEvents]; }
    const StagedEvent& event(uint64_t i) const { return m_blocks[i / kBlockEvents][i % kBlockEvents]; }
    int64_t duration(uint64_t i) const;
    // Index of the last event added to `lane`, or UINT64_MAX.
    uint64_t lastEventOf(uint32_t lane) const { return m_lastOfLane[lane]; }
    // Frees the storage of every block that lies entirely before event `i` (the assembler calls this as
    // it consumes events in order).
    void releaseBefore(uint64_t i);

    // Clock: source time + offset = trace time. `absoluteClock`: the source's clock is wall-clock
    // based (epoch), so two sources with absolute clocks are comparable.
    int64_t timeOffsetNs = 0;
    bool absoluteClock = false;
    int64_t minStart() const { return m_minStart; }
    int64_t maxEnd() const { return m_maxEnd; }

    // Steps the source stores itself (a gapscope Perfetto export's "steps" tracks), per process, in the
    // source's clock; TraceAssembler adds them to the rank of their process as they are.
    struct StagedStep {
        uint16_t process = 0;
        Step step;
    };
    std::vector<StagedStep> steps;

    // Capture-time context of the CUDA-graph nodes of a process (graphnode.h): `node.ranges` are ids of
    // this trace's StringPool and `node.rank` is left 0; TraceAssembler sets the rank of the process and
    // interns the names. reorderProcesses renumbers them, dropProcesses drops those of dropped processes.
    struct StagedGraphNode {
        uint16_t process = 0;
        GraphNodeInfo node;
    };
    std::vector<StagedGraphNode> graphNodes;

    // Devices seen (GpuInfo per device ordinal), header metadata, counters and warnings.
    std::vector<GpuInfo> gpus;
    std::map<std::string, std::string> metadata;
    // Adds n to a counter of the stats table (model/format/stats.h), one per (stat, detail); the
    // detail is the stat's description unless given.
    void count(format::Stat stat, uint64_t n = 1);
    void count(format::Stat stat, const std::string& detail, uint64_t n = 1);
    const std::map<std::string, Counter>& counters() const { return m_counters; }
    std::vector<std::string> warnings;

    size_t memoryBytes() const;
    // The events staged so far are taken out of format::MemoryBudget (kTraceBytesPerEvent each, the
    // size of the trace they become) block by block; once the budget is spent, further events are
    // dropped and overBudget() says so (the importer then fails with the budget message).
    bool overBudget() const { return m_overBudget; }
    uint64_t budgetBytesNeeded() const { return (m_count + m_overBudgetDropped) * format::kTraceBytesPerEvent; }

private:
    StagedEvent& push(uint32_t lane, int64_t start, int64_t dur, StagedKind kind);

    std::string m_source;
    std::string m_path;
    StringPool m_strings;
    std::vector<StagedProcess> m_processes;
    std::vector<StagedLane> m_lanes;
    std::unordered_map<std::string, uint32_t> m_laneIndex;
    std::vector<uint64_t> m_lastOfLane;
    std::vector<KernelConfig> m_configs;
    std::unordered_map<KernelConfig, uint32_t, KernelConfigHash> m_configIndex;
    std::vector<MemopInfo> m_memops;
    std::vector<SyncInfo> m_syncs;
    std::vector<CollectiveInfo> m_collectives;
    std::vector<std::unique_ptr<StagedEvent[]>> m_blocks;
    std::unordered_map<uint64_t, int64_t> m_longDurations;
    uint64_t m_count = 0;
    uint64_t m_kindCount[kStagedKinds] = {};
    int64_t m_minStart = INT64_MAX;
    int64_t m_maxEnd = INT64_MIN;
    std::map<std::string, Counter> m_counters;
    format::MemoryBudget::Reservation m_budget;
    bool m_overBudget = false;
    uint64_t m_overBudgetDropped = 0;
    StagedEvent m_discard {}; // where events over the budget go
};

} // namespace gapscope::model::importer
