// SPDX-License-Identifier: MIT
#include "capture/agent/replaysource.h"

#include "capture/agent/mergeworker.h"
#include "capture/client/chunkremapper.h"
#include "capture/client/encodersink.h"
#include "capture/protocol/netutil.h"
#include "model/format/stats.h"
#include "model/format/stepcolumns.h"
#include "model/format/trace.pb.h"
#include "model/format/tracereader.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <queue>
#include <set>

namespace gapscope::capture {

namespace {
constexpr size_t kMaxPending = 1u << 19; // events held for pacing
constexpr uint32_t kBatchEvents = 16384; // events per replayed chunk at most
constexpr int64_t kBatchNs = 5 * 1000000; // and at least this often when events are due
constexpr int64_t kLookaheadNs = 200 * 1000000;

struct Pending {
    enum Kind : uint8_t { Kernel, Memop, Api, Sync, Nvtx, Host, Collective, Step };
    int64_t end, start;
    uint64_t dur, a, b, c;
    uint32_t lane, name, corr, x, y, z, w, v;
    Kind kind;
    bool operator>(const Pending& o) const { return end > o.end; }
};

// Keeps the step records of `chunk` whose index is at most last[rank] (ranks not in `last` keep all),
// so a replay cut at chunk granularity records no step beyond the ones asked for.
void dropStepsAfter(pb::Chunk& chunk, const std::map<uint32_t, uint32_t>& last)
{
    const pb::StepBlock in = chunk.steps();
    if (!format::checkStepColumns(in, SIZE_MAX))
        return; // the reader downstream reports the bad block as it is
    const bool described = in.kind_size() || in.batch_size() || in.tokens_size() || in.label_size();
    pb::StepBlock& out = *chunk.mutable_steps();
    out.Clear();
    int64_t prev = chunk.base_time_ns();
    format::forEachStep(in, chunk.base_time_ns(), [&](const format::StepRecord& s) {
        auto it = last.find(s.rank);
        if (it != last.end() && s.index > it->second)
            return;
        out.add_rank(s.rank);
        out.add_index(s.index);
        out.add_start_delta(s.start - prev);
        prev = s.start;
        out.add_duration(s.duration);
        out.add_source(s.source);
        if (described) { // kind, batch, tokens and label travel with their step
            out.add_kind(s.kind);
            out.add_batch(s.batch);
            out.add_tokens(s.tokens);
            out.add_label(s.label);
        }
    });
}

} // namespace

// Collects a chunk's events with replay times (scaled and shifted), and releases them by end time.
class ReplaySource::Pacer final : public EventSink {
public:
    Pacer(int64_t wallStart, int64_t fileStart, double speed)
        : m_wall(wallStart)
        , m_file(fileStart)
        , m_speed(speed)
    {
    }
    int64_t map(int64_t t) const { return m_wall + int64_t(double(t - m_file) / m_speed); }
    uint64_t scale(uint64_t d) const { return uint64_t(double(d) / m_speed); }
    size_t size() const { return m_heap.size(); }
    bool empty() const { return m_heap.empty(); }
    int64_t nextEnd() const { return m_heap.top().end; }
    void setCut(int64_t cut, uint32_t maxStep)
    {
        m_cut = cut;
        m_maxStep = maxStep;
    }
    int64_t cut() const { return m_cut; }
    // With `steps` > 0: once every rank has shown step first + steps - 1, the replay ends at the
    // latest end of those steps. Returns true when the cut is known.
    bool findCut(uint32_t steps)
    {
        if (m_cut != std::numeric_limits<int64_t>::max())
            return true;
        if (steps == 0 || m_steps.empty())
            return false;
        uint32_t first = std::numeric_limits<uint32_t>::max();
        for (const auto& [rank, v] : m_steps)
            for (const auto& st : v)
                first = std::min(first, st.first);
        const uint32_t last = first + steps - 1;
        int64_t cut = 0;
        for (const auto& [rank, v] : m_steps) {
            auto it = std::find_if(v.begin(), v.end(), [&](const auto& st) { return st.first == last; });
            if (it == v.end())
                return false;
            cut = std::max(cut, it->second);
        }
        setCut(cut + 1, last);
        return true;
    }
    std::vector<pb::Counter>& counters() { return m_counters; }
    std::vector<pb::GraphNode>& graphNodes() { return m_graphNodes; }

