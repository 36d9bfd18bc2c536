// SPDX-License-Identifier: MIT
#pragma once

// TraceDiff: two analysed traces compared, A (before) against B (after): what moved, bar by bar,
// kernel by kernel and rank by rank. Nothing is recomputed here that the analysis already has:
// the bars are GapAnalyzer breakdowns of each trace, the kernel rows are kernelTable() of each
// trace (model/trace/tracesummary.h: count, total, median and own time), the stragglers are
// GapAnalyzer::stragglers() with the findings' rule for the ones worth naming.
//
// Steps: decode steps are compared by index, over the steps both traces hold complete (the common
// range [first, last]: the lowest to the highest index complete in both). The waterfalls are the
// critical path's (as `analyze` prints them) for the median step of that range and the mean per
// step over it; bars pair by name (a bar only one side has counts 0 on the other) and are listed by
// |delta| descending, then in A's order.
//
// Kernels: names pair exactly first; the names left over on both sides then pair by their short
// form (model/trace/kernelname.h: template arguments and parameter lists collapsed), so a kernel renamed
// by a recompile still pairs; such rows say so (Match::Normalised) and list the full names. When a
// short form gathers several names on one side, counts and totals add up and the medians are
// unknown (not estimated). The rest are new (only in B) or vanished (only in A). Rows are listed by
// |delta of total| descending, then by name.
//
// Ranks: paired by rank id when both traces have the same ranks, else by position when they have
// as many (said in notes()), else only the ids both have.
//
// What cannot be compared is a problem (problems(), errors as values): no steps in common (the
// waterfalls and the per-rank step figures are then left out), or different rank counts (the ranks
// only one side has are listed without a partner). Everything else is still compared.
//
// Host: the host attribution of launch/host gaps (hostattribution.h) of each trace over the common
// steps (or what Side::host gives; when it fails, a problem and no host comparison), per rank pair:
// gap and explained time on each side, and the host events by (name, kind) with their time on each
// side, by |delta| descending. Available when some gap of A or B lies inside a recorded host event; a
// trace without host events then counts its gaps as unattributed.
//
// Cost: the analyzers' queries, plus one pass over each trace's kernels (kernelTable, the two
// traces on two threads) and one host attribution per trace, unless a Side brings them.
//
// Threading: computed in the constructor; the two analyzers (and their traces) must outlive the
// diff. Const afterwards, safe to read from several threads.

