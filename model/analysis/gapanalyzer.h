// SPDX-License-Identifier: MIT
#pragma once

// GapAnalyzer: the gap analysis of a whole trace against a per-step budget. Construction does the
// work once (one pass over the GPU events and one over the CPU API events, ranks in parallel):
//   1. step windows per rank (W = [start of step i, start of step i+1), or the recorded end of the
//      last step), host-sync intervals per rank (sync records and blocking API calls);
//   2. every (rank, step) window is decomposed by WindowSweep into slots (SlotLayout), classifying
//      each distinct kernel name once on first sight; collective kernels count whole for now and
//      are recorded;
//   3. collective kernels are matched across ranks by (communicator, sequence) (CollectiveKeys,
//      CollectiveMatcher: wait vs wire, stragglers), those outside every step included; each wait
//      then moves from the collectives slot to "collective wait" (windows where streams overlapped,
//      whose shares depend on the split, are swept again);
//   4. steps some rank lacks are marked incomplete and kept out of every summary.
// Queries then only add up stored slots (analyze()), except when the members of each bar are asked
// for (the events and idle intervals that make it up, for the viewer): those steps are swept again.
//
// The rules are the ones of model/analysis/README.md ("The rules, as implemented").
//
// Threading: the trace must stay unchanged while the analyzer lives. After construction every
// method is const and safe to call from several threads at once.

#include "model/analysis/collectivematcher.h"
#include "model/analysis/waterfall.h"
#include "model/analysis/windowsweep.h"
#include "model/base/canceltoken.h"
#include "model/trace/kernelclassifier.h"
#include "model/trace/trace.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace gapscope::model {

class GapAnalyzer {
public:
    static constexpr int kCriticalRank = -1;
    static constexpr uint32_t kAllSteps = std::numeric_limits<uint32_t>::max();

    struct Options {
        unsigned threads = 0; // ranks analysed at once on TaskPool::shared(); 0: the pool's size
        // Stops the construction between ranks (and between its passes). A cancelled analyzer holds
        // partial results: ask it nothing but cancelled().
        CancelToken cancel;
        // One batch of a trace read as windows of whole steps (tracewindow.h, StepBatch): only the
        // steps with index in [firstStep - margin, lastStep + margin] are analysed (their windows still
        // end where the next step starts, so the trace holds every step); the margin's steps only so
        // that collectives match and waits spill across the batch's edges as in the whole trace:
        // absorb() takes [firstStep, lastStep]. Collective kernels outside every step take part only
        // when they start in [ownedFrom, ownedTo), so each is counted in one batch.
        uint32_t firstStep = 0, lastStep = kAllSteps, margin = 0;
        TimeNs ownedFrom = std::numeric_limits<TimeNs>::min(), ownedTo = std::numeric_limits<TimeNs>::max();
        // Keep every idle gap of the first sweep where one stream ran in the window (its gaps, first and
        // last event come out as stepGaps() would sweep them again), so that stepGaps() does not sweep
        // those windows again: a batch's host attribution. 24 bytes a gap, in buffers (one per rank)
        // that the analyzer borrows and gives back when destroyed, so the next batch reuses them.
        std::vector<std::vector<WindowSweep::Gap>>* keepStepGaps = nullptr;
        // The kind of step analysed: the steps of other kinds are shown but left out like incomplete
        // ones (a decode budget is not laid over a prefill). Unknown: every kind (see defaultKind()).
        StepKind kind = StepKind::Unknown;
    };
    // The kind an analysis looks at unless told: decode where the trace has decode steps, else all.
    static StepKind defaultKind(const Trace& trace);

