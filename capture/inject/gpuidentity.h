// SPDX-License-Identifier: MIT
#pragma once

// GpuIdentity: who this rank is, read without disturbing the application: the device of the
// CUDA primary context that is active in the process (cuDevicePrimaryCtxGetState, no context of
// our own), its properties and UUID, versions (CUPTI, driver, NCCL plugin), the launcher's rank
// environment and, when that is missing, the rank NCCL reported to the profiler plugin.
//
// Threading: the injection library's own thread (CUDA driver calls after cuInit has returned).

#include "capture/inject/ranksession.h"

namespace gapscope::capture::inject {

class GpuIdentity {
public:
    explicit GpuIdentity(uint32_t cuptiVersion);

    // False until the process has an active CUDA context (nothing to register before that).
    bool ready();
    RankIdentity read();

private:
    int activeDevice();
    uint32_t m_cuptiVersion;
};

} // namespace gapscope::capture::inject
