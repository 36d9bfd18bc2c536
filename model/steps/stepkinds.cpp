// SPDX-License-Identifier: MIT
#include "model/steps/stepkinds.h"

#include <algorithm>
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

void StepKinds::byEvidence(const Trace& trace, uint32_t rank, std::vector<Step>& steps)
{
    if (steps.size() < 2)
        return;
    std::vector<uint64_t> signature(steps.size());
    std::vector<uint32_t> seenIn; // name id -> 1 + the last step it was counted in, on this lane
    for (LaneId id : trace.lanesOf(rank, LaneKind::GpuStream)) {
        const LaneEvents& ev = trace.lane(id).events;
        std::fill(seenIn.begin(), seenIn.end(), 0u);
        size_t k = 0;
        for (size_t i = ev.lowerBound(steps.front().start); i < ev.size(); ++i) {
            while (k + 1 < steps.size() && ev.start(i) >= steps[k + 1].start)
                ++k;
            const StringId name = ev.name(i);
            if (trace.kindOf(id, i) != EventKind::Kernel)
                continue;
            if (name >= seenIn.size())
                seenIn.resize(size_t(name) + 1, 0u);
            if (seenIn[name] == k + 1)
                continue;
            seenIn[name] = uint32_t(k + 1);
            uint64_t h = (uint64_t(name) + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
            signature[k] += h ^ (h >> 31);
        }
    }
    std::unordered_map<uint64_t, size_t> count;
    for (size_t i = 0; i < steps.size(); ++i)
        if (fromEvidence(steps[i]))
            ++count[signature[i]];
    const auto modal
        = std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    if (modal == count.end() || modal->second < 2)
        return;
    for (size_t i = 0; i < steps.size(); ++i)
        if (fromEvidence(steps[i]) && signature[i] == modal->first)
            steps[i].kind = StepKind::Decode;
    for (size_t i = 0; i + 1 < steps.size(); ++i)
        if (fromEvidence(steps[i]) && steps[i].kind == StepKind::Unknown && steps[i + 1].kind == StepKind::Decode)
            steps[i].kind = StepKind::Prefill;
}

} // namespace gapscope::model
