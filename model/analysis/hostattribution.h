// SPDX-License-Identifier: MIT
#pragma once

// HostAttribution: what the host was doing during the GPU's idle time inside steps. For every
// launch/host gap and sync stall of the selected steps (GapAnalyzer::stepGaps, the gaps as the gap
// analysis defines them), each moment of the gap goes to the innermost host event active at that
// moment on the thread that launched the GPU event ending the gap (its correlation id -> the
// launching API call, Trace::launchOf -> that call's thread). Host events of a thread: its CPU
// lane (operators, Python frames, OS calls), its NVTX lane (NVTX ranges; Kineto's user_annotation)
// and its CUDA API lane (runtime and driver calls; sync records are the same calls and are left
// out). Innermost = the active event that started last (nested ranges: the deepest); of two that
// started together the shorter, then API call before CPU lane before NVTX range, then the deeper
// on its lane (two ranges with the same span: the one recorded inside the other). The thread's
// sampled call stack (its sampled lane: ranges estimated from CPU samples, kind "sampled") explains
// only the moments no recorded event holds. Threads: (rank, host, pid, thread id).
//
// The step's own range is left out: a host event that encloses every launch of the step, from the
// start of the call that launched its first GPU event to the end of the one that launched its last
// (the step's NVTX / ProfilerStep range, and frames around the whole step such as `forward`).
// When one call launched the whole step (a CUDA graph), only NVTX ranges around it are left out.
// Moments with no event left are "unattributed host time"; so is a whole gap whose next event has
// no recorded launch (no CUDA API events). Unattributed launch/host gap time is told apart by why:
//   no launch     the next GPU event's launch is not recorded;
//   queued        its launch call had already returned: the work was queued, and the GPU waited on
//                 something other than this host thread (a dependency, an event, another stream);
//   other threads the launching thread shows nothing, but another thread of the process does: the
//                 innermost event active there (across those threads: the one that started last,
//                 the step's own ranges left out), aggregated like the rows;
//   nothing       no recorded host event on any thread of the process.
//
// Sync stalls also name the blocking call (the host-blocking API call or sync record of the rank
// active when the stall began, GapAnalyzer::blocksHost; named calls before unnamed records) and the
// innermost host event around that call on its thread (step-level events left out).
//
// Aggregates, per rank over the selection: gap time, explained time, and rows by (name, kind) with
// time, count (its host events, each counted once however many gaps it spans) and those gaps, longest
// first.
//
// Cost: one sweep per selected step (GapAnalyzer::forEachStepGaps, a step at a time; none where the
// analyzer kept the step's gaps, Options::keepStepGaps) plus one walk of each launching thread's
// events through the step's gaps in time order (an event joins a pool once, leaves it when a gap
// starts after its end), and per gap O(k log k) for the k events that overlap it. Memory: the
// aggregates, plus gaps() and pieces() only with keepGaps (and only of ranks with host lanes). Threading: computed in
// the constructor; const afterwards (ranks on the task pool, each on its own, joined in rank order). The analyzer and
// its trace must outlive it.

