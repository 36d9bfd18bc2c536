// SPDX-License-Identifier: MIT
#include "capture/inject/stepbaseline.h"

#include <algorithm>

namespace gapscope::capture::inject {

const char* toString(StepBaseline::AfterLast a)
{
    switch (a) {
    case StepBaseline::AfterLast::NoCapture:
        return "none";
    case StepBaseline::AfterLast::Detached:
        return "detached";
    case StepBaseline::AfterLast::StillAttached:
        return "still attached";
    case StepBaseline::AfterLast::DetachPending:
        return "detach pending";
    }
    return "none";
}

void StepBaseline::beginArm(Tracer::AttachState now)
{
    m_arm.clear();
    m_recordedThisArm = false;
    m_capturesAtArm = m_captures;
    if (m_captures == 0)
        m_afterLast = AfterLast::NoCapture;
    else if (now == Tracer::AttachState::Detached)
        m_afterLast = AfterLast::Detached;
    else if (now == Tracer::AttachState::DetachPending)
        m_afterLast = AfterLast::DetachPending; // cancelled by this arm: CUPTI never left
    else
        m_afterLast = AfterLast::StillAttached;
    // Only a process without a capture's cost measures what the baseline stands for.
    m_refresh = m_afterLast == AfterLast::NoCapture || m_afterLast == AfterLast::Detached;
    m_armBaseline.assign(m_baseline.begin(), m_baseline.end());
    m_armBaselineCaptures = m_baselineCaptures;
}

void StepBaseline::addInterval(double ms)
{
    if (m_recordedThisArm)
        return; // the caller's cut is by time; this one guards the order of calls
    m_arm.push_back(ms);
    if (m_arm.size() > kKeep)
        m_arm.pop_front();
    if (!m_refresh)
        return;
    m_baseline.push_back(ms);
    if (m_baseline.size() > kKeep)
        m_baseline.pop_front();
    m_baselineCaptures = m_captures;
}

void StepBaseline::recordingStarted()
{
    if (m_recordedThisArm)
        return;
    m_recordedThisArm = true;
    ++m_captures;
}

StepBaseline::Report StepBaseline::report() const
{
    Report r;
    r.capturesBefore = m_capturesAtArm;
    r.afterLast = m_afterLast;
    r.before = Figure { uint32_t(m_arm.size()), stepTimeMs(std::vector<double>(m_arm.begin(), m_arm.end())) };
    if (m_capturesAtArm == 0) {
        // Never captured: this arm's intervals are part of the baseline.
        r.baseline = Figure { uint32_t(m_baseline.size()),
            stepTimeMs(std::vector<double>(m_baseline.begin(), m_baseline.end())) };
        r.baselineCapturesBefore = 0;
    } else {
        r.baseline = Figure { uint32_t(m_armBaseline.size()), stepTimeMs(m_armBaseline) };
        r.baselineCapturesBefore = m_armBaselineCaptures;
    }
    return r;
}

} // namespace gapscope::capture::inject
