// SPDX-License-Identifier: MIT
#include "model/format/chunkdecoder.h"

#include "model/format/columnwalker.h"

#include <google/protobuf/unknown_field_set.h>

namespace gapscope::format {
namespace {

template <typename R> bool sizeOk(const R& column, size_t n)
{
    return column.size() == 0 || size_t(column.size()) == n;
}

template <typename R> uint64_t maxOf(const R& column)
{
    uint64_t m = 0;
    for (auto v : column)
        m = v > m ? uint64_t(v) : m;
    return m;
}

bool unknown(const google::protobuf::Message& m)
{
    return !m.GetReflection()->GetUnknownFields(m).empty();
}

template <typename R> uint64_t at(const R& column, int i)
{
    return column.size() ? uint64_t(column.Get(i)) : 0;
}

} // namespace

void ChunkDecoder::reset()
{
    m_strings.clear();
    m_lanes.clear();
    m_configs.clear();
    m_notes.clear();
    m_laneLost.clear();
    m_lost = LostDefinitions {};
    m_lostNote = SIZE_MAX;
}

void ChunkDecoder::padStrings(size_t count, bool note)
{
    if (m_strings.size() >= count)
        return;
    if (note)
        m_notes.push_back("string ids " + std::to_string(m_strings.size() + 1) + ".." + std::to_string(count)
            + " are missing (an earlier chunk was lost)");
    while (m_strings.size() < count)
        m_strings.push_back("<string " + std::to_string(m_strings.size() + 1) + " lost>");
}

Status ChunkDecoder::absorb(const pb::Chunk& chunk)
{
    if (chunk.reused_string_ids_size() != chunk.reused_strings_size())
        return Status::error("chunk's reused string ids and strings differ in number");
    for (int i = 0; i < chunk.reused_string_ids_size(); ++i) {
        const uint32_t id = chunk.reused_string_ids(i);
        if (id == 0 || id > m_strings.size() + 1000000)
            return Status::error("reused string id " + std::to_string(id) + " is out of range");
        if (id > m_strings.size()) {
            padStrings(id - 1, false); // the ids between are not used by this chunk
            m_strings.push_back(chunk.reused_strings(i));
        } else {
            m_strings[id - 1] = chunk.reused_strings(i);
        }
    }
    if (chunk.strings_size()) {
        uint64_t first = chunk.first_string_id();
        if (first == 0)
            return Status::error("chunk strings start at id 0 (ids start at 1)");
        if (first > m_strings.size() + 1000000)
            return Status::error("string id " + std::to_string(first) + " is absurd");
        padStrings(size_t(first - 1), true);
        size_t id = size_t(first);
        for (const auto& s : chunk.strings()) {
            if (id <= m_strings.size())
                m_strings[id - 1] = s; // a repeated definition replaces (placeholders in practice)
            else
                m_strings.push_back(s);
            ++id;
        }
    }
    for (const auto& l : chunk.lanes()) {
        if (l.id() > m_lanes.size() + 100000)
            return Status::error("lane id " + std::to_string(l.id()) + " is absurd");
        while (m_lanes.size() < l.id()) {
            pb::LaneDef lost;
            lost.set_id(uint32_t(m_lanes.size()));
            lost.set_name("<lane lost>");
            m_lanes.push_back(lost);
            m_laneLost.resize(m_lanes.size(), 0);
            m_laneLost.back() = 1;
        }
        if (l.id() < m_lanes.size())
            m_lanes[l.id()] = l;
        else
            m_lanes.push_back(l);
        m_laneLost.resize(m_lanes.size(), 0);
        m_laneLost[l.id()] = 0;
    }
    for (const auto& c : chunk.configs()) {
        if (c.id() == 0 || c.id() > m_configs.size() + 1000000)
            return Status::error("launch config id " + std::to_string(c.id()) + " is out of range");
        if (c.id() > m_configs.size())
            m_configs.resize(c.id());
        m_configs[c.id() - 1] = c;
    }
    if (m_recoverLost)
        defineLost(chunk);
    return Status::ok();
}

void ChunkDecoder::defineLost(const pb::Chunk& ch)
{
    const LostDefinitions before = m_lost;
    struct B {
        const pb::Columns& c;
        pb::LaneKind kind;
        bool names;
    };
    const B blocks[] = { { ch.kernels().c(), pb::LANE_GPU_STREAM, true },
        { ch.memops().c(), pb::LANE_GPU_STREAM, false }, { ch.api().c(), pb::LANE_CPU_API, true },
        { ch.syncs().c(), pb::LANE_CPU_API, false }, { ch.nvtx().c(), pb::LANE_NVTX, true },
        { ch.host().c(), pb::LANE_CPU_THREAD, true }, { ch.collectives().c(), pb::LANE_COLLECTIVE, true } };
    const size_t laneLimit = m_lanes.size() + 100000; // beyond: absurd, left to validate()
    for (const B& b : blocks) {
        for (uint32_t id : b.c.lane()) {
            if (id >= laneLimit || (id < m_lanes.size() && !m_laneLost[id]))
                continue;
            if (id >= m_lanes.size()) {
                const size_t from = m_lanes.size();
                m_lanes.resize(size_t(id) + 1);
                m_laneLost.resize(m_lanes.size(), 1);
                for (size_t i = from; i < m_lanes.size(); ++i) {
                    m_lanes[i].set_id(uint32_t(i));
                    m_lanes[i].set_name("<lane lost>");
                }
            }
            pb::LaneDef& l = m_lanes[id];
            if (l.kind() != pb::LANE_UNKNOWN)
                continue; // already given its kind by an earlier chunk's events
            l.set_kind(b.kind);
            l.set_rank(ch.source_rank() != 0 ? ch.source_rank() : kLostRank);
            l.set_stream(id); // lost lanes stay apart: one per id
            l.set_name("<lane " + std::to_string(id) + ": definition lost>");
            ++m_lost.lanes;
        }
        if (b.names && blockSize(b.c)) {
            const size_t maxName = maxOf(b.c.name());
            if (maxName > m_strings.size() && maxName <= m_strings.size() + 1000000) {
                m_lost.strings += maxName - m_strings.size();
                padStrings(maxName, false);
            }
        }
    }
    // String ids outside the name columns: collectives' datatype, algorithm and protocol, NVTX
    // domains, step labels.
    const auto& co = ch.collectives();
    const size_t maxOther = std::max({ maxOf(co.datatype()), maxOf(co.algorithm()), maxOf(co.protocol()),
        maxOf(ch.nvtx().domain()), maxOf(ch.steps().label()) });
    if (maxOther > m_strings.size() && maxOther <= m_strings.size() + 1000000) {
        m_lost.strings += maxOther - m_strings.size();
        padStrings(maxOther, false);
    }
    const size_t maxConfig = maxOf(ch.kernels().config());
    if (maxConfig > m_configs.size() && maxConfig <= m_configs.size() + 1000000) {
        const size_t from = m_configs.size();
        m_configs.resize(maxConfig);
        for (size_t i = from; i < maxConfig; ++i)
            m_configs[i].set_id(uint32_t(i + 1));
        m_lost.configs += maxConfig - from;
    }
    if (m_lost.total() != before.total())
        noteLost();
}

void ChunkDecoder::noteLost()
{
    std::string n = "definitions lost with an earlier chunk: " + std::to_string(m_lost.lanes) + " lanes, "
        + std::to_string(m_lost.strings) + " names, " + std::to_string(m_lost.configs)
        + " launch configs; the events that use them are kept, on lanes marked \"definition lost\" (of rank "
        + std::to_string(kLostRank) + " where the chunk does not name its rank) and with names \"<string N lost>\"";
    if (m_lostNote < m_notes.size())
        m_notes[m_lostNote] = std::move(n);
    else {
        m_lostNote = m_notes.size();
        m_notes.push_back(std::move(n));
    }
}

void ChunkDecoder::load(const pb::Index& index)
{
    reset();
    m_strings.assign(index.strings().begin(), index.strings().end());
    // Ids are dense in an index this project wrote; an id far past the entries is damage, skipped
    // (the chunks that use it then fail alone) rather than sized for.
    const size_t maxLanes = size_t(index.lanes_size()) + 100000;
    const size_t maxConfigs = size_t(index.configs_size()) + 1000000;
    for (const auto& l : index.lanes()) {
        if (l.id() >= maxLanes)
            continue;
        if (l.id() >= m_lanes.size()) {
            m_lanes.resize(l.id() + 1);
            m_laneLost.resize(m_lanes.size(), 1);
        }
        m_lanes[l.id()] = l;
        m_laneLost[l.id()] = 0;
    }
    for (const auto& c : index.configs()) {
        if (c.id() == 0 || c.id() > maxConfigs)
            continue;
        if (c.id() > m_configs.size())
            m_configs.resize(c.id());
        m_configs[c.id() - 1] = c;
    }
}

const std::string& ChunkDecoder::string(uint32_t id) const
{
    static const std::string empty;
    return id >= 1 && id <= m_strings.size() ? m_strings[id - 1] : empty;
}

const pb::LaneDef* ChunkDecoder::laneDef(uint32_t id) const
{
    return id < m_lanes.size() ? &m_lanes[id] : nullptr;
}

const pb::LaunchConfig* ChunkDecoder::config(uint32_t id) const
{
    return id >= 1 && id <= m_configs.size() ? &m_configs[id - 1] : nullptr;
}

Status ChunkDecoder::checkColumns(const pb::Columns& c, size_t n, const char* block, bool names) const
{
    auto bad = [block](const std::string& what) { return Status::error(std::string(block) + ": " + what); };
    if (!sizeOk(c.start_delta(), n) || !sizeOk(c.start_gap(), n) || !sizeOk(c.duration(), n)
        || !sizeOk(c.duration_delta(), n) || !sizeOk(c.name(), n) || !sizeOk(c.correlation_delta(), n))
        return bad("column lengths differ (" + std::to_string(n) + " events)");
    if ((c.start_delta_size() && c.start_gap_size()) || (c.duration_size() && c.duration_delta_size()))
        return bad("both codings of a time column present");
    if (n && maxOf(c.lane()) >= m_lanes.size())
        return bad("lane id " + std::to_string(maxOf(c.lane())) + " not defined");
    if (names && maxOf(c.name()) > m_strings.size())
        return bad("string id " + std::to_string(maxOf(c.name())) + " not defined");
    if (!names && c.name_size())
        return bad("unexpected name column");
    return Status::ok();
}

Status ChunkDecoder::validate(const pb::Chunk& ch) const
{
    if (ch.base_time_ns() > kMaxAbsTime || ch.base_time_ns() < -kMaxAbsTime)
        return Status::error("chunk base time out of range");
    struct B {
        const pb::Columns& c;
        const char* name;
        bool names;
    };
    const B blocks[] = { { ch.kernels().c(), "kernels", true }, { ch.memops().c(), "memops", false },
        { ch.api().c(), "api", true }, { ch.syncs().c(), "syncs", false }, { ch.nvtx().c(), "nvtx", true },
        { ch.host().c(), "host", true }, { ch.collectives().c(), "collectives", true } };
    for (const B& b : blocks)
        if (Status s = checkColumns(b.c, blockSize(b.c), b.name, b.names); !s)
            return s;
    const auto& k = ch.kernels();
    const size_t nk = blockSize(k.c());
    if (!sizeOk(k.config(), nk) || !sizeOk(k.graph_id(), nk) || !sizeOk(k.graph_node_delta(), nk))
        return Status::error("kernels: column lengths differ");
    if (maxOf(k.config()) > m_configs.size())
        return Status::error("kernels: launch config id " + std::to_string(maxOf(k.config())) + " not defined");
    const auto& m = ch.memops();
    const size_t nm = blockSize(m.c());
    if (!sizeOk(m.kind(), nm) || !sizeOk(m.copy_kind(), nm) || !sizeOk(m.bytes(), nm) || !sizeOk(m.flags(), nm))
        return Status::error("memops: column lengths differ");
    if (!sizeOk(ch.api().api_kind(), blockSize(ch.api().c())))
        return Status::error("api: column lengths differ");
    const auto& s = ch.syncs();
    if (!sizeOk(s.sync_kind(), blockSize(s.c())) || !sizeOk(s.stream(), blockSize(s.c())))
        return Status::error("syncs: column lengths differ");
    const auto& nv = ch.nvtx();
    if (!sizeOk(nv.depth(), blockSize(nv.c())) || !sizeOk(nv.domain(), blockSize(nv.c()))
        || maxOf(nv.domain()) > m_strings.size())
        return Status::error("nvtx: bad depth/domain columns");
    if (!sizeOk(ch.host().depth(), blockSize(ch.host().c())) || !sizeOk(ch.host().kind(), blockSize(ch.host().c())))
        return Status::error("host: column lengths differ");
    const auto& co = ch.collectives();
    const size_t nc = blockSize(co.c());
    if (!sizeOk(co.bytes(), nc) || !sizeOk(co.datatype(), nc) || !sizeOk(co.algorithm(), nc)
        || !sizeOk(co.protocol(), nc) || !sizeOk(co.sequence(), nc) || !sizeOk(co.comm(), nc)
        || !sizeOk(co.channels(), nc) || !sizeOk(co.root(), nc))
        return Status::error("collectives: column lengths differ");
    if (std::max({ maxOf(co.datatype()), maxOf(co.algorithm()), maxOf(co.protocol()) }) > m_strings.size())
        return Status::error("collectives: string id not defined");
    return checkStepColumns(ch.steps(), m_strings.size());
}

bool ChunkDecoder::hasUnknownFields(const pb::Chunk& c)
{
    return unknown(c) || unknown(c.kernels()) || unknown(c.kernels().c()) || unknown(c.memops()) || unknown(c.api())
        || unknown(c.syncs()) || unknown(c.nvtx()) || unknown(c.host()) || unknown(c.collectives())
        || unknown(c.steps());
}

void ChunkDecoder::forEach(const pb::Chunk& ch, Visitor& v) const
{
    const int64_t base = ch.base_time_ns();
    ColumnWalker walker;
    auto walk = [&](const pb::Columns& c, auto&& f) {
        walker.walk(c, base, m_lanes.size(), m_strings.size(),
            [&f](int i, uint32_t l, int64_t s, int64_t d, uint32_t n, uint32_t corr) {
                f(i, l, s, uint64_t(d), n, corr);
            });
    };
    const auto& k = ch.kernels();
    int64_t node = 0;
    walk(k.c(), [&](int i, uint32_t l, int64_t s, uint64_t d, uint32_t n, uint32_t c) {
        node += int64_t(at(k.graph_node_delta(), i));
        v.kernel(l, s, d, n, c, uint32_t(at(k.config(), i)), at(k.graph_id(), i), uint64_t(node));
    });
    const auto& m = ch.memops();
    walk(m.c(), [&](int i, uint32_t l, int64_t s, uint64_t d, uint32_t, uint32_t c) {
        v.memop(l, s, d, pb::MemopKind(at(m.kind(), i)), pb::CopyKind(at(m.copy_kind(), i)), at(m.bytes(), i),
            uint32_t(at(m.flags(), i)), c);
    });
    walk(ch.api().c(), [&](int i, uint32_t l, int64_t s, uint64_t d, uint32_t n, uint32_t c) {
        v.api(l, s, d, n, c, pb::ApiKind(at(ch.api().api_kind(), i)));
    });
    const auto& sy = ch.syncs();
    walk(sy.c(), [&](int i, uint32_t l, int64_t s, uint64_t d, uint32_t, uint32_t c) {
        v.sync(l, s, d, pb::SyncKind(at(sy.sync_kind(), i)), at(sy.stream(), i), c);
    });
    const auto& nv = ch.nvtx();
    walk(nv.c(), [&](int i, uint32_t l, int64_t s, uint64_t d, uint32_t n, uint32_t) {
        v.nvtx(l, s, d, n, uint32_t(at(nv.depth(), i)), uint32_t(at(nv.domain(), i)));
    });
    const auto& ho = ch.host();
    walk(ho.c(), [&](int i, uint32_t l, int64_t s, uint64_t d, uint32_t n, uint32_t) {
        v.host(l, s, d, n, uint32_t(at(ho.depth(), i)), pb::HostKind(at(ho.kind(), i)));
    });
    const auto& co = ch.collectives();
    walk(co.c(), [&](int i, uint32_t l, int64_t s, uint64_t d, uint32_t n, uint32_t) {
        v.collective(l, s, d, n, at(co.bytes(), i), uint32_t(at(co.datatype(), i)), uint32_t(at(co.algorithm(), i)),
            uint32_t(at(co.protocol(), i)), at(co.sequence(), i), at(co.comm(), i), uint32_t(at(co.channels(), i)),
            uint32_t(at(co.root(), i)));
    });
    forEachStep(ch.steps(), base, [&v](const StepRecord& s) { v.stepRecord(s); });
}

} // namespace gapscope::format
