// SPDX-License-Identifier: MIT
#include "model/synth/synthhosttruth.h"

#include <algorithm>
#include <set>

namespace gapscope::model::synth {

void SynthHostTruth::addGap(const std::vector<const HostSpan*>& spans, TimeNs a, TimeNs b)
{
    if (b <= a)
        return;
    m_gapNs += b - a;
    std::vector<TimeNs> cuts { a, b };
    for (const HostSpan* s : spans) {
        if (s->start > a && s->start < b)
            cuts.push_back(s->start);
        if (s->end > a && s->end < b)
            cuts.push_back(s->end);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
        const TimeNs x = cuts[i], y = cuts[i + 1];
        const HostSpan* inner = nullptr;
        for (const HostSpan* s : spans) {
            if (s->start > x || s->end < y)
                continue; // not active over the whole piece
            if (!inner || s->start > inner->start
                || (s->start == inner->start && s->end - s->start < inner->end - inner->start))
                inner = s;
        }
        if (!inner)
            continue;
        Row& row = m_rows[inner->name];
        row.kind = inner->kind;
        row.ns += y - x;
        m_explainedNs += y - x;
        if (m_counted.insert(inner).second)
            ++row.count;
    }
}

json::Value SynthHostTruth::toJson() const
{
    std::vector<std::pair<std::string, Row>> rows(m_rows.begin(), m_rows.end());
    std::stable_sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) { return x.second.ns > y.second.ns; });
    json::Value events = json::Value::array();
    for (const auto& [name, r] : rows) {
        json::Value e = json::Value::object();
        e.set("name", name);
        e.set("kind", r.kind);
        e.set("ns", r.ns);
        e.set("count", (unsigned long long)r.count);
        events.push(std::move(e));
    }
    json::Value v = json::Value::object();
    v.set("launch_host_ns", m_gapNs);
    v.set("explained_ns", m_explainedNs);
    v.set("events", std::move(events));
    return v;
}

} // namespace gapscope::model::synth
