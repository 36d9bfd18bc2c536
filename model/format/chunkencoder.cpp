// SPDX-License-Identifier: MIT
#include "model/format/chunkencoder.h"

#include "model/format/lanekey.h"
#include "model/format/overviewbuilder.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>

namespace gapscope::format {
namespace {

using google::protobuf::RepeatedField;

// Columns every block has.
struct Common {
    std::vector<uint32_t> lane;
    std::vector<int64_t> start;
    std::vector<uint64_t> dur;
    std::vector<uint32_t> name;
    std::vector<uint32_t> corr;

    void push(uint32_t l, int64_t s, uint64_t d, uint32_t n, uint32_t c)
    {
        lane.push_back(l);
        start.push_back(s);
        dur.push_back(d);
        name.push_back(n);
        corr.push_back(c);
    }
    size_t size() const { return start.size(); }
    size_t bytes() const { return size() * 28; }
};

struct KernelCols {
    Common c;
    std::vector<uint32_t> config;
    std::vector<uint64_t> graph, node;
};
struct MemopCols {
    Common c;
    std::vector<uint32_t> kind, copyKind, flags;
    std::vector<uint64_t> bytes;
};
struct ApiCols {
    Common c;
    std::vector<uint32_t> apiKind;
};
struct SyncCols {
    Common c;
    std::vector<uint32_t> kind;
    std::vector<uint64_t> stream;
};
struct NvtxCols {
    Common c;
    std::vector<uint32_t> depth, domain;
};
struct HostCols {
    Common c;
    std::vector<uint32_t> depth, kind;
};
struct CollCols {
    Common c;
    std::vector<uint64_t> bytes, sequence, comm;
    std::vector<uint32_t> datatype, algorithm, protocol, channels, root;
};
struct StepCols {
    std::vector<uint32_t> rank, index, source, kind, batch, tokens, label;
    std::vector<int64_t> start;
    std::vector<uint64_t> dur;
};

struct ConfigKey {
    uint32_t v[9];
    bool operator==(const ConfigKey& o) const { return std::memcmp(v, o.v, sizeof v) == 0; }
};
struct ConfigHash {
    size_t operator()(const ConfigKey& k) const
    {
        uint64_t h = 1469598103934665603ull;
        for (uint32_t x : k.v)
            h = (h ^ x) * 1099511628211ull;
        return size_t(h);
    }
};
ConfigKey keyOf(const pb::LaunchConfig& c)
{
    return { { c.grid_x(), c.grid_y(), c.grid_z(), c.block_x(), c.block_y(), c.block_z(), c.registers(),
        c.shared_static(), c.shared_dynamic() } };
}

// Reorders `v` by `perm` (v'[i] = v[perm[i]]), using `scratch` as the temporary.
template <typename T> void permute(std::vector<T>& v, const std::vector<uint32_t>& perm, std::vector<uint8_t>& scratch)
{
    if (v.empty())
        return;
    scratch.resize(v.size() * sizeof(T));
    T* tmp = reinterpret_cast<T*>(scratch.data());
    for (size_t i = 0; i < perm.size(); ++i)
        tmp[i] = v[perm[i]];
    std::memcpy(v.data(), tmp, v.size() * sizeof(T));
}

// Blocks are grouped by lane, and sorted by (start, longer first) within a lane.
bool before(const Common& c, size_t a, size_t b)
{
    if (c.lane[a] != c.lane[b])
        return c.lane[a] < c.lane[b];
    return c.start[a] != c.start[b] ? c.start[a] < c.start[b] : c.dur[a] > c.dur[b];
}

bool isSorted(const Common& c)
{
    for (size_t i = 1; i < c.size(); ++i)
        if (before(c, i, i - 1))
            return false;
    return true;
}

// The order as a permutation: a stable counting sort by lane, then a sort of each lane's run that
// is not already in order (runs usually are: a source emits one lane's events in time order).
void sortPermutation(const Common& c, std::vector<uint32_t>& perm, std::vector<uint32_t>& offsets)
{
    const size_t n = c.size();
    const uint32_t lanes = *std::max_element(c.lane.begin(), c.lane.end()) + 1;
    offsets.assign(size_t(lanes) + 1, 0);
    for (uint32_t l : c.lane)
        ++offsets[l + 1];
    for (uint32_t l = 0; l < lanes; ++l)
        offsets[l + 1] += offsets[l];
    perm.resize(n);
    std::vector<uint32_t> next(offsets.begin(), offsets.end() - 1);
    for (size_t i = 0; i < n; ++i)
        perm[next[c.lane[i]]++] = uint32_t(i);
    for (uint32_t l = 0; l < lanes; ++l) {
        auto first = perm.begin() + offsets[l], last = perm.begin() + offsets[l + 1];
        bool sorted = true;
        for (auto it = first; sorted && it != last && it + 1 != last; ++it)
            sorted = !before(c, *(it + 1), *it);
        if (!sorted)
            std::stable_sort(first, last, [&c](uint32_t a, uint32_t b) { return before(c, a, b); });
    }
}

template <typename T, typename F> bool fillColumn(RepeatedField<T>* out, size_t n, F&& value)
{
    out->Clear();
    out->Reserve(int(n));
    T* d = out->AddNAlreadyReserved(int(n)); // every element is written below: no zero fill
    T any = 0;
    for (size_t i = 0; i < n; ++i) {
        d[i] = value(i);
        any |= d[i];
    }
    if (!any)
        out->Clear(); // all-zero column: left out
    return any != 0;
}

template <typename T> void copyColumn(RepeatedField<T>* out, const std::vector<T>& v)
{
    fillColumn(out, v.size(), [&v](size_t i) { return v[i]; });
}
template <typename T, typename U> void copyColumn(RepeatedField<T>* out, const std::vector<U>& v)
{
    fillColumn(out, v.size(), [&v](size_t i) { return T(v[i]); });
}

// Scratch of writeCommon: previous end per lane and previous duration per name, stamped per block.
struct Predictors {
    std::vector<int64_t> laneEnd;
    std::vector<uint32_t> laneStamp;
    std::vector<uint64_t> nameDur;
    std::vector<uint32_t> nameStamp;
    uint32_t stamp = 0;
    void prepare(size_t lanes, size_t names)
    {
        if (laneEnd.size() < lanes) {
            laneEnd.resize(lanes);
            laneStamp.resize(lanes, 0);
        }
        if (nameDur.size() < names) {
            nameDur.resize(names);
            nameStamp.resize(names, 0);
        }
        if (++stamp == 0) {
            std::fill(laneStamp.begin(), laneStamp.end(), 0u);
            std::fill(nameStamp.begin(), nameStamp.end(), 0u);
            stamp = 1;
        }
    }
};

void writeCommon(const Common& c, int64_t base, pb::Columns* out, Predictors& p)
{
    const size_t n = c.size();
    out->mutable_lane()->Reserve(int(n));
    std::memcpy(out->mutable_lane()->AddNAlreadyReserved(int(n)), c.lane.data(), n * 4);
    uint32_t maxLane = 0, maxName = 0;
    for (size_t i = 0; i < n; ++i) {
        maxLane = std::max(maxLane, c.lane[i]);
        maxName = std::max(maxName, c.name[i]);
    }
    p.prepare(size_t(maxLane) + 1, size_t(maxName) + 1);
    fillColumn(out->mutable_start_gap(), n, [&](size_t i) {
        const uint32_t l = c.lane[i];
        const int64_t ref = p.laneStamp[l] == p.stamp ? p.laneEnd[l] : base;
        p.laneEnd[l] = c.start[i] + int64_t(c.dur[i]);
        p.laneStamp[l] = p.stamp;
        return c.start[i] - ref;
    });
    fillColumn(out->mutable_duration_delta(), n, [&](size_t i) {
        const uint32_t nm = c.name[i];
        const uint64_t prev = p.nameStamp[nm] == p.stamp ? p.nameDur[nm] : 0;
        p.nameDur[nm] = c.dur[i];
        p.nameStamp[nm] = p.stamp;
        return int64_t(c.dur[i] - prev);
    });
    copyColumn(out->mutable_name(), c.name);
    int64_t prevCorr = 0;
    fillColumn(out->mutable_correlation_delta(), n, [&](size_t i) {
        int64_t d = int64_t(c.corr[i]) - prevCorr;
        prevCorr = c.corr[i];
        return d;
    });
}

template <typename... V> void clearAll(V&... v)
{
    (v.clear(), ...);
}

} // namespace

struct ChunkEncoder::Impl {
    std::deque<std::string> stringStore; // stable addresses for the map's keys
    std::vector<std::string> strings;
    std::unordered_map<std::string_view, uint32_t> stringIds;
    size_t flushedStrings = 0;
    std::vector<pb::LaneDef> lanes;
    std::unordered_map<LaneKey, uint32_t, LaneKeyHash> laneIds;
    size_t flushedLanes = 0;
    std::vector<pb::LaunchConfig> configs;
    std::unordered_map<ConfigKey, uint32_t, ConfigHash> configIds;
    size_t flushedConfigs = 0;

