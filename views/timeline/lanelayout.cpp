// SPDX-License-Identifier: MIT
#include "views/timeline/lanelayout.h"

#include "model/analysis/kernelranges.h"

#include <algorithm>
#include <map>
#include <tuple>

using namespace gapscope::model;

namespace {

int kindOrder(LaneKind k)
{
    switch (k) {
    case LaneKind::GpuStream:
        return 0;
    case LaneKind::Collective:
        return 1;
    case LaneKind::Nvtx:
        return 2;
    case LaneKind::CpuThread:
    case LaneKind::CpuApi: // a thread's flame, then its CUDA API row (kindSub)
        return 3;
    default:
        return 4;
    }
}

int kindSub(LaneKind k)
{
    return k == LaneKind::CpuApi ? 1 : 0;
}

// A stream's replay-range lane (kernelranges.h) sits right under the stream it groups.
int kindOrder(const LaneInfo& info)
{
    if (isReplayRangeLane(info))
        return 0;
    return kindOrder(info.kind);
}

int kindSub(const LaneInfo& info)
{
    return isReplayRangeLane(info) ? 1 : kindSub(info.kind);
}

uint64_t sortStream(const LaneInfo& info)
{
    return isReplayRangeLane(info) ? replayRangeStream(info) : info.threadId();
}

// CPU API rows of a rank with CPU threads belong to the group (the launches of its flames).
bool visibleKind(const LaneInfo& info, const LaneLayoutOptions& o, bool rankHasThreads)
{
    if (isReplayRangeLane(info))
        return o.showReplayRanges;
    switch (info.kind) {
    case LaneKind::Nvtx:
        return o.showNvtx;
    case LaneKind::Collective:
        return o.showCollectives;
    case LaneKind::CpuApi:
        return o.showCpuApi || rankHasThreads;
    default:
        return true;
    }
}

} // namespace

QString LaneLayout::laneLabel(const LaneInfo& info)
{
    const QString name = QString::fromStdString(info.name);
    switch (info.kind) {
    case LaneKind::GpuStream:
        return name.isEmpty() ? QStringLiteral("stream %1").arg(info.stream) : name;
    case LaneKind::Collective:
        return name.isEmpty() ? QStringLiteral("collectives") : name;
    case LaneKind::Nvtx:
        if (isReplayRangeLane(info))
            return QString::fromStdString(info.name);
        return name.isEmpty() ? QStringLiteral("NVTX (thread %1)").arg(info.stream) : QStringLiteral("NVTX ") + name;
    case LaneKind::CpuApi:
        return name.isEmpty() ? QStringLiteral("CUDA API (thread %1)").arg(info.stream) : QStringLiteral("API ") + name;
    case LaneKind::CpuThread:
        return name.isEmpty() ? (info.isSampledLane() ? QStringLiteral("thread %1 CPU samples")
                                                      : QStringLiteral("thread %1"))
                                      .arg(info.threadId())
                              : name;
    default:
        return name.isEmpty() ? QStringLiteral("lane") : name;
    }
}

void LaneLayout::addRow(LaneRow row)
{
    row.y = m_total;
    m_total += row.height;
    if (row.type == LaneRow::Type::Lane && row.lane != kNoLane) {
        if (m_rowOfLane.size() <= row.lane)
            m_rowOfLane.resize(row.lane + 1, -1);
        m_rowOfLane[row.lane] = int(m_rows.size());
    }
    m_rows.push_back(std::move(row));
}

void LaneLayout::build(
    const std::vector<LaneEntry>& lanes, const std::vector<QString>& rankLabels, const LaneLayoutOptions& options)
{
    m_options = options;
    m_rows.clear();
    m_rowOfLane.assign(lanes.size(), -1);
    m_total = 0;
    std::map<std::pair<std::string, uint32_t>, int> threads; // (host, rank) -> CPU thread lanes
    for (const LaneEntry& e : lanes)
        if (!e.empty && e.info.kind == LaneKind::CpuThread)
            ++threads[{ e.info.host, e.info.rank }];
    auto threadsOf = [&](const LaneInfo& info) {
        auto it = threads.find({ info.host, info.rank });
        return it == threads.end() ? 0 : it->second;
    };
    std::vector<LaneId> order;
    for (LaneId id = 0; id < lanes.size(); ++id) {
        if (!lanes[id].empty && visibleKind(lanes[id].info, options, threadsOf(lanes[id].info) > 0))
            order.push_back(id);
    }
    std::stable_sort(order.begin(), order.end(), [&](LaneId a, LaneId b) {
        const LaneInfo& x = lanes[a].info;
        const LaneInfo& y = lanes[b].info;
        // A thread's lanes together; its sampled call stacks right after its recorded ranges.
        return std::make_tuple(x.host, x.rank, kindOrder(x), x.device, sortStream(x), kindSub(x), x.isSampledLane())
            < std::make_tuple(y.host, y.rank, kindOrder(y), y.device, sortStream(y), kindSub(y), y.isSampledLane());
    });
    bool first = true;
    bool cpuGroup = false; // the current rank's "CPU threads" header is placed
    std::string host;
    uint32_t rank = 0;
    for (LaneId id : order) {
        const LaneInfo& info = lanes[id].info;
        const QString qhost = QString::fromStdString(info.host);
        if (first || info.host != host) {
            LaneRow h;
            h.type = LaneRow::Type::HostHeader;
            h.rank = info.rank;
            h.host = qhost;
            h.label = qhost.isEmpty() ? QStringLiteral("host") : qhost;
            h.height = options.hostHeaderHeight;
            addRow(h);
        }
        if (first || info.host != host || info.rank != rank) {
            LaneRow r;
            r.type = LaneRow::Type::RankHeader;
            r.rank = info.rank;
            r.host = qhost;
            r.label = info.rank < rankLabels.size() && !rankLabels[info.rank].isEmpty()
                ? rankLabels[info.rank]
                : QStringLiteral("rank %1").arg(info.rank);
            r.height = options.rankHeaderHeight;
            addRow(r);
            cpuGroup = false;
        }
        first = false;
        host = info.host;
        rank = info.rank;
        if (options.collapsedRanks.count(info.rank))
            continue;
        const int rankThreads = kindOrder(info.kind) == 3 ? threadsOf(info) : 0;
        if (rankThreads > 0 && !cpuGroup) {
            LaneRow g;
            g.type = LaneRow::Type::CpuHeader;
            g.rank = info.rank;
            g.host = qhost;
            g.label
                = rankThreads == 1 ? QStringLiteral("CPU thread") : QStringLiteral("CPU threads (%1)").arg(rankThreads);
            g.height = options.rowHeight;
            addRow(g);
            cpuGroup = true;
        }
        if (rankThreads > 0 && !options.openCpuRanks.count(info.rank))
            continue;
        LaneRow row;
        row.lane = id;
        row.kind = info.kind;
        row.rank = info.rank;
        row.host = qhost;
        row.label = laneLabel(info);
        row.height = options.rowHeight;
        if (nested(info.kind)) {
            const int cap = info.kind == LaneKind::Nvtx ? options.maxNvtxDepth : options.maxHostDepth;
            row.levels = std::clamp(int(lanes[id].levels), 1, std::max(1, cap));
            row.height = row.levels * options.nvtxRowHeight;
        }
        addRow(row);
    }
}

