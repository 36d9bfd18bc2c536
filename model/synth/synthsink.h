// SPDX-License-Identifier: MIT
#pragma once

// SynthSink: where the synth generator puts its events: a TraceBuilder (synthesize) or a
// file written as it goes (EventFileWriter: synthesizeToFile). Ids returned by string/lane/launchConfig are the sink's.
// Internal to synth. Not thread-safe.

#include "model/io/eventfilewriter.h"
#include "model/trace/trace.h"

#include <memory>

namespace gapscope::model::synth {

class SynthSink {
public:
    virtual ~SynthSink() = default;
    virtual uint32_t string(std::string_view s) = 0;
    virtual uint32_t lane(const LaneInfo& info) = 0;
    virtual uint32_t launchConfig(const KernelConfig& c) = 0; // graph ids ignored
    virtual void kernel(uint32_t lane, TimeNs start, TimeNs dur, uint32_t name, uint32_t corr, uint32_t config,
        uint64_t graphId, uint64_t graphNode)
        = 0;
    virtual void api(uint32_t lane, TimeNs start, TimeNs dur, uint32_t name, uint32_t corr) = 0;
    virtual void sync(uint32_t lane, TimeNs start, TimeNs dur, SyncKind kind, uint64_t stream, uint32_t corr) = 0;
    virtual void memcpy(uint32_t lane, TimeNs start, TimeNs dur, CopyKind kind, uint64_t bytes, uint32_t corr) = 0;
    virtual void nvtx(uint32_t lane, TimeNs start, TimeNs dur, uint32_t name, uint32_t depth) = 0;
    virtual void host(uint32_t lane, TimeNs start, TimeNs dur, uint32_t name, HostKind kind, uint32_t depth) = 0;
    virtual void collective(uint32_t lane, TimeNs start, TimeNs dur, uint32_t op, const CollectiveInfo& c) = 0;
    virtual void step(uint32_t rank, const Step& step) = 0;
    virtual Status flush() { return Status::ok(); } // called between steps
};

std::unique_ptr<SynthSink> builderSink(TraceBuilder& builder);
std::unique_ptr<SynthSink> writerSink(EventFileWriter& writer);

} // namespace gapscope::model::synth
