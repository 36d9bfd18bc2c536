// SPDX-License-Identifier: MIT
#pragma once

// TraceAssembler: turns the staged sources of one import (several Kineto files, one per rank; or an
// nsys report with several processes) into one Trace.
//
// 1. Ranks: a process keeps the rank its source recorded (Kineto distributedInfo) when no other
//    process claims it; the others take the lowest free ranks in source order (nsys processes are
//    staged in CUDA-device order). Conflicts are warned about.
// 2. Clocks (ClockAligner): sources whose clocks are wall-clock based and whose time spans overlap
//    keep their absolute times; otherwise each source is shifted so that the end of its first
//    collective kernel meets the reference source's (collectives finish together on all ranks).
// 3. NVTX-like ranges get their nesting depth (per lane, sorted by start, longer first), collective
//    events their per-communicator sequence number.
// 4. Events are fed to a TraceBuilder in staging order, the staged blocks freed as they are consumed,
//    so the peak memory is about the larger of the two representations, not their sum.
// The header gets sources, the recording tools (metadata "tool" of each source), GPUs, ranks (pid,
// device, versions), counters and metadata.
//
// Threading: single-threaded; consumes the staged traces.

#include "model/import/stagedtrace.h"
#include "model/trace/trace.h"

#include <optional>
#include <vector>

namespace gapscope::model::importer {

class TraceAssembler {
public:
    explicit TraceAssembler(std::vector<StagedTrace> sources);
    Trace assemble();
    // The rank rule of step 1 on its own: each process keeps its recorded rank when no earlier one
    // claims it; the others (and those without one) take the lowest free ranks, in order.
    static std::vector<uint32_t> assignRanks(const std::vector<std::optional<uint32_t>>& recorded);

private:
    struct ProcessRef {
        size_t source;
        uint16_t process;
        uint32_t rank;
    };
    void assignRanks();
    void prepareLanes(StagedTrace& s);
    void feed(size_t sourceIndex, TraceBuilder& builder);
    void fillHeader(TraceBuilder& builder);
    uint32_t rankOf(size_t source, uint16_t process) const;

    std::vector<StagedTrace> m_sources;
    std::vector<ProcessRef> m_processes;
    std::vector<int64_t> m_offsets; // per source: added to source times
    std::string m_alignment;
};

} // namespace gapscope::model::importer
