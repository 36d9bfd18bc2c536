// SPDX-License-Identifier: MIT
#pragma once

// TraceLoader: turns the frames of an opened .gapscope file into a Trace.
//
// With an intact index (which lists each chunk's events per lane), every chunk's events have a known
// place in the final lane columns before it is decoded, so chunks decode in parallel, straight into
// place, with no per-event allocation; summaries are built in one pass per lane afterwards. Without
// an index (cut or damaged file), chunks decode in order through ChunkImporter. An index whose counts
// the frames cannot back, or whose entries a chunk that reads fine does not match, is damaged: the
// file is then read in order. A chunk that fails (checksum, parse, shape) is left out with a warning
// naming its offset; the rest is kept.
//
// Threading: load() uses ReadOptions::threads threads; the loader itself is used by one thread.

#include "model/format/counterset.h"
#include "model/format/tracereader.h"
#include "model/io/tracefile.h"

#include <atomic>
#include <memory>
#include <mutex>

namespace gapscope::model {

// What reading lost, as data-loss counters next to the capture's own (shown by info, failed by
// validate): truncation, damage, the index, skipped frames and the events they held.
void addReadCounters(const format::TraceReader& reader, uint64_t skippedFrames, uint64_t lostEvents,
    bool indexInconsistent, TraceHeader& header);

class TraceLoader {
public:
    TraceLoader(const format::TraceReader& reader, const ReadOptions& options);
    ~TraceLoader();
    Expected<Trace> load();

private:
    struct Plan;
    struct Worker;
    struct Shared;
    void noteUnknownFields();
    void addReadCounters(TraceHeader& header) const;
    void readSections();
    bool indexUsable(std::string& why) const;
    Status loadParallel();
    Status loadInOrder();
    Status decodeChunk(const pb::Chunk& chunk, const Plan& plan, Worker& w);
    Status checkCounts(const pb::Chunk& chunk, const Plan& plan, Worker& w);
    template <typename Put> void decodeOthers(const pb::Chunk& chunk, const Plan& plan, Worker& w, Put& put);
    uint32_t configIndex(uint32_t cfg, uint64_t graph, uint64_t node, Worker& w);
    Status planLanes(std::vector<Plan>& plans);
    void removeFailed(const std::vector<Plan>& plans);
    bool reportProgress(size_t done, size_t total);
    // The trace whose memory a window's read takes (ReadOptions::recycle); none for a whole read.
    Trace* recycled() const { return m_options.window() ? m_options.recycle : nullptr; }

    const format::TraceReader& m_reader;
    ReadOptions m_options;
    unsigned m_threads;
    std::unique_ptr<TraceBuilder> m_builder = std::make_unique<TraceBuilder>();
    std::mutex m_mutex; // guards the builder's config table and m_warnings during parallel decode
    std::vector<std::string> m_warnings;
    std::vector<Counter> m_counters;
    format::CounterSet<pb::Counter> m_counterMap; // the decode threads' counters, joined
    std::atomic<bool> m_cancelled { false };
    std::atomic<uint64_t> m_unknownFieldChunks { 0 };
    std::unique_ptr<Shared> m_shared;
    uint64_t m_skippedChunks = 0; // under m_mutex while decoding in parallel
    uint64_t m_lostEvents = 0;
    bool m_indexInconsistent = false; // the index's counts do not match the frames
    std::atomic<bool> m_indexMismatch { false }; // a chunk that read fine did not match its index entry
};

} // namespace gapscope::model