    GapAnalyzer(const Trace& trace, KernelClassifier classifier, StepBudget budget, const Options& options);
    GapAnalyzer(const Trace& trace, KernelClassifier classifier, StepBudget budget)
        : GapAnalyzer(trace, std::move(classifier), std::move(budget), Options {})
    {
    }
    // An analyzer built batch by batch, for a trace too large to hold (analysisstream.h): `skeleton`
    // holds the trace's strings, lanes, steps, sections and time span but no events. absorb() the
    // analyzer of each batch (Options::firstStep..lastStep, ownedFrom..ownedTo: the batch's), in step
    // order, then finish(). Its queries are those of the whole trace's analyzer except what sweeps
    // events again (a time range, members, stepGaps, blocksHost): hasEvents() is false.
    struct Batched { };
    GapAnalyzer(const Trace& skeleton, KernelClassifier classifier, StepBudget budget, const Options& options, Batched);
    void absorb(GapAnalyzer&& batch);
    void finish();
    bool hasEvents() const { return !m_batched; }

    ~GapAnalyzer();
    GapAnalyzer(const GapAnalyzer&) = delete;
    GapAnalyzer& operator=(const GapAnalyzer&) = delete;

    bool cancelled() const { return m_cancelled; }
    const Trace& trace() const { return m_trace; }
    const KernelClassifier& classifier() const { return m_classifier; }
    const StepBudget& budget() const { return m_budget; }
    const SlotLayout& layout() const { return m_layout; }
    const std::vector<uint32_t>& ranks() const { return m_ranks; } // ranks that have steps

    // One analysed (rank, step).
    struct StepRecord {
        uint32_t index = 0;
        TimeNs start = 0, end = 0; // the window
        TimeNs lastEventEnd = 0;
        std::vector<TimeNs> slotNs; // SlotLayout; adds up to end - start
        TimeNs measured() const { return end - start; }
    };
    const std::vector<StepRecord>& steps(uint32_t rank) const;
    const StepRecord* step(uint32_t rank, uint32_t stepIndex) const;

    // What to analyse.
    struct Selection {
        enum class Kind { Step, Median, Steps, Range };
        Kind kind = Kind::Steps;
        int rank = kCriticalRank; // a rank, or kCriticalRank: each step taken from its critical rank
        uint32_t firstStep = 0; // Step: the step; Median/Steps: steps with index in [first, last]
        uint32_t lastStep = kAllSteps;
        TimeNs t0 = 0, t1 = 0; // Range: [t0, t1) in trace time; steps' windows clipped to it
        bool members = false; // also list the events and idle intervals of each bar
    };
    struct Members {
        std::vector<EventRef> events;
        std::vector<TimeInterval> idle;
    };
    struct Breakdown {
        bool valid = false;
        int rank = kCriticalRank;
        std::vector<std::pair<uint32_t, uint32_t>> steps; // (rank, step index) summed
        double budgetSteps = 0; // budgets added (fraction of steps for a range)
        TimeNs measuredNs = 0; // sum over the steps (clipped for a range)
        std::vector<TimeNs> slotNs;
        std::vector<Bar> bars; // add up to measuredNs
        std::vector<Members> members; // parallel to bars, when asked for
    };
    Breakdown analyze(const Selection& selection) const;

    // The rank the others wait for in one step (see README.md), or -1 when no rank has the step.
    int criticalRank(uint32_t stepIndex) const;
    struct Critical {
        int rank = -1; // most often critical over the steps
        uint32_t steps = 0; // steps where it was critical
        uint32_t total = 0; // steps looked at
    };
    Critical critical(uint32_t firstStep = 0, uint32_t lastStep = kAllSteps) const;

    struct Straggler {
        uint32_t rank = 0;
        uint64_t matched = 0; // collectives it took part in (matched with >= 1 other rank)
        uint64_t unmatched = 0;
        uint64_t lateCount = 0;
        TimeNs lateSum = 0, lateMax = 0;
        std::string op; // "AllReduce" when all its late collectives are, else "collective"
        TimeNs lateMedian = 0;
        std::vector<uint32_t> lateSteps; // the steps where it arrived late
        double meanLateMs() const { return lateCount ? double(lateSum) / double(lateCount) / 1e6 : 0; }
    };
    std::vector<Straggler> stragglers(uint32_t firstStep = 0, uint32_t lastStep = kAllSteps) const; // per rank

