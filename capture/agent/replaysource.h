// SPDX-License-Identifier: MIT
#pragma once

// ReplaySource: serves a recorded .gapscope file as if it were being captured now (gapscope-agent
// --replay FILE --speed X): for demos, tests, and live mode without GPUs.
//
// On start() a thread reads the file's chunks in order and feeds them to the MergeWorker as one
// stream, exactly like a rank's stream. Times are moved so that the trace begins now; with speed X
// (> 0) every time and duration is divided by X and each event is released only once its end has
// passed on the wall clock, in batches of at most ~5 ms, so a client sees events the way it would
// during a real capture (this is what the live-latency measurement uses). Speed 0 replays as fast
// as the pipeline takes it. With `steps` > 0 the replay ends after that many steps (by the file's
// step records) or at the end of the file.
//
// The replay never drops: when the merge queue is full it waits (counted in progress().waits).
// Memory: at most kMaxPending events held for pacing plus one file chunk.
// Threading: start/stop/progress from the I/O thread; the replay runs on its own thread.

#include "capture/agent/rankrecord.h"
#include "model/base/status.h"
#include "model/format/trace.pb.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gapscope::format {
class TraceReader;
}

namespace gapscope::capture {

class MergeWorker;

class ReplaySource {
public:
    struct Progress {
        uint64_t events = 0;
        uint32_t steps = 0;
        uint64_t waits = 0;
        std::string error;
    };

    static Expected<std::unique_ptr<ReplaySource>> open(const std::string& path, double speed);
    ~ReplaySource();

    const pb::FileHeader& header() const { return m_header; }
    const std::string& path() const { return m_path; }
    double speed() const { return m_speed; }
    std::vector<RankRecord> ranks() const; // from the file's header

    // Starts replaying into `merger` as stream 0 with `plan`; a replay still running is stopped first.
    void start(uint64_t captureId, uint32_t plan, uint32_t steps, MergeWorker& merger);
    void stop();
    bool finished() const { return m_finished.load(); }
    Progress progress() const;

private:
    class Pacer;
    ReplaySource() = default;
    void run(uint32_t plan, uint32_t steps, MergeWorker* merger);
    void runUnpaced(uint32_t plan, uint32_t steps, MergeWorker* merger);
    bool push(MergeWorker& merger, uint32_t plan, std::unique_ptr<pb::Chunk> chunk);
    void setError(const std::string& e);
    // A chunk of the file that did not read or decode: counted, and reported as data loss.
    void lostChunk(uint32_t frameEvents, const std::string& why);
    // The data-loss counters of this replay (lost chunks, and what the reader found cut or damaged).
    std::vector<pb::Counter> lossCounters() const;

    std::string m_path;
    double m_speed = 1.0;
    std::unique_ptr<format::TraceReader> m_reader;
    pb::FileHeader m_header;
    int64_t m_fileStart = 0; // earliest event time when the index knows it, else 0 (found while reading)
    std::thread m_thread;
    std::atomic<bool> m_stop { false };
    std::atomic<bool> m_finished { false };
    mutable std::mutex m_mutex;
    Progress m_progress;
    uint64_t m_lostChunks = 0; // replay thread only
    uint64_t m_lostEvents = 0;
};

} // namespace gapscope::capture
