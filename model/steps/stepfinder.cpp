// SPDX-License-Identifier: MIT
#include "model/steps/stepfinder.h"

#include "model/base/taskpool.h"
#include "model/steps/rankfinder.h"
#include "model/steps/stepalign.h"
#include "model/steps/stepkinds.h"

#include <algorithm>
#include <map>

namespace gapscope::model {
StepFinder::StepFinder(StepRule rule, bool keepStored)
    : m_rule(std::move(rule))
    , m_keepStored(keepStored)
{
}

std::vector<Step> StepFinder::findRank(const Trace& trace, uint32_t rank, StepReport& report) const
{
    std::vector<Step> steps = RankFinder(trace, rank, m_rule, report).run();
    steps.erase(std::remove_if(steps.begin(), steps.end(), [](const Step& s) { return s.start > s.end; }), steps.end());
    std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.start < b.start; });
    StepKinds::byEvidence(trace, rank, steps);
    for (uint32_t i = 0; i < steps.size(); ++i)
        steps[i].index = i;
    return steps;
}

std::vector<StepFinder::Candidate> StepFinder::candidates(const Trace& trace)
{
    std::vector<Candidate> out;
    for (const char* text : { "engine", "graph", "forward", "period" }) {
        const StepFinder finder(*StepRule::parse(text));
        Candidate c { text, 0 };
        for (uint32_t rank : trace.ranks()) {
            StepReport scratch;
            c.steps = std::max(c.steps, uint32_t(finder.findRank(trace, rank, scratch).size()));
        }
        out.push_back(c);
    }
    return out;
}

// Kinds of stored steps that the file does not say (files written before steps kept their kinds, and
// captures): from the engine annotation whose GPU work overlaps a step most, else from evidence.
void StepFinder::kindsOfStored(Trace& trace)
{
    const StepRule engine { StepRule::Kind::Engine, {} };
    const std::vector<uint32_t> ranks = trace.ranks();
    std::vector<std::vector<Step>> kinded(ranks.size());
    TaskPool::shared().parallelFor(ranks.size(), [&](size_t r) { // ranks apart: the trace is only read
        std::vector<Step> steps = trace.steps(ranks[r]);
        if (steps.empty())
            return;
        std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.start < b.start; });
        StepReport scratch;
        const std::vector<Step> annotated = RankFinder(trace, ranks[r], engine, scratch).run(); // in start order
        size_t from = 0;
        for (Step& s : steps) {
            while (from < annotated.size() && annotated[from].end <= s.start)
                ++from;
            if (s.kind != StepKind::Unknown || !s.label.empty())
                continue; // the file says what it did
            TimeNs best = 0;
            for (size_t j = from; j < annotated.size() && annotated[j].start < s.end; ++j) {
                const Step& a = annotated[j];
                const TimeNs overlap = std::min(s.end, a.end) - std::max(s.start, a.start);
                if (overlap > best && overlap * 2 >= s.duration()) {
                    best = overlap;
                    s.kind = a.kind;
                    s.batch = a.batch;
                    s.tokens = a.tokens;
                    s.label = a.label;
                }
            }
        }
        StepKinds::byEvidence(trace, ranks[r], steps);
        kinded[r] = std::move(steps);
    });
    for (size_t r = 0; r < ranks.size(); ++r)
        if (!kinded[r].empty())
            trace.setSteps(ranks[r], std::move(kinded[r]));
}

StepReport StepFinder::find(Trace& trace) const
{
    StepReport report;
    report.rule = m_rule.kind == StepRule::Kind::File || (m_keepStored && trace.stepCount() > 0)
        ? std::string("file")
        : m_rule.toString();
    // Stored steps (a capture's, or a converted file's) stay with keepStored, and ranks that have none
    // (an import merged with a capture) get found ones; "file" keeps them only.
    const bool keep = m_rule.kind == StepRule::Kind::File || (m_keepStored && trace.stepCount() > 0);
    std::vector<std::pair<uint32_t, std::vector<Step>>> perRank;
    std::map<StepSource, size_t> sources;
    bool found = false;
    if (keep) {
        report.kept = true;
        kindsOfStored(trace);
    }
    // Ranks apart, on the task pool: each rank's rules read the trace only.
    const std::vector<uint32_t> ranks = trace.ranks();
    std::vector<std::vector<Step>> byRank(ranks.size());
    std::vector<StepReport> reports(ranks.size());
    TaskPool::shared().parallelFor(ranks.size(), [&](size_t r) {
        byRank[r] = keep ? trace.steps(ranks[r]) : std::vector<Step>();
        if (byRank[r].empty() && m_rule.kind != StepRule::Kind::File)
            byRank[r] = findRank(trace, ranks[r], reports[r]); // numbered 0..n-1 in start order
    });
    for (size_t r = 0; r < ranks.size(); ++r) {
        report.tried.insert(report.tried.end(), reports[r].tried.begin(), reports[r].tried.end());
        report.notes.insert(report.notes.end(), reports[r].notes.begin(), reports[r].notes.end());
        for (const auto& c : reports[r].anchorCandidates)
            if (report.anchorCandidates.size() < 5
                && std::find(report.anchorCandidates.begin(), report.anchorCandidates.end(), c)
                    == report.anchorCandidates.end())
                report.anchorCandidates.push_back(c);
    }
    for (size_t r = 0; r < ranks.size(); ++r) {
        const uint32_t rank = ranks[r];
        std::vector<Step> steps = std::move(byRank[r]);
        found = found || (!steps.empty() && (!keep || trace.steps(rank).empty()));
        trace.setSteps(rank, {});
        if (steps.empty())
            continue;
        for (const Step& s : steps)
            ++sources[s.source];
        perRank.emplace_back(rank, std::move(steps));
    }
    for (const auto& line : report.notes)
        trace.addWarning("steps: " + line);
    if (perRank.empty()) {
        for (const auto& line : report.tried)
            trace.addWarning("steps: " + line);
        if (!report.anchorCandidates.empty()) {
            std::string names;
            for (const auto& n : report.anchorCandidates)
                names += (names.empty() ? "" : ", ") + n;
            trace.addWarning("steps: kernels that occur once per forward (for --step-rule anchor:REGEX): " + names);
        }
        trace.setStepReport(report);
        return report;
    }
    report.source = std::max_element(sources.begin(), sources.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;
    })->first;
    if (found) { // stored steps keep their numbering unless found ones join them
        for (auto& [rank, steps] : perRank) {
            std::stable_sort(
                steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.start < b.start; });
            for (uint32_t i = 0; i < steps.size(); ++i)
                steps[i].index = i;
        }
        StepAlign::align(trace, perRank);
    }
    for (auto& [rank, steps] : perRank)
        trace.setSteps(rank, std::move(steps));
    trace.setStepReport(report);
    return report;
}

} // namespace gapscope::model