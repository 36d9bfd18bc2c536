// SPDX-License-Identifier: MIT
#pragma once

// KinetoEventParser: turns the elements of a Kineto (torch.profiler) Chrome-trace "traceEvents" array
// into StagedTrace events (the top-level metadata - deviceProperties, distributedInfo,
// baseTimeNanoseconds, CUDA versions) are KinetoMetadata's.
//
// Mapping (cat -> what):
//   kernel                      -> kernel on the GPU stream lane (device, stream from args, else pid/tid),
//                                  with grid, block, registers, shared memory, graph ids, correlation;
//                                  NCCL kernels that carry "Collective name" also give a collective event
//   gpu_memcpy, gpu_memset      -> memop (copy kind from the name, bytes from args)
//   cuda_runtime, cuda_driver   -> CPU API call on the thread's lane, with correlation
//   cuda_sync                   -> synchronisation record (stream/event/context sync)
//   user_annotation             -> NVTX-like ranges on the host thread's range lane (a record_function
//                                  per decode step ends up here, for step detection)
//   cpu_op, python_function     -> host ranges (HostKind CpuOp / Python) on the thread's CPU lane
//                                  ("thread T (name) CPU"), depth from their nesting there; kept off the
//                                  range lanes, whose names step detection reads (aten::_flash_attention_forward
//                                  would pass for a decode step)
//   gpu_user_annotation         -> NVTX-like ranges on the GPU stream's range lane
//   mtia_ccp_events             -> another accelerator's device activity: a kernel-like event (no launch
//                                  config) on the lane of its device and stream ("MTIA stream 108")
//   mtia_runtime, glow_runtime, xpu_runtime, privateuse1_runtime/_driver
//                               -> runtime API calls on the thread's "<accelerator> API" lane
//   ac2g flows                  -> fill a GPU event's correlation when its args lack one; a flow end
//                                  found right after its event is matched at once, any other (flows
//                                  written before their events or all at the end of the file, as vLLM
//                                  does) when finish() runs, by lane and time, wherever they were
//   ph "M"                      -> lane names (process_name, thread_name)
// A file whose pids carry SGLang rank labels ("[TP01] 1234", its merged files) gives one process
// (rank) per label (SglangRanks).
// Trace spans, overhead, instants, counters and other flows are counted as skipped; unknown
// categories and phases are counted by name (StagedTrace counters), never fatal.
//
// Threading: one parser per StagedTrace, one thread.

#include "model/base/status.h"
#include "model/import/kinetofieldreader.h"
#include "model/import/kinetorawevent.h"
#include "model/import/sglangranks.h"
#include "model/import/stagedtrace.h"

#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gapscope::model::importer {

class KinetoEventParser {
public:
    enum class Result {
        Ok, // imported, or skipped and counted
        Bad, // well-formed JSON, but not a usable event (counted)
        JsonError // simdjson reported a structural error; see error()
    };

    explicit KinetoEventParser(StagedTrace& out);

    // Reads and dispatches one element.
    Result parse(simdjson::ondemand::value element);
    simdjson::error_code error() const { return m_reader.error(); }
    // Turns an element already read into staged events (or counts it).
    Result dispatch(const KinetoRawEvent& r);

    uint16_t process() const { return m_process; }

    // Names lanes from the metadata events and records per-category counters. Call once, at the end.
    void finish();
    // Host ranges staged, by category ("cpu_op", "python_function").
    const std::map<std::string, uint64_t, std::less<>>& hostEvents() const { return m_host; }
    uint64_t hostEventCount() const;

private:
    struct PairHash {
        size_t operator()(const std::pair<int64_t, int64_t>& p) const
        {
            return std::hash<uint64_t>()(uint64_t(p.first) * 1000003u ^ uint64_t(p.second));
        }
    };
    using LaneMap = std::unordered_map<std::pair<int64_t, int64_t>, uint32_t, PairHash>;

    void addGpuEvent(const KinetoRawEvent& r, int64_t dur, int category);
    void addCpuEvent(const KinetoRawEvent& r, int64_t dur, int category);
    void addFlow(const KinetoRawEvent& r);
    uint32_t flowLane(const std::pair<int64_t, int64_t>& key) const;
    static bool takeFlow(StagedEvent& e, uint32_t id, uint64_t& matched);
    void resolvePendingFlows();
    void addMetadata(const KinetoRawEvent& r);
    static void tally(std::map<std::string, uint64_t, std::less<>>& m, std::string_view key);
    uint32_t laneFor(
        LaneMap& map, LaneKind kind, int64_t a, int64_t b, uint32_t device, uint64_t stream, uint32_t pid = 0);
    void noteHostPid(int64_t pid);
    void labelLane(uint32_t lane, std::string_view category);
    const KinetoRawEvent& rankOf(const KinetoRawEvent& r, KinetoRawEvent& relabelled);

    StagedTrace& m_out;
    KinetoFieldReader m_reader;
    uint16_t m_process = 0;
    LaneMap m_hostLanes; // (pid, tid) -> the thread's CPU lane
    LaneMap m_gpuLanes, m_rangeLanes, m_gpuRangeLanes, m_apiLanes, m_syncLanes, m_collLanes;
    LaneMap m_deviceFlowLanes; // (pid, tid) of other accelerators' device events -> their lane
    std::unordered_map<uint32_t, std::string> m_laneLabels; // lanes of another accelerator -> "MTIA"
    std::unordered_map<int64_t, std::string> m_processNames;
    std::unordered_map<int64_t, std::string> m_threadNames; // by tid
    std::map<std::string, uint64_t, std::less<>> m_skipped;
    std::map<std::string, uint64_t, std::less<>> m_host;
    std::map<std::string, uint64_t, std::less<>> m_unknown;
    std::map<std::string, uint64_t, std::less<>> m_bad;
    // An ac2g flow end not matched where it came: its (pid, tid) key as laneFor keys it, time, id.
    struct PendingFlow {
        std::pair<int64_t, int64_t> key;
        int64_t ts;
        uint32_t id;
    };
    std::vector<PendingFlow> m_pendingFlows;
    uint64_t m_flowsMatched = 0;
    uint64_t m_flowsUnmatched = 0;
    // SGLang's merged files: one process per rank label in the pids (SglangRanks); m_process is the
    // current event's. Lane keys carry the process above bit 40.
    std::vector<std::pair<SglangRanks::Label, uint16_t>> m_labels;
    std::vector<uint8_t> m_hostPidSeen; // per process
};

} // namespace gapscope::model::importer