    struct IdleGap {
        uint32_t rank = 0, step = 0;
        TimeNs start = 0, end = 0;
        IdleKind kind = IdleKind::LaunchHost;
        EventRef next; // the GPU event that ends the gap (invalid for a step gap, and in a batched analyzer)
        bool hasNext = false; // that event, by name and kind (kept by a batched analyzer too)
        StringId nextName = 0;
        EventKind nextKind = EventKind::Kernel;
        TimeNs duration() const { return end - start; }
    };
    // The n longest idle gaps of the steps in [first, last] on `rank` (kCriticalRank: all ranks),
    // from the 3 longest kept per (rank, step); step gaps only when asked.
    std::vector<IdleGap> largestGaps(
        int rank, uint32_t firstStep, uint32_t lastStep, size_t n, bool stepGaps = true) const;

    // Every idle gap of the selected steps (each step swept again), in time order per step, with the
    // GPU event that ends it, and the step's first and last GPU events (in start order): what host
    // attribution (hostattribution.h) needs. Incomplete steps as in analyze(); a time range clips.
    struct StepGaps {
        uint32_t rank = 0, step = 0;
        TimeNs w0 = 0, w1 = 0; // the window
        EventRef first, last; // first and last GPU event of the window
        std::vector<IdleGap> gaps;
    };
    std::vector<StepGaps> stepGaps(const Selection& selection) const;
    // The same, one step at a time, as the sweep gives the gaps (fn sees each step once; memory of one
    // step, whatever the selection): gap(i) is the IdleGap of stepGaps(), next(i) only its event.
    class StepGapsView {
    public:
        uint32_t rank = 0, step = 0;
        TimeNs w0 = 0, w1 = 0; // the window
        EventRef first, last; // first and last GPU event of the window
        size_t size() const { return m_count; }
        const WindowSweep::Gap& raw(size_t i) const { return m_gaps[i]; }
        EventRef next(size_t i) const;
        IdleGap gap(size_t i) const;

    private:
        friend class GapAnalyzer;
        const GapAnalyzer* m_analyzer = nullptr;
        const WindowSweep::Gap* m_gaps = nullptr;
        size_t m_count = 0;
        LaneId m_lane = kNoLane; // tags are event indices on this lane, else indices into m_refs
        const std::vector<EventRef>* m_refs = nullptr;
    };
    void forEachStepGaps(const Selection& selection, const std::function<void(const StepGapsView&)>& fn) const;

    // Whether a CPU API lane event blocks the host until GPU work is done: a sync record other than a
    // stream-wait-event, or a synchronising / blocking-copy API call (the sync-stall rule of README.md).
    bool blocksHost(LaneId lane, size_t index) const;

    // One collective kernel of one rank as the matching left it: its step (CollectiveMatcher::kNoStep: in
    // none), its key across ranks when it has one, and its wait for the last rank to arrive (the rest of
    // its duration is wire time). What `gapscope-cli query`'s collectives table lists.
    struct CollectiveRecord {
        uint32_t rank = 0, step = CollectiveMatcher::kNoStep;
        EventRef event;
        StringId name = 0;
        TimeNs start = 0, duration = 0, wait = 0;
        bool keyed = false;
        uint64_t comm = 0, seq = 0;
    };
    // Every matched collective of the analysed ranks, rank by rank, step by step (those in no step last),
    // in start order. Empty for a batched analyzer (its batches' occurrences are not kept): ask each
    // batch before absorb().
    void forEachCollective(const std::function<void(const CollectiveRecord&)>& fn) const;
    // Kernels no classifier rule matches, by total time inside steps (all ranks), longest first.
    struct NameTime {
        StringId name = 0;
        TimeNs ns = 0;
        uint64_t count = 0;
    };
    std::vector<NameTime> unclassifiedKernels() const;