    void add(Pending p, int64_t start, uint64_t dur)
    {
        p.start = map(start);
        p.dur = scale(dur);
        p.end = p.start + int64_t(p.dur);
        if (p.start >= m_cut)
            return;
        m_heap.push(p);
    }
    void kernel(uint32_t lane, int64_t start, uint64_t d, uint32_t name, uint32_t corr, uint32_t config, uint64_t g,
        uint64_t n) override
    {
        add(make(Pending::Kernel, lane, name, corr, config, 0, 0, g, n, 0), start, d);
    }
    void memop(uint32_t lane, int64_t start, uint64_t d, pb::MemopKind k, pb::CopyKind ck, uint64_t bytes,
        uint32_t flags, uint32_t corr) override
    {
        add(make(Pending::Memop, lane, 0, corr, k, ck, flags, bytes, 0, 0), start, d);
    }
    void api(uint32_t lane, int64_t start, uint64_t d, uint32_t name, uint32_t corr, pb::ApiKind k) override
    {
        add(make(Pending::Api, lane, name, corr, k, 0, 0, 0, 0, 0), start, d);
    }
    void sync(uint32_t lane, int64_t start, uint64_t d, pb::SyncKind k, uint64_t stream, uint32_t corr) override
    {
        add(make(Pending::Sync, lane, 0, corr, k, 0, 0, stream, 0, 0), start, d);
    }
    void nvtx(uint32_t lane, int64_t start, uint64_t d, uint32_t name, uint32_t depth, uint32_t domain) override
    {
        add(make(Pending::Nvtx, lane, name, 0, depth, domain, 0, 0, 0, 0), start, d);
    }
    void host(uint32_t lane, int64_t start, uint64_t d, uint32_t name, uint32_t depth, pb::HostKind k) override
    {
        add(make(Pending::Host, lane, name, 0, depth, k, 0, 0, 0, 0), start, d);
    }
    void collective(
        uint32_t lane, int64_t start, uint64_t d, uint32_t op, const format::ChunkEncoder::Collective& c) override
    {
        Pending p
            = make(Pending::Collective, lane, op, 0, c.datatype, c.algorithm, c.protocol, c.bytes, c.sequence, c.comm);
        p.w = c.channels;
        p.v = c.root;
        add(p, start, d);
    }
    void step(const format::StepRecord& s) override
    {
        // rank in lane, index in name, source, kind, batch in x, y, z, tokens and label in w, v.
        Pending p = make(Pending::Step, s.rank, s.index, 0, s.source, s.kind, s.batch, 0, 0, 0);
        p.w = s.tokens;
        p.v = s.label;
        add(p, s.start, s.duration);
        m_steps[s.rank].push_back({ s.index, map(s.start) + int64_t(scale(s.duration)) });
    }
    void counter(const pb::Counter& c) override { m_counters.push_back(c); }
    void graphNode(const pb::GraphNode& g) override { m_graphNodes.push_back(g); }

