// SPDX-License-Identifier: MIT
#include "capture/agent/mergeworker.h"

#include "capture/client/encodersink.h"
#include "capture/protocol/framing.h"
#include "capture/protocol/netutil.h"
#include "model/format/crc32c.h"
#include "model/format/stats.h"
#include "model/format/trace.pb.h"

#include <cstdio>

namespace gapscope::capture {

struct MergeWorker::Item {
    enum class Type { Begin, Define, Data, Chunk, DictOnly, Snapshot, End } type;
    uint64_t captureId = 0;
    uint32_t stream = 0;
    uint32_t plan = 0;
    RemapOptions remap;
    pb::FileHeader header;
    std::string path;
    std::string payload;
    std::unique_ptr<pb::Chunk> chunk;
    size_t bytes = 0;
};

struct MergeWorker::Stream {
    uint32_t plan = 0;
    std::unique_ptr<ChunkRemapper> remap;
    bool broken = false;
};

MergeWorker::MergeWorker(Options options, std::function<void()> notify)
    : m_opt(options)
    , m_notify(std::move(notify))
{
    m_thread = std::thread([this] { run(); });
}

MergeWorker::~MergeWorker()
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_stop = true;
    }
    m_cv.notify_all();
    m_thread.join();
}

bool MergeWorker::push(std::unique_ptr<Item>& item, bool bounded)
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (bounded && m_stats.queuedBytes + item->bytes > m_opt.queueBytes)
            return false;
        m_stats.queuedBytes += item->bytes;
        m_stats.peakQueuedBytes = std::max(m_stats.peakQueuedBytes, m_stats.queuedBytes);
        m_queue.push_back(std::move(item));
    }
    m_cv.notify_one();
    return true;
}

void MergeWorker::begin(uint64_t captureId, const pb::FileHeader& header, const std::string& path)
{
    auto it = std::make_unique<Item>();
    it->type = Item::Type::Begin;
    it->captureId = captureId;
    it->header = header;
    it->path = path;
    push(it, false);
}

void MergeWorker::defineStream(uint32_t stream, uint32_t plan, const RemapOptions& options)
{
    auto it = std::make_unique<Item>();
    it->type = Item::Type::Define;
    it->stream = stream;
    it->plan = plan;
    it->remap = options;
    push(it, false);
}

bool MergeWorker::tryPushData(uint32_t stream, uint32_t plan, std::string& payload)
{
    auto it = std::make_unique<Item>();
    it->type = Item::Type::Data;
    it->stream = stream;
    it->plan = plan;
    it->bytes = payload.size();
    it->payload.swap(payload);
    if (push(it, true))
        return true;
    payload.swap(it->payload);
    return false;
}

bool MergeWorker::tryPushChunk(uint32_t stream, uint32_t plan, std::unique_ptr<pb::Chunk>& chunk)
{
    auto it = std::make_unique<Item>();
    it->type = Item::Type::Chunk;
    it->stream = stream;
    it->plan = plan;
    it->bytes = chunk->SpaceUsedLong();
    it->chunk = std::move(chunk);
    if (push(it, true))
        return true;
    chunk = std::move(it->chunk);
    return false;
}

void MergeWorker::pushDictionaryOnly(uint32_t stream, uint32_t plan, std::unique_ptr<pb::Chunk> chunk)
{
    auto it = std::make_unique<Item>();
    it->type = Item::Type::DictOnly;
    it->stream = stream;
    it->plan = plan;
    it->chunk = std::move(chunk);
    push(it, false);
}

void MergeWorker::snapshotFor(uint32_t client)
{
    auto it = std::make_unique<Item>();
    it->type = Item::Type::Snapshot;
    it->stream = client;
    push(it, false);
}

void MergeWorker::end(uint64_t captureId, const pb::FileHeader& finalHeader)
{
    auto it = std::make_unique<Item>();
    it->type = Item::Type::End;
    it->captureId = captureId;
    it->header = finalHeader;
    push(it, false);
}

std::vector<MergeOutput> MergeWorker::takeOutputs()
{
    std::lock_guard<std::mutex> lock(m_mutex);
    std::vector<MergeOutput> out;
    out.swap(m_outputs);
    return out;
}

MergeStats MergeWorker::stats() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_stats;
}

void MergeWorker::emit(MergeOutput out)
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_outputs.push_back(std::move(out));
    }
    if (m_notify)
        m_notify();
}

void MergeWorker::run()
{
    for (;;) {
        std::unique_ptr<Item> item;
        {
            std::unique_lock<std::mutex> lock(m_mutex);
            const auto wait = std::chrono::milliseconds(m_opt.flushIntervalMs ? m_opt.flushIntervalMs : 20);
            m_cv.wait_for(lock, wait, [this] { return m_stop || !m_queue.empty(); });
            if (m_stop && m_queue.empty())
                break;
            if (!m_queue.empty()) {
                item = std::move(m_queue.front());
                m_queue.pop_front();
                m_stats.queuedBytes -= item->bytes;
            }
        }
        if (item)
            process(*item);
        maybeFlush(false);
    }
    if (m_writer) {
        maybeFlush(true);
        (void)finishFile(nullptr); // stopped mid-capture: the file still gets its index
    }
}

