// SPDX-License-Identifier: MIT
#include "model/format/overviewbuilder.h"

#include <algorithm>

namespace gapscope::format {

void OverviewBuilder::event(
    uint32_t lane, Kind kind, int64_t start, uint64_t duration, uint32_t name, uint32_t hostKind, uint32_t depth)
{
    if (lane >= m_lanes.size())
        m_lanes.resize(size_t(lane) + 1);
    Lane& l = m_lanes[lane];
    const bool first = l.events % kNodeEvents == 0;
    if (first)
        l.nodes.emplace_back();
    Node& n = l.nodes.back();
    const int64_t end = start + int64_t(duration);
    n.start = std::min(n.start, start);
    n.end = std::max(n.end, end);
    n.busy += duration;
    if (first || duration > n.longest) { // ties: the first
        n.longest = duration;
        n.longestName = name;
    }
    ++l.events;
    l.maxDepth = std::max(l.maxDepth, depth);
    ++l.kindCount[kind];
    l.kindNs[kind] += duration;
    if (kind == Host)
        ++l.hostKindCount[hostKind < kHostKinds ? hostKind : 0];
    ++m_events;
}

void OverviewBuilder::step(const StepRecord& step)
{
    m_steps.push_back(step);
}

void OverviewBuilder::counter(const pb::Counter& c)
{
    m_counters.add(c);
}

void OverviewBuilder::graphNode(const pb::GraphNode& g)
{
    m_graphNodes.push_back(g);
}

size_t OverviewBuilder::memoryBytes() const
{
    size_t n = m_lanes.capacity() * sizeof(Lane) + m_steps.capacity() * sizeof(StepRecord);
    for (const pb::GraphNode& g : m_graphNodes)
        n += g.SpaceUsedLong();
    for (const Lane& l : m_lanes)
        n += l.nodes.capacity() * sizeof(Node);
    return n;
}

void OverviewBuilder::toProto(pb::Overview& out) const
{
    out.Clear();
    for (uint32_t id = 0; id < m_lanes.size(); ++id) {
        const Lane& l = m_lanes[id];
        if (l.events == 0)
            continue;
        pb::LaneOverview* o = out.add_lanes();
        o->set_lane(id);
        o->set_events(l.events);
        o->set_max_depth(l.maxDepth);
        o->set_node_events(kNodeEvents);
        for (size_t k = 0; k < KindCount; ++k) {
            o->add_kind_count(l.kindCount[k]);
            o->add_kind_ns(l.kindNs[k]);
        }
        for (uint64_t c : l.hostKindCount)
            o->add_host_kind_count(c);
        int64_t prev = 0;
        for (const Node& n : l.nodes) {
            o->add_node_start_delta(n.start - prev);
            prev = n.start;
            o->add_node_span(uint64_t(n.end - n.start));
            o->add_node_busy(n.busy);
            o->add_node_longest(n.longest);
            o->add_node_longest_name(n.longestName);
        }
    }
    pb::StepBlock* s = out.mutable_steps();
    int64_t prev = 0;
    bool known = false; // what the steps did: columns written only when some step says it
    for (const StepRecord& st : m_steps) {
        s->add_rank(st.rank);
        s->add_index(st.index);
        s->add_start_delta(st.start - prev);
        prev = st.start;
        s->add_duration(st.duration);
        s->add_source(st.source);
        known = known || st.kind || st.batch || st.tokens || st.label;
    }
    for (const StepRecord& st : m_steps) {
        if (!known)
            break;
        s->add_kind(st.kind);
        s->add_batch(st.batch);
        s->add_tokens(st.tokens);
        s->add_label(st.label);
    }
    for (const pb::Counter& c : m_counters.sorted())
        *out.add_counters() = c;
    for (const pb::GraphNode& g : m_graphNodes)
        *out.add_graph_nodes() = g;
}

} // namespace gapscope::format