    // Moves due events (end <= now) into the encoder; returns how many.
    size_t release(int64_t now, format::ChunkEncoder& enc, size_t max, uint32_t& steps)
    {
        size_t n = 0;
        while (!m_heap.empty() && m_heap.top().end <= now && n < max) {
            const Pending& p = m_heap.top();
            const bool cut = p.start >= m_cut || (p.kind == Pending::Step && p.name > m_maxStep);
            if (!cut) {
                emit(p, enc, steps);
                ++n;
            }
            m_heap.pop();
        }
        return n;
    }
    std::map<uint32_t, std::vector<std::pair<uint32_t, int64_t>>>& stepsSeen() { return m_steps; }

private:
    static Pending make(Pending::Kind k, uint32_t lane, uint32_t name, uint32_t corr, uint32_t x, uint32_t y,
        uint32_t z, uint64_t a, uint64_t b, uint64_t c)
    {
        Pending p {};
        p.kind = k;
        p.lane = lane;
        p.name = name;
        p.corr = corr;
        p.x = x;
        p.y = y;
        p.z = z;
        p.a = a;
        p.b = b;
        p.c = c;
        return p;
    }
    static void emit(const Pending& p, format::ChunkEncoder& enc, uint32_t& steps)
    {
        switch (p.kind) {
        case Pending::Kernel:
            enc.addKernel(p.lane, p.start, p.dur, p.name, p.corr, p.x, p.a, p.b);
            break;
        case Pending::Memop:
            enc.addMemop(p.lane, p.start, p.dur, pb::MemopKind(p.x), pb::CopyKind(p.y), p.a, p.z, p.corr);
            break;
        case Pending::Api:
            enc.addApi(p.lane, p.start, p.dur, p.name, p.corr, pb::ApiKind(p.x));
            break;
        case Pending::Sync:
            enc.addSync(p.lane, p.start, p.dur, pb::SyncKind(p.x), p.a, p.corr);
            break;
        case Pending::Nvtx:
            enc.addNvtx(p.lane, p.start, p.dur, p.name, p.x, p.y);
            break;
        case Pending::Host:
            enc.addHost(p.lane, p.start, p.dur, p.name, p.x, pb::HostKind(p.y));
            break;
        case Pending::Collective: {
            format::ChunkEncoder::Collective c;
            c.bytes = p.a;
            c.datatype = p.x;
            c.algorithm = p.y;
            c.protocol = p.z;
            c.sequence = p.b;
            c.comm = p.c;
            c.channels = p.w;
            c.root = p.v;
            enc.addCollective(p.lane, p.start, p.dur, p.name, c);
            break;
        }
        case Pending::Step: {
            format::StepRecord s;
            s.rank = p.lane;
            s.index = p.name;
            s.start = p.start;
            s.duration = p.dur;
            s.source = p.x;
            s.kind = p.y;
            s.batch = p.z;
            s.tokens = p.w;
            s.label = p.v;
            enc.addStep(s);
            ++steps;
            break;
        }
        }
    }

    int64_t m_wall, m_file;
    double m_speed;
    int64_t m_cut = std::numeric_limits<int64_t>::max();
    uint32_t m_maxStep = std::numeric_limits<uint32_t>::max();
    std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> m_heap;
    std::vector<pb::Counter> m_counters;
    std::vector<pb::GraphNode> m_graphNodes;
    std::map<uint32_t, std::vector<std::pair<uint32_t, int64_t>>> m_steps; // rank -> (index, replay end)
};

Expected<std::unique_ptr<ReplaySource>> ReplaySource::open(const std::string& path, double speed)
{
    if (!(speed >= 0))
        return Status::error("--speed must be >= 0 (0: as fast as possible)");
    auto reader = format::TraceReader::open(path);
    if (!reader)
        return reader.status();
    std::unique_ptr<ReplaySource> r(new ReplaySource);
    r->m_path = path;
    r->m_speed = speed;
    r->m_reader = std::move(*reader);
    const auto& rd = *r->m_reader;
    format::ZstdDecompressor z;
    std::string scratch;
    bool haveHeader = false;
    for (const auto& f : rd.frames())
        if (f.header.type == uint8_t(format::FrameType::Header)) {
            haveHeader = rd.readMessage(f, z, scratch, r->m_header).isOk();
            break;
        }
    if (rd.hasIndex() && rd.index().has_header()) {
        r->m_header = rd.index().header();
        haveHeader = true;
    }
    if (!haveHeader)
        return Status::error(path + ": no readable header frame");
    bool any = false;
    if (rd.hasIndex())
        for (const auto& e : rd.index().frames())
            if (e.type() == uint32_t(format::FrameType::Chunk) && e.event_count() > 0) {
                r->m_fileStart = any ? std::min(r->m_fileStart, e.min_time_ns()) : e.min_time_ns();
                any = true;
            }
    if (!any && r->m_header.start_ns() != 0)
        r->m_fileStart = r->m_header.start_ns();
    return r;
}

ReplaySource::~ReplaySource()
{
    stop();
}

std::vector<RankRecord> ReplaySource::ranks() const
{
    std::vector<RankRecord> out;
    for (const auto& r : m_header.ranks()) {
        RankRecord rec;
        rec.rank = r.rank();
        rec.state = "replay";
        rec.reg.set_rank(int32_t(r.rank()));
        rec.reg.set_world_size(r.world_size());
        rec.reg.set_pid(r.pid());
        rec.reg.set_host(r.host());
        rec.reg.set_process_name(r.process_name());
        *rec.reg.mutable_versions() = r.versions();
        rec.reg.set_other_cupti_client(r.other_cupti_client());
        for (const auto& g : m_header.gpus())
            if (g.uuid() == r.gpu_uuid())
                *rec.reg.mutable_gpu() = g;
        rec.reg.mutable_gpu()->set_uuid(r.gpu_uuid());
        out.push_back(std::move(rec));
    }
    return out;
}

void ReplaySource::start(uint64_t captureId, uint32_t plan, uint32_t steps, MergeWorker& merger)
{
    (void)captureId;
    stop();
    m_stop = false;
    m_finished = false;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_progress = Progress();
    }
    MergeWorker* m = &merger;
    m_thread = std::thread([this, plan, steps, m] {
        if (m_speed > 0)
            run(plan, steps, m);
        else
            runUnpaced(plan, steps, m);
        m_finished = true;
    });
}

