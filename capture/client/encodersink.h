// SPDX-License-Identifier: MIT
#pragma once

// EncoderSink: an EventSink that adds every event to a format::ChunkEncoder (the encoder of one
// output stream). Counts the events it forwarded. Threading: that of the encoder (one thread).

#include "capture/client/eventsink.h"

namespace gapscope::capture {

class EncoderSink final : public EventSink {
public:
    explicit EncoderSink(format::ChunkEncoder& encoder)
        : m_enc(encoder)
    {
    }
    uint64_t events() const { return m_events; }

    void kernel(uint32_t lane, int64_t start, uint64_t duration, uint32_t name, uint32_t correlation, uint32_t config,
        uint64_t graphId, uint64_t graphNodeId) override
    {
        ++m_events;
        m_enc.addKernel(lane, start, duration, name, correlation, config, graphId, graphNodeId);
    }
    void memop(uint32_t lane, int64_t start, uint64_t duration, pb::MemopKind kind, pb::CopyKind copyKind,
        uint64_t bytes, uint32_t flags, uint32_t correlation) override
    {
        ++m_events;
        m_enc.addMemop(lane, start, duration, kind, copyKind, bytes, flags, correlation);
    }
    void api(
        uint32_t lane, int64_t start, uint64_t duration, uint32_t name, uint32_t correlation, pb::ApiKind kind) override
    {
        ++m_events;
        m_enc.addApi(lane, start, duration, name, correlation, kind);
    }
    void sync(uint32_t lane, int64_t start, uint64_t duration, pb::SyncKind kind, uint64_t stream,
        uint32_t correlation) override
    {
        ++m_events;
        m_enc.addSync(lane, start, duration, kind, stream, correlation);
    }
    void nvtx(uint32_t lane, int64_t start, uint64_t duration, uint32_t name, uint32_t depth, uint32_t domain) override
    {
        ++m_events;
        m_enc.addNvtx(lane, start, duration, name, depth, domain);
    }
    void host(
        uint32_t lane, int64_t start, uint64_t duration, uint32_t name, uint32_t depth, pb::HostKind kind) override
    {
        ++m_events;
        m_enc.addHost(lane, start, duration, name, depth, kind);
    }
    void collective(uint32_t lane, int64_t start, uint64_t duration, uint32_t op,
        const format::ChunkEncoder::Collective& c) override
    {
        ++m_events;
        m_enc.addCollective(lane, start, duration, op, c);
    }
    void step(const format::StepRecord& step) override { m_enc.addStep(step); }
    void counter(const pb::Counter& counter) override { m_enc.addCounter(counter); }
    void graphNode(const pb::GraphNode& node) override { m_enc.addGraphNode(node); }

private:
    format::ChunkEncoder& m_enc;
    uint64_t m_events = 0;
};

} // namespace gapscope::capture
