// SPDX-License-Identifier: MIT
#include "model/steps/graphcycles.h"

#include "model/steps/forwardrule.h"

#include <algorithm>
#include <unordered_map>

namespace gapscope::model {

bool GraphCycles::replaysForward(const StepSequence& seq, size_t unit)
{
    const ForwardSplit f = ForwardRule::split(seq.replayed(unit));
    return f.layerSymbol != 0 && f.layersPerForward >= 2;
}

std::vector<size_t> GraphCycles::starts(const StepSequence& seq, const std::vector<size_t>& launches)
{
    if (launches.size() < 4)
        return launches;
    std::unordered_map<uint64_t, std::vector<uint32_t>> pos; // symbol -> positions among launches
    for (size_t k = 0; k < launches.size(); ++k)
        pos[seq.units[launches[k]].symbol].push_back(uint32_t(k));
    // The most common graph replays a whole forward: one step per launch.
    const auto common = std::max_element(
        pos.begin(), pos.end(), [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
    if (replaysForward(seq, launches[common->second.front()]))
        return launches;
    uint64_t best = 0;
    size_t bestCount = 0;
    TimeNs bestIdle = -1;
    for (const auto& [sym, p] : pos) {
        if (p.size() < 2 || p.size() * 2 > launches.size())
            continue;
        std::unordered_map<uint32_t, uint32_t> spacing;
        for (size_t k = 1; k < p.size(); ++k)
            ++spacing[p[k] - p[k - 1]];
        auto mode = std::max_element(
            spacing.begin(), spacing.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
        if (mode->first < 2 || mode->second * 10 < (p.size() - 1) * 9)
            continue;
        std::vector<TimeNs> idle;
        for (uint32_t k : p)
            idle.push_back(seq.gpuIdleBefore[launches[k]]);
        const TimeNs med = medianOf(std::move(idle));
        if (p.size() > bestCount || (p.size() == bestCount && med > bestIdle)) {
            best = sym;
            bestCount = p.size();
            bestIdle = med;
        }
    }
    if (!bestCount)
        return launches;
    std::vector<size_t> out;
    for (uint32_t k : pos[best])
        out.push_back(launches[k]);
    return out;
}

} // namespace gapscope::model