Status MergeWorker::finishFile(const pb::FileHeader* header)
{
    pb::Index dict; // the writer's own encoder stayed empty: the index takes ours
    for (const auto& str : m_enc->strings())
        dict.add_strings(str);
    for (const auto& l : m_enc->lanes())
        *dict.add_lanes() = l;
    for (const auto& cf : m_enc->configs())
        *dict.add_configs() = cf;
    m_writer->setDictionaries(dict);
    return m_writer->finish(header);
}

void MergeWorker::process(Item& item)
{
    switch (item.type) {
    case Item::Type::Begin: {
        m_writer.reset();
        m_streams.clear();
        m_captureId = item.captureId;
        m_header = item.header;
        m_chunksOut = 0;
        format::WriterOptions wo;
        wo.zstdLevel = m_opt.zstdLevel;
        wo.eventsPerChunk = m_opt.chunkEvents;
        auto w = format::TraceWriter::create(item.path, item.header, wo);
        if (!w) {
            MergeOutput o;
            o.kind = MergeOutput::Kind::Finished;
            o.captureId = item.captureId;
            o.ok = false;
            o.error = w.error();
            emit(std::move(o));
            return;
        }
        m_writer = std::move(*w);
        m_enc = std::make_unique<format::ChunkEncoder>();
        m_enc->setKeepOverview(true); // the file's OVERVIEW frame
        m_writer->setOverviewSource(m_enc.get());
        m_zstd.setLevel(m_opt.zstdLevel);
        m_lastFlushNs = monotonicNs();
        return;
    }
    case Item::Type::Define: {
        auto& s = m_streams[item.stream];
        if (!m_writer)
            return;
        s = std::make_unique<Stream>();
        s->plan = item.plan;
        s->remap = std::make_unique<ChunkRemapper>(*m_enc, item.remap);
        return;
    }
    case Item::Type::Data:
    case Item::Type::Chunk:
    case Item::Type::DictOnly:
        handleData(item);
        return;
    case Item::Type::Snapshot: {
        if (!m_writer)
            return;
        maybeFlush(true); // afterwards every interned entry has gone out in a chunk
        const auto& enc = *m_enc;
        wire::AgentToClient msg;
        auto* sc = msg.mutable_chunk();
        sc->set_capture_id(m_captureId);
        pb::Chunk* c = sc->mutable_chunk();
        c->set_sequence(m_lastSequence);
        c->set_first_string_id(1);
        for (const auto& str : enc.strings())
            c->add_strings(str);
        for (const auto& l : enc.lanes())
            *c->add_lanes() = l;
        for (const auto& cf : enc.configs())
            *c->add_configs() = cf;
        auto frame = std::make_shared<std::string>();
        MergeOutput o;
        o.kind = MergeOutput::Kind::Snapshot;
        o.captureId = m_captureId;
        o.stream = item.stream;
        if (appendFrame(msg, *frame, kMaxClientFrameBytes))
            o.frame = std::move(frame);
        emit(std::move(o));
        return;
    }
    case Item::Type::End: {
        MergeOutput o;
        o.kind = MergeOutput::Kind::Finished;
        o.captureId = item.captureId;
        if (!m_writer) {
            o.ok = false;
            o.error = "no output file";
            emit(std::move(o));
            return;
        }
        maybeFlush(true);
        pb::FileHeader h = item.header;
        const MergeStats st = stats();
        if (st.rejectedChunks)
            *h.add_counters() = format::makeCounter(format::Stat::AgentRejectedChunks, -1, st.rejectedChunks);
        Status s = finishFile(&h);
        o.ok = s.isOk();
        o.error = s.message();
        o.events = m_writer->eventsWritten();
        o.bytes = m_writer->bytesWritten();
        o.chunks = m_chunksOut;
        m_writer.reset();
        m_streams.clear();
        emit(std::move(o));
        return;
    }
    }
}

void MergeWorker::handleData(Item& item)
{
    auto it = m_streams.find(item.stream);
    if (!m_writer || it == m_streams.end() || !it->second || it->second->plan != item.plan || it->second->broken)
        return; // a stream of another capture or an older plan: its data no longer belongs to the file
    Stream& s = *it->second;
    std::unique_ptr<pb::Chunk> owned;
    pb::Chunk* chunk = item.chunk.get();
    wire::RankToAgent env;
    if (item.type == Item::Type::Data) {
        if (!env.ParseFromString(item.payload) || !env.has_chunk()) {
            s.broken = true;
            reject(item.stream, "malformed ChunkData message");
            return;
        }
        if (env.chunk().capture_id() != m_captureId || env.chunk().plan() != s.plan)
            return; // in flight when the capture was re-planned: it no longer belongs to the file
        chunk = env.mutable_chunk()->mutable_chunk();
    }
    // DictOnly chunks arrive stripped of their events (dropped under back-pressure) but keep
    // dictionaries, steps and counters, so the plain apply() is right for them too.
    EncoderSink sink(*m_enc);
    Status st = s.remap->apply(*chunk, sink);
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        ++m_stats.chunksIn;
    }
    if (!st) {
        s.broken = true; // its dictionaries can no longer be trusted
        reject(item.stream, st.message());
    }
}