    KernelCols kernels;
    MemopCols memops;
    ApiCols api;
    SyncCols syncs;
    NvtxCols nvtx;
    HostCols host;
    CollCols colls;
    StepCols steps;
    std::vector<pb::Counter> counters;
    std::vector<pb::GraphNode> graphNodes;
    uint64_t sequence = 0;
    ChunkStats stats;
    OverviewBuilder overview;
    bool keepOverview = false;
    void feedOverview();

    std::vector<uint32_t> perm;
    std::vector<uint32_t> offsets;
    std::vector<uint8_t> scratch;
    Predictors predictors;
    std::vector<uint64_t> laneCount; // by lane id, for stats
    std::vector<uint64_t> hostLaneCount; // by lane id, host events
    // Which earlier dictionary entries the pending events use (stamped per flush).
    std::vector<uint32_t> stringStamp, laneStamp, configStamp, usedIds;
    uint32_t useStamp = 0;

    // Sorts a block's columns in place; returns the permutation used (empty if already sorted).
    template <typename... V> void sortBlock(Common& c, V&... extra)
    {
        if (isSorted(c))
            return;
        sortPermutation(c, perm, offsets);
        permute(c.lane, perm, scratch);
        permute(c.start, perm, scratch);
        permute(c.dur, perm, scratch);
        permute(c.name, perm, scratch);
        permute(c.corr, perm, scratch);
        (permute(extra, perm, scratch), ...);
    }
    void account(const Common& c, std::vector<uint64_t>& counts, uint64_t& events);
    void writeKernels(pb::Chunk& out, int64_t base);
    void writeMemops(pb::Chunk& out, int64_t base);
    void writeApiSync(pb::Chunk& out, int64_t base);
    void writeNvtx(pb::Chunk& out, int64_t base);
    void writeHost(pb::Chunk& out, int64_t base);
    void writeCollectives(pb::Chunk& out, int64_t base);
    void writeSteps(pb::Chunk& out, int64_t base);
    void writeDictionaries(pb::Chunk& out);
    void writeReused(pb::Chunk& out);
    void finishStats();
};

ChunkEncoder::ChunkEncoder()
    : m_impl(new Impl)
{
}

ChunkEncoder::~ChunkEncoder()
{
    delete m_impl;
}

uint32_t ChunkEncoder::internString(std::string_view s)
{
    if (s.empty())
        return 0;
    auto it = m_impl->stringIds.find(s);
    if (it != m_impl->stringIds.end())
        return it->second;
    const std::string& stored = m_impl->stringStore.emplace_back(s);
    m_impl->strings.push_back(stored);
    uint32_t id = uint32_t(m_impl->strings.size());
    m_impl->stringIds.emplace(std::string_view(stored), id);
    return id;
}

uint32_t ChunkEncoder::lane(const pb::LaneDef& def)
{
    LaneKey key { uint32_t(def.kind()), def.rank(), def.host(), def.pid(), def.device(), def.stream() };
    auto it = m_impl->laneIds.find(key);
    if (it != m_impl->laneIds.end())
        return it->second;
    uint32_t id = uint32_t(m_impl->lanes.size());
    m_impl->lanes.push_back(def);
    m_impl->lanes.back().set_id(id);
    m_impl->laneIds.emplace(std::move(key), id);
    return id;
}

uint32_t ChunkEncoder::config(const pb::LaunchConfig& c)
{
    ConfigKey key = keyOf(c);
    auto it = m_impl->configIds.find(key);
    if (it != m_impl->configIds.end())
        return it->second;
    uint32_t id = uint32_t(m_impl->configs.size() + 1);
    m_impl->configs.push_back(c);
    m_impl->configs.back().set_id(id);
    m_impl->configIds.emplace(key, id);
    return id;
}

void ChunkEncoder::addKernel(uint32_t lane, int64_t start, uint64_t duration, uint32_t name, uint32_t correlation,
    uint32_t config, uint64_t graphId, uint64_t graphNodeId)
{
    auto& k = m_impl->kernels;
    k.c.push(lane, start, duration, name, correlation);
    k.config.push_back(config);
    k.graph.push_back(graphId);
    k.node.push_back(graphNodeId);
}

void ChunkEncoder::addMemop(uint32_t lane, int64_t start, uint64_t duration, pb::MemopKind kind, pb::CopyKind copyKind,
    uint64_t bytes, uint32_t flags, uint32_t correlation)
{
    auto& m = m_impl->memops;
    m.c.push(lane, start, duration, 0, correlation);
    m.kind.push_back(uint32_t(kind));
    m.copyKind.push_back(uint32_t(copyKind));
    m.bytes.push_back(bytes);
    m.flags.push_back(flags);
}

void ChunkEncoder::addApi(
    uint32_t lane, int64_t start, uint64_t duration, uint32_t name, uint32_t correlation, pb::ApiKind kind)
{
    m_impl->api.c.push(lane, start, duration, name, correlation);
    m_impl->api.apiKind.push_back(uint32_t(kind));
}

void ChunkEncoder::addSync(
    uint32_t lane, int64_t start, uint64_t duration, pb::SyncKind kind, uint64_t stream, uint32_t correlation)
{
    m_impl->syncs.c.push(lane, start, duration, 0, correlation);
    m_impl->syncs.kind.push_back(uint32_t(kind));
    m_impl->syncs.stream.push_back(stream);
}

void ChunkEncoder::addNvtx(
    uint32_t lane, int64_t start, uint64_t duration, uint32_t name, uint32_t depth, uint32_t domain)
{
    m_impl->nvtx.c.push(lane, start, duration, name, 0);
    m_impl->nvtx.depth.push_back(depth);
    m_impl->nvtx.domain.push_back(domain);
}

void ChunkEncoder::addHost(
    uint32_t lane, int64_t start, uint64_t duration, uint32_t name, uint32_t depth, pb::HostKind kind)
{
    m_impl->host.c.push(lane, start, duration, name, 0);
    m_impl->host.depth.push_back(depth);
    m_impl->host.kind.push_back(uint32_t(kind));
}

void ChunkEncoder::addCollective(uint32_t lane, int64_t start, uint64_t duration, uint32_t op, const Collective& c)
{
    auto& b = m_impl->colls;
    b.c.push(lane, start, duration, op, 0);
    b.bytes.push_back(c.bytes);
    b.datatype.push_back(c.datatype);
    b.algorithm.push_back(c.algorithm);
    b.protocol.push_back(c.protocol);
    b.sequence.push_back(c.sequence);
    b.comm.push_back(c.comm);
    b.channels.push_back(c.channels);
    b.root.push_back(c.root);
}

void ChunkEncoder::addStep(uint32_t rank, uint32_t index, int64_t start, uint64_t duration, pb::StepSource source)
{
    StepRecord r;
    r.rank = rank;
    r.index = index;
    r.start = start;
    r.duration = duration;
    r.source = uint32_t(source);
    addStep(r);
}

void ChunkEncoder::addStep(const StepRecord& r)
{
    auto& s = m_impl->steps;
    s.rank.push_back(r.rank);
    s.index.push_back(r.index);
    s.start.push_back(r.start);
    s.dur.push_back(r.duration);
    s.source.push_back(r.source);
    s.kind.push_back(r.kind);
    s.batch.push_back(r.batch);
    s.tokens.push_back(r.tokens);
    s.label.push_back(r.label);
}

void ChunkEncoder::addCounter(const pb::Counter& counter)
{
    m_impl->counters.push_back(counter);
}

void ChunkEncoder::addGraphNode(const pb::GraphNode& node)
{
    m_impl->graphNodes.push_back(node);
}

size_t ChunkEncoder::pendingEvents() const
{
    const Impl& d = *m_impl;
    return d.kernels.c.size() + d.memops.c.size() + d.api.c.size() + d.syncs.c.size() + d.nvtx.c.size()
        + d.host.c.size() + d.colls.c.size();
}

size_t ChunkEncoder::pendingBytes() const
{
    const Impl& d = *m_impl;
    return d.kernels.c.bytes() + d.kernels.c.size() * 20 + d.memops.c.bytes() + d.memops.c.size() * 20 + d.api.c.bytes()
        + d.api.c.size() * 4 + d.syncs.c.bytes() + d.syncs.c.size() * 12 + d.nvtx.c.bytes() + d.nvtx.c.size() * 8
        + d.host.c.bytes() + d.host.c.size() * 8 + d.colls.c.bytes() + d.colls.c.size() * 44 + d.steps.rank.size() * 44;
}

const std::vector<std::string>& ChunkEncoder::strings() const
{
    return m_impl->strings;
}
const std::vector<pb::LaneDef>& ChunkEncoder::lanes() const
{
    return m_impl->lanes;
}
const std::vector<pb::LaunchConfig>& ChunkEncoder::configs() const
{
    return m_impl->configs;
}
const ChunkEncoder::ChunkStats& ChunkEncoder::lastStats() const
{
    return m_impl->stats;
}

bool ChunkEncoder::flushedNothing(const pb::Chunk& chunk) const
{
    const ChunkStats& st = m_impl->stats;
    return st.events == 0 && st.hostEvents == 0 && st.steps == 0 && chunk.counters_size() == 0
        && chunk.graph_nodes_size() == 0 && chunk.strings_size() == 0 && chunk.lanes_size() == 0
        && chunk.configs_size() == 0;
}

void ChunkEncoder::Impl::account(const Common& c, std::vector<uint64_t>& counts, uint64_t& events)
{
    for (size_t i = 0; i < c.size(); ++i) {
        uint32_t l = c.lane[i];
        if (l >= counts.size())
            counts.resize(size_t(l) + 1, 0);
        ++counts[l];
        int64_t end = c.start[i] + int64_t(std::min<uint64_t>(c.dur[i], uint64_t(INT64_MAX / 2)));
        if (stats.events == 0 && stats.hostEvents == 0 && i == 0) {
            stats.minTime = c.start[i];
            stats.maxTime = end;
        }
        stats.minTime = std::min(stats.minTime, c.start[i]);
        stats.maxTime = std::max(stats.maxTime, end);
    }
    events += c.size();
}

void ChunkEncoder::Impl::writeKernels(pb::Chunk& out, int64_t base)
{
    auto& k = kernels;
    if (k.c.size() == 0)
        return;
    sortBlock(k.c, k.config, k.graph, k.node);
    auto* b = out.mutable_kernels();
    writeCommon(k.c, base, b->mutable_c(), predictors);
    copyColumn(b->mutable_config(), k.config);
    copyColumn(b->mutable_graph_id(), k.graph);
    int64_t prev = 0;
    fillColumn(b->mutable_graph_node_delta(), k.node.size(), [&](size_t i) {
        int64_t d = int64_t(k.node[i]) - prev;
        prev = int64_t(k.node[i]);
        return d;
    });
}

void ChunkEncoder::Impl::writeMemops(pb::Chunk& out, int64_t base)
{
    auto& m = memops;
    if (m.c.size() == 0)
        return;
    sortBlock(m.c, m.kind, m.copyKind, m.flags, m.bytes);
    auto* b = out.mutable_memops();
    writeCommon(m.c, base, b->mutable_c(), predictors);
    copyColumn(b->mutable_kind(), m.kind);
    copyColumn(b->mutable_copy_kind(), m.copyKind);
    copyColumn(b->mutable_bytes(), m.bytes);
    copyColumn(b->mutable_flags(), m.flags);
}

void ChunkEncoder::Impl::writeApiSync(pb::Chunk& out, int64_t base)
{
    if (api.c.size()) {
        sortBlock(api.c, api.apiKind);
        writeCommon(api.c, base, out.mutable_api()->mutable_c(), predictors);
        copyColumn(out.mutable_api()->mutable_api_kind(), api.apiKind);
    }
    if (syncs.c.size()) {
        sortBlock(syncs.c, syncs.kind, syncs.stream);
        writeCommon(syncs.c, base, out.mutable_syncs()->mutable_c(), predictors);
        copyColumn(out.mutable_syncs()->mutable_sync_kind(), syncs.kind);
        copyColumn(out.mutable_syncs()->mutable_stream(), syncs.stream);
    }
}

void ChunkEncoder::Impl::writeNvtx(pb::Chunk& out, int64_t base)
{
    if (nvtx.c.size() == 0)
        return;
    sortBlock(nvtx.c, nvtx.depth, nvtx.domain);
    writeCommon(nvtx.c, base, out.mutable_nvtx()->mutable_c(), predictors);
    copyColumn(out.mutable_nvtx()->mutable_depth(), nvtx.depth);
    copyColumn(out.mutable_nvtx()->mutable_domain(), nvtx.domain);
}

void ChunkEncoder::Impl::writeHost(pb::Chunk& out, int64_t base)
{
    if (host.c.size() == 0)
        return;
    sortBlock(host.c, host.depth, host.kind);
    writeCommon(host.c, base, out.mutable_host()->mutable_c(), predictors);
    copyColumn(out.mutable_host()->mutable_depth(), host.depth);
    copyColumn(out.mutable_host()->mutable_kind(), host.kind);
}

void ChunkEncoder::Impl::writeCollectives(pb::Chunk& out, int64_t base)
{
    auto& c = colls;
    if (c.c.size() == 0)
        return;
    sortBlock(c.c, c.bytes, c.sequence, c.comm, c.datatype, c.algorithm, c.protocol, c.channels, c.root);
    auto* b = out.mutable_collectives();
    writeCommon(c.c, base, b->mutable_c(), predictors);
    copyColumn(b->mutable_bytes(), c.bytes);
    copyColumn(b->mutable_datatype(), c.datatype);
    copyColumn(b->mutable_algorithm(), c.algorithm);
    copyColumn(b->mutable_protocol(), c.protocol);
    copyColumn(b->mutable_sequence(), c.sequence);
    copyColumn(b->mutable_comm(), c.comm);
    copyColumn(b->mutable_channels(), c.channels);
    copyColumn(b->mutable_root(), c.root);
}

void ChunkEncoder::Impl::writeSteps(pb::Chunk& out, int64_t base)
{
    auto& s = steps;
    if (s.rank.empty())
        return;
    auto* b = out.mutable_steps();
    b->mutable_rank()->Add(s.rank.begin(), s.rank.end()); // the count column: never left out
    copyColumn(b->mutable_index(), s.index);
    int64_t prev = base;
    fillColumn(b->mutable_start_delta(), s.start.size(), [&](size_t i) {
        int64_t d = s.start[i] - prev;
        prev = s.start[i];
        return d;
    });
    copyColumn(b->mutable_duration(), s.dur);
    copyColumn(b->mutable_source(), s.source);
    copyColumn(b->mutable_kind(), s.kind); // all unknown (a capture's steps): left out, as before the columns
    copyColumn(b->mutable_batch(), s.batch);
    copyColumn(b->mutable_tokens(), s.tokens);
    copyColumn(b->mutable_label(), s.label);
    stats.steps = s.rank.size();
}

void ChunkEncoder::Impl::writeReused(pb::Chunk& out)
{
    // Entries of earlier chunks that this chunk uses, so it decodes alone if one of them is lost.
    if (++useStamp == 0) { // wrapped: old stamps could match again
        for (auto* v : { &stringStamp, &laneStamp, &configStamp })
            std::fill(v->begin(), v->end(), 0u);
        useStamp = 1;
    }
    auto mark = [this](std::vector<uint32_t>& stamps, std::vector<uint32_t>& used, size_t limit, uint32_t id) {
        if (id >= limit)
            return; // defined by this chunk itself
        if (stamps.size() < limit)
            stamps.resize(limit, 0);
        if (stamps[id] != useStamp) {
            stamps[id] = useStamp;
            used.push_back(id);
        }
    };
    usedIds.clear();
    const size_t oldStrings = flushedStrings + 1; // string ids 1..flushedStrings
    for (const std::vector<uint32_t>* col : { &kernels.c.name, &api.c.name, &nvtx.c.name, &nvtx.domain, &host.c.name,
             &colls.c.name, &colls.datatype, &colls.algorithm, &colls.protocol, &steps.label })
        for (uint32_t id : *col)
            if (id != 0)
                mark(stringStamp, usedIds, oldStrings, id);
    std::sort(usedIds.begin(), usedIds.end());
    for (uint32_t id : usedIds) {
        out.add_reused_string_ids(id);
        out.add_reused_strings(strings[id - 1]);
    }
    usedIds.clear();
    for (const Common* c : { &kernels.c, &memops.c, &api.c, &syncs.c, &nvtx.c, &host.c, &colls.c })
        for (uint32_t l : c->lane)
            mark(laneStamp, usedIds, flushedLanes, l);
    std::sort(usedIds.begin(), usedIds.end());
    for (uint32_t id : usedIds)
        *out.add_lanes() = lanes[id];
    usedIds.clear();
    for (uint32_t id : kernels.config)
        if (id != 0)
            mark(configStamp, usedIds, flushedConfigs + 1, id);
    std::sort(usedIds.begin(), usedIds.end());
    for (uint32_t id : usedIds)
        *out.add_configs() = configs[id - 1];
}

void ChunkEncoder::Impl::writeDictionaries(pb::Chunk& out)
{
    writeReused(out);
    if (flushedStrings < strings.size()) {
        out.set_first_string_id(uint32_t(flushedStrings + 1));
        for (size_t i = flushedStrings; i < strings.size(); ++i)
            out.add_strings(strings[i]);
        flushedStrings = strings.size();
    }
    for (size_t i = flushedLanes; i < lanes.size(); ++i)
        *out.add_lanes() = lanes[i];
    flushedLanes = lanes.size();
    for (size_t i = flushedConfigs; i < configs.size(); ++i)
        *out.add_configs() = configs[i];
    flushedConfigs = configs.size();
}

void ChunkEncoder::Impl::finishStats()
{
    for (uint32_t l = 0; l < laneCount.size(); ++l) {
        if (!laneCount[l])
            continue;
        stats.laneIds.push_back(l);
        stats.laneCounts.push_back(laneCount[l]);
        if (l < lanes.size())
            stats.ranks.push_back(lanes[l].rank());
        laneCount[l] = 0;
    }
    for (uint32_t l = 0; l < hostLaneCount.size(); ++l) {
        if (!hostLaneCount[l])
            continue;
        stats.hostLaneIds.push_back(l);
        stats.hostLaneCounts.push_back(hostLaneCount[l]);
        if (l < lanes.size())
            stats.ranks.push_back(lanes[l].rank());
        hostLaneCount[l] = 0;
    }
    for (uint32_t r : steps.rank)
        stats.ranks.push_back(r);
    std::sort(stats.ranks.begin(), stats.ranks.end());
    stats.ranks.erase(std::unique(stats.ranks.begin(), stats.ranks.end()), stats.ranks.end());
}

// The chunk's events in the order ChunkDecoder::forEach visits them, so that a reader building the
// overview from the file's chunks gets the same nodes.
void ChunkEncoder::Impl::feedOverview()
{
    using K = OverviewBuilder::Kind;
    auto feed = [this](const Common& c, auto kindOf) {
        for (size_t i = 0; i < c.size(); ++i)
            overview.event(c.lane[i], kindOf(i), c.start[i], c.dur[i], c.name[i], 0);
    };
    feed(kernels.c, [](size_t) { return K::Kernel; });
    feed(memops.c, [this](size_t i) { return memops.kind[i] == uint32_t(pb::MEMOP_MEMSET) ? K::Memset : K::Memcpy; });
    feed(api.c, [](size_t) { return K::Api; });
    feed(syncs.c, [](size_t) { return K::Sync; });
    for (size_t i = 0; i < nvtx.c.size(); ++i)
        overview.event(nvtx.c.lane[i], K::Nvtx, nvtx.c.start[i], nvtx.c.dur[i], nvtx.c.name[i], 0, nvtx.depth[i]);
    for (size_t i = 0; i < host.c.size(); ++i)
        overview.event(
            host.c.lane[i], K::Host, host.c.start[i], host.c.dur[i], host.c.name[i], host.kind[i], host.depth[i]);
    feed(colls.c, [](size_t) { return K::Collective; });
    for (size_t i = 0; i < steps.rank.size(); ++i)
        overview.step({ steps.rank[i], steps.index[i], steps.start[i], steps.dur[i], steps.source[i], steps.kind[i],
            steps.batch[i], steps.tokens[i], steps.label[i] });
    for (const pb::Counter& c : counters)
        overview.counter(c);
    for (const pb::GraphNode& g : graphNodes)
        overview.graphNode(g);
}

const OverviewBuilder& ChunkEncoder::overview() const
{
    return m_impl->overview;
}

void ChunkEncoder::setKeepOverview(bool on)
{
    m_impl->keepOverview = on;
}

void ChunkEncoder::flush(pb::Chunk& out)
{
    Impl& d = *m_impl;
    out.Clear();
    d.stats = ChunkStats();
    out.set_sequence(d.sequence++);
    d.writeDictionaries(out);

    const Common* blocks[] = { &d.kernels.c, &d.memops.c, &d.api.c, &d.syncs.c, &d.nvtx.c, &d.host.c, &d.colls.c };
    int64_t base = std::numeric_limits<int64_t>::max();
    for (const Common* c : blocks)
        if (c->size())
            base = std::min(base, *std::min_element(c->start.begin(), c->start.end()));
    for (int64_t s : d.steps.start)
        base = std::min(base, s);
    if (base == std::numeric_limits<int64_t>::max())
        base = 0;
    out.set_base_time_ns(base);
    for (const Common* c : blocks)
        if (c != &d.host.c)
            d.account(*c, d.laneCount, d.stats.events);
    d.account(d.host.c, d.hostLaneCount, d.stats.hostEvents);
    d.stats.kernels = d.kernels.c.size();
    d.stats.memops = d.memops.c.size();
    d.stats.syncs = d.syncs.c.size();
    d.stats.collectives = d.colls.c.size();

    d.writeKernels(out, base);
    d.writeMemops(out, base);
    d.writeApiSync(out, base);
    d.writeNvtx(out, base);
    d.writeHost(out, base);
    d.writeCollectives(out, base);
    d.writeSteps(out, base);
    if (d.keepOverview) // after the writes: the blocks are in the order they were written in
        d.feedOverview();
    d.finishStats();
    for (auto& c : d.counters)
        *out.add_counters() = std::move(c);
    d.counters.clear();
    for (auto& g : d.graphNodes)
        *out.add_graph_nodes() = std::move(g);
    d.graphNodes.clear();
    // clear() keeps capacity: a steady stream of flushes allocates nothing.
    clearAll(d.kernels.c.lane, d.kernels.c.start, d.kernels.c.dur, d.kernels.c.name, d.kernels.c.corr, d.kernels.config,
        d.kernels.graph, d.kernels.node);
    clearAll(d.memops.c.lane, d.memops.c.start, d.memops.c.dur, d.memops.c.name, d.memops.c.corr, d.memops.kind,
        d.memops.copyKind, d.memops.flags, d.memops.bytes);
    clearAll(d.api.c.lane, d.api.c.start, d.api.c.dur, d.api.c.name, d.api.c.corr, d.api.apiKind);
    clearAll(
        d.syncs.c.lane, d.syncs.c.start, d.syncs.c.dur, d.syncs.c.name, d.syncs.c.corr, d.syncs.kind, d.syncs.stream);
    clearAll(d.nvtx.c.lane, d.nvtx.c.start, d.nvtx.c.dur, d.nvtx.c.name, d.nvtx.c.corr, d.nvtx.depth, d.nvtx.domain);
    clearAll(d.host.c.lane, d.host.c.start, d.host.c.dur, d.host.c.name, d.host.c.corr, d.host.depth, d.host.kind);
    clearAll(d.colls.c.lane, d.colls.c.start, d.colls.c.dur, d.colls.c.name, d.colls.c.corr, d.colls.bytes,
        d.colls.sequence, d.colls.comm, d.colls.datatype, d.colls.algorithm, d.colls.protocol, d.colls.channels,
        d.colls.root);
    clearAll(d.steps.rank, d.steps.index, d.steps.source, d.steps.start, d.steps.dur, d.steps.kind, d.steps.batch,
        d.steps.tokens, d.steps.label);
}

} // namespace gapscope::format
