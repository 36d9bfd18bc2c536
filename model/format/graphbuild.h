// SPDX-License-Identifier: MIT
#pragma once

// The call a CUDA-graph node was built in (GraphNode.api in trace.proto, GraphNodeInfo::api): the
// capture agent follows explicit construction and copies by name (cudaGraphAdd*Node, cudaGraphInstantiate,
// cudaGraphClone, their driver twins); a node built while a stream capture is open is named
// kStreamCaptureCall (the launch, copy or event call inside it is not followed).
//
// Threading: constants.

namespace gapscope::format {

inline constexpr const char* kStreamCaptureCall = "stream capture";

} // namespace gapscope::format
