// SPDX-License-Identifier: MIT
#include "model/import/sampledstacks.h"

#include <algorithm>

namespace gapscope::model::importer {

void SampledStacks::add(int64_t t, std::vector<uint32_t> frames)
{
    m_times.push_back(t);
    m_stacks.push_back(std::move(frames));
}

int64_t SampledStacks::medianInterval() const
{
    std::vector<int64_t> d;
    for (size_t i = 1; i < m_times.size(); ++i)
        if (m_times[i] > m_times[i - 1])
            d.push_back(m_times[i] - m_times[i - 1]);
    if (d.empty())
        return 0;
    std::nth_element(d.begin(), d.begin() + std::ptrdiff_t(d.size() / 2), d.end());
    return d[d.size() / 2];
}

std::vector<SampledStacks::Range> SampledStacks::finish(int64_t fallbackInterval)
{
    std::vector<Range> out;
    int64_t interval = medianInterval();
    if (interval <= 0)
        interval = std::max<int64_t>(1, fallbackInterval);
    struct Open {
        uint32_t name;
        int64_t start;
    };
    std::vector<Open> open;
    // Outer frames first: of two ranges with one span, the one added first is the outer one when
    // the trace works out nesting depths.
    auto closeFrom = [&](size_t depth, int64_t end) {
        for (size_t d = depth; d < open.size(); ++d)
            out.push_back(Range { open[d].start, std::max(end, open[d].start + 1), open[d].name, uint32_t(d) });
        if (open.size() > depth)
            open.resize(depth);
    };
    for (size_t i = 0; i < m_times.size(); ++i) {
        const int64_t t = m_times[i];
        if (i > 0 && t - m_times[i - 1] > 2 * interval) // not sampled meanwhile: it was not running
            closeFrom(0, m_times[i - 1] + interval);
        const std::vector<uint32_t>& f = m_stacks[i];
        size_t same = 0;
        while (same < open.size() && same < f.size() && open[same].name == f[same])
            ++same;
        closeFrom(same, t);
        for (size_t d = same; d < f.size(); ++d)
            open.push_back(Open { f[d], t });
    }
    if (!m_times.empty())
        closeFrom(0, m_times.back() + interval);
    m_times.clear();
    m_stacks.clear();
    return out;
}

} // namespace gapscope::model::importer
