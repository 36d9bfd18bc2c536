// SPDX-License-Identifier: MIT
#pragma once

// TraceOverview: a whole .gapscope file at a glance, without decoding its events: its lanes, strings,
// steps, per-lane event counts and times by kind, and a summary pyramid per lane from which a zoomed-out
// timeline is drawn. It comes from the file's OVERVIEW frame (format 1.2, written by every writer) or,
// for a file without one, from one pass over its chunks in file order (the same nodes, see
// format/overviewbuilder.h).
//
// The pyramid: level 0 holds one node per OverviewBuilder::kNodeEvents events of a lane (earliest start,
// latest end, summed durations, the longest event's duration and name, the event count), sorted by
// start; each level above groups kFanout nodes of the one below. fold() takes, for a screen, the
// coarsest level whose nodes are narrower than the fold width and merges neighbours as LaneSummary
// does: the cost follows the screen, not the trace.
//
// What the pass decodes is checked as a full read checks it (frames with a bad checksum or that do
// not decode are skipped, counted and named); the frame is taken as the writer wrote it.
//
// Memory: about 0.2 bytes per event (40 bytes per node), plus the strings and steps.
// Threading: immutable after open(); safe to read from any thread.

#include "model/base/canceltoken.h"
#include "model/trace/trace.h"
#include "model/trace/tracesummary.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gapscope::format {
class TraceReader;
}
namespace gapscope::pb {
class GraphNode;
}

namespace gapscope::model {

// A .gapscope file of this many events or more is taken through its overview by default (gapscope-cli
// info; the viewer draws it from the overview and reads windows of it), not read whole.
constexpr uint64_t kLargeTraceEvents = 4'000'000;
// Events of a .gapscope file as known before decoding: its index's total, else (a file cut before its
// index) the sum over its CHUNK frames' headers. Compared with kLargeTraceEvents.
uint64_t fileEvents(const format::TraceReader& reader);

struct OverviewOptions {
    std::function<bool(double fraction)> progress; // the pass's progress; false cancels
    CancelToken cancel;
    bool useFrame = true; // false: always the pass (tests compare the two)
    bool keepPassFrame = false; // keep what the pass built as a frame (passFrame(), for saveOverview)
};

class TraceOverview {
public:
    static constexpr uint32_t kFanout = 16;

    struct Node {
        TimeNs start = 0, end = 0;
        TimeNs busy = 0; // summed durations
        TimeNs longest = 0; // the longest event's duration
        uint32_t count = 0;
        StringId longestName = 0;
    };
    struct LaneData {
        LaneInfo info;
        uint64_t events = 0;
        uint32_t maxDepth = 0; // NVTX and host lanes: the deepest nesting depth
        uint64_t kindCount[8] = {}; // by EventKind
        TimeNs kindNs[8] = {};
        uint64_t hostKindCount[kHostKinds] = {};
        std::vector<std::vector<Node>> levels; // levels[0]: the finest
    };
    // A folded stretch of a lane for one screen: a node, or a run of nodes too narrow to draw apart.
    struct Item {
        TimeNs start = 0, end = 0;
        TimeNs busy = 0;
        uint64_t count = 0;
        TimeNs longest = 0;
        StringId longestName = 0;
    };

    // `reader` must outlive nothing: the overview copies what it needs.
    static Expected<TraceOverview> open(const format::TraceReader& reader, const OverviewOptions& options);
    static Expected<TraceOverview> open(const format::TraceReader& reader) { return open(reader, OverviewOptions {}); }
    // The same; and a file without an index (cut before its end), whose chunks all decode, gets the one
    // they give (TraceReader::adoptIndex), so that its windows are read as a whole file's (readWindow).
    static Expected<TraceOverview> openRebuildingIndex(format::TraceReader& reader, const OverviewOptions& options);

    bool fromFrame() const { return m_fromFrame; }
    // With keepPassFrame, when built by the pass over a complete file whose chunks all decoded: the
    // OVERVIEW frame the file lacks, serialized (saveOverview in tracefile.h stores it); "" otherwise.
    const std::string& passFrame() const { return m_passFrame; }
    const TraceHeader& header() const { return m_header; }
    const std::vector<LaneData>& lanes() const { return m_lanes; } // by file lane id (= Trace lane id of a read)
    const std::vector<std::string>& strings() const { return m_strings; } // [0] = ""
    std::string_view str(StringId id) const { return id < m_strings.size() ? m_strings[id] : std::string_view(); }
    const std::vector<Step>& steps(uint32_t rank) const;
    std::vector<uint32_t> ranks() const; // sorted, unique
    uint32_t stepCount() const; // max over ranks
    StepSource stepSource() const;
    TimeNs startTime() const { return m_start; }
    TimeNs endTime() const { return m_end; }
    uint64_t eventCount() const { return m_events; }
    const std::vector<std::string>& warnings() const { return m_warnings; }
    // Every graph-node entry of the file (its OVERVIEW frame's, or every chunk's); null where it has none.
    const std::shared_ptr<const std::vector<pb::GraphNode>>& graphNodes() const { return m_graphNodes; }

    // What `info` prints, counted from the overview (the same figures as traceStats of a full read).
    TraceStats stats() const;

    // Events of lane `lane` (kNoLane: all lanes) in nodes that overlap [t0, t1): an upper bound of the
    // events there, what decoding that stretch costs.
    uint64_t eventsIn(TimeNs t0, TimeNs t1, LaneId lane = kNoLane) const;

    // Items of lane `lane` overlapping [t0, t1) for a view of nsPerPixel, merged below minPixels.
    void fold(LaneId lane, TimeNs t0, TimeNs t1, double nsPerPixel, double minPixels, std::vector<Item>& out) const;

    size_t memoryBytes() const;

private:
    static Expected<TraceOverview> open(
        const format::TraceReader& reader, const OverviewOptions& options, format::TraceReader* rebuild);
    void buildLevels();
    bool m_fromFrame = false;
    std::string m_passFrame;
    TraceHeader m_header;
    std::vector<LaneData> m_lanes;
    std::vector<std::string> m_strings;
    std::vector<std::vector<Step>> m_steps; // by rank
    TimeNs m_start = 0, m_end = 0;
    uint64_t m_events = 0;
    std::vector<std::string> m_warnings;
    std::shared_ptr<const std::vector<pb::GraphNode>> m_graphNodes;
};

} // namespace gapscope::model
