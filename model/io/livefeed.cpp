// SPDX-License-Identifier: MIT
#include "model/io/livefeed.h"

#include "model/io/tracemetaproto.h"

namespace gapscope::model {

namespace {
constexpr size_t kQueueChunks = 8;
}

LiveFeed::LiveFeed(bool keepChunks, bool decodeThread)
    : m_importer(m_builder)
    , m_keep(keepChunks)
{
    if (decodeThread)
        m_thread = std::thread(&LiveFeed::decodeLoop, this);
}

LiveFeed::~LiveFeed()
{
    if (m_thread.joinable()) {
        {
            std::lock_guard<std::mutex> lock(m_queueMutex);
            m_quit = true;
        }
        m_queueCv.notify_all();
        m_thread.join();
    }
}

Status LiveFeed::add(const pb::Chunk& chunk)
{
    if (!m_thread.joinable())
        return decode(chunk);
    auto copy = std::make_unique<pb::Chunk>(chunk);
    std::unique_lock<std::mutex> lock(m_queueMutex);
    m_queueCv.wait(lock, [this] { return m_queue.size() < kQueueChunks || m_quit; });
    m_queue.push_back(std::move(copy));
    lock.unlock();
    m_queueCv.notify_all();
    return Status::ok();
}

void LiveFeed::flush()
{
    std::unique_lock<std::mutex> lock(m_queueMutex);
    m_queueCv.wait(lock, [this] { return (m_queue.empty() && !m_busy) || m_quit || !m_thread.joinable(); });
}

void LiveFeed::decodeLoop()
{
    std::unique_lock<std::mutex> lock(m_queueMutex);
    for (;;) {
        m_queueCv.wait(lock, [this] { return !m_queue.empty() || m_quit; });
        if (m_quit)
            return;
        std::unique_ptr<pb::Chunk> c = std::move(m_queue.front());
        m_queue.pop_front();
        m_busy = true;
        lock.unlock();
        m_queueCv.notify_all(); // room in the queue
        (void)decode(*c); // counted and named in the warnings when rejected
        c.reset();
        lock.lock();
        m_busy = false;
        m_queueCv.notify_all(); // flush()
    }
}

Status LiveFeed::decode(const pb::Chunk& chunk)
{
    std::shared_ptr<std::string> bytes;
    if (m_keep) {
        bytes = std::make_shared<std::string>();
        chunk.SerializeToString(bytes.get());
    }
    std::lock_guard<std::mutex> lock(m_mutex);
    const uint64_t before = m_importer.events();
    Status s = m_importer.add(chunk);
    ++m_stats.chunks;
    if (!s) {
        ++m_stats.rejected;
        m_builder.addWarning("live stream: chunk " + std::to_string(chunk.sequence()) + " rejected: " + s.message());
        return s;
    }
    const uint64_t n = m_importer.events() - before;
    m_stats.events += n;
    m_stats.pending += n;
    if (bytes) {
        m_stats.bytes += bytes->size();
        m_chunks.push_back(std::move(bytes));
    } else {
        m_stats.bytes += chunk.ByteSizeLong();
    }
    return Status::ok();
}

uint64_t LiveFeed::drainInto(Trace& trace)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    const uint64_t n = m_stats.pending;
    trace.appendFrom(m_builder);
    m_stats.pending = 0;
    return n;
}

LiveFeed::Stats LiveFeed::stats() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_stats;
}

LiveFeed::ChunkList LiveFeed::chunks() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_chunks;
}

void LiveFeed::dropChunks()
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_chunks.clear();
    m_chunks.shrink_to_fit();
    m_keep = false;
}

std::vector<Counter> LiveFeed::counters() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_importer.counters();
}

TraceHeader LiveFeed::header(const pb::FileHeader& merged)
{
    return fromProto(merged);
}

Expected<Trace> LiveFeed::snapshot(const ChunkList& chunks, const TraceHeader& header)
{
    TraceBuilder builder;
    builder.header() = header;
    ChunkImporter importer(builder);
    pb::Chunk chunk;
    for (size_t i = 0; i < chunks.size(); ++i) {
        if (!chunk.ParseFromString(*chunks[i])) {
            builder.addWarning("live stream: chunk " + std::to_string(i) + " does not parse");
            continue;
        }
        if (Status s = importer.add(chunk); !s)
            builder.addWarning("live stream: chunk " + std::to_string(chunk.sequence()) + ": " + s.message());
    }
    for (const auto& c : importer.counters())
        builder.header().counters.push_back(c);
    return builder.finish(); // its steps are found by the caller (StepFinder), as for any reader
}

} // namespace gapscope::model
