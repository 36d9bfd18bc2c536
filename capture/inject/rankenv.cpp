// SPDX-License-Identifier: MIT
#include "capture/inject/rankenv.h"

#include <cstdlib>

namespace gapscope::capture::inject {

namespace {

int parseIndex(const char* text)
{
    if (!text || !*text)
        return -1;
    char* end = nullptr;
    const long v = std::strtol(text, &end, 10);
    if (*end != 0 || v < 0 || v > 1000000)
        return -1;
    return int(v);
}

} // namespace

RankEnv rankFromEnvironment(const std::function<const char*(const char*)>& getenvFn)
{
    auto get = [&](const char* name) -> const char* { return getenvFn ? getenvFn(name) : std::getenv(name); };
    struct Scheme {
        const char* rank;
        const char* size;
        const char* local;
    };
    static const Scheme schemes[] = {
        { "RANK", "WORLD_SIZE", "LOCAL_RANK" },
        { "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK" },
        { "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID" },
        { "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID" },
    };
    RankEnv env;
    for (const Scheme& s : schemes) {
        const int rank = parseIndex(get(s.rank));
        if (rank < 0)
            continue;
        env.rank = rank;
        env.source = s.rank;
        const int size = parseIndex(get(s.size));
        env.worldSize = size > rank ? size : 0;
        env.localRank = parseIndex(get(s.local));
        return env;
    }
    env.localRank = parseIndex(get("LOCAL_RANK"));
    return env;
}

} // namespace gapscope::capture::inject
