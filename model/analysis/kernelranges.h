// SPDX-License-Identifier: MIT
#pragma once

// KernelRanges: the annotated range every kernel ran under, the same way for eager and CUDA-graph work.
//  - An eager kernel: the NVTX ranges (and torch.profiler user annotations) open on its launching
//    thread when its launch call started (Trace::launchOf), outermost first.
//  - A kernel of a CUDA-graph replay: the ranges open on the thread that built its graph node, when it
//    built it (Trace::graphNode, the capture-time context). Source Capture.
//  - A graph kernel whose node has no build context or was built under no range (a graph built before
//    the capture agent watched,
//    an import without node tables): where its graph repeats a block of kernels (the decoder layers),
//    "layer k (inferred)" for the k-th repetition. Source Inferred. The kernels of a graph launch that
//    carry no node ids at all (torch.profiler traces: only their launch's correlation) are inferred per
//    replay, in start order. Kernels outside the repeating part and everything else have no range.
// Ranges that are the trace's step markers (the NVTX step rule's pattern, or `skip`) are left out of
// every path, so an eager step ("decode step 17 > decode > layer 3") and a replay built under the
// same ranges ("decode > layer 3") name the same path.
//
// Layer inference: a graph's kernels in node order (CUPTI assigns node ids in creation order; a
// replay runs each node once), named by kernel name; the layer block is the period p >= kMinPeriod
// whose longest stretch with name[i] == name[i + p] covers the most kernels (ties: the shorter
// period), holding at least two repetitions; repetition k covers [a + k p, a + (k + 1) p) from the
// stretch's start a.
//
// Threading: of() reads a const Trace; the result is a plain value.

#include "model/trace/trace.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace gapscope::model {

enum class RangeSource : uint8_t { None = 0, Launch = 1, Capture = 2, Inferred = 3 };
const char* toString(RangeSource s); // "none", "launch", "capture", "inferred"

struct KernelRangeOptions {
    std::string skip; // ECMAScript pattern of range names to leave out ("": the NVTX step rule's)
    bool ignoreNodeTable = false; // infer layers for every graph kernel (to check the inference)
};

class KernelRanges {
public:
    static constexpr size_t kMinPeriod = 4;

    static KernelRanges of(const Trace& trace, const KernelRangeOptions& options = {});

    // The path of a kernel (0: none), its text ("decode > layer 3 > mlp") and source.
    uint32_t pathOf(LaneId lane, size_t index) const;
    const std::string& path(uint32_t id) const { return m_paths[id]; }
    // The path's ranges, outermost first ({"decode", "layer 3", "mlp"}; empty for 0).
    const std::vector<std::string>& parts(uint32_t id) const { return m_parts[id]; }
    RangeSource source(uint32_t id) const { return m_sources[id]; }
    size_t pathCount() const { return m_paths.size(); }

    // Kernels per source (for coverage lines: "graph kernels without build context: N").
    uint64_t kernels(RangeSource s) const { return m_counts[size_t(s)]; }
    // Kernels of CUDA-graph replays, and those of them whose node has a build context.
    uint64_t graphKernels() const { return m_graphKernels; }
    uint64_t graphKernelsWithContext() const { return m_graphWithContext; }

    // Inferred layer blocks: per (rank, graph id) the period and repetitions found (0: none).
    struct LayerBlock {
        uint32_t rank = 0;
        uint64_t graphId = 0;
        size_t nodes = 0;
        size_t period = 0;
        size_t layers = 0;
        size_t first = 0; // position of the first layer's first node in node order
    };
    const std::vector<LayerBlock>& layerBlocks() const { return m_blocks; }

    // The layer block of a sequence of symbols (kernel names in node order): period 0 when none.
    static LayerBlock findLayers(const std::vector<uint32_t>& symbols);

private:
    // The path of `parts` (joined " > "); 0 when empty.
    uint32_t intern(std::vector<std::string> parts, RangeSource source);
    std::vector<std::string> m_paths { "" };
    std::vector<std::vector<std::string>> m_parts { {} };
    std::vector<RangeSource> m_sources { RangeSource::None };
    std::unordered_map<std::string, uint32_t> m_pathIds;
    std::vector<std::vector<uint32_t>> m_byLane; // per lane, per event: path id (kernel lanes only)
    uint64_t m_counts[4] = { 0, 0, 0, 0 };
    uint64_t m_graphKernels = 0;
    uint64_t m_graphWithContext = 0;
    std::vector<LayerBlock> m_blocks;
};

// Own time and counts per range path over the kernels inside steps (all kernels when the trace has
// no steps), for `summary --by-range` and the viewer's Ranges table.
struct RangeRow {
    std::string path;
    RangeSource source = RangeSource::None;
    uint64_t count = 0;
    TimeNs total = 0;
    TimeNs ownTotal = 0;
    double medianPerStep = 0; // kernels in the median step (steps without any: 0); the count without steps
};
struct RangeTable {
    std::vector<RangeRow> rows; // by own total, descending
    uint64_t steps = 0; // steps the kernels were counted over (0: whole trace)
    uint64_t kernels = 0;
};
RangeTable rangeTable(const Trace& trace, const KernelRanges& ranges);

// Two range tables side by side, paired by path (an eager run's ranges at launch pair with a graph
// run's ranges at build): per step kernels and own time in A and B, by the change of own time per step,
// largest first. A side without steps counts per trace.
struct RangeDiffRow {
    std::string path;
    double aCount = 0, bCount = 0; // kernels per step
    double aOwnNs = 0, bOwnNs = 0; // own time per step
    double deltaNs() const { return bOwnNs - aOwnNs; }
};
std::vector<RangeDiffRow> rangeDiff(const RangeTable& a, const RangeTable& b);

// The timeline's grouping of CUDA-graph replays by range: for each GPU stream whose graph kernels have a
// range (sources Capture and Inferred), an NVTX lane beside it (same rank and device; stream = the stream's
// id | kGpuAnnotationStreamBit | kReplayRangeStreamBit, so it never delimits steps and never counts as a
// host thread's ranges) with one range per run of consecutive kernels of one graph launch whose paths share
// a prefix, one nesting level per path component ("decode" > "layer 3" > "mlp"). A range spans its first
// kernel's start to the latest end of its kernels; a run ends at a kernel of another launch (correlation),
// another graph, or one without such a range. Eager kernels get none (their ranges are on their thread's
// NVTX lane). Appended to `trace` (Trace::appendFrom); returns the number of ranges added (0, adding
// nothing, where the trace holds such lanes already). Writers leave them out (WriteOptions::skipLane).
constexpr uint64_t kReplayRangeStreamBit = 1ull << 33;
inline bool isReplayRangeLane(const LaneInfo& info)
{
    return info.kind == LaneKind::Nvtx && (info.stream & kReplayRangeStreamBit);
}
// The GPU stream a replay-range lane groups.
inline uint64_t replayRangeStream(const LaneInfo& info)
{
    return info.stream & ~(kReplayRangeStreamBit | kGpuAnnotationStreamBit);
}
uint64_t addReplayRangeLanes(Trace& trace, const KernelRanges& ranges);
// The same for a trace as read (the viewer's loader, a live capture's final document): its ranges found
// only where it has graph replays (hasGraphReplays) and no replay-range lanes yet.
uint64_t addReplayRangeLanes(Trace& trace);

// Whether a trace holds kernels of CUDA-graph replays (kernels with graph node ids, or graph-launch calls):
// O(distinct launch configs + strings), to skip range work on traces without any.
bool hasGraphReplays(const Trace& trace);

} // namespace gapscope::model