#include "model/analysis/gapanalyzer.h"
#include "model/base/json.h"

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace gapscope::model {

class HostAttribution {
public:
    // `selection` as for GapAnalyzer::analyze(), except that kCriticalRank means every analysed
    // rank, each over its own steps (the aggregates are per rank). `members` is ignored.
    // `keepGaps` false: only the aggregates are kept (gaps() and pieces() stay empty, rows list no
    // gaps), so memory does not grow with the number of gaps: what the CLI's report needs.
    HostAttribution(const GapAnalyzer& analyzer, const GapAnalyzer::Selection& selection, bool keepGaps = true);
    // The attribution of a batched analyzer (GapAnalyzer::Batched, analysisstream.h): empty, then each
    // batch's attribution (computed without keepGaps on the batch's analyzer) added with absorb(); the
    // rows are the same as from the whole trace, as the batches' steps are disjoint.
    HostAttribution(const GapAnalyzer& batched, GapAnalyzer::Batched);
    void absorb(const HostAttribution& batch);

    // One stretch of a gap with the host event it is attributed to (invalid: unattributed).
    struct Piece {
        TimeNs start = 0, end = 0;
        EventRef host;
    };
    // One launch/host gap or sync stall.
    struct Gap {
        GapAnalyzer::IdleGap gap; // rank, step, [start, end), kind, the GPU event that ends it
        EventRef launch; // the API call that launched gap.next (invalid: not recorded)
        EventRef host; // the host event with the most time in the gap (invalid: none)
        TimeNs explained = 0; // time of the gap inside some host event
        uint32_t firstPiece = 0, pieceCount = 0; // into pieces()
        EventRef syncCall; // sync stalls: the call the host was blocked in (invalid: not found)
        EventRef syncAround; // sync stalls: the innermost host event around that call (invalid: none)
        // Launch/host gaps: the unattributed time by why (see above); with `explained` they add up to the gap.
        TimeNs noLaunch = 0, queued = 0, otherThreads = 0, nothing = 0;
    };
    // Time of one host event name in the gaps of one rank.
    struct Row {
        StringId name = 0;
        const char* kind = ""; // hostKindName()
        TimeNs ns = 0;
        uint64_t count = 0; // host events (calls) of the name that got time, each once however many gaps it spans
        std::vector<uint32_t> gaps; // indices into gaps() (empty without keepGaps)
        uint64_t lastGap = UINT64_MAX; // the serial number of the last gap listed (lists a gap once)
        EventRef lastHost; // the last host event counted (counts an event once)
    };
    // In-graph gap time of one capture-time range path.
    struct RangeRow {
        // "decode > layer 3 > mlp"; else "(built under no range)", "(build not recorded)", "(ended by a copy or
        // memset)", "(gap end not known)" (a batched analysis keeps no gap ends)
        std::string range;
        TimeNs ns = 0;
        uint64_t count = 0; // gaps
    };
    // Sync stalls of one rank by (blocking call, host event around it).
    struct SyncRow {
        std::string call; // "cudaStreamSynchronize", "cudaMemcpy", "stream sync" (a record without name)
        StringId around = 0; // 0: no host event around the call
        const char* aroundKind = "";
        TimeNs ns = 0;
        uint64_t count = 0; // blocking calls (each once however many stalls it caused; a stall without a found call counts 1)
        std::vector<uint32_t> gaps; // (empty without keepGaps)
        EventRef lastCall; // the last call counted
    };
    struct Rank {
        uint32_t rank = 0;
        // False for a rank without any host lane (CUDA API, CPU thread or host NVTX): nothing can be
        // attributed, every launch/host gap is wholly "no launch", and none is kept in gaps() (a gap
        // per kernel: 120 bytes each); the rows list no gaps.
        bool gapsKept = true;
        TimeNs gapNs = 0, explainedNs = 0; // launch/host gaps
        std::vector<Row> rows; // launch/host gaps, longest first (then name)
        // Unattributed launch/host gap time by why, and the other threads' events behind it.
        TimeNs noLaunchNs = 0, queuedNs = 0, otherThreadsNs = 0, nothingNs = 0;
        uint64_t noLaunchGaps = 0, queuedGaps = 0, otherThreadsGaps = 0, nothingGaps = 0; // gaps with such time
        std::vector<Row> otherThreads;
        TimeNs syncNs = 0, syncExplainedNs = 0; // sync stalls
        std::vector<Row> syncMoments; // sync stalls, moment by moment like rows
        std::vector<SyncRow> syncs; // sync stalls by call, longest first
        // In-graph gaps (idle inside one CUDA-graph replay: not the host's doing) by where the node that
        // ended each was built: its capture-time range path (Trace::graphNode), longest first.
        TimeNs inGraphNs = 0;
        std::vector<RangeRow> inGraph;
    };

    const std::vector<Gap>& gaps() const { return m_gaps; }
    const std::vector<Piece>& pieces() const { return m_pieces; }
    const std::vector<Rank>& ranks() const { return m_ranks; }
    const Rank* rank(uint32_t rank) const;

    // "cpu_op", "python_function", "user_annotation", "os_runtime", "cuda_runtime", "cuda_driver",
    // "nvtx" (a Kineto trace's host NVTX ranges are its user_annotation ranges).
    static const char* hostKindName(const Trace& trace, EventRef event);

    // The host events of a thread (the lanes the attribution reads): its CPU lane, CUDA API lane and
    // NVTX lane (not the NVTX lanes that copy ranges onto a GPU stream).
    static bool isThreadLane(const LaneInfo& info);
    bool rankHasHostLanes(uint32_t rank) const;
    // The host events (CPU lane, NVTX lane) active over the whole of an API call on its thread,
    // innermost first in the order the attribution uses, then its sampled call stack's frames (leaf
    // first); step-level ranges included.
    static std::vector<EventRef> enclosing(const Trace& trace, EventRef call);

private:
    struct Candidate {
        TimeNs start, end;
        uint8_t priority; // API call 2, CPU lane 1, NVTX 0
        uint32_t depth; // nesting depth on its lane
        EventRef ref;
    };
    struct StepScope { // per (rank, step): what counts as the step's own range
        TimeNs launch0 = 0, launch1 = 0;
        bool known = false, several = false;
        TimeNs w0 = 0, w1 = 0; // the step's window
    };
    // Per thread lane, within one step: the events not yet reached (next..last) and those begun that
    // may still overlap a later gap (gaps come in time order, so each event is looked at a bounded
    // number of times instead of searched for per gap).
    struct LaneCursor {
        size_t next = 0, last = 0;
        std::vector<uint32_t> pool;
    };
    // True when y is inside x (the sweep's order: later start, then shorter, API call before CPU lane
    // before NVTX range, then deeper).
    static bool encloses(const Candidate& x, const Candidate& y);
    template <typename Emit> static void sweepInnermost(std::vector<Candidate>& c, TimeNs a, TimeNs b, Emit&& emit);
    const std::vector<LaneId>& threadLanes(LaneId apiLane);
    EventRef launchOf(EventRef gpuEvent); // Trace::launchOf, remembering the last (rank, correlation)
    StepScope scopeOf(const GapAnalyzer::StepGapsView& step) const;
    bool stepLevel(const StepScope& scope, LaneId lane, size_t index) const;
    void attribute(Gap& g, const StepScope& scope);
    void findSyncCall(Gap& g, const StepScope& scope);
    // Splits the unattributed time of a launch/host gap by why; adds the other threads' events
    // behind it to `rows` as attribute() adds pieces (through m_otherPieces).
    void explainRest(Gap& g, const StepScope& scope);
    const std::vector<LaneId>& processLanes(LaneId apiLane);
    HostAttribution(const GapAnalyzer& analyzer); // an empty part, for one rank's share of the work
    void compute(const GapAnalyzer::Selection& selection, bool keepGaps, const std::vector<uint32_t>& ranks);
    void append(HostAttribution&& part); // another part's ranks after this one's
    void add(const Gap& g, uint64_t serial, bool keep);
    void finish();
    void sortRows(Rank& r) const; // longest first, then by name
    void addInGraph(Rank& r, EventRef next, TimeNs ns);

    const GapAnalyzer& m_analyzer;
    const Trace& m_trace;
    std::vector<Gap> m_gaps;
    std::vector<Piece> m_pieces;
    std::vector<Rank> m_ranks;
    // (rank, host, pid, tid) -> the thread's lanes
    std::map<std::tuple<uint32_t, std::string, uint32_t, uint64_t>, std::vector<LaneId>> m_thread;
    std::map<uint32_t, std::vector<LaneId>> m_apiLanes; // rank -> CPU API lanes
    std::vector<Candidate> m_scratch, m_sampled; // this gap's recorded and sampled candidates
    std::map<std::tuple<uint32_t, std::string, uint32_t>, std::vector<LaneId>> m_process; // (rank, host, pid)
    std::vector<Piece> m_otherPieces; // this gap's stretches given to other threads' events
    std::vector<std::pair<LaneId, LaneCursor>> m_cursors; // this step's (a thread has a few lanes)
    LaneId m_lastApiLane = 0;
    const std::vector<LaneId>* m_lastThreadLanes = nullptr; // threadLanes(m_lastApiLane)
    TimeNs m_lastGapStart = 0;
    // The last gap's outcome while nothing can change it: one host event (or none) over the whole
    // gap, the same for a later gap of the step launched from the same thread that ends by `until`
    // (the next start of an event on that thread, or the first end of one begun). Graph replays and
    // long host ranges make most gaps such repeats; they then cost a few comparisons.
    struct Reuse {
        LaneId apiLane = kNoLane;
        TimeNs until = INT64_MIN;
        EventRef host;
    };
    Reuse m_reuse;
    bool queuedOnly(uint32_t rank, const WindowSweep::Gap& gap, EventRef next);
    // The last launch looked up: consecutive gaps often end in kernels of one launch (a graph).
    uint64_t m_lastLaunchKey = UINT64_MAX;
    EventRef m_lastLaunch;
    TimeNs m_lastLaunchEnd = 0; // the end of m_lastLaunch's call
    // Aggregation in progress, by rank: rows by (name, kind), sync rows by (call, around).
    std::map<uint32_t, Rank> m_byRank;
    // (name, kind) -> row; kinds are hostKindName()'s literals, so their addresses tell them apart.
    std::map<uint32_t, std::map<std::pair<StringId, const char*>, size_t>> m_rowIndex, m_momentIndex, m_otherIndex;
    std::map<uint32_t, std::map<std::pair<std::string, StringId>, size_t>> m_syncIndex;
    // Per rank: the in-graph row of each node after a gap (nullptr: the rows without a node, looked up by text).
    std::map<uint32_t, std::unordered_map<const GraphNodeInfo*, size_t>> m_inGraphIndex;
    Rank* m_current = nullptr; // the rank add() adds to, and its row indexes
    std::map<std::pair<StringId, const char*>, size_t>*m_currentRows = nullptr, *m_currentOthers = nullptr;
};

// `host_gaps` of `analyze --json` (and of each side in `diff --json`): per rank
// {rank, gap_ms, explained_ms, unattributed_ms, top [{name, kind, ms, count}], unattributed {queued_ms,
// other_threads_ms, nothing_ms, no_launch_ms}, other_threads [{name, kind, ms, count}]}, the `top`
// longest rows of each list.
constexpr size_t kHostJsonTop = 10; // rows per rank in the JSON of `analyze` and `diff`
json::Value hostGapsJson(const Trace& trace, const HostAttribution& host, size_t top = kHostJsonTop);

} // namespace gapscope::model
