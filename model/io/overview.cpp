// SPDX-License-Identifier: MIT
#include "model/io/overview.h"

#include "model/base/taskpool.h"
#include "model/format/chunkdecoder.h"
#include "model/format/chunkentry.h"
#include "model/format/overviewbuilder.h"
#include "model/format/tracereader.h"
#include "model/io/traceloader.h"
#include "model/io/tracemetaproto.h"

#include <algorithm>
#include <map>

namespace gapscope::model {

namespace {

using format::FrameType;
using format::OverviewBuilder;

// Feeds a chunk's events to the builder, in the decoder's order (the writer's order too).
class Feeder final : public format::ChunkDecoder::Visitor {
public:
    explicit Feeder(OverviewBuilder& b)
        : m_b(b)
    {
    }
    void kernel(uint32_t lane, int64_t start, uint64_t dur, uint32_t name, uint32_t, uint32_t, uint64_t,
        uint64_t) override
    {
        m_b.event(lane, OverviewBuilder::Kernel, start, dur, name);
    }
    void memop(uint32_t lane, int64_t start, uint64_t dur, pb::MemopKind kind, pb::CopyKind, uint64_t, uint32_t,
        uint32_t) override
    {
        m_b.event(lane, kind == pb::MEMOP_MEMSET ? OverviewBuilder::Memset : OverviewBuilder::Memcpy, start, dur, 0);
    }
    void api(uint32_t lane, int64_t start, uint64_t dur, uint32_t name, uint32_t, pb::ApiKind) override
    {
        m_b.event(lane, OverviewBuilder::Api, start, dur, name);
    }
    void sync(uint32_t lane, int64_t start, uint64_t dur, pb::SyncKind, uint64_t, uint32_t) override
    {
        m_b.event(lane, OverviewBuilder::Sync, start, dur, 0);
    }
    void nvtx(uint32_t lane, int64_t start, uint64_t dur, uint32_t name, uint32_t depth, uint32_t) override
    {
        m_b.event(lane, OverviewBuilder::Nvtx, start, dur, name, 0, depth);
    }
    void host(uint32_t lane, int64_t start, uint64_t dur, uint32_t name, uint32_t depth, pb::HostKind kind) override
    {
        m_b.event(lane, OverviewBuilder::Host, start, dur, name, uint32_t(kind), depth);
    }
    void collective(uint32_t lane, int64_t start, uint64_t dur, uint32_t op, uint64_t, uint32_t, uint32_t, uint32_t,
        uint64_t, uint64_t, uint32_t, uint32_t) override
    {
        m_b.event(lane, OverviewBuilder::Collective, start, dur, op);
    }
    void stepRecord(const format::StepRecord& s) override { m_b.step(s); }

private:
    OverviewBuilder& m_b;
};

template <typename T> T at(const google::protobuf::RepeatedField<T>& f, int i)
{
    return i < f.size() ? f.Get(i) : T(0);
}

} // namespace

uint64_t fileEvents(const format::TraceReader& reader)
{
    if (reader.hasIndex())
        return reader.index().total_events();
    uint64_t n = 0;
    for (const auto& f : reader.frames())
        if (FrameType(f.header.type) == FrameType::Chunk)
            n += f.header.events;
    return n;
}

Expected<TraceOverview> TraceOverview::open(const format::TraceReader& reader, const OverviewOptions& options)
{
    return open(reader, options, nullptr);
}

Expected<TraceOverview> TraceOverview::openRebuildingIndex(format::TraceReader& reader, const OverviewOptions& options)
{
    return open(reader, options, &reader);
}

Expected<TraceOverview> TraceOverview::open(
    const format::TraceReader& reader, const OverviewOptions& options, format::TraceReader* rebuild)
{
    const bool ownIndex = reader.hasIndex(); // the file's, not one rebuilt below
    if (ownIndex)
        rebuild = nullptr;
    TraceOverview o;
    format::ZstdDecompressor zstd;
    std::string raw;
    pb::FileHeader header;
    if (reader.hasIndex() && reader.index().has_header())
        header = reader.index().header();
    pb::Overview frame;
    bool haveFrame = false;
    for (const auto& f : reader.frames()) {
        const auto type = FrameType(f.header.type);
        if ((type == FrameType::Header || type == FrameType::HeaderUpdate) && !reader.hasIndex())
            (void)reader.readMessage(f, zstd, raw, header);
        if (type == FrameType::Overview && options.useFrame && reader.hasIndex())
            haveFrame = reader.readMessage(f, zstd, raw, frame).isOk();
    }
    o.m_header = fromProto(header);
    for (const auto& w : o.m_header.warnings)
        o.m_warnings.push_back(w);
    o.m_header.warnings.clear();
    for (const auto& w : reader.warnings())
        o.m_warnings.push_back(w);

    format::ChunkDecoder decoder;
    decoder.recoverLostDefinitions(true);
    if (reader.hasIndex())
        decoder.load(reader.index());
    uint64_t skipped = 0, lost = 0;
    if (!haveFrame) { // one pass over the chunks, in file order
        OverviewBuilder builder;
        Feeder feed(builder);
        pb::Index rebuilt; // an entry per frame, when the index is rebuilt
        format::ChunkEntryBuilder entry;
        // The frames are read (checksum, zstd, protobuf) a batch ahead on the pool while this walk,
        // which must go in file order (dictionaries, the pyramid's nodes), takes the batch before.
        struct Slot {
            format::ZstdDecompressor zstd;
            std::string raw;
            pb::Chunk chunk;
            Status status;
        };
        const std::vector<format::FrameInfo>& frames = reader.frames();
        const size_t batch = std::min<size_t>(8, 2 * size_t(TaskPool::shared().size()));
        std::vector<Slot> slots[2] = { std::vector<Slot>(batch), std::vector<Slot>(batch) };
        auto readBatch = [&](size_t first, std::vector<Slot>& into) {
            const size_t n = std::min(batch, frames.size() - std::min(first, frames.size()));
            TaskPool::shared().parallelFor(n, [&](size_t k) {
                const format::FrameInfo& f = frames[first + k];
                if (FrameType(f.header.type) == FrameType::Chunk)
                    into[k].status = reader.readMessage(f, into[k].zstd, into[k].raw, into[k].chunk);
            });
        };
        bool stopped = false;
        auto walkBatch = [&](size_t first, std::vector<Slot>& from) {
            for (size_t k = 0; k < batch && first + k < frames.size() && !stopped; ++k) {
                const format::FrameInfo& f = frames[first + k];
                const double done = double(first + k + 1) / double(frames.size());
                if (options.cancel.cancelled() || (options.progress && !options.progress(done))) {
                    stopped = true;
                    return;
                }
                if (FrameType(f.header.type) != FrameType::Chunk) {
                    if (rebuild)
                        format::ChunkEntryBuilder::frameEntry(f, *rebuilt.add_frames());
                    continue;
                }
                const pb::Chunk& chunk = from[k].chunk;
                Status s = from[k].status;
                if (s && !reader.hasIndex())
                    s = decoder.absorb(chunk);
                if (s)
                    s = decoder.validate(chunk);
                if (!s) {
                    o.m_warnings.push_back(
                        s.message() + "; chunk skipped (" + std::to_string(f.header.events) + " events lost)");
                    ++skipped;
                    lost += f.header.events;
                    continue;
                }
                for (const pb::Counter& c : chunk.counters())
                    builder.counter(c);
                for (const pb::GraphNode& g : chunk.graph_nodes())
                    builder.graphNode(g);
                decoder.forEach(chunk, feed);
                if (rebuild) {
                    decoder.forEach(chunk, entry);
                    entry.finish(f, chunk, decoder, *rebuilt.add_frames());
                    rebuilt.set_total_events(
                        rebuilt.total_events() + rebuilt.frames(rebuilt.frames_size() - 1).event_count());
                }
            }
        };
        readBatch(0, slots[0]);
        for (size_t first = 0, cur = 0; first < frames.size() && !stopped; first += batch, cur ^= 1)
            TaskPool::shared().parallelFor(2, [&](size_t i) {
                if (i == 0)
                    readBatch(first + batch, slots[cur ^ 1]);
                else
                    walkBatch(first, slots[cur]);
            }, 2);
        if (stopped)
            return Status::error(reader.name() + ": cancelled");
        builder.toProto(frame);
        if (rebuild && skipped == 0) { // the dictionaries are complete: every chunk decoded
            for (const auto& str : decoder.strings())
                rebuilt.add_strings(str);
            for (const auto& l : decoder.lanes())
                *rebuilt.add_lanes() = l;
            for (uint32_t id = 1; const pb::LaunchConfig* c = decoder.config(id); ++id)
                *rebuilt.add_configs() = *c;
            *rebuilt.mutable_header() = header;
            (void)rebuild->adoptIndex(std::move(rebuilt)); // refused: the caller reads the file whole
        }
        if (options.keepPassFrame && ownIndex && skipped == 0) // a whole, sound file (not one cut, or still being written): the frame it could hold (saveOverview)
            o.m_passFrame = frame.SerializeAsString();
    }
    o.m_fromFrame = haveFrame;
    for (const pb::Counter& c : frame.counters())
        o.m_header.counters.push_back(fromProto(c));
    if (frame.graph_nodes_size() > 0)
        o.m_graphNodes = std::make_shared<const std::vector<pb::GraphNode>>(
            frame.graph_nodes().begin(), frame.graph_nodes().end());
    addReadCounters(reader, skipped, lost, false, o.m_header);
    o.m_strings.assign(1, std::string());
    o.m_strings.insert(o.m_strings.end(), decoder.strings().begin(), decoder.strings().end());
    for (const auto& def : decoder.lanes()) {
        LaneData l;
        l.info = fromProto(def);
        o.m_lanes.push_back(std::move(l));
    }
    o.m_start = INT64_MAX;
    o.m_end = INT64_MIN;
    for (const pb::LaneOverview& lo : frame.lanes()) {
        if (lo.lane() >= o.m_lanes.size())
            continue; // a lane the dictionaries do not define: not drawable
        LaneData& l = o.m_lanes[lo.lane()];
        l.events = lo.events();
        l.maxDepth = lo.max_depth();
        for (int k = 0; k < 8; ++k) {
            l.kindCount[k] = at(lo.kind_count(), k);
            l.kindNs[k] = TimeNs(at(lo.kind_ns(), k));
        }
        for (int k = 0; k < int(kHostKinds); ++k)
            l.hostKindCount[k] = at(lo.host_kind_count(), k);
        std::vector<Node>& nodes = l.levels.emplace_back();
        nodes.resize(size_t(lo.node_start_delta_size()));
        const uint64_t per = lo.node_events() ? lo.node_events() : OverviewBuilder::kNodeEvents;
        TimeNs start = 0;
        for (int i = 0; i < lo.node_start_delta_size(); ++i) {
            Node& n = nodes[size_t(i)];
            start += lo.node_start_delta(i);
            n.start = start;
            n.end = start + TimeNs(at(lo.node_span(), i));
            n.busy = TimeNs(at(lo.node_busy(), i));
            n.longest = TimeNs(at(lo.node_longest(), i));
            n.longestName = at(lo.node_longest_name(), i);
            n.count = uint32_t(i + 1 < lo.node_start_delta_size() ? per : l.events - per * uint64_t(i));
            o.m_start = std::min(o.m_start, n.start);
            o.m_end = std::max(o.m_end, n.end);
        }
        o.m_events += l.events;
    }
    if (Status s = format::checkStepColumns(frame.steps(), o.m_strings.size() - 1); !s)
        o.m_warnings.push_back(reader.name() + ": overview: " + s.message() + "; its steps left out");
    else
        format::forEachStep(frame.steps(), 0, [&o](const format::StepRecord& r) {
            if (r.rank >= o.m_steps.size())
                o.m_steps.resize(size_t(r.rank) + 1);
            Step st = fromRecord(r, std::string(o.str(r.label)));
            o.m_start = std::min(o.m_start, st.start);
            o.m_end = std::max(o.m_end, st.end);
            o.m_steps[r.rank].push_back(std::move(st));
        });
    for (auto& steps : o.m_steps)
        std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.index < b.index; });
    if (o.m_start > o.m_end)
        o.m_start = o.m_end = 0;
    o.buildLevels();
    return o;
}

