// SPDX-License-Identifier: MIT
#pragma once

// RankRecord: what the agent knows about one registered rank process (from its Register message),
// shared by the rank table, rank lists sent to clients and the capture header.

#include "capture/protocol/protocol.pb.h"

#include <cstdint>
#include <string>

namespace gapscope::capture {

struct RankRecord {
    uint32_t connId = 0;
    uint32_t rank = 0; // as registered, or assigned by the agent
    wire::Register reg;
    int64_t registeredUnixNs = 0;
    std::string state = "idle"; // "idle", "armed", "recording", "gone", "replay"

    pb::RankInfo rankInfo() const
    {
        pb::RankInfo r;
        r.set_rank(rank);
        r.set_world_size(reg.world_size());
        r.set_pid(reg.pid());
        r.set_host(reg.host());
        r.set_gpu_uuid(reg.gpu().uuid());
        r.set_device_index(reg.gpu().device_index());
        r.set_process_name(reg.process_name());
        *r.mutable_versions() = reg.versions();
        r.set_other_cupti_client(reg.other_cupti_client());
        return r;
    }
};

} // namespace gapscope::capture
