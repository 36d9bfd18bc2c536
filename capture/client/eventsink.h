// SPDX-License-Identifier: MIT
#pragma once

// EventSink: where decoded events go, one call per event, ids already in the receiver's
// dictionaries. Mirrors format::ChunkEncoder's add* methods so an encoder can be a sink
// (EncoderSink) and so can a buffer (the replay pacer) or a counter (tests).
//
// Threading: whatever the implementation says; ChunkRemapper calls it from the thread it runs on.

#include "model/format/chunkencoder.h"

#include <cstdint>

namespace gapscope::capture {

class EventSink {
public:
    virtual ~EventSink() = default;
    virtual void kernel(uint32_t lane, int64_t start, uint64_t duration, uint32_t name, uint32_t correlation,
        uint32_t config, uint64_t graphId, uint64_t graphNodeId)
        = 0;
    virtual void memop(uint32_t lane, int64_t start, uint64_t duration, pb::MemopKind kind, pb::CopyKind copyKind,
        uint64_t bytes, uint32_t flags, uint32_t correlation)
        = 0;
    virtual void api(
        uint32_t lane, int64_t start, uint64_t duration, uint32_t name, uint32_t correlation, pb::ApiKind kind)
        = 0;
    virtual void sync(
        uint32_t lane, int64_t start, uint64_t duration, pb::SyncKind kind, uint64_t stream, uint32_t correlation)
        = 0;
    virtual void nvtx(uint32_t lane, int64_t start, uint64_t duration, uint32_t name, uint32_t depth, uint32_t domain)
        = 0;
    virtual void host(uint32_t lane, int64_t start, uint64_t duration, uint32_t name, uint32_t depth, pb::HostKind kind)
        = 0;
    virtual void collective(
        uint32_t lane, int64_t start, uint64_t duration, uint32_t op, const format::ChunkEncoder::Collective& c)
        = 0;
    // A step with what it did (kind, batch, tokens, label: a string id like the names above).
    virtual void step(const format::StepRecord& step) = 0;
    virtual void counter(const pb::Counter& counter) = 0;
    virtual void graphNode(const pb::GraphNode& node) = 0;
};

} // namespace gapscope::capture
