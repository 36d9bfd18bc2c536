// SPDX-License-Identifier: MIT
#pragma once

// Recorder: the data path of one capture on the library's own thread. Each tick it drains, in
// this order, the step markers (CUPTI callbacks) and the NVTX queue (step markers for the NVTX
// rule, ranges while recording), then the completed CUPTI buffers (converted through the layout's
// ActivityConverter, placed in the window by StepWindow, added to the ChunkBuilder), then the NCCL
// queue. Markers first: a marker is queued before its API call runs, so every record that could
// belong to a step arrives after the step's marker is known.
//
// Name matching for the step rule happens here, cached: NVTX names by text, anchor kernels by the
// launch's symbol pointer (demangled once). Records that cannot be placed yet (an NVTX marker still
// waiting for the id of the next API call) wait in a bounded pending list (kMaxPending).
//
// Threading: the library's own thread only.

#include "capture/inject/activityconverter.h"
#include "capture/inject/channels.h"
#include "capture/inject/chunkbuilder.h"
#include "capture/inject/stepwindow.h"
#include "capture/inject/tracer.h"
#include "model/base/patternmatcher.h"

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace gapscope::capture::inject {

class Recorder {
public:
    static constexpr size_t kMaxPending = 1u << 16;

    struct Counters {
        uint64_t records = 0; // converted activity records
        uint64_t inside = 0; // events written
        uint64_t noTiming = 0; // kernels/memops without timestamps
        uint64_t skipped = 0; // record kinds not kept
        uint64_t pendingDropped = 0;
        uint64_t lateDropped = 0; // inside the window, in a step already trimmed
        uint64_t buffers = 0;
    };

    Recorder(Channels& channels, Tracer& tracer);

    // New capture: rule, pattern (regex, case-insensitive, model::PatternMatcher; empty: every NVTX range / anchor
    // kernel would match, so an empty pattern is refused for those rules).
    Status configure(StepRule rule, const std::string& pattern);
    StepRule rule() const { return m_rule; }
    // New plan: a fresh encoder stream.
    void beginPlan(const ChunkBuilder::Identity& identity);
    void endPlan();
    bool planActive() const { return m_builder != nullptr; }

    StepWindow& window() { return m_window; }
    const Counters& counters() const { return m_counters; }
    size_t pendingRecords() const { return m_pending.size(); }
    // End of a window: records still waiting for a marker will never be placed (counted).
    void dropPending()
    {
        m_counters.pendingDropped += m_pending.size();
        m_pending.clear();
    }

    struct NewMarker {
        uint64_t localIndex;
        int64_t time;
    };
    void drainHost(std::vector<NewMarker>& newMarkers);
    // `checkpoint` runs after each buffer (lets the caller ship a chunk before it grows too large).
    void drainGpu(const std::function<void()>& checkpoint = {});
    void drainCollectives();
    // Releases completed buffers unread (abort).
    void discardBuffers();

    void emitSteps(bool all);
    ChunkBuilder* builder() { return m_builder.get(); }

    int64_t firstRecordTime() const { return m_firstRecord; }
    bool sawGpuAfterWindow() const { return m_sawAfter; }

private:
    // Counts m_batch's records and notes what they say before they are placed (graph kernels seen,
    // API ids, the earliest GPU start).
    void noteBatch();
    bool nameMatches(const std::string& name);
    bool anchorMatches(const char* symbol);
    void place(const GpuRecord& r);
    void addMarker(const StepMarker& m, std::vector<NewMarker>& out);

    Channels& m_channels;
    Tracer& m_tracer;
    ActivityConverter m_converter;
    StepRule m_rule = StepRule::Graph;
    std::optional<model::PatternMatcher> m_pattern; // linear-time search, safe on any pattern
    std::unordered_map<std::string, bool> m_nvtxMatch;
    std::unordered_map<const char*, bool> m_anchorMatch;

    StepWindow m_window;
    std::unique_ptr<ChunkBuilder> m_builder;
    std::deque<GpuRecord> m_pending;
    std::vector<GpuRecord> m_batch;
    Counters m_counters;
    int64_t m_firstRecord = 0;
    bool m_sawAfter = false;
};

} // namespace gapscope::capture::inject
