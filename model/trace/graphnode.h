// SPDX-License-Identifier: MIT
#pragma once

// GraphNodeInfo: where a CUDA-graph node was built. A replayed kernel carries only its graph and node
// ids (KernelConfig::graphId / graphNodeId); the host work that made it happened once, at graph capture.
// The capture agent records, for every node the process builds, the capturing thread's NVTX range stack
// at that moment, and a capture carries the entries of the nodes it replayed. Importers fill the same
// table where their source has it (nsys exports made with --cuda-graph-trace=node).
//
// Node ids are unique within a process (CUPTI's), so (rank, nodeId) names a node in a trace.

#include "model/format/graphbuild.h"
#include "model/format/wholegraph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gapscope::model {

using StringId = uint32_t;

enum class GraphNodeOrigin : uint8_t {
    Created = 0, // built by stream capture or an explicit cudaGraphAdd*Node call
    Cloned = 1, // a copy of `originalNodeId` (graph clone, or the node's copy in an instantiated graph)
};

struct GraphNodeInfo {
    uint32_t rank = 0;
    uint64_t nodeId = 0; // as KernelConfig::graphNodeId of the kernels it ran
    uint64_t graphId = 0; // the graph it was built in (0: not known)
    uint64_t originalNodeId = 0; // Cloned: the node it copies
    GraphNodeOrigin origin = GraphNodeOrigin::Created;
    uint32_t order = 0; // creation order within its graph, from 0
    uint32_t threadId = 0; // the thread that built it (0: not known)
    std::vector<StringId> ranges; // NVTX range stack at creation, outermost first (empty: none open)
    // The call that built it (format/graphbuild.h): an explicit cudaGraphAdd*Node / cuGraphAdd*Node,
    // "stream capture"; a clone keeps its original's, else the cudaGraphInstantiate / cudaGraphClone that
    // copied it (0: not known).
    StringId api = 0;
    uint8_t nodeType = 0; // CUgraphNodeType + 1 (graphNodeTypeName); 0: not known
};

// "kernel", "memcpy", "memset", "host", "child graph", "empty", "event wait", "event record",
// "semaphore signal", "semaphore wait", "memory alloc", "memory free", "batch memory op", "conditional"
// for nodeType 1..14; "" for 0 (not known); "type N" beyond.
std::string graphNodeTypeName(uint8_t nodeType);

// A kernel event that stands for a whole replay (the light mode's, wholegraph.h), not one node.
inline bool isWholeReplayNode(uint64_t nodeId)
{
    return nodeId == format::kWholeGraphNode;
}

// The range stack as one text, outermost first: "decode > layer 3 > mlp" ("" when empty).
// `name` turns a StringId into its text (Trace::str).
template <typename NameFn> std::string rangePath(const std::vector<StringId>& ranges, NameFn&& name)
{
    std::string out;
    for (StringId id : ranges) {
        if (!out.empty())
            out += " > ";
        out += name(id);
    }
    return out;
}

} // namespace gapscope::model
