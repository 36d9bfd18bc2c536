// SPDX-License-Identifier: MIT
#pragma once

// GraphNodeRegistry: where each CUDA-graph node of the process was built. CUPTI's resource callbacks
// (node created, node cloned, graph exec created) run on the thread that builds the graph, inside its
// stream capture or cudaGraphAdd*Node call; the registry then keeps, once per node, the graph it was
// built in, its creation order there, the thread and that thread's NVTX range stack at that moment
// (nvtxhooks.h), the call that built it (cuptitracer.cpp follows the graph-building calls of each thread:
// cudaGraphAdd*Node, cudaGraphInstantiate, cudaGraphClone, their driver twins, and stream capture begin
// and end) and the node's type. A clone (cudaGraphClone, and the copy of every node cudaGraphInstantiate makes) keeps
// its original's context. Replays never touch it: the library's own thread looks a node up when a
// recorded kernel names it, and the capture carries the entries of the nodes it replayed
// (ChunkBuilder), also of graphs built long before the capture was armed.
//
// Memory: one entry per node built (about 80 bytes) plus each distinct range stack once; nodes of
// destroyed graphs are kept (a graph exec's kernels may name either the exec's copy or the original),
// up to kMaxNodes, then further nodes are counted, not kept.
// Threading: record*() from application threads (a mutex; graph building is rare), find() from any.

#include "model/format/trace.pb.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace gapscope::capture::inject {

class GraphNodeRegistry {
public:
    static constexpr size_t kMaxNodes = 1u << 20;

    static GraphNodeRegistry& instance();

    // A node built in `graphId` by the calling thread, with `ranges` open (outermost first), inside `api`
    // (nullptr: not known); nodeType is CUgraphNodeType + 1 (0: not known).
    void recordCreated(uint64_t nodeId, uint64_t graphId, uint32_t tid, std::vector<std::string> ranges,
        const char* api = nullptr, uint8_t nodeType = 0);
    // `nodeId` in `graphId` is a copy of `originalId`, made inside `api`; it keeps the original's context
    // (ranges, thread, call), the copy's call only where the original's build was not seen.
    void recordCloned(
        uint64_t nodeId, uint64_t originalId, uint64_t graphId, const char* api = nullptr, uint8_t nodeType = 0);
    // A graph exec instantiated from `graphId`.
    void recordExec(uint64_t execId, uint64_t graphId);

    // The node as a GraphNode entry (rank left 0); false when its build was not seen.
    bool find(uint64_t nodeId, pb::GraphNode& out) const;

    size_t nodes() const;
    size_t execs() const;
    uint64_t notKept() const;
    void clear(); // tests

private:
    struct Entry {
        uint64_t graphId = 0;
        uint64_t originalId = 0;
        uint32_t order = 0;
        uint32_t tid = 0;
        uint32_t stack = 0; // index into m_stacks
        uint16_t api = 0; // index into m_apis (0: not known)
        uint8_t type = 0;
    };
    uint32_t internStack(std::vector<std::string> ranges);
    uint16_t internApi(const char* api);

    mutable std::mutex m_mutex;
    std::unordered_map<uint64_t, Entry> m_nodes;
    std::unordered_map<uint64_t, uint32_t> m_nextOrder; // graph id -> nodes built in it so far
    std::unordered_map<uint64_t, uint64_t> m_execs; // exec id -> graph id
    std::vector<std::vector<std::string>> m_stacks;
    std::map<std::vector<std::string>, uint32_t> m_stackIds;
    std::vector<std::string> m_apis { std::string() };
    uint64_t m_notKept = 0;
};

} // namespace gapscope::capture::inject
