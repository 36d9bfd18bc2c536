// SPDX-License-Identifier: MIT
#pragma once

// KinetoMetadata: the top-level members of a Kineto trace other than traceEvents, applied to the
// staged trace: baseTimeNanoseconds (the clock offset of relative "ts" values), deviceProperties
// (GPU name, memory, SM count, compute capability), distributedInfo (rank, world size, NCCL version),
// the CUDA driver/runtime and CUPTI versions, and short scalar members (trace_id, schemaVersion, ...)
// as header metadata. Unknown or malformed members are ignored, and counted when malformed.
// Threading: one instance per staged trace.

#include "model/import/stagedtrace.h"

#include <string_view>

namespace gapscope::model::importer {

class KinetoMetadata {
public:
    KinetoMetadata(StagedTrace& out, uint16_t process);
    // `json` is the member's complete value text.
    void apply(std::string_view key, std::string_view json);

private:
    void deviceProperties(std::string_view json);
    void distributedInfo(std::string_view json);

    StagedTrace& m_out;
    uint16_t m_process;
};

} // namespace gapscope::model::importer
