// SPDX-License-Identifier: MIT
#include "model/steps/stepkinds.h"

#include "model/format/wholegraph.h"
#include "model/steps/stepsequence.h"
#include "model/trace/graphnode.h"

#include <algorithm>
#include <iterator>
#include <unordered_map>

namespace gapscope::model {
namespace {

bool fromEvidence(const Step& s)
{
    return s.kind == StepKind::Unknown && s.label.empty()
        && (s.source == StepSource::Forward || s.source == StepSource::Graph || s.source == StepSource::Anchor
            || s.source == StepSource::File);
}

} // namespace

size_t StepKinds::modal(const std::vector<std::vector<uint64_t>>& sets)
{
    std::unordered_map<uint64_t, std::pair<size_t, size_t>> seen; // hash -> (count, first index)
    size_t best = 0, bestCount = 0;
    for (size_t i = 0; i < sets.size(); ++i) {
        uint64_t h = 1469598103934665603ull; // FNV-1a over the set
        for (uint64_t x : sets[i])
            h = (h ^ x) * 1099511628211ull;
        auto& [n, first] = seen.try_emplace(h, 0, i).first->second;
        if (++n > bestCount) {
            bestCount = n;
            best = first;
        }
    }
    return best;
}

std::vector<uint64_t> StepKinds::core(std::vector<uint64_t> names)
{
    std::sort(names.begin(), names.end());
    std::vector<uint64_t> repeated;
    for (size_t i = 0; i < names.size();) {
        size_t j = i + 1;
        while (j < names.size() && names[j] == names[i])
            ++j;
        if (j - i > 1)
            repeated.push_back(names[i]);
        i = j;
    }
    if (repeated.empty())
        names.erase(std::unique(names.begin(), names.end()), names.end());
    return repeated.empty() ? names : repeated;
}

bool StepKinds::alike(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b)
{
    size_t common = 0;
    for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
        if (a[i] == b[j]) {
            ++common;
            ++i;
            ++j;
        } else if (a[i] < b[j]) {
            ++i;
        } else {
            ++j;
        }
    }
    const size_t all = a.size() + b.size() - common;
    return all == 0 || double(common) >= kAlike * double(all);
}

void StepKinds::byEvidence(const Trace& trace, uint32_t rank, std::vector<Step>& steps)
{
    if (steps.size() < 2 || std::count_if(steps.begin(), steps.end(), fromEvidence) < 2)
        return; // nothing for evidence to decide (annotated steps keep their kind)
    // One pass: per step, the names seen once and the names seen again (the core), through arrays
    // indexed by name id (which step a name was last seen in, and how often there).
    std::vector<std::vector<uint64_t>> seen(steps.size()), repeated(steps.size());
    std::vector<uint32_t> lastStep(trace.stringCount() + 1, UINT32_MAX), count(trace.stringCount() + 1, 0);
    // A light-mode capture (it holds whole replays' name): per step, the graphs it replayed whole (no
    // kernel names) and those whose kernels it recorded; a whole replay takes the core of a recorded
    // replay of the same graph.
    std::vector<std::vector<uint64_t>> wholeGraphs(steps.size()), detailedGraphs(steps.size());
    const bool light = trace.findString(format::kWholeGraphName).has_value();
    for (LaneId id : trace.lanesOf(rank, LaneKind::GpuStream)) {
        const LaneEvents& ev = trace.lane(id).events;
        size_t k = 0;
        for (size_t i = ev.lowerBound(steps.front().start); i < ev.size(); ++i) {
            while (k + 1 < steps.size() && ev.start(i) >= steps[k + 1].start)
                ++k;
            if (k + 1 == steps.size() && ev.start(i) > steps[k].end)
                break; // after the last step (a forward the recording cut, left out)
            const StringId name = ev.name(i);
            if (name >= lastStep.size() || trace.kindOf(id, i) != EventKind::Kernel)
                continue;
            if (const KernelConfig* c = light ? trace.kernelConfig(id, i) : nullptr; c && c->graphId) {
                const bool whole = isWholeReplayNode(c->graphNodeId);
                auto& graphs = whole ? wholeGraphs[k] : detailedGraphs[k];
                if (graphs.empty() || graphs.back() != c->graphId)
                    graphs.push_back(c->graphId);
                if (whole)
                    continue;
            }
            if (lastStep[name] != k) {
                lastStep[name] = uint32_t(k);
                count[name] = 1;
                seen[k].push_back(name);
            } else if (++count[name] == 2) {
                repeated[k].push_back(name);
            }
        }
    }
    std::vector<std::vector<uint64_t>> cores(steps.size());
    for (size_t i = 0; i < steps.size(); ++i) {
        auto& v = repeated[i].empty() ? seen[i] : repeated[i];
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
        cores[i] = std::move(v);
    }
    if (light) {
        // The core of each graph from the first step that recorded that graph's kernels and no other's.
        std::unordered_map<uint64_t, size_t> exemplar;
        for (size_t i = 0; i < steps.size(); ++i)
            if (wholeGraphs[i].empty() && detailedGraphs[i].size() == 1)
                exemplar.try_emplace(detailedGraphs[i].front(), i);
        for (size_t i = 0; i < steps.size(); ++i) {
            std::vector<uint64_t>& v = cores[i];
            for (uint64_t g : wholeGraphs[i]) {
                auto it = exemplar.find(g);
                // No recorded replay of this graph: it stands as a name of its own.
                const std::vector<uint64_t> own { kGraphSymbol | g };
                const std::vector<uint64_t>& add = it == exemplar.end() ? own : cores[it->second];
                std::vector<uint64_t> merged;
                std::set_union(v.begin(), v.end(), add.begin(), add.end(), std::back_inserter(merged));
                v = std::move(merged);
            }
        }
    }
    std::vector<size_t> candidates; // the steps evidence decides
    std::vector<std::vector<uint64_t>> sets;
    for (size_t i = 0; i < steps.size(); ++i)
        if (fromEvidence(steps[i])) {
            candidates.push_back(i);
            sets.push_back(cores[i]);
        }
    if (sets.size() < 2)
        return;
    const std::vector<uint64_t>& loop = sets[modal(sets)];
    size_t decode = 0;
    for (size_t c = 0; c < candidates.size(); ++c)
        decode += alike(sets[c], loop) ? 1 : 0;
    if (decode < 2)
        return;
    for (size_t c = 0; c < candidates.size(); ++c)
        if (alike(sets[c], loop))
            steps[candidates[c]].kind = StepKind::Decode;
    for (size_t i = 0; i + 1 < steps.size(); ++i)
        if (fromEvidence(steps[i]) && steps[i].kind == StepKind::Unknown && steps[i + 1].kind == StepKind::Decode)
            steps[i].kind = StepKind::Prefill;
}

} // namespace gapscope::model
