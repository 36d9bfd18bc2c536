// SPDX-License-Identifier: MIT
#include "model/steps/forwardrule.h"

#include <algorithm>
#include <unordered_map>

namespace gapscope::model {
namespace {

constexpr double kMinLayerRegularity = 0.6; // share of a layer symbol's spacings that equal the period
constexpr double kAnchorGlueShare = 0.9; // share of the glues an anchor occurs in exactly once

struct Layer {
    uint64_t symbol = 0;
    size_t period = 0;
    size_t count = 0;
    double regularity = 0;
};

using Positions = std::unordered_map<uint64_t, std::vector<uint32_t>>;

Layer findLayer(const StepSequence& seq, const Positions& pos)
{
    Layer best;
    std::unordered_map<uint32_t, uint32_t> spacings;
    for (const auto& [sym, p] : pos) {
        if ((sym & kGraphSymbol) || p.size() < 4 || p.size() < best.count)
            continue;
        spacings.clear();
        for (size_t k = 1; k < p.size(); ++k)
            ++spacings[p[k] - p[k - 1]];
        auto mode = std::max_element(spacings.begin(), spacings.end(),
            [](const auto& a, const auto& b) { return a.second != b.second ? a.second < b.second : a.first > b.first; });
        const double regularity = double(mode->second) / double(p.size() - 1);
        if (mode->first < ForwardRule::kMinLayerUnits || regularity < kMinLayerRegularity)
            continue;
        const bool better = p.size() > best.count
            || (p.size() == best.count
                && (regularity > best.regularity || (regularity == best.regularity && mode->first < best.period)));
        if (better)
            best = { sym, mode->first, p.size(), regularity };
    }
    (void)seq;
    return best;
}

struct Run {
    uint32_t first, last; // unit indices of the layer symbol's first and last occurrence
    size_t layers;
};

std::vector<Run> layerRuns(const std::vector<uint32_t>& p, size_t period)
{
    std::vector<Run> runs;
    for (size_t k = 0; k < p.size();) {
        size_t j = k + 1;
        while (j < p.size() && p[j] - p[j - 1] == period)
            ++j;
        if (j - k >= 2)
            runs.push_back({ p[k], p[j - 1], j - k });
        k = j;
    }
    // Runs much shorter than the usual one are a stray repetition, not a forward's layers.
    std::vector<size_t> lengths;
    for (const Run& r : runs)
        lengths.push_back(r.layers);
    const size_t typical = medianOf(lengths);
    runs.erase(std::remove_if(runs.begin(), runs.end(), [&](const Run& r) { return r.layers * 2 < typical; }),
        runs.end());
    return runs;
}

struct Glue {
    size_t first, last; // units [first, last)
};

// The symbol that occurs exactly once in nearly every glue, the one the GPU waited longest before.
void pickAnchor(const StepSequence& seq, const std::vector<Glue>& glues, ForwardSplit& out)
{
    if (glues.empty())
        return;
    std::unordered_map<uint64_t, std::vector<uint32_t>> perGlue; // symbol -> count in each glue
    for (size_t g = 0; g < glues.size(); ++g)
        for (size_t i = glues[g].first; i < glues[g].last; ++i) {
            auto& v = perGlue[seq.units[i].symbol];
            v.resize(glues.size());
            ++v[g];
        }
    struct Candidate {
        uint64_t symbol;
        TimeNs idle;
        size_t firstPos;
    };
    std::vector<Candidate> cands;
    for (auto& [sym, counts] : perGlue) {
        counts.resize(glues.size());
        const size_t once = size_t(std::count(counts.begin(), counts.end(), 1u));
        if (double(once) < kAnchorGlueShare * double(glues.size()))
            continue;
        std::vector<TimeNs> idle;
        size_t firstPos = SIZE_MAX;
        for (const Glue& g : glues)
            for (size_t i = g.first; i < g.last; ++i)
                if (seq.units[i].symbol == sym) {
                    idle.push_back(seq.gpuIdleBefore[i]);
                    firstPos = std::min(firstPos, i - g.first);
                }
        cands.push_back({ sym, medianOf(idle), firstPos });
    }
    std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
        return a.idle != b.idle ? a.idle > b.idle : a.firstPos < b.firstPos;
    });
    for (const Candidate& c : cands)
        out.anchorCandidates.push_back(c.symbol);
    if (!cands.empty())
        out.anchor = cands.front().symbol;
}

