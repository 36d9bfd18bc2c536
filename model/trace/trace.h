// SPDX-License-Identifier: MIT
#pragma once

// The in-memory trace: what every reader (file, importer, live stream, synth) produces and what
// steps, analysis, the CLI and the viewer consume.
//
// Shape: lanes grouped host > rank (GPU) > stream/thread (a host thread: its CUDA API, NVTX and CPU
// lanes, all keyed by its thread id). Each lane holds its events as columns
// (LaneEvents), sorted by start time (ties: longer first, so enclosing NVTX ranges precede their
// children). Strings are interned once (StringId 0 = ""). Per-lane summaries (LaneSummary) make a
// zoomed-out query cost what the screen shows, not what the trace holds.
//
// Memory: about 24 bytes per event of any kind, host ranges included (start 8, duration 4, name 4,
// correlation 4, aux 4) plus the
// summary pyramid (about 1.6 bytes per event) and the side tables of collectives and memory ops. Kind-specific payloads
// (launch configs, memop sizes, collective details) live in side tables referenced by `aux`.
//
// Threading: a finished Trace is immutable and safe to read from any thread. appendFrom() (live
// mode) mutates and must not run concurrently with readers.

#include "model/base/status.h"
#include "model/format/lanekey.h"
#include "model/trace/graphnode.h"
#include "model/trace/tracemeta.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gapscope::model {

using TimeNs = int64_t;
// a + b, held at INT64_MAX / INT64_MIN instead of overflowing: sums of durations (a lane's busy time)
// and ends of absurd events stay defined; equal to a + b whenever that fits.
inline TimeNs addSaturated(TimeNs a, TimeNs b)
{
    TimeNs sum;
    if (__builtin_add_overflow(a, b, &sum))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return sum;
}
using StringId = uint32_t;
using LaneId = uint32_t;

constexpr LaneId kNoLane = 0xFFFFFFFFu;

enum class LaneKind : uint8_t { Unknown = 0, GpuStream = 1, Nvtx = 2, CpuApi = 3, Collective = 4, CpuThread = 5 };

// Host: a host-side range of a CpuThread lane (operator, Python frame, OS call), see HostKind. Eight
// kinds fill the 3 bits eventaux.h keeps for the kind.
enum class EventKind : uint8_t { Kernel, Memcpy, Memset, Api, Sync, Nvtx, Collective, Host };

// What a host-side range is (values as the file format's HostKind). The CUDA runtime/driver calls of a thread are
// Api events on its CpuApi lane and its NVTX ranges Nvtx events on its Nvtx lane, not host events.
// Sampled: a function on the thread's sampled call stack (nsys CPU sampling), a range estimated from
// consecutive samples; such ranges live on the thread's sampled lane (LaneInfo::isSampledLane).
enum class HostKind : uint8_t { CpuOp = 0, Python = 1, UserAnnotation = 2, OsRuntime = 3, Sampled = 4 };
constexpr size_t kHostKinds = 5;
const char* toString(HostKind kind); // "cpu_op", "python_function", "user_annotation", "os_runtime", "sampled"

const char* toString(LaneKind kind);

// NVTX lanes that copy host ranges onto a GPU stream (Kineto's gpu_user_annotation) carry this bit
// in LaneInfo::stream, so they never share a key with a host thread id. They show where the GPU ran
// a range's work; they never delimit steps (isGpuAnnotationLane).
constexpr uint64_t kGpuAnnotationStreamBit = 1ull << 32;
// Likewise the CpuThread lane of a thread's sampled call stacks carries this bit, next to the lane of
// its recorded ranges (isSampledLane); LaneInfo::threadId() is the thread either way.
constexpr uint64_t kSampledStreamBit = 1ull << 32;
const char* toString(EventKind kind);

// Identity of a lane: two lanes are the same lane when their identity() (format::LaneKey: kind,
// rank, host, pid, device, stream) is equal.
struct LaneInfo {
    LaneKind kind = LaneKind::Unknown;
    uint32_t rank = 0;
    std::string host;
    uint32_t device = 0;
    uint64_t stream = 0; // stream id (GPU) or thread id (NVTX / CPU API / CPU thread)
    std::string name; // display name
    uint32_t pid = 0;