    // Steps some analysed rank lacks (its capture started after or stopped before them): shown, but
    // kept out of medians, means, the critical path, stragglers and findings. Sorted by index.
    struct Incomplete {
        uint32_t index = 0;
        std::string why; // "capture started 824 ms apart on ranks 0 and 1; step 0 left out"
        bool summarised = false; // one note and finding stand for all such steps (the light mode's)
    };
    const std::vector<Incomplete>& incompleteSteps() const { return m_incomplete; }
    // A light-mode capture (--detail-every): steps whose graph replays were recorded whole, and the
    // detailed ones. Where both exist, whole-graph steps are left out of the summaries (incomplete,
    // summarised) so that kernel bars come from the detailed steps; step times of all of them are in
    // steps().
    uint32_t wholeGraphSteps() const { return m_wholeGraphSteps; }
    uint32_t detailedSteps() const { return m_detailedSteps; }
    bool isIncomplete(uint32_t stepIndex) const;

    // Problems with the data, in words (missing API lanes, unmatched collectives, ...).
    const std::vector<std::string>& notes() const { return m_notes; }
    bool hasApiLanes(uint32_t rank) const;
    // Class of an interned kernel name (kUnclassified when none, or not a kernel of this trace).
    int nameClass(StringId name) const;
    std::string collectiveOp(StringId name) const; // "AllReduce", "AllGather", ..., "collective"

private:
    static constexpr size_t kTopGaps = WindowSweep::kTopGaps; // longest gaps kept per (rank, step)
    struct Window {
        uint32_t index;
        TimeNs w0, w1;
    };
    struct RankData {
        uint32_t rank = 0;
        uint32_t slot = 0;
        std::vector<LaneId> gpuLanes;
        bool apiLanes = false;
        std::vector<Window> windows; // sorted by start
        std::vector<TimeInterval> syncs; // sorted, disjoint
        std::vector<StepRecord> records; // per window
        std::vector<IdleGap> gaps; // kTopGaps per window, longest first
        std::vector<uint8_t> overlapped; // per window: events of several streams ran at once
        std::vector<std::vector<CollectiveMatcher::Occurrence>> collectives; // per window, until matched
        uint64_t outsideCollectives = 0; // collective kernels before the first / after the last window
        std::vector<CollectiveMatcher::Occurrence> outside; // those kernels, matched but in no step
        TimeNs firstEvent = 0, lastEvent = 0; // the rank's GPU events: where its capture began and ended
        std::vector<NameTime> unclassified; // by name (first pass), unsorted
        // Options::keepStepGaps: per window, its gaps in keptGaps as [from, to) (from kNotKept: swept
        // with several streams, not kept), the lane of their tags and its first and last event.
        static constexpr uint32_t kNotKept = UINT32_MAX;
        struct Kept {
            uint32_t from = kNotKept, to = 0;
            LaneId lane = kNoLane;
            EventRef first, last;
        };
        std::vector<Kept> kept;
        std::vector<WindowSweep::Gap> keptGaps;
    };
    struct Scratch { // per-thread buffers of one window sweep
        WindowSweep sweep;
        WindowSweep::Result result;
        std::vector<WindowSweep::Piece> pieces;
        std::vector<EventRef> refs; // piece.tag -> event (several lanes)
        LaneId singleLane = kNoLane; // one lane: piece.tag is the event index on it
        bool forcePieces = false; // always gather pieces (members need every piece)
        // Note the window's first and last GPU event (by start; ties: the first fed, the last fed),
        // as the sorted pieces would give them, without gathering pieces.
        bool trackEnds = false;
        TimeNs firstStart = 0, lastStart = 0;
        EventRef first, last;
        std::vector<size_t> runs; // boundaries of the per-lane runs in `pieces`
        std::vector<std::pair<size_t, size_t>> ranges; // per lane: events overlapping the window
        bool direct = false; // the last window was swept with at most one stream (tags: singleLane)
        EventRef ref(uint32_t tag) const { return singleLane != kNoLane ? EventRef { singleLane, tag } : refs[tag]; }
    };
    // How a window is swept: waits unknown (first pass: whole collectives, record them) or known.
    struct SweepMode {
        TimeNs clip0, clip1;
        WindowSweep::Input::Gaps gaps;
        bool waitsKnown;
        std::vector<CollectiveMatcher::Occurrence>* record; // first pass: collectives found
        std::vector<NameTime>* unclassified; // first pass: unclassified kernel time
        std::vector<WindowSweep::Gap>* allGaps = nullptr; // every gap appended here too
    };
    void setUp(const Options& options); // what both constructors do first
    void prepareRank(RankData& r);
    void sweepRank(RankData& r);
    void applyWaits(RankData& r);
    void sweepWindow(const RankData& r, size_t w, const SweepMode& mode, Scratch& s) const;
    void storeRecord(RankData& r, size_t w, const Scratch& s) const;
    IdleGap idleGap(uint32_t rank, uint32_t step, const WindowSweep::Gap& g, const Scratch& s) const;
    IdleGap idleGap(uint32_t rank, uint32_t step, const WindowSweep::Gap& g, EventRef next) const;
    int classOf(StringId name) const;
    bool isSyncApi(StringId name) const;
    TimeNs waitOf(const RankData& r, size_t w, uint32_t laneSlot, uint32_t index, TimeNs start) const;
    void keyCollectives();
    void findIncomplete();
    void computeCritical();
    void addNotes();
    const RankData* rankData(uint32_t rank) const;
    std::vector<std::pair<const RankData*, size_t>> selectSteps(const Selection& sel) const;
    void addMembers(const RankData& r, size_t w, const Selection& sel, Breakdown& out) const;
    template <typename Fn> void forEachRank(Fn&& fn); // ranks on TaskPool::shared(), until cancelled
    bool stopped(); // cancelled: sets m_cancelled

