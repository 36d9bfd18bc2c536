// SPDX-License-Identifier: MIT
#pragma once

// Rank, world size and local rank from the launcher's environment: torchrun / torch.distributed
// (RANK, WORLD_SIZE, LOCAL_RANK), Open MPI (OMPI_COMM_WORLD_*), PMI/MPICH (PMI_RANK, PMI_SIZE,
// MPI_LOCALRANKID), Slurm (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID), first found wins. Values
// that do not parse as non-negative integers are ignored. The NCCL plugin fills gaps later.
//
// Threading: pure functions.

#include <cstdint>
#include <functional>
#include <string>

namespace gapscope::capture::inject {

struct RankEnv {
    int rank = -1;
    int worldSize = 0;
    int localRank = -1;
    std::string source; // the variable the rank came from ("RANK", ...), empty when none
};

// `getenv` is injectable for tests; the default reads the process environment.
RankEnv rankFromEnvironment(const std::function<const char*(const char*)>& getenv = {});

} // namespace gapscope::capture::inject
