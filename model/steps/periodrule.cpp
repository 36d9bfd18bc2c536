// SPDX-License-Identifier: MIT
#include "model/steps/periodrule.h"

#include <algorithm>
#include <climits>
#include <unordered_map>

namespace gapscope::model {
namespace {

constexpr size_t kMinStepKernels = 8;
constexpr double kMinPeriodCoverage = 0.5;

} // namespace

PeriodSplit PeriodRule::split(const StepSequence& seq, size_t layerPeriod)
{
    PeriodSplit out;
    const size_t n = seq.size();
    if (n < kMinStepKernels) {
        out.note = "too few kernels";
        return out;
    }
    std::unordered_map<uint64_t, std::vector<uint32_t>> positions;
    for (size_t i = 0; i < n; ++i)
        positions[seq.units[i].symbol].push_back(uint32_t(i));
    // Candidates: kernels that recur at a regular spacing (3 in 4 of their spacings equal), least often first;
    // the first whose period is a step's size (not a loop inside one, nor a layer) and covers the work wins.
    struct Candidate {
        size_t count, period;
        const std::vector<uint32_t>* pos;
    };
    std::vector<Candidate> cands;
    for (const auto& [sym, pos] : positions) {
        if (pos.size() < 3)
            continue;
        std::unordered_map<uint32_t, uint32_t> diffs;
        for (size_t k = 1; k < pos.size(); ++k)
            ++diffs[pos[k] - pos[k - 1]];
        auto mode = std::max_element(
            diffs.begin(), diffs.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
        if (mode->second * 4 >= (pos.size() - 1) * 3)
            cands.push_back({ pos.size(), mode->first, &pos });
    }
    std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
        return a.count != b.count ? a.count < b.count : a.period > b.period;
    });
    const std::vector<uint32_t>* anchor = nullptr;
    size_t bestPeriod = 0;
    std::string refused;
    for (const Candidate& c : cands) {
        const size_t kernels = seq.kernelCount(c.pos->front(), c.pos->front() + c.period);
        const size_t covered = std::min(n, c.pos->back() + c.period) - c.pos->front();
        const std::string every = "the kernel sequence repeats every " + std::to_string(kernels) + " kernels";
        if (kernels < kMinStepKernels || (layerPeriod && c.period < 2 * layerPeriod)) {
            if (refused.empty())
                refused = every + ": the scale of a layer, not of a step";
            continue;
        }
        if (double(covered) < kMinPeriodCoverage * double(n)) {
            if (refused.empty())
                refused = every + " in " + std::to_string(100 * covered / n) + "% of the kernels only: too small a part";
            continue;
        }
        anchor = c.pos;
        bestPeriod = c.period;
        break;
    }
    if (!anchor) {
        out.note = refused.empty() ? "the kernel sequence has no regular period" : refused + ", so no steps were made";
        return out;
    }
    const std::string every = "the kernel sequence repeats every "
        + std::to_string(seq.kernelCount(anchor->front(), anchor->front() + bestPeriod)) + " kernels";
    // Phase: the offset from the anchor whose unit follows the longest median idle gap.
    size_t bestPhase = 0;
    TimeNs bestGap = INT64_MIN;
    std::vector<TimeNs> gaps;
    for (size_t phase = 0; phase < bestPeriod; ++phase) {
        gaps.clear();
        for (uint32_t a : *anchor)
            if (a + phase >= 1 && a + phase < n)
                gaps.push_back(seq.gpuIdleBefore[a + phase]);
        if (gaps.empty())
            continue;
        std::nth_element(gaps.begin(), gaps.begin() + long(gaps.size() / 2), gaps.end());
        if (gaps[gaps.size() / 2] > bestGap) {
            bestGap = gaps[gaps.size() / 2];
            bestPhase = phase;
        }
    }
    std::vector<size_t> idx;
    for (uint32_t a : *anchor)
        if (a + bestPhase < n)
            idx.push_back(a + bestPhase);
    if (idx.empty())
        return out;
    for (size_t first = idx.front();
         first >= bestPeriod && seq.units[first - bestPeriod].symbol == seq.units[first].symbol;) {
        first -= bestPeriod;
        idx.insert(idx.begin(), first);
    }
    out.starts = std::move(idx);
    out.period = bestPeriod;
    out.note = every + ": " + std::to_string(out.starts.size()) + " iterations";
    return out;
}

} // namespace gapscope::model
