// SPDX-License-Identifier: MIT
#include "model/import/traceassembler.h"

#include "model/import/clockaligner.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <unordered_map>

namespace gapscope::model::importer {

TraceAssembler::TraceAssembler(std::vector<StagedTrace> sources)
    : m_sources(std::move(sources))
{
}

std::vector<uint32_t> TraceAssembler::assignRanks(const std::vector<std::optional<uint32_t>>& recorded)
{
    std::set<uint32_t> taken;
    std::vector<uint32_t> ranks(recorded.size(), 0);
    std::vector<bool> placed(recorded.size(), false);
    for (size_t i = 0; i < recorded.size(); ++i)
        if (recorded[i] && taken.insert(*recorded[i]).second) {
            ranks[i] = *recorded[i];
            placed[i] = true;
        }
    uint32_t next = 0;
    for (size_t i = 0; i < recorded.size(); ++i) {
        if (placed[i])
            continue;
        while (taken.count(next))
            ++next;
        ranks[i] = next;
        taken.insert(next);
    }
    return ranks;
}

void TraceAssembler::assignRanks()
{
    std::vector<std::optional<uint32_t>> recorded;
    for (size_t s = 0; s < m_sources.size(); ++s)
        for (size_t i = 0; i < m_sources[s].processes().size(); ++i) {
            const auto p = static_cast<uint16_t>(i); // a StagedTrace has at most 65535 processes
            recorded.push_back(m_sources[s].processes()[p].rank);
            m_processes.push_back({ s, p, 0 });
        }
    const std::vector<uint32_t> ranks = assignRanks(recorded);
    for (size_t i = 0; i < m_processes.size(); ++i) {
        m_processes[i].rank = ranks[i];
        StagedTrace& src = m_sources[m_processes[i].source];
        if (recorded[i] && ranks[i] != *recorded[i])
            src.warnings.push_back(src.path() + ": rank " + std::to_string(*recorded[i])
                + " is already taken by another source; renumbered");
    }
}

uint32_t TraceAssembler::rankOf(size_t source, uint16_t process) const
{
    for (const auto& p : m_processes)
        if (p.source == source && p.process == process)
            return p.rank;
    return 0;
}

// Depth of NVTX-like and host ranges and sequence numbers of collectives need each lane in time order.
void TraceAssembler::prepareLanes(StagedTrace& s)
{
    std::vector<std::vector<uint64_t>> byLane(s.lanes().size());
    for (uint64_t i = 0; i < s.eventCount(); ++i) {
        const StagedEvent& e = s.event(i);
        if (e.kind == StagedKind::Range || e.kind == StagedKind::Host || e.kind == StagedKind::Collective)
            byLane[e.lane].push_back(i);
    }
    for (auto& idx : byLane) {
        std::stable_sort(idx.begin(), idx.end(), [&s](uint64_t a, uint64_t b) {
            const int64_t sa = s.event(a).start, sb = s.event(b).start;
            return sa != sb ? sa < sb : s.duration(a) > s.duration(b);
        });
        std::vector<int64_t> openEnds; // ends of the enclosing ranges
        std::unordered_map<uint64_t, uint64_t> sequence; // per communicator
        for (uint64_t i : idx) {
            StagedEvent& e = s.event(i);
            if (e.kind == StagedKind::Collective) {
                CollectiveInfo& c = s.collectiveAt(e.aux);
                c.sequence = sequence[c.comm]++;
                continue;
            }
            while (!openEnds.empty() && openEnds.back() <= e.start)
                openEnds.pop_back();
            e.aux = static_cast<uint32_t>(openEnds.size());
            openEnds.push_back(addTimes(e.start, s.duration(i)));
        }
        std::vector<uint64_t>().swap(idx);
    }
}

void TraceAssembler::feed(size_t si, TraceBuilder& b)
{
    StagedTrace& s = m_sources[si];
    const int64_t offset = m_offsets[si];
    std::vector<StringId> strings(s.strings().size(), UINT32_MAX);
    auto str = [&](uint32_t local) {
        StringId& g = strings[local];
        if (g == UINT32_MAX)
            g = b.intern(s.strings().str(local));
        return g;
    };
    std::vector<LaneId> lanes;
    for (const StagedLane& l : s.lanes()) {
        LaneInfo info = l.info;
        info.rank = rankOf(si, l.process);
        info.pid = l.ownPid ? l.ownPid : s.processes()[l.process].pid;
        info.host = s.processes()[l.process].host;
        lanes.push_back(b.lane(info));
    }
    for (uint64_t i = 0; i < s.eventCount(); ++i) {
        if (i % StagedTrace::kBlockEvents == 0)
            s.releaseBefore(i);
        const StagedEvent& e = s.event(i);
        const LaneId lane = lanes[e.lane];
        const int64_t start = addTimes(e.start, offset);
        const int64_t dur = e.duration == StagedTrace::kLongDuration ? s.duration(i) : e.duration;
        switch (e.kind) {
        case StagedKind::Kernel:
            b.addKernel(lane, start, dur, str(e.name), e.correlation, s.configs()[e.aux]);
            break;
        case StagedKind::Memcpy:
        case StagedKind::Memset:
            b.addMemop(lane, start, dur, s.memop(e.aux), e.correlation);
            break;
        case StagedKind::Api:
            b.addApi(lane, start, dur, str(e.name), e.correlation, static_cast<ApiKind>(e.aux));
            break;
        case StagedKind::Sync:
            b.addSync(lane, start, dur, s.sync(e.aux), e.correlation);
            break;
        case StagedKind::Range:
            b.addNvtx(lane, start, dur, str(e.name), e.aux);
            break;
        case StagedKind::Host:
            b.addHost(lane, start, dur, str(e.name), static_cast<HostKind>(e.flags), e.aux);
            break;
        case StagedKind::Collective: {
            CollectiveInfo c = s.collective(e.aux);
            c.datatype = c.datatype ? str(c.datatype) : 0;
            c.algorithm = c.algorithm ? str(c.algorithm) : 0;
            c.protocol = c.protocol ? str(c.protocol) : 0;
            b.addCollective(lane, start, dur, str(e.name), c);
            break;
        }
        }
    }
    s.releaseBefore(s.eventCount() + StagedTrace::kBlockEvents);
    for (const StagedTrace::StagedStep& st : s.steps) {
        Step step = st.step;
        step.start = addTimes(step.start, offset);
        step.end = addTimes(step.end, offset);
        b.addStep(rankOf(si, st.process), step);
    }
    for (StagedTrace::StagedGraphNode& g : s.graphNodes) {
        g.node.rank = rankOf(si, g.process);
        for (StringId& r : g.node.ranges)
            r = str(r);
        if (g.node.api)
            g.node.api = str(g.node.api);
        b.addGraphNode(std::move(g.node));
    }
    std::vector<StagedTrace::StagedGraphNode>().swap(s.graphNodes);
}

Trace TraceAssembler::assemble()
{
    assignRanks();
    auto clocks = ClockAligner::align(m_sources);
    m_offsets = clocks.offsets;
    m_alignment = clocks.method;
    TraceBuilder builder;
    for (auto& w : clocks.warnings)
        builder.addWarning(w);
    fillHeader(builder);
    for (size_t i = 0; i < m_sources.size(); ++i) {
        prepareLanes(m_sources[i]);
        feed(i, builder);
        for (auto& w : m_sources[i].warnings)
            builder.addWarning(w);
    }
    return builder.finish();
}

void TraceAssembler::fillHeader(TraceBuilder& b)
{
    TraceHeader& h = b.header();
    std::set<std::string> kinds;
    for (const auto& s : m_sources)
        kinds.insert(s.source());
    std::string source;
    for (const auto& k : kinds)
        source += (source.empty() ? "" : "+") + k;
    h.source = source;
    std::set<std::string> tools; // the recording tools, as the sources name them
    for (const auto& s : m_sources)
        if (auto t = s.metadata.find("tool"); t != s.metadata.end())
            tools.insert(t->second);
    std::string tool;
    for (const auto& t : tools)
        tool += (tool.empty() ? "" : " + ") + t;
    h.toolVersion = tool;
    h.clockDomain = "import:" + source;
    h.createdUnixNs
        = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
              .count();
    h.metadata["import.clock_alignment"] = m_alignment;
    std::set<std::pair<std::string, uint32_t>> gpusSeen;
    for (const ProcessRef& ref : m_processes) {
        const StagedTrace& s = m_sources[ref.source];
        const StagedProcess& p = s.processes()[ref.process];
        RankInfo& r = h.ranks.emplace_back();
        r.rank = ref.rank;
        r.worldSize = p.worldSize ? p.worldSize : static_cast<uint32_t>(m_processes.size());
        r.pid = p.pid;
        r.host = p.host;
        r.deviceIndex = p.device.value_or(0);
        r.processName = p.name;
        r.versions = p.versions;
        r.hasVersions = true;
        const std::string prefix = m_sources.size() > 1 ? "rank" + std::to_string(ref.rank) + "." : "";
        h.metadata[prefix + "import.path"] = s.path();
        if (m_offsets[ref.source] != s.timeOffsetNs)
            h.metadata[prefix + "import.clock_shift_ns"] = std::to_string(m_offsets[ref.source] - s.timeOffsetNs);
        for (const auto& g : s.gpus)
            if (gpusSeen.insert({ p.host, g.deviceIndex }).second)
                h.gpus.push_back(g);
        if (ref.process == 0) {
            for (const auto& [k, v] : s.metadata)
                h.metadata[prefix + k] = v;
            for (const auto& [k, c] : s.counters()) {
                Counter& out = h.counters.emplace_back(c);
                out.rank = s.processes().size() == 1 ? int32_t(ref.rank) : -1;
            }
        }
    }
}

} // namespace gapscope::model::importer
