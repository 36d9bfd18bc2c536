// SPDX-License-Identifier: MIT
#pragma once

// StepBaseline: the rank's own record of how long its steps take when nothing of gapscope's is
// recording, kept for the life of the process, so that every capture can say what its step time
// was before the process was ever captured, what it is now, and what it is while recording.
//
// Input: the host intervals between consecutive step markers of one arm, seen while armed and
// before activity recording went on in that arm ("pre-recording intervals"; RankSession feeds
// them). Two sets:
//   - this arm's pre-recording intervals (the last kKeep): "before this capture", and, in a
//     process captured before, "after the last capture";
//   - the baseline: a rolling window of the last kKeep pre-recording intervals of the arms
//     that began while no capture had left a cost: every arm before the process's first capture,
//     and later an arm only when the tracer said CUPTI was detached (Tracer::AttachState::Detached)
//     when it began. After a capture that left CUPTI attached (Idle: graph kernels, old driver,
//     GAPSCOPE_CUPTI_DETACH=0) or with its detach still pending, the baseline is frozen until an arm
//     finds CUPTI detached again.
// The baseline reported with a capture is the one that stood when the arm began (so "after the last
// capture" is never compared with itself), except before the process's first capture, where this
// arm's intervals are part of it. Step times (stepTimeMs) use every interval kept (the last 200 seen, or all of
// them when fewer); the step counts say how many, so a figure from a handful of steps says so.
//
// Threading: the injection library's own thread only (RankSession).

#include "capture/inject/tracer.h"
#include "model/base/steptime.h"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace gapscope::capture::inject {

using model::intervalMedian; // model/base/steptime.h: the one rule for a step time from intervals
using model::stepTimeMs;

class StepBaseline {
public:
    // Intervals kept, in the baseline and of an arm: the step time rests on at least this many
    // wherever this many were seen.
    static constexpr size_t kKeep = 200;

    // What CUPTI was like when the arm began, after the process's last capture.
    enum class AfterLast : uint8_t { NoCapture, Detached, StillAttached, DetachPending };

    struct Figure {
        uint32_t steps = 0;
        double medianMs = 0;
    };
    struct Report {
        Figure baseline;
        uint32_t baselineCapturesBefore = 0; // captures before the baseline's newest step was seen
        Figure before; // this arm's pre-recording intervals
        uint32_t capturesBefore = 0; // captures that recorded in this process before this arm
        AfterLast afterLast = AfterLast::NoCapture;
    };

    // A new arm; `now` is the tracer's state before the arm attaches anything.
    void beginArm(Tracer::AttachState now);
    // One pre-recording interval of the current arm, in ms.
    void addInterval(double ms);
    // Activity recording went on in the current arm: from now on the process counts as captured
    // (once per arm, however many plans).
    void recordingStarted();

    Report report() const;
    bool refreshing() const { return m_refresh; }
    uint32_t captures() const { return m_captures; }

private:
    std::deque<double> m_baseline;
    uint32_t m_baselineCaptures = 0; // m_captures when the newest baseline interval was added
    std::vector<double> m_armBaseline; // the baseline when this arm began
    uint32_t m_armBaselineCaptures = 0;
    std::deque<double> m_arm;
    uint32_t m_captures = 0;
    uint32_t m_capturesAtArm = 0;
    bool m_recordedThisArm = false;
    bool m_refresh = true;
    AfterLast m_afterLast = AfterLast::NoCapture;
};

const char* toString(StepBaseline::AfterLast a);

} // namespace gapscope::capture::inject
