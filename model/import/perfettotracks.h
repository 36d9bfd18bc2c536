// SPDX-License-Identifier: MIT
#pragma once

// PerfettoTracks: the tracks of a Perfetto trace (TrackDescriptor: uuid, parent, name, process, thread,
// counter) and the mapping of the slices read on them (PerfettoReader) into a StagedTrace.
//
// Mapping: a slice's kind is its category when that names a gapscope event kind (what gapscope's own
// export writes: "kernel", "memcpy", "memset", "api", "sync", "nvtx", "collective", "host"); otherwise a
// slice on a GPU track (its name, or its parent's, says GPU, stream or queue) is a kernel (a memcpy or
// memset when its name starts so) and any other slice a host range. The process of a track is its
// nearest ancestor with a ProcessDescriptor (a thread track's pid otherwise); its title "rank N · host ·
// GPU d" (gapscope's) gives the rank, host and device. A GPU track's stream is the number after
// "stream "/"queue " in its name, an overlap track ("<lane> (overlapping k)") is its lane's. Slices on a
// "steps" track under a process become the rank's stored steps ("step N"), those of "annotations" and
// "budget waterfall" tracks are skipped and counted; processes without GPU slices are no rank (skipped,
// counted). Arguments read: correlation, grid, block, registers, shared_memory, graph_id, graph_node_id,
// bytes, copy_kind (the names of exportrules.cpp's argName()).
//
// Threading: one per reader.

#include "model/import/stagedtrace.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace gapscope::model::importer {

struct PerfettoTrack {
    uint64_t uuid = 0;
    uint64_t parent = 0;
    std::string name;
    bool described = false, isProcess = false, isThread = false, isCounter = false;
    int32_t pid = 0;
    int64_t tid = 0;
    std::string processName;
};

// One slice, in trace time; `kind` is an EventKind or -1 (decided by the track).
struct PerfettoSlice {
    int64_t start = 0;
    int64_t duration = 0;
    uint32_t track = 0; // index into PerfettoTracks
    uint32_t name = 0; // StringPool id
    int8_t kind = -1;
    uint32_t args = UINT32_MAX; // index into the argument table, UINT32_MAX: none
};

struct PerfettoSliceArgs {
    uint64_t correlation = 0;
    KernelConfig config;
    uint64_t bytes = 0;
    std::string copyKind;
    int64_t step = -1;
};

class PerfettoTracks {
public:
    // The index of track `uuid`, an undescribed one created on first use.
    uint32_t track(uint64_t uuid);
    void describe(const PerfettoTrack& t);
    // Maps `slices` into `out`; returns the slices that became GPU events (kernels, memory operations).
    uint64_t stage(
        const std::vector<PerfettoSlice>& slices, const std::vector<PerfettoSliceArgs>& args, StagedTrace& out);

private:
    struct Resolved {
        int64_t process = -1; // index into m_tracks of the process track, -1: none
        std::string base; // name without the overlap suffix
        bool gpu = false;
        enum class Special : uint8_t { None, Steps, Skipped, Counter } special = Special::None;
    };
    Resolved resolve(uint32_t t) const;
    int64_t processOf(uint32_t t) const;
    uint32_t laneOf(uint32_t t, const Resolved& r, EventKind kind, uint16_t process, StagedTrace& out);
    uint16_t stagedProcess(int64_t processTrack, StagedTrace& out);

    std::vector<PerfettoTrack> m_tracks;
    std::unordered_map<uint64_t, uint32_t> m_index;
    std::unordered_map<int64_t, uint16_t> m_processes; // process track -> StagedProcess
    std::unordered_map<std::string, uint64_t> m_streamIds; // process/base name -> stream id made up
};

} // namespace gapscope::model::importer
