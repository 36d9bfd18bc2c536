// SPDX-License-Identifier: MIT
#include "capture/agent/stepaligner.h"

#include <algorithm>
#include <cstdlib>

namespace gapscope::capture {

StepAligner::StepAligner(size_t slots, size_t keep)
    : m_b(slots)
    , m_keep(keep)
{
}

void StepAligner::add(size_t slot, uint64_t localIndex, int64_t timeNs)
{
    if (slot >= m_b.size())
        return;
    auto& q = m_b[slot];
    if (!q.empty() && localIndex <= q.back().index)
        return; // duplicates or reordering: keep the boundaries strictly increasing
    q.push_back({ localIndex, timeNs });
    while (q.size() > m_keep)
        q.pop_front();
}

int64_t StepAligner::medianPeriodNs(size_t slot) const
{
    const auto& q = m_b[slot];
    if (q.size() < 2)
        return 0;
    std::vector<int64_t> d;
    for (size_t i = 1; i < q.size(); ++i) {
        const uint64_t steps = q[i].index - q[i - 1].index;
        d.push_back((q[i].timeNs - q[i - 1].timeNs) / int64_t(steps ? steps : 1));
    }
    std::nth_element(d.begin(), d.begin() + long(d.size() / 2), d.end());
    return d[d.size() / 2];
}

std::optional<StepAligner::Plan> StepAligner::plan(int64_t leadNs, uint32_t minLeadSteps, size_t minBoundaries,
    const std::vector<bool>& active, const char** why) const
{
    auto fail = [&](const char* w) {
        if (why)
            *why = w;
        return std::nullopt;
    };
    auto on = [&](size_t s) { return active.empty() || (s < active.size() && active[s]); };
    size_t refSlot = m_b.size();
    for (size_t s = 0; s < m_b.size(); ++s) {
        if (!on(s))
            continue;
        if (refSlot == m_b.size())
            refSlot = s;
        if (m_b[s].size() < std::max<size_t>(minBoundaries, 2))
            return fail("waiting for step boundaries from every rank");
    }
    if (refSlot == m_b.size())
        return fail("no ranks");
    Plan p;
    p.periodNs = medianPeriodNs(refSlot);
    if (p.periodNs <= 0)
        return fail("reference rank reports no step period");
    const auto& ref = m_b[refSlot];
    p.offset.assign(m_b.size(), 0);
    int64_t latestGlobal = int64_t(ref.back().index);
    for (size_t s = 0; s < m_b.size(); ++s) {
        if (!on(s) || s == refSlot)
            continue;
        bool matched = false;
        // Newest boundary of this slot that has a reference boundary within half a period.
        for (auto it = m_b[s].rbegin(); it != m_b[s].rend() && !matched; ++it) {
            const auto near = std::min_element(ref.begin(), ref.end(), [&](const Boundary& a, const Boundary& b) {
                return std::llabs(a.timeNs - it->timeNs) < std::llabs(b.timeNs - it->timeNs);
            });
            const int64_t skew = std::llabs(near->timeNs - it->timeNs);
            if (skew * 2 < p.periodNs) {
                p.offset[s] = int64_t(near->index) - int64_t(it->index);
                p.maxSkewNs = std::max(p.maxSkewNs, skew);
                matched = true;
            }
        }
        if (!matched)
            return fail("a rank's steps do not line up with the reference rank's steps");
        latestGlobal = std::max(latestGlobal, int64_t(m_b[s].back().index) + p.offset[s]);
    }
    p.leadSteps = std::max<uint32_t>(minLeadSteps, uint32_t((leadNs + p.periodNs - 1) / p.periodNs));
    p.globalStart = uint64_t(latestGlobal) + p.leadSteps;
    for (size_t s = 0; s < m_b.size(); ++s)
        p.startLocal.push_back(on(s) ? uint64_t(int64_t(p.globalStart) - p.offset[s]) : 0);
    return p;
}

std::vector<size_t> StepAligner::stale(int64_t nowNs, int64_t olderThanNs) const
{
    std::vector<size_t> out;
    for (size_t s = 0; s < m_b.size(); ++s)
        if (m_b[s].empty() || nowNs - m_b[s].back().timeNs > olderThanNs)
            out.push_back(s);
    return out;
}

} // namespace gapscope::capture
