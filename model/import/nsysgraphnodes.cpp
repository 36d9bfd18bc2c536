// SPDX-License-Identifier: MIT
#include "model/import/nsysgraphnodes.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace gapscope::model::importer {

namespace {
constexpr size_t kNone = SIZE_MAX;
constexpr size_t kMaxChain = 64; // clone of a clone of ...: longer is taken for a loop

struct Node {
    uint16_t process = 0;
    uint32_t tid = 0;
    int64_t start = 0, end = 0;
    uint64_t id = 0, original = 0;
    uint64_t graphId = 0; // of the kernels that ran it
    uint64_t group = 0; // the graph its order counts in (created nodes)
    size_t root = kNone; // the created node at the end of its clone chain (itself when created)
    uint32_t order = 0;
    std::vector<uint32_t> ranges;
    std::vector<uint32_t> calls; // CUDA API calls of its thread around its row, outermost first
};

struct Range {
    int64_t start, end;
    uint32_t name;
};

using NodeIndex = std::map<std::pair<uint16_t, uint64_t>, size_t>; // (process, node id) -> node

// One node per (process, node id), its earliest row (rows sorted by start); rows of processes that are no
// rank (dropped after their rows were read) are left out.
std::vector<Node> nodesOf(const std::vector<NsysGraphNodeRow>& rows, const StagedTrace& out, NodeIndex& index)
{
    std::unordered_map<uint32_t, uint16_t> processOf; // pid -> process, in the final order
    for (size_t i = 0; i < out.processes().size(); ++i)
        processOf.emplace(out.processes()[i].pid, uint16_t(i));
    std::vector<Node> nodes;
    for (const NsysGraphNodeRow& r : rows) {
        auto p = processOf.find(uint32_t((r.globalTid >> 24) & 0xFFFFFF));
        if (p == processOf.end()
            || !index.emplace(std::make_pair(p->second, uint64_t(r.graphNodeId)), nodes.size()).second)
            continue;
        Node& n = nodes.emplace_back();
        n.process = p->second;
        n.tid = uint32_t(r.globalTid & 0xFFFFFF);
        n.start = r.start;
        n.end = r.end;
        n.id = uint64_t(r.graphNodeId);
        n.original = uint64_t(std::max<int64_t>(0, r.originalGraphNodeId));
    }
    return nodes;
}

// Each node's root: the end of its chain of originals (none when a link is missing or the chain loops).
// Returns the nodes whose chain loops.
uint64_t findRoots(const NodeIndex& index, std::vector<Node>& nodes)
{
    uint64_t loops = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
        size_t cur = i;
        for (size_t steps = 0; cur != kNone && nodes[cur].original; ++steps) {
            auto it = index.find({ nodes[cur].process, nodes[cur].original });
            cur = it == index.end() ? kNone : it->second;
            if (steps == kMaxChain) {
                ++loops;
                cur = kNone;
            }
        }
        nodes[i].root = cur;
    }
    return loops;
}

// The graph id of the kernels that ran each node. A launch config (graph and node id included) is shared
// by the kernels that ran one node: looked up once per config while the process stays the same.
void graphIdsFromKernels(const StagedTrace& out, const NodeIndex& index, std::vector<Node>& nodes)
{
    std::vector<uint32_t> lastProcess(out.configs().size(), UINT32_MAX);
    for (uint64_t i = 0; i < out.eventCount(); ++i) {
        const StagedEvent& e = out.event(i);
        if (e.kind != StagedKind::Kernel || lastProcess[e.aux] == out.lanes()[e.lane].process)
            continue;
        const uint16_t p = out.lanes()[e.lane].process;
        lastProcess[e.aux] = p;
        const KernelConfig& c = out.configs()[e.aux];
        auto it = c.graphNodeId ? index.find({ p, c.graphNodeId }) : index.end();
        if (it != index.end() && !nodes[it->second].graphId)
            nodes[it->second].graphId = c.graphId;
    }
}

// The enclosing ranges of each query (created nodes of one thread), outermost first, into `into` of the
// node. `ranges` sorted by start, then longer first; `queries` by start. A range that ended before a
// query's start encloses no later query either, so the open ones stay few (the thread's nesting depth).
void encloseSweep(const std::vector<Range>& ranges, const std::vector<size_t>& queries, std::vector<Node>& nodes,
    std::vector<uint32_t> Node::*into)
{
    std::vector<Range> open;
    size_t next = 0;
    for (size_t q : queries) {
        Node& n = nodes[q];
        while (next < ranges.size() && ranges[next].start <= n.start)
            open.push_back(ranges[next++]);
        open.erase(
            std::remove_if(open.begin(), open.end(), [&n](const Range& r) { return r.end < n.start; }), open.end());
        for (const Range& r : open)
            if (r.end >= n.end)
                (n.*into).push_back(r.name);
    }
}