#include "model/analysis/gapanalyzer.h"
#include "model/analysis/hostattribution.h"
#include "model/base/status.h"
#include "model/trace/tracesummary.h"

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace gapscope::model {

class TraceDiff {
public:
    // What a side may bring besides its analyzer, for a trace whose events are not all in memory (a
    // batched analyzer over a large file's skeleton, model/analysis/analysisstream.h): its kernel
    // rows, and its host attribution over the common steps [first, last] (every rank, Steps), which
    // may fail (a file read again). Left empty, both are computed here from the analyzer's trace.
    struct Side {
        const std::vector<KernelRow>* kernels = nullptr; // as kernelTable() gives them
        std::function<Expected<std::unique_ptr<HostAttribution>>(uint32_t first, uint32_t last)> host;
    };
    TraceDiff(const GapAnalyzer& a, const GapAnalyzer& b, Side sideA, Side sideB);
    TraceDiff(const GapAnalyzer& a, const GapAnalyzer& b);

    struct Steps {
        uint32_t a = 0, b = 0; // complete steps in each trace
        uint32_t common = 0; // complete in both
        uint32_t first = 0, last = 0; // the common range, when common > 0
    };
    const Steps& steps() const { return m_steps; }

    struct BarDelta {
        std::string name;
        BarKind kind = BarKind::Gap; // A's kind (B's when only B has the bar)
        double aNs = 0, bNs = 0; // per step
        bool inA = false, inB = false;
        double deltaNs() const { return bNs - aNs; }
    };
    struct Waterfall {
        bool valid = false; // both sides have it
        std::vector<std::pair<uint32_t, uint32_t>> aSteps, bSteps; // (rank, step) summed on each side
        double aMeasuredNs = 0, bMeasuredNs = 0; // per step
        std::vector<BarDelta> bars; // by |delta| descending, then A's order
        double deltaNs() const { return bMeasuredNs - aMeasuredNs; }
    };
    const Waterfall& median() const { return m_median; }
    const Waterfall& mean() const { return m_mean; }

    enum class Match : uint8_t { Exact, Normalised, Vanished, New };
    struct KernelDelta {
        std::string name; // the full name, or the short form for a normalised match
        Match match = Match::Exact;
        std::vector<std::string> aNames, bNames; // Normalised: the full names on each side
        uint64_t aCount = 0, bCount = 0;
        TimeNs aTotal = 0, bTotal = 0;
        TimeNs aOwn = 0, bOwn = 0; // own time (model/trace/tracesummary.h)
        TimeNs aMedian = 0, bMedian = 0;
        bool mediansKnown = true; // false when a short form gathered several names on a side
        TimeNs deltaTotal() const { return bTotal - aTotal; }
    };
    const std::vector<KernelDelta>& kernels() const { return m_kernels; }
    size_t normalisedMatches() const { return m_normalised; }

    struct RankSide {
        bool present = false;
        uint32_t rank = 0;
        uint32_t steps = 0; // complete steps of the common range on this rank
        double stepNs = 0; // mean measured step over them
        double medianStepNs = 0; // its median step (the lower median)
        double waitNs = 0; // mean collective wait per step
        uint64_t lateCount = 0, matched = 0; // collectives it arrived last at, and took part in
        double meanLateMs = 0;
        bool straggler = false; // worth naming by the findings' rule
    };
    struct RankDelta {
        RankSide a, b;
    };
    const std::vector<RankDelta>& ranks() const { return m_ranks; }

    struct HostRowDelta {
        std::string name, kind; // hostattribution.h's kind names
        TimeNs aNs = 0, bNs = 0; // over the common steps
        uint64_t aCount = 0, bCount = 0; // gaps it got time in
        TimeNs deltaNs() const { return bNs - aNs; }
    };
    struct HostRankDelta {
        bool inA = false, inB = false;
        uint32_t aRank = 0, bRank = 0;
        TimeNs aGapNs = 0, bGapNs = 0, aExplainedNs = 0, bExplainedNs = 0;
        std::vector<HostRowDelta> rows; // by |delta| descending, then name
    };
    struct Host {
        bool available = false;
        std::vector<HostRankDelta> ranks; // in the order of ranks()
    };
    const Host& host() const { return m_host; }
    // Each side's attribution (null without steps in common).
    const HostAttribution* hostA() const { return m_hostA.get(); }
    const HostAttribution* hostB() const { return m_hostB.get(); }

    // What could not be compared, as errors: "no steps in common ...", "rank counts differ ...".
    const std::vector<Status>& problems() const { return m_problems; }
    // How things were paired, in words ("ranks paired by position: ...").
    const std::vector<std::string>& notes() const { return m_notes; }

    const GapAnalyzer& a() const { return m_a; }
    const GapAnalyzer& b() const { return m_b; }
    // The steps of an analysis that every analysed rank has (not incomplete): what is compared.
    static std::set<uint32_t> completeSteps(const GapAnalyzer& an);

private:
    void compareSteps();
    void compareWaterfalls();
    void compareKernels();
    void compareRanks();
    void compareHost();
    struct Lateness { // one side's stragglers over the common range, and what the findings' rule needs
        std::vector<GapAnalyzer::Straggler> stragglers;
        double steps = 0, stepNs = 0;
    };
    Lateness lateness(const GapAnalyzer& an, const Waterfall& mean, bool a) const;
    RankSide rankSide(const GapAnalyzer& an, uint32_t rank, const Lateness& late) const;

    const GapAnalyzer& m_a;
    const GapAnalyzer& m_b;
    Side m_sideA, m_sideB;
    Steps m_steps;
    Waterfall m_median, m_mean;
    std::vector<KernelDelta> m_kernels;
    size_t m_normalised = 0;
    std::vector<RankDelta> m_ranks;
    std::unique_ptr<HostAttribution> m_hostA, m_hostB;
    Host m_host;
    std::vector<Status> m_problems;
    std::vector<std::string> m_notes;
};

const char* toString(TraceDiff::Match match); // "exact", "normalised", "vanished", "new"

} // namespace gapscope::model
