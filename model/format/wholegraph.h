// SPDX-License-Identifier: MIT
#pragma once

// A whole CUDA-graph replay recorded as one kernel event: what a capture with `--detail-every N`
// writes for the graph launches it does not record node by node (CUPTI's graph-level trace). The
// event lies on the launching stream's GPU lane, from the replay's first node start to its last
// node end, named kWholeGraphName, with graph_id the replayed graph and the graph node id
// kWholeGraphNode, which no real node has. Readers tell such events by that node id, not the name.
//
// Threading: constants.

#include <cstdint>

namespace gapscope::format {

inline constexpr uint64_t kWholeGraphNode = ~uint64_t(0);
inline constexpr const char* kWholeGraphName = "CUDA graph replay (nodes not recorded)";

// CaptureSettings.detail_every for a light-mode capture with no detailed block (`capture
// --whole-replays`): every graph replay is recorded whole, no kernel node by node.
inline constexpr uint32_t kDetailNone = ~uint32_t(0);

} // namespace gapscope::format
