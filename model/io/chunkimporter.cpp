// SPDX-License-Identifier: MIT
#include "model/io/chunkimporter.h"

#include "model/io/tracemetaproto.h"

namespace gapscope::model {

// Forwards decoded events to the builder with ids mapped.
class ChunkVisitor final : public format::ChunkDecoder::Visitor {
public:
    explicit ChunkVisitor(ChunkImporter& imp)
        : m(imp)
    {
    }
    void kernel(uint32_t lane, int64_t start, uint64_t dur, uint32_t name, uint32_t corr, uint32_t config,
        uint64_t graphId, uint64_t graphNodeId) override
    {
        KernelConfig c;
        if (const pb::LaunchConfig* lc = m.m_decoder.config(config))
            c = fromProto(*lc);
        c.graphId = graphId;
        c.graphNodeId = graphNodeId;
        m.m_builder.addKernel(m.lane(lane), start, TimeNs(dur), m.str(name), corr, c);
    }
    void memop(uint32_t lane, int64_t start, uint64_t dur, pb::MemopKind kind, pb::CopyKind copyKind, uint64_t bytes,
        uint32_t flags, uint32_t corr) override
    {
        m.m_builder.addMemop(
            m.lane(lane), start, TimeNs(dur), MemopInfo { MemopKind(kind), CopyKind(copyKind), bytes, (flags & 1) != 0 }, corr);
    }
    void api(uint32_t lane, int64_t start, uint64_t dur, uint32_t name, uint32_t corr, pb::ApiKind kind) override
    {
        m.m_builder.addApi(m.lane(lane), start, TimeNs(dur), m.str(name), corr,
            kind == pb::API_DRIVER ? ApiKind::Driver : ApiKind::Runtime);
    }
    void sync(uint32_t lane, int64_t start, uint64_t dur, pb::SyncKind kind, uint64_t stream, uint32_t corr) override
    {
        m.m_builder.addSync(m.lane(lane), start, TimeNs(dur), SyncInfo { SyncKind(kind), stream }, corr);
    }
    void nvtx(uint32_t lane, int64_t start, uint64_t dur, uint32_t name, uint32_t depth, uint32_t) override
    {
        m.m_builder.addNvtx(m.lane(lane), start, TimeNs(dur), m.str(name), depth);
    }
    void host(uint32_t lane, int64_t start, uint64_t dur, uint32_t name, uint32_t depth, pb::HostKind kind) override
    {
        m.m_builder.addHost(m.lane(lane), start, TimeNs(dur), m.str(name),
            size_t(kind) < kHostKinds ? HostKind(kind) : HostKind::CpuOp, depth);
    }
    void collective(uint32_t lane, int64_t start, uint64_t dur, uint32_t op, uint64_t bytes, uint32_t datatype,
        uint32_t algorithm, uint32_t protocol, uint64_t sequence, uint64_t comm, uint32_t channels,
        uint32_t root) override
    {
        CollectiveInfo c { bytes, m.str(datatype), m.str(algorithm), m.str(protocol), sequence, comm, channels, root };
        m.m_builder.addCollective(m.lane(lane), start, TimeNs(dur), m.str(op), c);
    }
    void stepRecord(const format::StepRecord& s) override
    {
        m.m_builder.addStep(s.rank, fromRecord(s, m.m_decoder.string(s.label)));
    }

private:
    ChunkImporter& m;
};

ChunkImporter::ChunkImporter(TraceBuilder& builder)
    : m_builder(builder)
{
    m_decoder.recoverLostDefinitions(true); // a file or stream that lost a chunk keeps the chunks after it
}

StringId ChunkImporter::str(uint32_t id)
{
    if (id == 0)
        return 0;
    if (id >= m_strings.size())
        m_strings.resize(m_decoder.strings().size() + 1, UINT32_MAX);
    if (m_strings[id] == UINT32_MAX)
        m_strings[id] = m_builder.intern(m_decoder.string(id));
    return m_strings[id];
}

LaneId ChunkImporter::lane(uint32_t id)
{
    if (id >= m_lanes.size())
        m_lanes.resize(m_decoder.lanes().size(), kNoLane);
    if (m_lanes[id] == kNoLane)
        m_lanes[id] = m_builder.lane(fromProto(*m_decoder.laneDef(id)));
    return m_lanes[id];
}

Status ChunkImporter::add(const pb::Chunk& chunk)
{
    if (Status s = m_decoder.absorb(chunk); !s)
        return s;
    // A redefined string or lane (after a lost chunk) must be looked up again.
    if (chunk.strings_size() && chunk.first_string_id() < m_strings.size())
        m_strings.resize(chunk.first_string_id(), UINT32_MAX);
    for (uint32_t id : chunk.reused_string_ids())
        if (id < m_strings.size())
            m_strings[id] = UINT32_MAX;
    for (const auto& l : chunk.lanes())
        if (l.id() < m_lanes.size())
            m_lanes[l.id()] = kNoLane;
    if (Status s = m_decoder.validate(chunk); !s)
        return s;
    ChunkVisitor v(*this);
    m_decoder.forEach(chunk, v);
    const auto& c = chunk;
    m_events += c.kernels().c().lane_size() + c.memops().c().lane_size() + c.api().c().lane_size()
        + c.syncs().c().lane_size() + c.nvtx().c().lane_size() + c.host().c().lane_size()
        + c.collectives().c().lane_size();
    for (const auto& counter : chunk.counters())
        m_counters.add(counter);
    for (const auto& g : chunk.graph_nodes())
        m_builder.addGraphNode(fromProto(g, m_builder));
    return Status::ok();
}

std::vector<Counter> ChunkImporter::counters() const
{
    std::vector<Counter> out;
    for (const pb::Counter& c : m_counters.sorted())
        out.push_back(fromProto(c));
    return out;
}

} // namespace gapscope::model
