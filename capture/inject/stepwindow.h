// SPDX-License-Identifier: MIT
#pragma once

// StepWindow: the rank-side bookkeeping of decode steps and of the recording window.
//
// Steps are seen on the host as StepMarkers (a cudaGraphLaunch or anchor-kernel launch, seen by a
// CUPTI callback with the call's correlation id; or an NVTX range whose name matches, seen with
// its time only). Each marker opens local step n (0 for the first marker after arming). The agent
// then names a start step S and a count N (protocol StartRecording); the window is steps
// [S, S + N), or a time range [start, stop) for duration captures.
//
// Placing an event in the window:
//   - GPU work and API calls by CUPTI correlation id: ids are handed out in call order, every
//     kernel of a graph launch carries the launch's id, so step k owns the ids in
//     [corr(k), corr(k+1)). A marker without an id (NVTX) gets the id of the first launch/copy/sync
//     API call that started at or after it (noteApi); until then events wait as Pending.
//   - NVTX ranges and NCCL calls (host side) by host time.
//   - Time windows: GPU work by its GPU start time, host events by host time.
// Each recorded step's GPU window (earliest start .. next step's earliest start; the last step
// ends at its latest end) becomes a StepBlock entry once a later step has shown up.
//
// Overhead evidence: host intervals between markers inside the window ("during"), as a median. The
// intervals before recording, and the process's baseline, are StepBaseline's.
//
// Memory: bounded. Markers older than the window (or than the last kKeepMarkers) are trimmed, and so
// are markers inside the window kKeepBehindWork steps behind the newest step with GPU work; step
// stats exist only for steps inside the window and are handed out as they complete.
// Threading: used by the injection library's own thread only.

#include "capture/inject/records.h"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace gapscope::capture::inject {

class StepWindow {
public:
    enum class Mode : uint8_t { Detecting, Steps, Time };
    // Late: inside the window, but in a step whose bound was trimmed (the event came more than
    // kKeepBehindWork steps after newer work); it cannot be placed any more.
    enum class Place : uint8_t { Before, Inside, After, Pending, Late };

    struct StepSpan {
        uint64_t localIndex = 0;
        uint64_t globalIndex = 0;
        int64_t start = 0; // GPU start of the step's earliest work
        int64_t end = 0; // next step's start, or the latest end of the step's work
        int64_t hostTime = 0;
    };

    static constexpr size_t kKeepMarkers = 512;
    // Bounds kept inside a steps window behind the newest step that has GPU work.
    static constexpr uint64_t kKeepBehindWork = 16384;
    // A step's span is final once GPU work this much later than the start of the step after it
    // has been seen: CUPTI may hold back a buffer with earlier records for a while (on the H200,
    // 250 ms was too short for 2 to 6 steps in 1,000 of a 0.5 ms-step CUDA-graph loop).
    static constexpr int64_t kSettleNs = 1000000000;

    StepWindow();

    // Back to detection with no markers (new capture).
    void reset();
    // After the window: keep numbering markers, record nothing (bounded again).
    void backToDetecting();
    Mode mode() const { return m_mode; }

    // A marker from a callback; returns the local index of the step it opens.
    uint64_t addMarker(const StepMarker& marker);
    uint64_t stepsSeen() const { return m_base + m_bounds.size(); }
    int64_t markerTime(uint64_t localIndex) const; // 0 when trimmed or not seen

    // The plan. Returns false when step `startLocal` was already seen before `enabledAt` (the time
    // recording was switched on): its work would be partly missing (protocol ARM_START_MISSED).
    bool startSteps(uint64_t startLocal, uint32_t steps, uint64_t globalStart, int64_t enabledAt);
    void startTime(int64_t startNs, int64_t stopNs);

    // API records resolve the correlation id of markers that came without one (NVTX).
    void noteApi(const GpuRecord& api);

    // No more markers will be drained for this window (its end): records after the newest marker
    // are placed in the newest step instead of waiting for the next one.
    void closeMarkers() { m_markersClosed = true; }
    // Every marker queued before `t` (CLOCK_REALTIME ns) has been added: work that started before
    // it (less a margin for the GPU clock's conversion) belongs to a step already seen.
    void setMarkersDrainedAt(int64_t t) { m_markersDrainedAt = t; }
    static constexpr int64_t kDrainMarginNs = 2000000;

    // Where an event falls; `step` receives the local step index for Inside (steps mode).
    Place placeGpu(const GpuRecord& record, uint64_t* step) const;
    Place placeHost(int64_t time, uint64_t* step) const;

    // Extends the GPU span of step `localIndex` (kernels, memcpy, memset inside the window).
    void accountGpu(uint64_t localIndex, int64_t start, int64_t end);

    // Steps whose span is final (the step two later has work and kSettleNs of GPU time passed since
    // the next step began), or every step when `all` (end of the capture).
    std::vector<StepSpan> takeFinishedSteps(bool all);

    // The window's last step has been opened and closed by the marker of the step after it.
    bool endMarkerSeen() const;
    // Highest local step index that has GPU work so far (-1: none).
    int64_t highestStepWithWork() const { return m_highestWork; }
    bool timeWindowOver(int64_t now) const { return m_mode == Mode::Time && now >= m_stopNs; }
    uint32_t stepsRecorded() const { return m_stepsEmitted; }
    // GPU work of a step already handed out (its span misses it), and the most GPU time by which
    // such work trailed the newest work seen, in ns.
    uint64_t workAfterSettle() const { return m_afterSettle; }
    int64_t workAfterSettleMaxNs() const { return m_afterSettleMaxNs; }
    uint64_t startLocal() const { return m_startLocal; }
    uint32_t stepCount() const { return m_steps; }

    struct Evidence {
        uint32_t stepsDuring = 0;
        double stepDuringMs = 0;
    };
    Evidence evidence() const;

private:
    struct Bound {
        int64_t time = 0;
        uint32_t correlation = 0; // 0 = unresolved
    };
    const Bound* boundAt(uint64_t localIndex) const;
    uint64_t stepOfCorrelation(uint32_t correlation) const;
    void trim();

    Mode m_mode = Mode::Detecting;
    std::deque<Bound> m_bounds; // m_bounds[i] is local step m_base + i
    uint64_t m_base = 0;
    uint64_t m_startLocal = 0;
    uint32_t m_steps = 0;
    uint64_t m_globalStart = 0;
    int64_t m_startNs = 0;
    int64_t m_stopNs = 0;
    int64_t m_enabledAt = 0;

    struct Span {
        int64_t start = 0;
        int64_t end = 0;
    };
    std::deque<Span> m_spans; // steps m_spanBase ..., inside the window
    uint64_t m_spanBase = 0;
    int64_t m_highestWork = -1;
    int64_t m_newestStart = 0; // latest GPU start accounted
    uint32_t m_stepsEmitted = 0;
    uint64_t m_afterSettle = 0;
    int64_t m_afterSettleMaxNs = 0;
    bool m_markersClosed = false;
    int64_t m_markersDrainedAt = 0;

    std::vector<double> m_during;
};

} // namespace gapscope::capture::inject