void LaneLayout::build(const Trace& trace, const LaneLayoutOptions& options)
{
    build(entriesOf(trace), rankLabelsOf(trace), options);
}

std::vector<LaneEntry> LaneLayout::entriesOf(const Trace& trace)
{
    std::vector<LaneEntry> out(trace.laneCount());
    for (LaneId id = 0; id < trace.laneCount(); ++id) {
        const Lane& lane = trace.lane(id);
        out[id].info = lane.info;
        out[id].empty = lane.events.empty();
        uint32_t levels = 0;
        if (lane.info.kind == LaneKind::Nvtx)
            for (size_t i = 0; i < lane.events.size(); ++i)
                levels = std::max(levels, trace.nvtxDepth(id, i) + 1);
        if (lane.info.kind == LaneKind::CpuThread)
            for (size_t i = 0; i < lane.events.size(); ++i)
                levels = std::max(levels, trace.hostDepth(id, i) + 1);
        out[id].levels = levels;
    }
    return out;
}

std::vector<LaneEntry> LaneLayout::entriesOf(const TraceOverview& overview)
{
    std::vector<LaneEntry> out(overview.lanes().size());
    for (size_t id = 0; id < out.size(); ++id) {
        const TraceOverview::LaneData& l = overview.lanes()[id];
        out[id].info = l.info;
        out[id].empty = l.events == 0;
        const bool nested = l.info.kind == LaneKind::Nvtx || l.info.kind == LaneKind::CpuThread;
        out[id].levels = nested && l.events ? l.maxDepth + 1 : 0;
    }
    return out;
}

std::vector<QString> LaneLayout::rankLabelsOf(const TraceHeader& header)
{
    std::vector<QString> labels;
    for (const auto& r : header.ranks) {
        if (labels.size() <= r.rank)
            labels.resize(r.rank + 1);
        QString gpu;
        for (const auto& g : header.gpus) {
            if (!r.gpuUuid.empty() && g.uuid == r.gpuUuid)
                gpu = QString::fromStdString(g.name);
        }
        labels[r.rank] = gpu.isEmpty()
            ? QStringLiteral("rank %1 · GPU %2").arg(r.rank).arg(r.deviceIndex)
            : QStringLiteral("rank %1 · GPU %2 (%3)").arg(r.rank).arg(r.deviceIndex).arg(gpu);
    }
    return labels;
}

int LaneLayout::rowAt(int y) const
{
    if (y < 0 || y >= m_total || m_rows.empty())
        return -1;
    auto it = std::upper_bound(m_rows.begin(), m_rows.end(), y, [](int v, const LaneRow& r) { return v < r.y; });
    return int(it - m_rows.begin()) - 1;
}

std::pair<int, int> LaneLayout::rowsIn(int y0, int y1) const
{
    if (m_rows.empty() || y1 <= 0 || y0 >= m_total || y1 <= y0)
        return { 0, 0 };
    const int first = std::max(0, rowAt(std::max(0, y0)));
    int last = rowAt(std::min(m_total - 1, y1 - 1));
    return { first, last + 1 };
}

int LaneLayout::rowOfLane(LaneId lane) const
{
    return lane < m_rowOfLane.size() ? m_rowOfLane[lane] : -1;
}

bool LaneLayout::nested(LaneKind kind)
{
    return kind == LaneKind::Nvtx || kind == LaneKind::CpuThread;
}

int LaneLayout::rowOfCpuGroup(uint32_t rank) const
{
    for (size_t i = 0; i < m_rows.size(); ++i) {
        if (m_rows[i].type == LaneRow::Type::CpuHeader && m_rows[i].rank == rank)
            return int(i);
    }
    return -1;
}

int LaneLayout::rowOfRank(uint32_t rank) const
{
    for (size_t i = 0; i < m_rows.size(); ++i) {
        if (m_rows[i].type == LaneRow::Type::RankHeader && m_rows[i].rank == rank)
            return int(i);
    }
    return -1;
}
