// SPDX-License-Identifier: MIT
#include "capture/inject/graphnodes.h"

namespace gapscope::capture::inject {

GraphNodeRegistry& GraphNodeRegistry::instance()
{
    static GraphNodeRegistry* registry = new GraphNodeRegistry; // never destroyed: callbacks may run at exit
    return *registry;
}

uint32_t GraphNodeRegistry::internStack(std::vector<std::string> ranges)
{
    auto it = m_stackIds.find(ranges);
    if (it != m_stackIds.end())
        return it->second;
    const uint32_t id = uint32_t(m_stacks.size());
    m_stacks.push_back(ranges);
    m_stackIds.emplace(std::move(ranges), id);
    return id;
}

uint16_t GraphNodeRegistry::internApi(const char* api)
{
    if (!api || !*api)
        return 0;
    for (size_t i = 1; i < m_apis.size(); ++i)
        if (m_apis[i] == api)
            return uint16_t(i);
    if (m_apis.size() >= 0xffff)
        return 0;
    m_apis.emplace_back(api);
    return uint16_t(m_apis.size() - 1);
}

void GraphNodeRegistry::recordCreated(
    uint64_t nodeId, uint64_t graphId, uint32_t tid, std::vector<std::string> ranges, const char* api, uint8_t nodeType)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_nodes.size() >= kMaxNodes && !m_nodes.count(nodeId)) {
        ++m_notKept;
        return;
    }
    Entry e;
    e.graphId = graphId;
    e.order = m_nextOrder[graphId]++;
    e.tid = tid;
    e.stack = internStack(std::move(ranges));
    e.api = internApi(api);
    e.type = nodeType;
    m_nodes[nodeId] = e;
}

void GraphNodeRegistry::recordCloned(
    uint64_t nodeId, uint64_t originalId, uint64_t graphId, const char* api, uint8_t nodeType)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_nodes.size() >= kMaxNodes && !m_nodes.count(nodeId)) {
        ++m_notKept;
        return;
    }
    Entry e;
    auto it = m_nodes.find(originalId);
    if (it != m_nodes.end()) {
        e = it->second; // the original's order, thread and ranges
    } else {
        e.order = m_nextOrder[graphId];
        e.stack = internStack({});
    }
    ++m_nextOrder[graphId];
    e.graphId = graphId;
    e.originalId = originalId;
    if (it == m_nodes.end())
        e.api = internApi(api); // the copy's own call (instantiate, clone) where the original's is not known
    if (nodeType)
        e.type = nodeType;
    m_nodes[nodeId] = e;
}

void GraphNodeRegistry::recordExec(uint64_t execId, uint64_t graphId)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_execs[execId] = graphId;
}

bool GraphNodeRegistry::find(uint64_t nodeId, pb::GraphNode& out) const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    auto it = m_nodes.find(nodeId);
    if (it == m_nodes.end())
        return false;
    const Entry& e = it->second;
    out.Clear();
    out.set_node_id(nodeId);
    out.set_graph_id(e.graphId);
    out.set_original_node_id(e.originalId);
    out.set_order(e.order);
    out.set_thread_id(e.tid);
    for (const std::string& r : m_stacks[e.stack])
        out.add_ranges(r);
    out.set_api(m_apis[e.api]);
    out.set_node_type(e.type);
    return true;
}

size_t GraphNodeRegistry::nodes() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_nodes.size();
}

size_t GraphNodeRegistry::execs() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_execs.size();
}

uint64_t GraphNodeRegistry::notKept() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_notKept;
}

void GraphNodeRegistry::clear()
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_nodes.clear();
    m_nextOrder.clear();
    m_execs.clear();
    m_stacks.clear();
    m_stackIds.clear();
    m_apis.assign(1, std::string());
    m_notKept = 0;
}

} // namespace gapscope::capture::inject
