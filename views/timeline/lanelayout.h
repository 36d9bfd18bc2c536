// SPDX-License-Identifier: MIT
#pragma once

// LaneLayout: the vertical arrangement of the timeline. Lanes are grouped host > rank (GPU) and,
// inside a rank, ordered GPU streams (by stream id; a stream's replay-range lane, kernelranges.h, right
// under it), collectives, NVTX (one row per nesting level,
// up to a cap) and the CPU side. A rank with CPU thread lanes (host ranges: operators, Python
// frames, OS calls) gets a "CPU threads" group under its GPU rows: a header row, then per thread its
// flame (one level per nesting depth, up to a cap) and its CUDA API row; the group is closed unless
// its rank is in openCpuRanks (one click on the header opens it). A rank without CPU thread lanes
// shows its CUDA API rows when showCpuApi is set. Each group starts with a header row; a collapsed
// rank shows only its header.
//
// Invariants: rows are contiguous and sorted by y (row[i].y + row[i].height == row[i+1].y);
// every lane appears at most once; rowOfLane() is the inverse of rows()[i].lane.
// Plain value type built on the GUI thread; read-only afterwards.

#include "model/io/overview.h"
#include "model/trace/trace.h"

#include <QString>

#include <set>
#include <vector>

struct LaneLayoutOptions {
    bool showNvtx = true;
    bool showCollectives = true;
    bool showCpuApi = false;
    bool showReplayRanges = true; // a GPU stream's CUDA-graph kernels grouped by range, under the stream
    int rowHeight = 18; // GPU stream, collective and CPU API rows
    int nvtxRowHeight = 14; // per NVTX nesting level
    int maxNvtxDepth = 4; // deeper ranges are drawn in the last level
    int maxHostDepth = 12; // CPU thread flames: deeper ranges are drawn in the last level
    int hostHeaderHeight = 18;
    int rankHeaderHeight = 20;
    std::set<uint32_t> collapsedRanks;
    std::set<uint32_t> openCpuRanks; // ranks whose "CPU threads" group is open (closed by default)
};

struct LaneRow {
    enum class Type { HostHeader, RankHeader, CpuHeader, Lane };
    Type type = Type::Lane;
    gapscope::model::LaneId lane = gapscope::model::kNoLane; // Lane rows only
    gapscope::model::LaneKind kind = gapscope::model::LaneKind::Unknown;
    uint32_t rank = 0;
    QString host;
    QString label;
    int y = 0;
    int height = 0;
    int levels = 1; // NVTX and CPU thread rows: nesting levels drawn in this row
};

// What build() needs to know about one lane (taken from the Trace, or written by a test).
struct LaneEntry {
    gapscope::model::LaneInfo info;
    uint32_t levels = 0; // lanes whose ranges nest (nested()): max nesting depth + 1, else 0
    bool empty = false; // lanes without events are left out
};

class LaneLayout {
public:
    void build(
        const std::vector<LaneEntry>& lanes, const std::vector<QString>& rankLabels, const LaneLayoutOptions& options);
    void build(const gapscope::model::Trace& trace, const LaneLayoutOptions& options);

    const std::vector<LaneRow>& rows() const { return m_rows; }
    int totalHeight() const { return m_total; }
    // Index of the row containing content y (0 = top of the first row), or -1.
    int rowAt(int y) const;
    // Rows overlapping [y0, y1), as [first, last).
    std::pair<int, int> rowsIn(int y0, int y1) const;
    int rowOfLane(gapscope::model::LaneId lane) const;
    // The rank header row of `rank`, or -1.
    int rowOfRank(uint32_t rank) const;
    // The "CPU threads" header row of `rank`, or -1 (the rank has no CPU thread lanes, or is collapsed).
    int rowOfCpuGroup(uint32_t rank) const;
    // Lanes whose ranges nest and are drawn one level per depth: NVTX and CPU thread lanes.
    static bool nested(gapscope::model::LaneKind kind);
    const LaneLayoutOptions& options() const { return m_options; }

    static QString laneLabel(const gapscope::model::LaneInfo& info);
    // Per-lane entries of a trace (nesting levels measured from the events: O(events) of nested lanes).
    static std::vector<LaneEntry> entriesOf(const gapscope::model::Trace& trace);
    // A large file's lanes, from its overview (events and nesting depths of the whole file).
    static std::vector<LaneEntry> entriesOf(const gapscope::model::TraceOverview& overview);
    static std::vector<QString> rankLabelsOf(const gapscope::model::Trace& trace)
    {
        return rankLabelsOf(trace.header());
    }
    static std::vector<QString> rankLabelsOf(const gapscope::model::TraceHeader& header);

private:
    void addRow(LaneRow row);
    std::vector<LaneRow> m_rows;
    std::vector<int> m_rowOfLane;
    LaneLayoutOptions m_options;
    int m_total = 0;
};