void ReplaySource::stop()
{
    m_stop = true;
    if (m_thread.joinable())
        m_thread.join();
}

ReplaySource::Progress ReplaySource::progress() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_progress;
}

void ReplaySource::setError(const std::string& e)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_progress.error.empty())
        m_progress.error = e;
}

void ReplaySource::lostChunk(uint32_t frameEvents, const std::string& why)
{
    ++m_lostChunks;
    m_lostEvents += frameEvents;
    setError(why);
}

std::vector<pb::Counter> ReplaySource::lossCounters() const
{
    std::vector<pb::Counter> out;
    if (m_lostChunks)
        out.push_back(format::makeCounter(format::Stat::ReplayChunksSkipped, -1, m_lostChunks,
            std::string(format::statInfo(format::Stat::ReplayChunksSkipped).description) + " ("
                + std::to_string(m_lostEvents) + " events, as their frames say)"));
    if (m_lostEvents)
        out.push_back(format::makeCounter(format::Stat::ReplayEventsLost, -1, m_lostEvents));
    if (m_reader->missingEvents())
        out.push_back(format::makeCounter(format::Stat::ReplayTruncatedEvents, -1, m_reader->missingEvents()));
    if (m_reader->damagedBytes())
        out.push_back(format::makeCounter(format::Stat::ReplayDamagedBytes, -1, m_reader->damagedBytes()));
    return out;
}