// The NVTX range stack of every created node and the CUDA API call it was built in (the launch during a
// stream capture, a cudaGraphAdd*Node): one pass over the staged events for the ranges and calls of the
// threads that created nodes, then a sweep per thread.
void rangesOf(const StagedTrace& out, std::vector<Node>& nodes)
{
    std::map<std::pair<uint16_t, uint64_t>, size_t> slotOf; // (process, tid) -> slot
    std::vector<std::vector<size_t>> queries; // per slot, in start order (nodes are)
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].root != i)
            continue;
        auto [it, added] = slotOf.emplace(std::make_pair(nodes[i].process, uint64_t(nodes[i].tid)), queries.size());
        if (added)
            queries.emplace_back();
        queries[it->second].push_back(i);
    }
    std::vector<size_t> laneSlot(out.lanes().size(), kNone);
    for (size_t l = 0; l < out.lanes().size(); ++l) {
        const StagedLane& lane = out.lanes()[l];
        auto it = slotOf.find({ lane.process, lane.info.threadId() });
        if ((lane.info.kind == LaneKind::Nvtx || lane.info.kind == LaneKind::CpuApi) && it != slotOf.end())
            laneSlot[l] = it->second;
    }
    std::vector<std::vector<Range>> ranges(queries.size()), calls(queries.size());
    for (uint64_t i = 0; i < out.eventCount(); ++i) {
        const StagedEvent& e = out.event(i);
        if (laneSlot[e.lane] == kNone || (e.kind != StagedKind::Range && e.kind != StagedKind::Api))
            continue;
        (e.kind == StagedKind::Range ? ranges : calls)[laneSlot[e.lane]].push_back(
            { e.start, addTimes(e.start, out.duration(i)), e.name });
    }
    auto byStart
        = [](const Range& a, const Range& b) { return a.start != b.start ? a.start < b.start : a.end > b.end; };
    for (size_t s = 0; s < queries.size(); ++s) {
        std::sort(ranges[s].begin(), ranges[s].end(), byStart);
        encloseSweep(ranges[s], queries[s], nodes, &Node::ranges);
        std::sort(calls[s].begin(), calls[s].end(), byStart);
        encloseSweep(calls[s], queries[s], nodes, &Node::calls);
    }
}

// Creation order within a graph: a created node counts in the graph its kernels ran in, else in the one
// its copies' kernels ran in; nodes are in start order already.
void numberInGraphs(std::vector<Node>& nodes)
{
    for (size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].root == i)
            nodes[i].group = nodes[i].graphId;
    for (const Node& n : nodes)
        if (n.graphId && n.root != kNone && !nodes[n.root].group)
            nodes[n.root].group = n.graphId;
    std::map<std::pair<uint16_t, uint64_t>, uint32_t> next; // (process, graph) -> nodes so far
    for (size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].root == i && nodes[i].group)
            nodes[i].order = next[{ nodes[i].process, nodes[i].group }]++;
}
} // namespace

uint64_t NsysGraphNodes::finish(StagedTrace& out)
{
    if (m_rows.empty())
        return 0;
    std::stable_sort(m_rows.begin(), m_rows.end(),
        [](const NsysGraphNodeRow& a, const NsysGraphNodeRow& b) { return a.start < b.start; });
    NodeIndex index;
    std::vector<Node> nodes = nodesOf(m_rows, out, index);
    std::vector<NsysGraphNodeRow>().swap(m_rows);
    const uint64_t loops = findRoots(index, nodes);
    graphIdsFromKernels(out, index, nodes);
    rangesOf(out, nodes);
    numberInGraphs(nodes);
    out.graphNodes.reserve(out.graphNodes.size() + nodes.size());
    for (const Node& n : nodes) {
        StagedTrace::StagedGraphNode& g = out.graphNodes.emplace_back();
        g.process = n.process;
        g.node.nodeId = n.id;
        g.node.graphId = n.graphId;
        g.node.originalNodeId = n.original;
        g.node.origin = n.original ? GraphNodeOrigin::Cloned : GraphNodeOrigin::Created;
        if (n.root != kNone) {
            const Node& root = nodes[n.root];
            g.node.order = root.order;
            g.node.threadId = root.tid;
            g.node.ranges = root.ranges;
            if (!root.calls.empty())
                g.node.api = root.calls.front();
        }
    }
    return loops;
}

} // namespace gapscope::model::importer