void TraceOverview::buildLevels()
{
    for (LaneData& l : m_lanes) {
        if (l.levels.empty())
            continue;
        std::sort(l.levels[0].begin(), l.levels[0].end(), [](const Node& a, const Node& b) { return a.start < b.start; });
        while (l.levels.back().size() > 1) {
            const std::vector<Node>& below = l.levels.back();
            std::vector<Node> up((below.size() + kFanout - 1) / kFanout);
            for (size_t i = 0; i < below.size(); ++i) {
                Node& u = up[i / kFanout];
                const Node& b = below[i];
                if (i % kFanout == 0) {
                    u = b;
                    continue;
                }
                u.end = std::max(u.end, b.end);
                u.busy += b.busy;
                u.count += b.count;
                if (b.longest > u.longest) {
                    u.longest = b.longest;
                    u.longestName = b.longestName;
                }
            }
            l.levels.push_back(std::move(up));
        }
    }
}

const std::vector<Step>& TraceOverview::steps(uint32_t rank) const
{
    static const std::vector<Step> kNone;
    return rank < m_steps.size() ? m_steps[rank] : kNone;
}

std::vector<uint32_t> TraceOverview::ranks() const
{
    std::vector<uint32_t> r;
    for (const LaneData& l : m_lanes)
        r.push_back(l.info.rank);
    for (uint32_t i = 0; i < m_steps.size(); ++i)
        if (!m_steps[i].empty())
            r.push_back(i);
    for (const RankInfo& ri : m_header.ranks)
        r.push_back(ri.rank);
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    return r;
}

