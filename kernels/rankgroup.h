// SPDX-License-Identifier: MIT
#pragma once

// RankGroup: starts one process per GPU from one command, as inference servers run tensor
// parallelism. The parent forks N children before touching CUDA; rank 0 creates the NCCL unique
// id and hands it to the parent through a pipe, the parent passes it on to the other ranks through
// theirs. Each rank's result (JSON) and error text come back through files in a private temporary
// folder. If a rank fails, the parent ends the other ranks it started (SIGTERM, then SIGKILL) and
// reports which rank failed and why.
// Threading: call from the main thread of a process that has not initialised CUDA.

#include "model/base/json.h"
#include "model/base/status.h"

#include <cstdint>
#include <functional>
#include <nccl.h>
#include <vector>

namespace gapscope::kernels {

class RankGroup {
public:
    // Runs fn(rank, id, result) in `ranks` child processes; the id is meaningful when ranks > 1.
    using RankMain = std::function<Status(uint32_t rank, const ncclUniqueId& id, json::Value& result)>;
    static Expected<std::vector<json::Value>> run(uint32_t ranks, const RankMain& fn);
};

} // namespace gapscope::kernels