    // Stable text key "r<rank>/<kind>/d<device>/<stream>", used by annotations and exports (lanes that
    // differ only in host or pid share it; findLane() gives the first of them).
    std::string key() const;
    format::LaneKey identity() const;
    bool isGpuAnnotationLane() const { return kind == LaneKind::Nvtx && (stream & kGpuAnnotationStreamBit); }
    bool isSampledLane() const { return kind == LaneKind::CpuThread && (stream & kSampledStreamBit); }
    // The host thread of an NVTX, CUDA API or CPU lane (its stream without the sampled-lane bit).
    uint64_t threadId() const { return isSampledLane() ? stream & ~kSampledStreamBit : stream; }
};

struct KernelConfig {
    uint32_t grid[3] = { 0, 0, 0 };
    uint32_t block[3] = { 0, 0, 0 };
    uint32_t registers = 0;
    uint32_t sharedStatic = 0;
    uint32_t sharedDynamic = 0;
    uint64_t graphId = 0; // 0: not launched from a CUDA graph
    uint64_t graphNodeId = 0;
    bool operator==(const KernelConfig& o) const;
};

// The one hash of a KernelConfig (FNV-1a over every field operator== compares), for the tables that
// give each distinct config one id (TraceBuilder, the importers' StagedTrace). Inline: TraceBuilder
// asks it once per kernel.
inline size_t hashOf(const KernelConfig& c)
{
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    for (int i = 0; i < 3; ++i) {
        mix(c.grid[i]);
        mix(c.block[i]);
    }
    mix(c.registers);
    mix(c.sharedStatic);
    mix(c.sharedDynamic);
    mix(c.graphId);
    mix(c.graphNodeId);
    return size_t(h ^ (h >> 31));
}

struct KernelConfigHash {
    size_t operator()(const KernelConfig& c) const { return hashOf(c); }
};

struct MemopInfo {
    MemopKind kind = MemopKind::Unknown;
    CopyKind copyKind = CopyKind::Unknown;
    uint64_t bytes = 0;
    bool async = false;
};

struct CollectiveInfo {
    uint64_t bytes = 0;
    StringId datatype = 0;
    StringId algorithm = 0;
    StringId protocol = 0;
    uint64_t sequence = 0;
    uint64_t comm = 0;
    uint32_t channels = 0;
    uint32_t root = 0;
};

struct SyncInfo {
    SyncKind kind = SyncKind::Unknown;
    uint64_t stream = 0;
};

enum class ApiKind : uint8_t { Runtime = 0, Driver = 1 };

struct Step {
    Step(uint32_t index_ = 0, TimeNs start_ = 0, TimeNs end_ = 0, StepSource source_ = StepSource::Unknown)
        : index(index_)
        , start(start_)
        , end(end_)
        , source(source_)
    {
    }
    uint32_t index = 0; // aligned across ranks: step i of rank 0 is step i of rank 1
    TimeNs start = 0; // GPU-side window [start, end)
    TimeNs end = 0;
    StepSource source = StepSource::Unknown;
    StepKind kind = StepKind::Unknown;
    uint32_t batch = 0; // requests in the step's batch, when its annotation says (0: not known)
    uint32_t tokens = 0; // tokens the step processed, when its annotation says (0: not known)
    std::string label; // the step annotation's text ("step[DECODE bs=32]"), empty without one
    TimeNs duration() const { return end - start; }
};

// One event, by value, for code that does not care about columns (details pane, exports).
struct EventRef {
    LaneId lane = kNoLane;
    uint32_t index = 0;
    bool valid() const { return lane != kNoLane; }
    bool operator==(const EventRef& o) const { return lane == o.lane && index == o.index; }
    bool operator!=(const EventRef& o) const { return !(*this == o); }
};

// Columnar events of one lane. Indices are positions in start order.
class LaneEvents {
public:
    size_t size() const { return m_start.size(); }
    bool empty() const { return m_start.empty(); }
    TimeNs start(size_t i) const { return m_start[i]; }
    TimeNs duration(size_t i) const
    {
        const uint32_t d = m_dur[i];
        return d != UINT32_MAX ? TimeNs(d) : longDuration(i);
    }
    TimeNs end(size_t i) const { return m_start[i] + duration(i); }
    StringId name(size_t i) const { return m_name[i]; }
    uint32_t correlation(size_t i) const { return m_corr[i]; }
    // Meaning depends on the lane kind; use Trace's typed accessors instead of reading it directly.
    uint32_t aux(size_t i) const { return m_aux[i]; }

    const std::vector<TimeNs>& starts() const { return m_start; }
    TimeNs maxDuration() const { return m_maxDuration; }
    // Index of the first event starting at or after t (in [0, size()]).
    size_t lowerBound(TimeNs t) const;