uint32_t TraceOverview::stepCount() const
{
    uint32_t n = 0;
    for (const auto& s : m_steps)
        n = std::max(n, uint32_t(s.size()));
    return n;
}

StepSource TraceOverview::stepSource() const
{
    StepSource source = StepSource::Unknown;
    for (const auto& s : m_steps)
        if (!s.empty())
            source = s.front().source;
    return source;
}

TraceStats TraceOverview::stats() const
{
    TraceStats s;
    std::map<uint32_t, RankStats> ranks;
    for (uint32_t r : this->ranks())
        ranks[r].rank = r;
    for (const LaneData& l : m_lanes) {
        RankStats& rs = ranks[l.info.rank];
        rs.rank = l.info.rank;
        ++rs.lanes;
        rs.events += l.events;
        s.cpuThreads += l.info.kind == LaneKind::CpuThread && l.events ? 1 : 0;
        for (size_t k = 0; k < 8; ++k)
            s.byKind[k] += l.kindCount[k];
        for (size_t k = 0; k < kHostKinds; ++k)
            s.byHostKind[k] += l.hostKindCount[k];
        rs.kernels += l.kindCount[size_t(EventKind::Kernel)];
        rs.kernelTime += l.kindNs[size_t(EventKind::Kernel)];
    }
    for (auto& [r, rs] : ranks) {
        rs.steps = uint32_t(steps(r).size());
        if (!steps(r).empty())
            s.stepSource = steps(r).front().source;
        s.kernels += rs.kernels;
        s.kernelTime += rs.kernelTime;
        s.ranks.push_back(rs);
    }
    std::vector<const std::vector<Step>*> perRank;
    for (const auto& steps : m_steps)
        perRank.push_back(&steps);
    s.stepKinds = stepKindCounts(perRank);
    return s;
}

