// SPDX-License-Identifier: MIT
#include "model/synth/synthsink.h"

namespace gapscope::model::synth {
namespace {

class BuilderSink final : public SynthSink {
public:
    explicit BuilderSink(TraceBuilder& b)
        : m_b(b)
    {
    }
    uint32_t string(std::string_view s) override { return m_b.intern(s); }
    uint32_t lane(const LaneInfo& info) override { return m_b.lane(info); }
    uint32_t launchConfig(const KernelConfig& c) override
    {
        m_configs.push_back(c);
        return uint32_t(m_configs.size() - 1);
    }
    void kernel(uint32_t lane, TimeNs start, TimeNs dur, uint32_t name, uint32_t corr, uint32_t config,
        uint64_t graphId, uint64_t graphNode) override
    {
        KernelConfig c = m_configs[config];
        c.graphId = graphId;
        c.graphNodeId = graphNode;
        m_b.addKernel(lane, start, dur, name, corr, c);
    }
    void api(uint32_t lane, TimeNs start, TimeNs dur, uint32_t name, uint32_t corr) override
    {
        m_b.addApi(lane, start, dur, name, corr);
    }
    void sync(uint32_t lane, TimeNs start, TimeNs dur, SyncKind kind, uint64_t stream, uint32_t corr) override
    {
        m_b.addSync(lane, start, dur, SyncInfo { kind, stream }, corr);
    }
    void memcpy(uint32_t lane, TimeNs start, TimeNs dur, CopyKind kind, uint64_t bytes, uint32_t corr) override
    {
        m_b.addMemop(lane, start, dur, MemopInfo { MemopKind::Memcpy, kind, bytes, false }, corr);
    }
    void nvtx(uint32_t lane, TimeNs start, TimeNs dur, uint32_t name, uint32_t depth) override
    {
        m_b.addNvtx(lane, start, dur, name, depth);
    }
    void host(uint32_t lane, TimeNs start, TimeNs dur, uint32_t name, HostKind kind, uint32_t depth) override
    {
        m_b.addHost(lane, start, dur, name, kind, depth);
    }
    void collective(uint32_t lane, TimeNs start, TimeNs dur, uint32_t op, const CollectiveInfo& c) override
    {
        m_b.addCollective(lane, start, dur, op, c);
    }
    void step(uint32_t rank, const Step& step) override { m_b.addStep(rank, step); }

private:
    TraceBuilder& m_b;
    std::vector<KernelConfig> m_configs;
};

class WriterSink final : public SynthSink {
public:
    explicit WriterSink(EventFileWriter& w)
        : m_w(w)
    {
    }
    uint32_t string(std::string_view s) override { return m_w.string(s); }
    uint32_t lane(const LaneInfo& i) override { return m_w.lane(i); }
    uint32_t launchConfig(const KernelConfig& c) override { return m_w.launchConfig(c); }
    void kernel(uint32_t lane, TimeNs start, TimeNs dur, uint32_t name, uint32_t corr, uint32_t config,
        uint64_t graphId, uint64_t graphNode) override
    {
        m_w.kernel(lane, start, dur, name, corr, config, graphId, graphNode);
    }
    void api(uint32_t lane, TimeNs start, TimeNs dur, uint32_t name, uint32_t corr) override
    {
        m_w.api(lane, start, dur, name, corr);
    }
    void sync(uint32_t lane, TimeNs start, TimeNs dur, SyncKind kind, uint64_t stream, uint32_t corr) override
    {
        m_w.sync(lane, start, dur, kind, stream, corr);
    }
    void memcpy(uint32_t lane, TimeNs start, TimeNs dur, CopyKind kind, uint64_t bytes, uint32_t corr) override
    {
        m_w.memcpy(lane, start, dur, kind, bytes, corr);
    }
    void nvtx(uint32_t lane, TimeNs start, TimeNs dur, uint32_t name, uint32_t depth) override
    {
        m_w.nvtx(lane, start, dur, name, depth);
    }
    void host(uint32_t lane, TimeNs start, TimeNs dur, uint32_t name, HostKind kind, uint32_t depth) override
    {
        m_w.host(lane, start, dur, name, kind, depth);
    }
    void collective(uint32_t lane, TimeNs start, TimeNs dur, uint32_t op, const CollectiveInfo& c) override
    {
        m_w.collective(lane, start, dur, op, c);
    }
    void step(uint32_t rank, const Step& s) override { m_w.step(rank, s); }
    Status flush() override { return m_w.flush(); }

private:
    EventFileWriter& m_w;
};

} // namespace

std::unique_ptr<SynthSink> builderSink(TraceBuilder& builder)
{
    return std::make_unique<BuilderSink>(builder);
}
std::unique_ptr<SynthSink> writerSink(EventFileWriter& writer)
{
    return std::make_unique<WriterSink>(writer);
}

} // namespace gapscope::model::synth