    // Index range [first, last) of the events that overlap [t0, t1): O(log n) to find it (using the
    // summary's max-end information), every index in the range overlaps or is nested in one that does.
    std::pair<size_t, size_t> overlapping(TimeNs t0, TimeNs t1) const;

    static constexpr size_t kPrefixBlock = 64;

private:
    friend class TraceBuilder;
    friend class Trace;
    friend class LaneSummary;
    friend class TraceLoader;
    TimeNs longDuration(size_t i) const;
    // Appends one event (durations above UINT32_MAX go to m_longDur).
    void push(TimeNs start, TimeNs duration, StringId name, uint32_t corr, uint32_t aux);
    // Sorts by (start, longer first) when needed; returns true if it had to reorder.
    bool sortIfNeeded();
    // Recomputes m_maxDuration and m_blockMaxEnd from `fromEvent` on (after appends or a sort).
    void buildIndex(size_t fromEvent = 0);
    void shrink();
    size_t memoryBytes() const;
    std::vector<TimeNs> m_start;
    std::vector<uint32_t> m_dur; // saturates at UINT32_MAX; real value in m_longDur
    std::vector<StringId> m_name;
    std::vector<uint32_t> m_corr;
    std::vector<uint32_t> m_aux;
    std::unordered_map<uint32_t, TimeNs> m_longDur;
    TimeNs m_maxDuration = 0;
    // Per block of kPrefixBlock events: the prefix maximum of end times (overlapping()) and the
    // block's first start (a search index small enough to stay in cache).
    std::vector<TimeNs> m_blockMaxEnd;
    std::vector<TimeNs> m_blockStart;
};

// A drawing item produced by folding a lane for one screen: either one event, or a run of
// consecutive events too small to draw apart (all narrower than the fold threshold).
struct FoldItem {
    TimeNs start = 0;
    TimeNs end = 0;
    uint32_t count = 0; // 1 = single event
    uint32_t first = 0; // event index of the first event in the item
    uint32_t longest = 0; // event index of the longest event in the item (its name labels a fold)
    TimeNs busy = 0; // sum of durations (overlap not removed)
    uint8_t depth = 0; // nesting depth on NVTX and CPU thread lanes (0 for other lanes)
};

// Per-lane summary pyramid: level 0 groups kLeaf consecutive events; each level above groups
// kFanout nodes. Each node keeps first index, count, min start, max end, busy time, the longest
// event and the largest gap inside it. Built once in O(n); a fold absorbs whole nodes into a run,
// so it touches O(items x levels) nodes: cost follows the screen, not the trace. Busy sums and ends
// saturate (addSaturated), so a lane of absurd durations totals INT64_MAX instead of overflowing.
class LaneSummary {
public:
    static constexpr uint32_t kLeaf = 32;
    static constexpr uint32_t kFanout = 16;

    void build(const LaneEvents& events);
    void extend(const LaneEvents& events); // after appends at the end (live mode)

    // Fold [t0, t1) for a view of nsPerPixel: events or node ranges narrower than minPixels are
    // merged with their neighbours into one FoldItem. Appends to `out` (cleared first).
    void fold(const LaneEvents& events, TimeNs t0, TimeNs t1, double nsPerPixel, double minPixels,
        std::vector<FoldItem>& out) const;

    // Busy time and count of events in [t0, t1) (events straddling the edges clipped).
    struct Totals {
        TimeNs busy = 0;
        uint64_t count = 0;
    };
    Totals totals(const LaneEvents& events, TimeNs t0, TimeNs t1) const;

    size_t memoryBytes() const;

    // Aggregate of the events [first, last): busy time, latest end, longest event.
    struct Range {
        TimeNs busy = 0;
        TimeNs maxEnd = INT64_MIN;
        TimeNs longestDuration = -1;
        uint32_t longest = 0;
    };
    Range range(const LaneEvents& events, size_t first, size_t last) const;

private:
    struct Node {
        TimeNs start; // min start
        TimeNs end; // max end
        TimeNs busy; // sum of durations
        uint32_t first; // first event index
        uint32_t count;
        uint32_t longest;
        uint32_t longestDur; // duration of `longest`, saturated at UINT32_MAX
        uint32_t maxGap; // largest idle gap between the node's events (start - running max end), saturated
        uint32_t pad;
    };
    static_assert(sizeof(Node) == 48, "LaneSummary::Node must stay compact");
    void buildFrom(const LaneEvents& events, size_t firstNode);
    // Folding: takes the biggest summary node that starts at event j and fits in a run (all its
    // events narrower than q, no gap of q inside or before it); false when none does.
    bool absorbNode(
        const LaneEvents& events, size_t& j, size_t last, TimeNs q, FoldItem& item, TimeNs& longestDur) const;
    void foldNvtx(
        const LaneEvents& events, size_t first, size_t last, TimeNs t0, TimeNs q, std::vector<FoldItem>& out) const;
    std::vector<std::vector<Node>> m_levels;
};

