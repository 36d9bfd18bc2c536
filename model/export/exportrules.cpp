// SPDX-License-Identifier: MIT
#include "model/export/exportrules.h"

#include <algorithm>

namespace gapscope::model {

std::pair<size_t, size_t> exportedRange(const LaneEvents& events, TimeNs from, TimeNs to)
{
    return events.overlapping(from, to);
}

bool stepWindow(const Trace& trace, int64_t first, int64_t last, TimeNs& from, TimeNs& to)
{
    from = INT64_MAX;
    to = INT64_MIN;
    for (uint32_t r : trace.ranks())
        for (const Step& s : trace.steps(r))
            if (int64_t(s.index) >= first && int64_t(s.index) <= last) {
                from = std::min(from, s.start);
                to = std::max(to, s.end);
            }
    return from < to;
}

std::string rankTitle(const Trace& trace, uint32_t rank)
{
    std::string title = "rank " + std::to_string(rank);
    const TraceHeader& h = trace.header();
    for (const RankInfo& r : h.ranks) {
        if (r.rank != rank)
            continue;
        if (!r.host.empty())
            title += " · " + r.host;
        std::string gpu;
        for (const GpuInfo& g : h.gpus)
            if (!r.gpuUuid.empty() && g.uuid == r.gpuUuid)
                gpu = g.name;
        title += " · GPU " + std::to_string(r.deviceIndex);
        if (!gpu.empty())
            title += " (" + gpu + ")";
        break;
    }
    return title;
}

std::string laneTitle(const LaneInfo& info)
{
    return (info.kind == LaneKind::GpuStream ? "GPU " : "") + info.name;
}

FixedName fixedNameOf(EventKind kind)
{
    switch (kind) {
    case EventKind::Memcpy:
        return FixedName::Memcpy;
    case EventKind::Memset:
        return FixedName::Memset;
    case EventKind::Sync:
        return FixedName::Synchronization;
    default:
        return FixedName::None;
    }
}

const char* fixedNameText(FixedName name)
{
    static const char* const kTexts[] = { "", "Memcpy", "Memset", "Synchronization" };
    static_assert(sizeof kTexts / sizeof kTexts[0] == size_t(FixedName::Count), "one text per FixedName");
    return kTexts[size_t(name)];
}

std::string_view exportedName(const Trace& trace, const Lane& lane, size_t index)
{
    const FixedName fixed = fixedNameOf(trace.kindOf(lane.id, index));
    return fixed == FixedName::None ? trace.str(lane.events.name(index)) : fixedNameText(fixed);
}

const char* argName(ArgKey key)
{
    static const char* const kNames[] = { "correlation", "grid", "block", "registers", "shared_memory", "graph_id",
        "graph_node_id", "bytes", "copy_kind", "sequence", "datatype", "algorithm", "protocol", "depth" };
    static_assert(sizeof kNames / sizeof kNames[0] == size_t(ArgKey::Count), "one name per ArgKey");
    return kNames[size_t(key)];
}

int visitEventArgs(const Trace& trace, const Lane& lane, size_t i, EventArgSink& sink)
{
    const LaneEvents& ev = lane.events;
    switch (trace.kindOf(lane.id, i)) {
    case EventKind::Kernel:
        if (const KernelConfig* c = trace.kernelConfig(lane.id, i)) {
            const auto config = uint32_t(c - trace.kernelConfigs().data());
            sink.uintArg(ArgKey::Correlation, ev.correlation(i));
            sink.dimArg(ArgKey::Grid, c->grid, config);
            sink.dimArg(ArgKey::Block, c->block, config);
            sink.uintArg(ArgKey::Registers, c->registers);
            sink.uintArg(ArgKey::SharedMemory, uint64_t(c->sharedStatic) + c->sharedDynamic);
            sink.uintArg(ArgKey::GraphId, c->graphId);
            sink.uintArg(ArgKey::GraphNodeId, c->graphNodeId);
            return 7;
        }
        return 0;
    case EventKind::Memcpy:
    case EventKind::Memset:
        if (const MemopInfo* m = trace.memop(lane.id, i)) {
            sink.uintArg(ArgKey::Correlation, ev.correlation(i));
            sink.uintArg(ArgKey::Bytes, m->bytes);
            sink.uintArg(ArgKey::CopyKind, uint64_t(m->copyKind));
            return 3;
        }
        return 0;
    case EventKind::Api:
    case EventKind::Sync:
        sink.uintArg(ArgKey::Correlation, ev.correlation(i));
        return 1;
    case EventKind::Collective:
        if (const CollectiveInfo* c = trace.collective(lane.id, i)) {
            sink.uintArg(ArgKey::Bytes, c->bytes);
            sink.uintArg(ArgKey::Sequence, c->sequence);
            sink.stringArg(ArgKey::Datatype, c->datatype);
            sink.stringArg(ArgKey::Algorithm, c->algorithm);
            sink.stringArg(ArgKey::Protocol, c->protocol);
            return 5;
        }
        return 0;
    case EventKind::Nvtx:
        sink.uintArg(ArgKey::Depth, trace.nvtxDepth(lane.id, i));
        return 1;
    case EventKind::Host:
        sink.uintArg(ArgKey::Depth, trace.hostDepth(lane.id, i));
        return 1;
    }
    return 0;
}

OverlapLayout::Place OverlapLayout::place(TimeNs start, TimeNs end)
{
    for (uint32_t k = 0; k < m_ends.size(); ++k)
        if (m_ends[k] <= start) {
            m_ends[k] = end;
            return Place { k, false, 0 };
        }
    if (m_ends.size() < kMaxTracks) {
        m_ends.push_back(end);
        return Place { uint32_t(m_ends.size() - 1), false, 0 };
    }
    const auto first = std::min_element(m_ends.begin(), m_ends.end());
    return Place { uint32_t(first - m_ends.begin()), true, *first };
}

std::string overlapTrackTitle(const LaneInfo& info, uint32_t track)
{
    return laneTitle(info) + " (overlapping " + std::to_string(track) + ")";
}

} // namespace gapscope::model
