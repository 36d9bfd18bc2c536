// SPDX-License-Identifier: MIT
#pragma once

// SelfCheck: gapscope-decode-sim --check. Runs every kernel of the decode step on small random
// shapes (odd row counts, partial quantisation groups, head counts that are not powers of two,
// several splits, empty expert slots) and compares the results with the CPU references
// (relative error bounds for bf16 outputs: 1e-2; exact for ids and routing), then checks NCCL
// AllReduce/AllGather across the ranks. Each check adds a line "PASS|FAIL name: detail".
// Threading: one rank process, its current device.

#include "model/base/status.h"

#include <cstdint>
#include <nccl.h>
#include <string>
#include <vector>

namespace gapscope::kernels {

class SelfCheck {
public:
    // Returns an error for CUDA/NCCL failures; failed comparisons are reported in `lines` and counted.
    static Status run(
        uint32_t rank, uint32_t ranks, const ncclUniqueId& id, std::vector<std::string>& lines, int& failures);
};

} // namespace gapscope::kernels