struct Lane {
    LaneId id = 0;
    LaneInfo info;
    LaneEvents events;
    LaneSummary summary;
};

class TraceBuilder;

class Trace {
public:
    Trace();
    ~Trace();
    Trace(Trace&&) noexcept;
    Trace& operator=(Trace&&) noexcept;
    Trace(const Trace&) = delete;
    Trace& operator=(const Trace&) = delete;

    const TraceHeader& header() const { return m_header; }
    TraceHeader& mutableHeader() { return m_header; }

    // Strings.
    std::string_view str(StringId id) const;
    size_t stringCount() const { return m_strings.size(); }
    std::optional<StringId> findString(std::string_view s) const;

    // Lanes.
    size_t laneCount() const { return m_lanes.size(); }
    const Lane& lane(LaneId id) const { return m_lanes[id]; }
    const std::vector<Lane>& lanes() const { return m_lanes; }
    std::vector<uint32_t> ranks() const; // sorted, unique
    std::vector<LaneId> lanesOf(uint32_t rank, LaneKind kind) const;
    std::optional<LaneId> findLane(std::string_view key) const;

    // Typed access to one event.
    EventKind kindOf(LaneId lane, size_t index) const { return EventKind(m_lanes[lane].events.aux(index) >> 29); }
    const KernelConfig* kernelConfig(LaneId lane, size_t index) const; // kernels only
    const std::vector<KernelConfig>& kernelConfigs() const { return m_configs; } // distinct configs
    const MemopInfo* memop(LaneId lane, size_t index) const; // memcpy/memset only
    const CollectiveInfo* collective(LaneId lane, size_t index) const; // collective lanes only
    const SyncInfo* sync(LaneId lane, size_t index) const; // sync events only
    uint32_t nvtxDepth(LaneId lane, size_t index) const; // NVTX lanes only
    HostKind hostKind(LaneId lane, size_t index) const; // host events only (CpuThread lanes)
    uint32_t hostDepth(LaneId lane, size_t index) const; // host events only: nesting depth, 0 = outermost
    ApiKind apiKind(LaneId lane, size_t index) const; // API events only

    // The CPU API call (same rank, same correlation id) that launched a GPU event, if recorded.
    // Graph kernels resolve to their cudaGraphLaunch (isGraphLaunchName). Built lazily on first call
    // (thread-safe).
    EventRef launchOf(LaneId lane, size_t index) const;
    // GPU events launched by an API call (inverse of launchOf).
    std::vector<EventRef> launchedBy(LaneId apiLane, size_t index) const;

    // Capture-time context of CUDA-graph nodes (graphnode.h), sorted by (rank, node id), one entry per node.
    const std::vector<GraphNodeInfo>& graphNodes() const { return m_graphNodes; }
    // The node a graph kernel of `rank` replayed (nullptr: not in the table).
    const GraphNodeInfo* graphNode(uint32_t rank, uint64_t nodeId) const;

    // Decode steps per rank, sorted by index. Empty until steps are set (from the file or detected).
    const std::vector<Step>& steps(uint32_t rank) const;
    void setSteps(uint32_t rank, std::vector<Step> steps);
    uint32_t stepCount() const; // max over ranks
    // How the steps were found (empty rule: not by StepFinder, e.g. a window of a large file).
    const StepReport& stepReport() const { return m_stepReport; }
    void setStepReport(StepReport r) { m_stepReport = std::move(r); }

    TimeNs startTime() const { return m_start; }
    TimeNs endTime() const { return m_end; }
    // A trace read without its events (readSkeleton, tracewindow.h) takes the span of its file.
    void setTimeSpan(TimeNs start, TimeNs end)
    {
        m_start = start;
        m_end = end;
    }

    uint64_t eventCount() const;
    uint64_t eventCount(EventKind kind) const;

    // Problems found while reading/building (truncation, unmatched ids, skipped unknown data).
    const std::vector<std::string>& warnings() const { return m_warnings; }
    void addWarning(std::string w) { m_warnings.push_back(std::move(w)); }