    const Trace& m_trace;
    KernelClassifier m_classifier;
    StepBudget m_budget;
    SlotLayout m_layout;
    unsigned m_threads = 1;
    CancelToken m_cancel;
    // Per string id: the name of a graph launch API call (isGraphLaunchName); empty when the trace
    // has none, and then no gap is looked at for in-graph idle.
    std::vector<uint8_t> m_graphLaunchName;
    StringId m_wholeGraphName = 0; // format::kWholeGraphName where the trace has it (a light-mode capture)
    bool m_cancelled = false;
    bool m_batched = false; // built by absorb(): no events
    uint32_t m_firstStep = 0, m_lastStep = kAllSteps, m_margin = 0; // Options
    StepKind m_kind = StepKind::Unknown;
    void leaveOutOtherKinds();
    void leaveOutWholeGraphSteps();
    bool isWholeGraph(LaneId lane, size_t index) const;
    uint32_t m_wholeGraphSteps = 0, m_detailedSteps = 0; // steps with whole graph replays, and without
    bool own(uint32_t stepIndex) const { return stepIndex >= m_firstStep && stepIndex <= m_lastStep; }
    TimeNs m_ownedFrom = std::numeric_limits<TimeNs>::min(), m_ownedTo = std::numeric_limits<TimeNs>::max();
    std::vector<std::vector<WindowSweep::Gap>>* m_keepStepGaps = nullptr;
    // By StringId, filled on first use from any thread (the same value whoever computes it):
    // class of a kernel name (-2: not yet), whether an API call of that name blocks the host (1 or 0;
    // kSyncUnknown: not yet).
    std::unique_ptr<std::atomic<int16_t>[]> m_nameClass;
    static constexpr uint8_t kSyncUnknown = 0xFF;
    std::unique_ptr<std::atomic<uint8_t>[]> m_syncApi;
    size_t m_stringCount = 0;
    std::vector<uint32_t> m_ranks;
    std::vector<RankData> m_rankData; // parallel to m_ranks
    CollectiveMatcher m_matcher;
    std::vector<std::pair<uint32_t, int>> m_critical; // (step index, critical rank), sorted
    std::vector<Incomplete> m_incomplete;
    std::vector<uint32_t> m_incompleteIndex; // the indices of m_incomplete
    std::vector<std::string> m_notes;
};

} // namespace gapscope::model
