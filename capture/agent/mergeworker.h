// SPDX-License-Identifier: MIT
#pragma once

// MergeWorker: the agent's merge thread. It takes the chunks of every rank stream of a capture
// (rank-local dictionaries), re-interns their ids into the capture's one global dictionary through
// one ChunkRemapper per stream into the capture's one ChunkEncoder, and for every chunk it flushes:
// serializes it once, compresses it into a CHUNK frame of the file (format::TraceWriter::copyFrame,
// with the index entry and, at the end, the dictionaries), and wraps the same serialized bytes into a
// StreamChunk frame for the I/O thread to send to streaming clients. The file and the live stream are
// the same chunks, byte for byte.
//
// Flow control: the input queue is bounded in bytes. tryPushData() fails when it is full; the caller
// (the I/O thread, which must never block a rank) then drops the events of that chunk, keeps its
// dictionary entries (pushDictionaryOnly) and counts the loss. Control items are always accepted.
// A chunk is flushed at `chunkEvents` events or after `flushIntervalMs`, whichever comes first, so
// a live viewer sees events within about that interval.
//
// Threading: push*/takeOutputs from the I/O thread; everything else runs on the worker thread.
// The notify callback runs on the worker thread and must only wake the I/O thread.

#include "capture/agent/peerconnection.h"
#include "capture/client/chunkremapper.h"
#include "capture/protocol/protocol.pb.h"
#include "model/format/tracewriter.h"
#include "model/format/zstdcodec.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace gapscope::capture {

struct MergeOutput {
    enum class Kind { Chunk, StreamError, Finished, Snapshot };
    Kind kind = Kind::Chunk;
    uint64_t captureId = 0;
    SharedFrame frame; // Chunk: the AgentToClient{chunk} frame
    uint64_t sequence = 0; // Chunk: its sequence
    uint32_t stream = 0; // StreamError: the source stream (rank connection id); Snapshot: the client
    std::string error; // StreamError / Finished
    bool ok = true; // Finished
    uint64_t events = 0; // Finished: events written; Chunk: events in the chunk
    uint64_t bytes = 0; // Finished: file size
    uint64_t chunks = 0;
};

struct MergeStats {
    uint64_t events = 0; // written to the file
    uint64_t chunksIn = 0;
    uint64_t chunksOut = 0;
    uint64_t bytesWritten = 0;
    uint64_t rejectedChunks = 0;
    size_t queuedBytes = 0;
    size_t peakQueuedBytes = 0;
};

class MergeWorker {
public:
    struct Options {
        size_t queueBytes = 48u << 20;
        uint32_t chunkEvents = 65536;
        uint32_t flushIntervalMs = 10;
        int zstdLevel = 3;
    };

    MergeWorker(Options options, std::function<void()> notify);
    ~MergeWorker();

    // Starts a capture output: the file is created on the worker thread; failure comes back as Finished.
    void begin(uint64_t captureId, const pb::FileHeader& header, const std::string& path);
    // (Re)defines a source stream: data of `stream` is remapped with `options` until the next define.
    // `plan` must match the plan of the data pushed afterwards; data of other plans is dropped.
    void defineStream(uint32_t stream, uint32_t plan, const RemapOptions& options);
    // Bounded pushes: on success the argument is moved from; when the queue is full it is left as is.
    bool tryPushData(uint32_t stream, uint32_t plan, std::string& payload); // serialized RankToAgent{chunk}
    bool tryPushChunk(uint32_t stream, uint32_t plan, std::unique_ptr<pb::Chunk>& chunk);
    void pushDictionaryOnly(uint32_t stream, uint32_t plan, std::unique_ptr<pb::Chunk> chunk);
    // For a client that joins a running capture: flushes, then emits a Snapshot output holding a
    // chunk with the complete dictionaries so far (no events); later chunks continue from it.
    void snapshotFor(uint32_t client);
    // Writes the final header, the index and the footer; Finished comes back when done.
    void end(uint64_t captureId, const pb::FileHeader& finalHeader);

    std::vector<MergeOutput> takeOutputs();
    MergeStats stats() const;

private:
    struct Item;
    struct Stream;
    void run();
    void process(Item& item);
    void handleData(Item& item);
    void maybeFlush(bool force);
    bool writeChunk(); // false when the chunk was empty
    Status finishFile(const pb::FileHeader* header);
    void failOutput(const Status& s);
    void emit(MergeOutput out);
    void reject(uint32_t stream, const std::string& why);
    bool push(std::unique_ptr<Item>& item, bool bounded);

    Options m_opt;
    std::function<void()> m_notify;
    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<std::unique_ptr<Item>> m_queue;
    std::vector<MergeOutput> m_outputs;
    MergeStats m_stats;
    bool m_stop = false;

    // Worker-thread state.
    uint64_t m_captureId = 0;
    std::unique_ptr<format::TraceWriter> m_writer;
    std::unique_ptr<format::ChunkEncoder> m_enc;
    pb::Chunk m_chunk;
    uint64_t m_lastSequence = 0;
    std::string m_raw, m_stored;
    format::ZstdCompressor m_zstd;
    std::map<uint32_t, std::unique_ptr<Stream>> m_streams;
    int64_t m_lastFlushNs = 0;
    uint64_t m_chunksOut = 0;
    pb::FileHeader m_header;
    std::thread m_thread;
};

} // namespace gapscope::capture