size_t longestIdle(const StepSequence& seq, const Glue& g)
{
    size_t best = g.first;
    for (size_t i = g.first; i < g.last; ++i)
        if (seq.gpuIdleBefore[i] > seq.gpuIdleBefore[best])
            best = i;
    return best;
}

} // namespace

ForwardSplit ForwardRule::split(const StepSequence& seq)
{
    ForwardSplit out;
    const size_t n = seq.size();
    Positions pos;
    for (size_t i = 0; i < n; ++i)
        pos[seq.units[i].symbol].push_back(uint32_t(i));
    const Layer layer = findLayer(seq, pos);
    if (!layer.symbol) {
        out.note = "no kernel repeats at a regular spacing of " + std::to_string(kMinLayerUnits)
            + " or more kernels (no layer block to group)";
        return out;
    }
    out.layerSymbol = layer.symbol;
    out.layerPeriod = layer.period;
    const std::vector<Run> runs = layerRuns(pos[layer.symbol], layer.period);
    std::vector<size_t> lengths;
    for (const Run& r : runs)
        lengths.push_back(r.layers);
    out.layersPerForward = medianOf(lengths);
    if (runs.empty()) {
        out.note = "the layer block never repeats twice in a row";
        return out;
    }
    // Glues between runs: from the unit after a run's last layer symbol to the next run's first one
    // (inclusive: the next forward may start right at it).
    std::vector<Glue> glues;
    for (size_t r = 0; r + 1 < runs.size(); ++r)
        glues.push_back({ size_t(runs[r].last) + 1, size_t(runs[r + 1].first) + 1 });
    pickAnchor(seq, glues, out);
    std::vector<size_t> cuts;
    auto anchorsIn = [&](size_t first, size_t last) {
        std::vector<size_t> at;
        for (size_t i = first; i < last; ++i)
            if (seq.units[i].symbol == out.anchor)
                at.push_back(i);
        return at;
    };
    // Head: a forward starts at each anchor in it; before the first one, a forward cut by the recording.
    const Glue head { 0, size_t(runs.front().first) + 1 };
    const Glue tail { size_t(runs.back().last) + 1, n };
    if (out.anchor) {
        for (const Glue& g : { head })
            for (size_t i : anchorsIn(g.first, g.last))
                cuts.push_back(i);
        if (cuts.empty())
            cuts.push_back(0);
        for (const Glue& g : glues) {
            auto at = anchorsIn(g.first, g.last);
            cuts.insert(cuts.end(), at.begin(), at.end());
            if (at.empty())
                cuts.push_back(longestIdle(seq, g));
        }
        for (size_t i : anchorsIn(tail.first, tail.last))
            cuts.push_back(i);
    } else {
        cuts.push_back(0);
        for (const Glue& g : glues)
            cuts.push_back(longestIdle(seq, g));
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    out.end = n;
    // A last forward that holds no layer run and less than half the usual kernels was cut by the end
    // of the recording.
    if (cuts.size() >= 2 && cuts.back() > runs.back().last) {
        std::vector<size_t> sizes;
        for (size_t k = 0; k + 1 < cuts.size(); ++k)
            sizes.push_back(seq.kernelCount(cuts[k], cuts[k + 1]));
        if (seq.kernelCount(cuts.back(), n) * 2 < medianOf(sizes)) {
            out.end = cuts.back();
            cuts.pop_back();
        }
    }
    out.starts = std::move(cuts);
    out.note = std::to_string(out.starts.size()) + " forwards of " + std::to_string(out.layersPerForward)
        + " layers (layer block of " + std::to_string(layer.period) + " kernels)";
    return out;
}

} // namespace gapscope::model