void TraceOverview::fold(
    LaneId lane, TimeNs t0, TimeNs t1, double nsPerPixel, double minPixels, std::vector<Item>& out) const
{
    out.clear();
    if (lane >= m_lanes.size() || m_lanes[lane].levels.empty())
        return;
    const auto& levels = m_lanes[lane].levels;
    const TimeNs q = std::max<TimeNs>(1, TimeNs(nsPerPixel * minPixels));
    // The coarsest level whose nodes are, on average, well narrower than the fold width.
    size_t level = 0;
    const TimeNs span = std::max<TimeNs>(1, m_end - m_start);
    while (level + 1 < levels.size() && span / TimeNs(levels[level + 1].size()) < q / 4)
        ++level;
    const std::vector<Node>& nodes = levels[level];
    // Nodes are sorted by start; one may reach far (a long event): start a node span early enough.
    auto it = std::lower_bound(nodes.begin(), nodes.end(), t0, [](const Node& n, TimeNs t) { return n.start < t; });
    size_t i = size_t(it - nodes.begin());
    while (i > 0 && nodes[i - 1].end > t0)
        --i;
    Item run;
    bool open = false;
    for (; i < nodes.size() && nodes[i].start < t1; ++i) {
        const Node& n = nodes[i];
        if (n.end <= t0)
            continue;
        const bool narrow = n.end - n.start < q;
        if (open && narrow && n.start < run.end + q) {
            run.end = std::max(run.end, n.end);
            run.busy += n.busy;
            run.count += n.count;
            if (n.longest > run.longest) {
                run.longest = n.longest;
                run.longestName = n.longestName;
            }
            continue;
        }
        if (open)
            out.push_back(run);
        run = Item { n.start, n.end, n.busy, n.count, n.longest, n.longestName };
        open = true;
    }
    if (open)
        out.push_back(run);
}

uint64_t TraceOverview::eventsIn(TimeNs t0, TimeNs t1, LaneId lane) const
{
    uint64_t n = 0;
    for (LaneId l = lane == kNoLane ? 0 : lane; l < m_lanes.size() && (lane == kNoLane || l == lane); ++l) {
        const auto& levels = m_lanes[l].levels;
        if (levels.empty())
            continue;
        // Level-0 nodes in the range (sorted by start; one that began earlier may still reach into it).
        const std::vector<Node>& nodes = levels[0];
        auto it = std::lower_bound(nodes.begin(), nodes.end(), t0, [](const Node& x, TimeNs t) { return x.start < t; });
        size_t i = size_t(it - nodes.begin());
        while (i > 0 && nodes[i - 1].end > t0)
            --i;
        for (; i < nodes.size() && nodes[i].start < t1; ++i)
            if (nodes[i].end > t0)
                n += nodes[i].count;
    }
    return n;
}

size_t TraceOverview::memoryBytes() const
{
    size_t n = sizeof(*this) + m_lanes.capacity() * sizeof(LaneData);
    for (const LaneData& l : m_lanes)
        for (const auto& v : l.levels)
            n += v.capacity() * sizeof(Node);
    for (const auto& s : m_strings)
        n += s.capacity() + sizeof(std::string);
    if (m_graphNodes)
        for (const pb::GraphNode& g : *m_graphNodes)
            n += g.SpaceUsedLong();
    for (const auto& s : m_steps)
        n += s.capacity() * sizeof(Step);
    return n;
}

} // namespace gapscope::model
