// SPDX-License-Identifier: MIT
#pragma once

// LiveFeed: the hand-over between the live connection's worker thread and the viewer's model.
//
// The worker thread calls add() for every merged chunk as it arrives: the chunk is decoded at once
// (model::ChunkImporter into a TraceBuilder) and, when keepChunks is on, its serialized bytes are
// kept. The GUI thread calls drainInto() at a bounded rate (LiveSession: every 100 ms), which moves
// the events decoded since the last call into the growing Trace with Trace::appendFrom (cost
// proportional to the new events). snapshot() rebuilds an immutable, finished Trace from the kept
// chunks on any thread (the analysis and the statistics read traces on worker threads, so they get
// snapshots instead of the trace that grows).
//
// The edge where the live stream's protobuf chunks become the model's trace (as ChunkImporter is
// for files): the viewer's live session and bench_live (the viewer's own path from the agent to the
// model, measured without Qt) use it.
//
// With decodeThread on, add() only copies the chunk into a bounded queue (8 chunks; add() waits when
// it is full, which is back-pressure on the socket) and a thread of the feed decodes it, so receiving
// and decoding run on two cores; flush() waits until the queue is decoded.
//
// Threading: add() and flush() from one producer thread; drainInto(), stats() and chunks() from any
// thread. One mutex guards the builder: decoding a chunk and drainInto() exclude each other
// (drainInto is O(new events)).

#include "model/io/chunkimporter.h"
#include "model/trace/trace.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gapscope::model {

class LiveFeed {
public:
    using ChunkList = std::vector<std::shared_ptr<const std::string>>;

    explicit LiveFeed(bool keepChunks = true, bool decodeThread = false);
    ~LiveFeed();
    LiveFeed(const LiveFeed&) = delete;
    LiveFeed& operator=(const LiveFeed&) = delete;

    // Decodes one merged chunk (global dictionaries). A malformed chunk is rejected whole, counted
    // and named in the trace's warnings; the stream goes on. (With the decode thread, the error is
    // only counted.)
    Status add(const pb::Chunk& chunk);
    // Returns once every chunk added so far is decoded.
    void flush();
    // Moves what add() decoded since the last call into `trace`; returns the number of events moved.
    uint64_t drainInto(Trace& trace);

    struct Stats {
        uint64_t chunks = 0; // chunks added
        uint64_t events = 0; // events decoded
        uint64_t bytes = 0; // serialized chunk bytes
        uint64_t pending = 0; // decoded, not yet drained
        uint64_t rejected = 0; // chunks rejected as malformed
    };
    Stats stats() const;
    // The chunks added so far (shared, immutable; empty when keepChunks is off).
    ChunkList chunks() const;
    // Forgets the kept chunks (after the final snapshot: the finished trace holds everything).
    void dropChunks();
    // Loss counters carried by the chunks so far (summed by name and rank).
    std::vector<Counter> counters() const;

    // The header of a live capture (the merged one the capture client keeps), as the model's own type.
    static TraceHeader header(const pb::FileHeader& merged);
    // A finished Trace from `chunks` with `header`; the caller finds its steps (StepFinder), as openTrace does.
    static Expected<Trace> snapshot(const ChunkList& chunks, const TraceHeader& header);

private:
    Status decode(const pb::Chunk& chunk);
    void decodeLoop();

    mutable std::mutex m_mutex;
    TraceBuilder m_builder;
    ChunkImporter m_importer;
    ChunkList m_chunks;
    Stats m_stats;
    std::atomic<bool> m_keep;
    // The decode thread's queue.
    std::mutex m_queueMutex;
    std::condition_variable m_queueCv;
    std::deque<std::unique_ptr<pb::Chunk>> m_queue;
    bool m_busy = false, m_quit = false;
    std::thread m_thread;
};

} // namespace gapscope::model