void MergeWorker::reject(uint32_t stream, const std::string& why)
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        ++m_stats.rejectedChunks;
    }
    MergeOutput o;
    o.kind = MergeOutput::Kind::StreamError;
    o.captureId = m_captureId;
    o.stream = stream;
    o.error = why;
    o.ok = false;
    emit(std::move(o));
}

void MergeWorker::failOutput(const Status& s)
{
    MergeOutput o;
    o.kind = MergeOutput::Kind::Finished;
    o.captureId = m_captureId;
    o.ok = false;
    o.error = s.message();
    m_writer.reset();
    emit(std::move(o));
}

namespace {
void putVarint(std::string& out, uint64_t v)
{
    while (v >= 0x80) {
        out.push_back(char(v | 0x80));
        v >>= 7;
    }
    out.push_back(char(v));
}

size_t varintSize(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        ++n;
    }
    return n;
}

// AgentToClient{chunk = StreamChunk{capture_id, chunk = <serialized Chunk>}} framed, built around the
// already serialized chunk so it is not serialized a second time (protobuf wire format: field 5 of
// AgentToClient and fields 1, 2 of StreamChunk; see protocol.proto).
std::shared_ptr<std::string> streamFrame(uint64_t captureId, const std::string& chunk)
{
    const size_t inner = 1 + varintSize(captureId) + 1 + varintSize(chunk.size()) + chunk.size();
    const size_t outer = 1 + varintSize(inner) + inner;
    auto f = std::make_shared<std::string>();
    f->reserve(4 + outer);
    f->resize(4);
    putU32LE(&(*f)[0], uint32_t(outer));
    f->push_back(char((5 << 3) | 2));
    putVarint(*f, inner);
    f->push_back(char((1 << 3) | 0));
    putVarint(*f, captureId);
    f->push_back(char((2 << 3) | 2));
    putVarint(*f, chunk.size());
    f->append(chunk);
    return f;
}
} // namespace

bool MergeWorker::writeChunk()
{
    m_enc->flush(m_chunk);
    if (m_enc->flushedNothing(m_chunk))
        return false;
    const auto& st = m_enc->lastStats();
    m_chunk.SerializeToString(&m_raw);
    if (Status s = m_zstd.compress(m_raw.data(), m_raw.size(), m_stored); !s) {
        failOutput(s);
        return false;
    }
    format::FrameHeader h;
    h.type = uint8_t(format::FrameType::Chunk);
    h.codec = uint8_t(format::Codec::Zstd);
    h.storedBytes = uint32_t(m_stored.size());
    h.rawBytes = uint32_t(m_raw.size());
    h.events = uint32_t(std::min<uint64_t>(st.events, UINT32_MAX));
    h.payloadCrc = format::crc32c(m_stored.data(), m_stored.size());
    pb::IndexEntry e; // what TraceWriter::flush() records for a chunk it encodes itself
    e.set_min_time_ns(st.minTime);
    e.set_max_time_ns(st.maxTime);
    e.set_event_count(st.events);
    e.set_sequence(m_chunk.sequence());
    e.mutable_ranks()->Add(st.ranks.begin(), st.ranks.end());
    e.mutable_lane_ids()->Add(st.laneIds.begin(), st.laneIds.end());
    e.mutable_lane_event_counts()->Add(st.laneCounts.begin(), st.laneCounts.end());
    e.set_kernel_count(st.kernels);
    e.set_memop_count(st.memops);
    e.set_sync_count(st.syncs);
    e.set_collective_count(st.collectives);
    e.set_step_count(st.steps);
    if (Status s = m_writer->copyFrame(h, m_stored, &e); !s) {
        failOutput(s);
        return false;
    }
    // Hand the frame to the OS now (the writer buffers in stdio): a killed agent then leaves every
    // whole frame on disk. The merge thread is the only writer of files in the agent.
    std::fflush(nullptr);
    m_lastSequence = m_chunk.sequence();
    ++m_chunksOut;
    MergeOutput o;
    o.kind = MergeOutput::Kind::Chunk;
    o.captureId = m_captureId;
    o.sequence = m_chunk.sequence();
    o.events = st.events;
    if (m_raw.size() + 64 <= kMaxClientFrameBytes)
        o.frame = streamFrame(m_captureId, m_raw);
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_stats.events = m_writer->eventsWritten();
        m_stats.bytesWritten = m_writer->bytesWritten();
        m_stats.chunksOut = m_chunksOut;
    }
    emit(std::move(o));
    return true;
}

void MergeWorker::maybeFlush(bool force)
{
    if (!m_writer)
        return;
    const int64_t now = monotonicNs();
    const size_t pending = m_enc->pendingEvents();
    const bool due = pending > 0 && now - m_lastFlushNs >= int64_t(m_opt.flushIntervalMs) * 1000000;
    if (!force && !due && pending < m_opt.chunkEvents)
        return;
    m_lastFlushNs = now;
    writeChunk();
}

} // namespace gapscope::capture
