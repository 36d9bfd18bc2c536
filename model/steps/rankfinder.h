// SPDX-License-Identifier: MIT
#pragma once

// RankFinder: the step rules of StepFinder (stepfinder.h) on one rank: engine and NVTX ranges
// (ProfilerStep#N enclosing), graph launches and their cycles, forwards, the period, an anchor kernel.
// What each rule found goes to the report. Internal to the steps library.
//
// Threading: one instance per rank and thread; reads the trace only.

#include "model/steps/forwardrule.h"
#include "model/steps/stepannotation.h"
#include "model/steps/steprule.h"
#include "model/steps/stepsequence.h"
#include "model/trace/trace.h"

#include <optional>
#include <string>
#include <vector>

namespace gapscope::model {

// Pieces of a sequence that are steps: units [first, last).
struct Piece {
    size_t first, last;
    StepSource source;
};

struct Range {
    TimeNs start, end;
    StringId name;
    StepAnnotation note;
};

struct CorrRange {
    uint32_t lo = UINT32_MAX, hi = 0;
    bool valid() const { return lo <= hi; }
};

class RankFinder {
public:
    RankFinder(const Trace& trace, uint32_t rank, const StepRule& rule, StepReport& report)
        : m_trace(trace)
        , m_rank(rank)
        , m_rule(rule)
        , m_report(report)
    {
    }
    std::vector<Step> run();

private:
    bool allows(StepRule::Kind k) const { return m_rule.kind == StepRule::Kind::Auto || m_rule.kind == k; }
    std::vector<Piece> split(const StepSequence& seq, bool top);
    std::vector<Piece> byGraph(const StepSequence& seq);
    std::vector<Piece> byForward(const StepSequence& seq, size_t offset, bool top);
    std::vector<Step> byAnnotations();
    const StepSequence& all();
    StepSequence launchedIn(const Range& r, TimeNs until);
    std::vector<std::pair<Range, Step>> rangeSteps(const std::vector<Range>& ranges, StepSource source);
    std::vector<Step> byAnchor(const StepSequence& seq);
    void note(const std::string& rule, const std::string& text)
    {
        m_report.tried.push_back("rank " + std::to_string(m_rank) + ": " + rule + ": " + text);
    }
    std::string name(uint64_t symbol) const
    {
        return symbol & kGraphSymbol ? std::string("(graph launch)") : std::string(m_trace.str(StringId(symbol)));
    }

    const Trace& m_trace;
    uint32_t m_rank;
    const StepRule& m_rule;
    StepReport& m_report;
    size_t m_layerPeriod = 0; // of the whole sequence, when the forward rule found a layer block
    std::optional<StepSequence> m_all; // the rank's kernels in launch order, built on first use
    std::vector<LaneId> m_api;
};


} // namespace gapscope::model
