// SPDX-License-Identifier: MIT
#pragma once

// NsysGraphNodes: where each CUDA-graph node of an Nsight Systems export was built, from its
// CUDA_GRAPH_NODE_EVENTS table (an export made with `--cuda-graph-trace=node`), as the
// GraphNodeInfo entries of the trace (graphnode.h).
//
// The table has one row per node: `start`/`end` of the call that made it, `globalTid` of the thread
// that made it, `graphNodeId`, and `originalGraphNodeId` for a clone (cudaGraphClone, and the copy of
// every node cudaGraphInstantiate makes). Replayed kernels name the instantiated copy in their own
// `graphNodeId`, so a kernel's node leads through the clone chain to the node stream capture made.
//
// - Created node: its api is the outermost CUDA API call of its thread (CUPTI_ACTIVITY_KIND_RUNTIME rows)
//   that encloses its row: the launch or copy during a stream capture, or the cudaGraphAdd*Node call
//   (0 when the export has no such call). Its ranges are the NVTX ranges of its thread staged so far (push/pop and
//   start/end ranges, NsysRowConverter::nvtx) that enclose its row: start <= row start and row end <= end, outermost
//   first (earlier start, then longer). One sweep per thread over its ranges (and its calls) in start order.
// - Cloned node: origin Cloned, originalNodeId = its row's original; ranges, api and thread of the node at
//   the root of its clone chain (empty and 0 when the export lacks that node's row, e.g. a graph built
//   before the profiled range).
// - graphId: the graphId of the kernels that ran the node (0 when none did, as for the nodes stream
//   capture made: their kernels run as the instantiated copies).
// - order: creation order (row start), from 0, within a graph: a created node counts in the graph its
//   kernels ran in, else in the one its copies' kernels ran in; a clone takes its root's order; 0 for
//   a node of no graph that ran.
// Several rows of one node id: the earliest one counts. A node id is unique within a process.
// Assumes a row's time is that of the call that made the node (the capture-time launch), as NVIDIA's
// TensorRT-LLM (examples/layer_wise_benchmarks/parse.py) does when it joins kernels to NVTX ranges so.
//
// Threading: one per NsysRowConverter, one thread.

#include "model/import/stagedtrace.h"

#include <cstdint>
#include <vector>

namespace gapscope::model::importer {

struct NsysGraphNodeRow {
    int64_t start = 0, end = 0, globalTid = 0;
    int64_t graphNodeId = 0;
    int64_t originalGraphNodeId = 0; // 0: not a clone
};

class NsysGraphNodes {
public:
    // A row of a process with GPU work (the converter checks), any order.
    void add(const NsysGraphNodeRow& r) { m_rows.push_back(r); }
    // Adds one entry per node to `out.graphNodes`, after the NVTX ranges and kernels are staged and
    // the processes are in their final order. Returns the nodes whose clone chain loops (more than 64
    // links), which get no ranges.
    uint64_t finish(StagedTrace& out);

private:
    std::vector<NsysGraphNodeRow> m_rows;
};

} // namespace gapscope::model::importer