    // Sections stored with the trace.
    const AnnotationSet& annotations() const { return m_annotations; }
    AnnotationSet& mutableAnnotations() { return m_annotations; }
    const std::optional<BudgetSettings>& budgetSettings() const { return m_budget; }
    void setBudgetSettings(BudgetSettings b) { m_budget = std::move(b); }
    const std::optional<ClassifierTable>& classifierTable() const { return m_classifier; }
    void setClassifierTable(ClassifierTable t) { m_classifier = std::move(t); }

    // Live mode: moves the events collected in `builder` since its last hand-over into this trace.
    // Lanes and strings are matched by identity; cost is proportional to the new events (a lane is
    // re-sorted only when new events start before its last one).
    void appendFrom(TraceBuilder& builder);

    size_t memoryBytes() const;

private:
    friend class TraceBuilder;
    friend class TraceLoader;
    struct Impl;
    // Sorts lanes, builds summaries, counts and lookup tables (end of building / loading), on up to
    // `threads` threads of TaskPool::shared(); summaries: build the lanes' summary pyramids.
    void finalize(unsigned threads, bool summaries = true);
    void finalizeLane(Lane& lane, uint64_t counts[8], bool summary);
    void sortGraphNodes();
    TraceHeader m_header;
    std::vector<std::string> m_strings;
    std::vector<Lane> m_lanes;
    std::vector<KernelConfig> m_configs;
    std::vector<MemopInfo> m_memops;
    std::vector<CollectiveInfo> m_collectives;
    std::vector<SyncInfo> m_syncs;
    std::vector<std::vector<Step>> m_steps; // by rank
    std::vector<GraphNodeInfo> m_graphNodes;
    StepReport m_stepReport;
    TimeNs m_start = 0;
    TimeNs m_end = 0;
    std::vector<std::string> m_warnings;
    AnnotationSet m_annotations;
    std::optional<BudgetSettings> m_budget;
    std::optional<ClassifierTable> m_classifier;
    std::unique_ptr<Impl> m_impl; // lookup tables (string map, lane map, launch index)
};

// Collects events in any order and produces a Trace. Used by the file reader, importers, the live
// client and synth. Not thread-safe.
class TraceBuilder {
public:
    TraceBuilder();
    ~TraceBuilder();

    StringId intern(std::string_view s);
    LaneId lane(const LaneInfo& info); // creates the lane on first use
    uint32_t config(const KernelConfig& c);

    void addKernel(
        LaneId lane, TimeNs start, TimeNs duration, StringId name, uint32_t correlation, const KernelConfig& config);
    void addMemop(LaneId lane, TimeNs start, TimeNs duration, const MemopInfo& info, uint32_t correlation);
    void addApi(LaneId lane, TimeNs start, TimeNs duration, StringId name, uint32_t correlation,
        ApiKind kind = ApiKind::Runtime);
    void addSync(LaneId lane, TimeNs start, TimeNs duration, const SyncInfo& info, uint32_t correlation);
    void addNvtx(LaneId lane, TimeNs start, TimeNs duration, StringId name, uint32_t depth);
    // A host-side range on a CpuThread lane; depth is its nesting depth on that lane (0 = outermost).
    void addHost(LaneId lane, TimeNs start, TimeNs duration, StringId name, HostKind kind, uint32_t depth);
    void addCollective(LaneId lane, TimeNs start, TimeNs duration, StringId op, const CollectiveInfo& info);
    void addStep(uint32_t rank, const Step& step);
    // A graph node's capture-time context (ranges are ids of this builder's strings). A second entry
    // for the same (rank, node) replaces the first.
    void addGraphNode(GraphNodeInfo node);

    TraceHeader& header();
    void addWarning(std::string w);
    void setAnnotations(AnnotationSet a);
    void setBudgetSettings(BudgetSettings b);
    void setClassifierTable(ClassifierTable t);

    uint64_t pendingEvents() const;

    // Sorts lanes, builds summaries and lookup tables. The builder is empty afterwards. Without
    // `laneSummaries` the lanes' summary pyramids stay empty (ReadOptions::laneSummaries).
    Trace finish(bool laneSummaries = true);

private:
    friend class Trace;
    friend class TraceLoader;
    std::unique_ptr<Trace> m_trace; // events are collected straight into the trace's columns
    struct Pending;
    std::unique_ptr<Pending> m_pending;
};

// True for the name of an API call that launches a CUDA or HIP graph: cudaGraphLaunch, cuGraphLaunch,
// hipGraphLaunch and their suffixed variants (_ptsz, _v10000, ...).
bool isGraphLaunchName(std::string_view apiName);

} // namespace gapscope::model
