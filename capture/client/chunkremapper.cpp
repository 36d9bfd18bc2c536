// SPDX-License-Identifier: MIT
#include "capture/client/chunkremapper.h"

#include <algorithm>
#include <limits>

namespace gapscope::capture {

namespace {
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
} // namespace

// Receives the decoder's events (source ids, absolute times) and forwards them remapped.
class ChunkRemapper::Forwarder final : public format::ChunkDecoder::Visitor {
public:
    Forwarder(const ChunkRemapper& r, EventSink& sink)
        : m_r(r)
        , m_sink(sink)
        , m_shift(r.m_opt.timeShiftNs)
    {
    }
    uint32_t str(uint32_t id) const { return id < m_r.m_strings.size() ? m_r.m_strings[id] : 0; }
    // kNone for a lane the dictionaries never defined: the event is dropped, never passed on with a
    // lane id the target does not have.
    uint32_t lane(uint32_t id) const { return id < m_r.m_lanes.size() ? m_r.m_lanes[id] : kNone; }
    uint32_t cfg(uint32_t id) const
    {
        const uint32_t t = id < m_r.m_configs.size() ? m_r.m_configs[id] : 0;
        return t == kNone ? 0 : t;
    }

    void kernel(uint32_t l, int64_t start, uint64_t dur, uint32_t name, uint32_t corr, uint32_t config,
        uint64_t graphId, uint64_t node) override
    {
        const uint32_t t = lane(l);
        if (t == kNone)
            return;
        m_sink.kernel(t, start + m_shift, dur, str(name), corr, cfg(config), graphId, node);
    }
    void memop(uint32_t l, int64_t start, uint64_t dur, pb::MemopKind kind, pb::CopyKind copyKind, uint64_t bytes,
        uint32_t flags, uint32_t corr) override
    {
        const uint32_t t = lane(l);
        if (t == kNone)
            return;
        m_sink.memop(t, start + m_shift, dur, kind, copyKind, bytes, flags, corr);
    }
    void api(uint32_t l, int64_t start, uint64_t dur, uint32_t name, uint32_t corr, pb::ApiKind kind) override
    {
        const uint32_t t = lane(l);
        if (t == kNone)
            return;
        m_sink.api(t, start + m_shift, dur, str(name), corr, kind);
    }
    void sync(uint32_t l, int64_t start, uint64_t dur, pb::SyncKind kind, uint64_t stream, uint32_t corr) override
    {
        const uint32_t t = lane(l);
        if (t == kNone)
            return;
        m_sink.sync(t, start + m_shift, dur, kind, stream, corr);
    }
    void nvtx(uint32_t l, int64_t start, uint64_t dur, uint32_t name, uint32_t depth, uint32_t domain) override
    {
        const uint32_t t = lane(l);
        if (t == kNone)
            return;
        m_sink.nvtx(t, start + m_shift, dur, str(name), depth, str(domain));
    }
    void host(uint32_t l, int64_t start, uint64_t dur, uint32_t name, uint32_t depth, pb::HostKind kind) override
    {
        const uint32_t t = lane(l);
        if (t == kNone)
            return;
        m_sink.host(t, start + m_shift, dur, str(name), depth, kind);
    }
    void collective(uint32_t l, int64_t start, uint64_t dur, uint32_t op, uint64_t bytes, uint32_t datatype,
        uint32_t algorithm, uint32_t protocol, uint64_t sequence, uint64_t comm, uint32_t channels,
        uint32_t root) override
    {
        const uint32_t t = lane(l);
        if (t == kNone)
            return;
        format::ChunkEncoder::Collective c;
        c.bytes = bytes;
        c.datatype = str(datatype);
        c.algorithm = str(algorithm);
        c.protocol = str(protocol);
        c.sequence = sequence;
        c.comm = comm;
        c.channels = channels;
        c.root = root;
        m_sink.collective(t, start + m_shift, dur, str(op), c);
    }
    void stepRecord(const format::StepRecord& s) override
    {
        const int64_t i = int64_t(s.index) + m_r.m_opt.stepIndexShift;
        if (i < 0 || i > int64_t(std::numeric_limits<uint32_t>::max()))
            return; // a step before the capture window (rank-local index below the planned start)
        format::StepRecord out = s;
        out.rank = m_r.m_opt.rank >= 0 ? uint32_t(m_r.m_opt.rank) : s.rank;
        out.index = uint32_t(i);
        out.start = s.start + m_shift;
        out.label = s.label ? str(s.label) : 0;
        m_sink.step(out);
    }

private:
    const ChunkRemapper& m_r;
    EventSink& m_sink;
    int64_t m_shift;
};

ChunkRemapper::ChunkRemapper(format::ChunkEncoder& target, RemapOptions options)
    : m_target(target)
    , m_opt(std::move(options))
    , m_dec(std::make_unique<format::ChunkDecoder>())
{
}

ChunkRemapper::~ChunkRemapper() = default;

const std::vector<std::string>& ChunkRemapper::notes() const
{
    return m_dec->notes();
}

Status ChunkRemapper::applyDictionaries(const pb::Chunk& in)
{
    const std::string where = "chunk " + std::to_string(in.sequence());
    const size_t strings0 = m_dec->strings().size(), lanes0 = m_dec->lanes().size();
    if (Status s = m_dec->absorb(in); !s)
        return s.withContext(where);
    // New ids, gap placeholders and redefinitions all get (re)interned; so do ids that a chunk whose
    // dictionaries failed part-way left in the decoder without a mapping.
    const size_t strings1 = m_dec->strings().size();
    const size_t mapped = m_strings.empty() ? 0 : m_strings.size() - 1;
    m_strings.resize(strings1 + 1, 0);
    auto internId = [&](size_t id) { m_strings[id] = m_target.internString(m_dec->string(uint32_t(id))); };
    for (size_t id = std::min(mapped, strings0) + 1; id <= strings1; ++id)
        internId(id);
    if (in.strings_size() && in.first_string_id() <= strings0)
        for (size_t id = in.first_string_id(); id <= strings0 && id < in.first_string_id() + size_t(in.strings_size());
             ++id)
            internId(id);
    auto mapLane = [&](uint32_t id) {
        pb::LaneDef def = *m_dec->laneDef(id);
        if (m_opt.rank >= 0)
            def.set_rank(uint32_t(m_opt.rank));
        if (!m_opt.host.empty())
            def.set_host(m_opt.host);
        if (m_opt.pid >= 0)
            def.set_pid(uint32_t(m_opt.pid));
        m_lanes[id] = m_target.lane(def);
    };
    // New ids, and any id still unmapped: a chunk whose dictionaries failed part-way may have left
    // lanes in the decoder that no mapping followed.
    m_lanes.resize(m_dec->lanes().size(), kNone);
    for (size_t id = 0; id < m_dec->lanes().size(); ++id)
        if (id >= lanes0 || m_lanes[id] == kNone)
            mapLane(uint32_t(id));
    for (const auto& l : in.lanes())
        if (l.id() < lanes0)
            mapLane(l.id());
    for (const auto& c : in.configs()) {
        if (c.id() >= m_configs.size())
            m_configs.resize(c.id() + 1, kNone);
        m_configs[c.id()] = m_target.config(c);
    }
    ++m_chunks;
    return Status::ok();
}

Status ChunkRemapper::apply(const pb::Chunk& in, EventSink& sink)
{
    if (Status s = applyDictionaries(in); !s)
        return s;
    if (Status s = m_dec->validate(in); !s)
        return s.withContext("chunk " + std::to_string(in.sequence()));
    Forwarder f(*this, sink);
    m_dec->forEach(in, f);
    for (const auto& g : in.graph_nodes()) {
        if (m_opt.rank >= 0 && g.rank() != uint32_t(m_opt.rank)) {
            pb::GraphNode copy = g;
            copy.set_rank(uint32_t(m_opt.rank));
            sink.graphNode(copy);
        } else {
            sink.graphNode(g);
        }
    }
    for (const auto& c : in.counters()) {
        if (m_opt.rank >= 0 && c.rank() >= 0) {
            pb::Counter copy = c;
            copy.set_rank(int32_t(m_opt.rank));
            sink.counter(copy);
        } else {
            sink.counter(c);
        }
    }
    return Status::ok();
}

uint64_t ChunkRemapper::eventCount(const pb::Chunk& c)
{
    return uint64_t(c.kernels().c().lane_size()) + c.memops().c().lane_size() + c.api().c().lane_size()
        + c.syncs().c().lane_size() + c.nvtx().c().lane_size() + c.host().c().lane_size()
        + c.collectives().c().lane_size();
}

} // namespace gapscope::capture