bool ReplaySource::push(MergeWorker& merger, uint32_t plan, std::unique_ptr<pb::Chunk> chunk)
{
    const uint64_t events = ChunkRemapper::eventCount(*chunk);
    uint64_t waits = 0;
    while (!merger.tryPushChunk(0, plan, chunk)) {
        if (m_stop)
            return false;
        ++waits;
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    std::lock_guard<std::mutex> lock(m_mutex);
    m_progress.events += events;
    m_progress.waits += waits;
    return true;
}

void ReplaySource::runUnpaced(uint32_t plan, uint32_t steps, MergeWorker* merger)
{
    // As fast as possible: the file's chunks go to the merge thread as they are (one decode there),
    // moved in time by the stream's remap options so the trace begins now.
    format::ZstdDecompressor z;
    std::string scratch;
    const int64_t wallStart = realtimeNs();
    bool defined = false;
    std::map<uint32_t, std::set<uint32_t>> stepsSeen;
    for (const auto& f : m_reader->frames()) {
        if (m_stop)
            break;
        if (f.header.type != uint8_t(format::FrameType::Chunk))
            continue;
        auto in = std::make_unique<pb::Chunk>();
        if (Status s = m_reader->readMessage(f, z, scratch, *in); !s) {
            lostChunk(f.header.events, s.message());
            continue;
        }
        if (!defined) {
            RemapOptions ro;
            ro.timeShiftNs = wallStart - (m_fileStart ? m_fileStart : in->base_time_ns());
            merger->defineStream(0, plan, ro);
            defined = true;
        }
        const auto& st = in->steps();
        for (int i = 0; i < st.rank_size(); ++i)
            stepsSeen[st.rank(i)].insert(i < st.index_size() ? st.index(i) : 0);
        size_t minSteps = SIZE_MAX;
        for (const auto& [r, set] : stepsSeen)
            minSteps = std::min(minSteps, set.size());
        const bool done = steps > 0 && !stepsSeen.empty() && minSteps >= steps;
        if (done) {
            // At chunk granularity the last chunk's events may go a little beyond; its step records
            // may not, or the file would hold more steps than were asked for.
            std::map<uint32_t, uint32_t> last;
            for (const auto& [r, set] : stepsSeen)
                last[r] = *std::next(set.begin(), long(steps) - 1);
            dropStepsAfter(*in, last);
        }
        if (!push(*merger, plan, std::move(in)))
            return;
        if (steps > 0 && !stepsSeen.empty()) {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_progress.steps = uint32_t(std::min<size_t>(minSteps, steps));
        }
        if (done)
            break;
    }
    if (auto counters = lossCounters(); !counters.empty() && defined) {
        auto chunk = std::make_unique<pb::Chunk>();
        for (auto& c : counters)
            *chunk->add_counters() = std::move(c);
        push(*merger, plan, std::move(chunk));
    }
}

void ReplaySource::run(uint32_t plan, uint32_t steps, MergeWorker* merger)
{
    format::ZstdDecompressor z;
    std::string scratch;
    format::ChunkEncoder enc;
    ChunkRemapper remap(enc);
    std::vector<const format::FrameInfo*> frames;
    for (const auto& f : m_reader->frames())
        if (f.header.type == uint8_t(format::FrameType::Chunk))
            frames.push_back(&f);
    const auto& index = m_reader->index();
    auto knownStart = [&](size_t i, int64_t& t) {
        const uint32_t e = frames[i]->indexEntry;
        if (!m_reader->hasIndex() || e >= uint32_t(index.frames_size()) || index.frames(int(e)).event_count() == 0)
            return false;
        t = index.frames(int(e)).min_time_ns();
        return true;
    };
    merger->defineStream(0, plan, RemapOptions()); // the pacer already moves and scales times
    std::unique_ptr<Pacer> pacer;
    const int64_t wallStart = realtimeNs() + 1000000;
    int64_t lastFlush = realtimeNs();
    uint32_t released = 0;
    const uint32_t rankCount = std::max(1, m_header.ranks_size());
    size_t fi = 0;
    while (!m_stop) {
        const int64_t now = realtimeNs();
        while (fi < frames.size() && (!pacer || pacer->size() < kMaxPending)) {
            int64_t t = 0;
            if (pacer && knownStart(fi, t) && !pacer->empty() && pacer->map(t) > now + kLookaheadNs)
                break;
            if (pacer && knownStart(fi, t) && pacer->map(t) >= pacer->cut()) {
                fi = frames.size();
                break;
            }
            pb::Chunk in;
            const format::FrameInfo& frame = *frames[fi++];
            Status s = m_reader->readMessage(frame, z, scratch, in);
            if (!s) {
                lostChunk(frame.header.events, s.message());
                continue;
            }
            if (!pacer) {
                const int64_t first = m_fileStart ? m_fileStart : in.base_time_ns();
                pacer = std::make_unique<Pacer>(wallStart, first, m_speed);
            }
            if (Status s2 = remap.apply(in, *pacer); !s2)
                lostChunk(frame.header.events, s2.message());
            for (const auto& c : pacer->counters())
                enc.addCounter(c);
            pacer->counters().clear();
            for (const auto& g : pacer->graphNodes())
                enc.addGraphNode(g);
            pacer->graphNodes().clear();
            pacer->findCut(steps);
        }
        if (!pacer)
            break;
        uint32_t stepRecords = 0;
        pacer->release(now, enc, kBatchEvents, stepRecords);
        released += stepRecords;
        if (stepRecords) {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_progress.steps = std::min<uint32_t>(released / rankCount, steps ? steps : UINT32_MAX);
        }
        const bool last = fi >= frames.size() && pacer->empty();
        if (last)
            for (const auto& c : lossCounters())
                enc.addCounter(c);
        if (enc.pendingEvents() >= kBatchEvents || (enc.pendingEvents() > 0 && now - lastFlush >= kBatchNs) || last) {
            auto chunk = std::make_unique<pb::Chunk>();
            enc.flush(*chunk);
            lastFlush = now;
            if (!push(*merger, plan, std::move(chunk)))
                return;
        }
        if (last)
            break;
        int64_t wait = 2000000;
        if (!pacer->empty())
            wait = std::min(wait, pacer->nextEnd() - realtimeNs());
        if (wait > 50000)
            std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
    }
}

} // namespace gapscope::capture
