// SPDX-License-Identifier: MIT
#include "capture/inject/stepwindow.h"

#include "capture/inject/stepbaseline.h"

#include <algorithm>

namespace gapscope::capture::inject {

namespace {

constexpr size_t kMaxDuring = 1u << 16;

} // namespace

StepWindow::StepWindow() = default;

void StepWindow::reset()
{
    *this = StepWindow();
}

const StepWindow::Bound* StepWindow::boundAt(uint64_t localIndex) const
{
    if (localIndex < m_base || localIndex >= m_base + m_bounds.size())
        return nullptr;
    return &m_bounds[size_t(localIndex - m_base)];
}

int64_t StepWindow::markerTime(uint64_t localIndex) const
{
    const Bound* b = boundAt(localIndex);
    return b ? b->time : 0;
}

uint64_t StepWindow::addMarker(const StepMarker& marker)
{
    const uint64_t index = stepsSeen();
    // Intervals inside the window are the "during" evidence; those before recording are
    // StepBaseline's (RankSession feeds it).
    const bool recording = m_mode != Mode::Detecting && m_enabledAt != 0 && marker.time >= m_enabledAt;
    if (recording && !m_bounds.empty() && marker.time > m_bounds.back().time && m_during.size() < kMaxDuring) {
        const double ms = double(marker.time - m_bounds.back().time) / 1e6;
        const bool inSteps = m_mode == Mode::Steps && index > m_startLocal && index <= m_startLocal + m_steps;
        const bool inTime = m_mode == Mode::Time && marker.time < m_stopNs;
        if (inSteps || inTime)
            m_during.push_back(ms);
    }
    m_bounds.push_back(Bound { marker.time, marker.correlation });
    trim();
    return index;
}

void StepWindow::trim()
{
    uint64_t keepFrom = 0;
    const uint64_t seen = stepsSeen();
    if (m_mode == Mode::Steps) {
        keepFrom = m_startLocal;
        if (m_highestWork > int64_t(kKeepBehindWork))
            keepFrom = std::max<uint64_t>(keepFrom, uint64_t(m_highestWork) - kKeepBehindWork);
        keepFrom = std::min<uint64_t>(keepFrom, m_startLocal + m_steps); // the end bound stays
    } else {
        keepFrom = seen > kKeepMarkers ? seen - kKeepMarkers : 0;
    }
    while (m_base < keepFrom && !m_bounds.empty()) {
        m_bounds.pop_front();
        ++m_base;
    }
}

void StepWindow::backToDetecting()
{
    m_mode = Mode::Detecting;
    m_enabledAt = 0;
    m_spans.clear();
    trim();
}

bool StepWindow::startSteps(uint64_t startLocal, uint32_t steps, uint64_t globalStart, int64_t enabledAt)
{
    m_mode = Mode::Steps;
    m_startLocal = startLocal;
    m_steps = steps ? steps : 1;
    m_globalStart = globalStart;
    m_enabledAt = enabledAt;
    m_spans.clear();
    m_spanBase = startLocal;
    m_highestWork = -1;
    m_newestStart = 0;
    m_stepsEmitted = 0;
    m_afterSettle = 0;
    m_afterSettleMaxNs = 0;
    m_markersClosed = false;
    m_during.clear();
    const Bound* b = boundAt(startLocal);
    if (b && b->time < enabledAt)
        return false;
    return startLocal >= m_base || stepsSeen() <= startLocal;
}

void StepWindow::startTime(int64_t startNs, int64_t stopNs)
{
    m_mode = Mode::Time;
    m_startNs = startNs;
    m_stopNs = stopNs > startNs ? stopNs : startNs;
    m_enabledAt = startNs;
    m_during.clear();
}

void StepWindow::noteApi(const GpuRecord& api)
{
    if (api.correlation == 0)
        return;
    // Only markers without an id wait here (NVTX); they are few and recent.
    for (size_t i = m_bounds.size(); i-- > 0;) {
        Bound& b = m_bounds[i];
        if ((b.correlation != 0 && b.correlation <= api.correlation) || b.time < m_enabledAt)
            break; // resolved below here, or seen before recording (no API record will ever come)
        if (api.start >= b.time && (b.correlation == 0 || api.correlation < b.correlation))
            b.correlation = api.correlation;
    }
}

uint64_t StepWindow::stepOfCorrelation(uint32_t correlation) const
{
    // Last bound in the window whose id is <= correlation (bounds are in id order).
    const uint64_t first = std::max(m_startLocal, m_base);
    const uint64_t last = std::min<uint64_t>(m_startLocal + m_steps, stepsSeen()); // exclusive
    uint64_t lo = first, hi = last;
    while (lo + 1 < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        const Bound* b = boundAt(mid);
        if (b && b->correlation != 0 && b->correlation <= correlation)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

StepWindow::Place StepWindow::placeGpu(const GpuRecord& r, uint64_t* step) const
{
    if (m_mode == Mode::Detecting)
        return Place::Before;
    if (m_mode == Mode::Time) {
        if (r.start < m_startNs)
            return Place::Before;
        if (step)
            *step = 0;
        return r.start < m_stopNs ? Place::Inside : Place::After;
    }
    if (r.correlation == 0)
        return placeHost(r.start, step);
    // In a long window the oldest bounds are trimmed (kKeepBehindWork behind the newest step with
    // work): the oldest bound kept stands for the window's start then.
    const bool trimmed = m_base > m_startLocal;
    const Bound* first = boundAt(trimmed ? m_base : m_startLocal);
    if (!first)
        return stepsSeen() <= m_startLocal ? Place::Before : Place::After;
    if (first->correlation == 0)
        return Place::Pending;
    if (r.correlation < first->correlation)
        return trimmed ? Place::Late : Place::Before;
    if (const Bound* end = boundAt(m_startLocal + m_steps)) {
        if (end->correlation == 0)
            return Place::Pending;
        if (r.correlation >= end->correlation)
            return Place::After;
    } else if (stepsSeen() > m_startLocal + m_steps) {
        return Place::After; // end bound trimmed long ago
    }
    const uint64_t k = stepOfCorrelation(r.correlation);
    // The next step's marker may not have been seen yet (markers and GPU records come through
    // different queues, drained in turn): then only the newest step's own launch id is certain;
    // a later id may be the next step's (its graph's first kernels can complete before the
    // marker is drained). Work that began before the last marker drain cannot be: a marker is
    // queued when its step is launched, before any of the step's work starts.
    if (!m_markersClosed && k + 1 == stepsSeen() && k < m_startLocal + m_steps
        && r.start >= m_markersDrainedAt - kDrainMarginNs) {
        const Bound* b = boundAt(k);
        if (b && r.correlation > b->correlation)
            return Place::Pending;
    }
    // A later marker still waiting for its id could own this record.
    for (uint64_t j = k + 1; j < std::min<uint64_t>(m_startLocal + m_steps, stepsSeen()); ++j) {
        const Bound* b = boundAt(j);
        if (b && b->correlation == 0)
            return Place::Pending;
        if (b && b->correlation > r.correlation)
            break;
    }
    if (step)
        *step = k;
    return Place::Inside;
}

StepWindow::Place StepWindow::placeHost(int64_t time, uint64_t* step) const
{
    if (m_mode == Mode::Detecting)
        return Place::Before;
    if (m_mode == Mode::Time) {
        if (step)
            *step = 0;
        return time < m_startNs ? Place::Before : time < m_stopNs ? Place::Inside : Place::After;
    }
    const bool trimmed = m_base > m_startLocal;
    const uint64_t firstKept = trimmed ? m_base : m_startLocal;
    const Bound* first = boundAt(firstKept);
    if (!first)
        return stepsSeen() <= m_startLocal ? Place::Before : Place::After;
    if (time < first->time)
        return trimmed ? Place::Late : Place::Before;
    if (const Bound* end = boundAt(m_startLocal + m_steps); end && time >= end->time)
        return Place::After;
    // The last bound at or before `time` (bounds are in time order).
    uint64_t lo = firstKept, hi = std::min<uint64_t>(m_startLocal + m_steps, stepsSeen()); // exclusive
    while (lo + 1 < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (boundAt(mid)->time <= time)
            lo = mid;
        else
            hi = mid;
    }
    if (step)
        *step = lo;
    return Place::Inside;
}

void StepWindow::accountGpu(uint64_t localIndex, int64_t start, int64_t end)
{
    if (m_mode != Mode::Steps || localIndex < m_startLocal || localIndex >= m_startLocal + m_steps)
        return;
    if (localIndex < m_spanBase) {
        // The step was handed out already: this work came later than kSettleNs allowed for.
        ++m_afterSettle;
        m_afterSettleMaxNs = std::max(m_afterSettleMaxNs, m_newestStart - start);
        return;
    }
    const size_t i = size_t(localIndex - m_spanBase);
    if (i >= m_spans.size())
        m_spans.resize(i + 1);
    Span& s = m_spans[i];
    if (s.start == 0 || start < s.start)
        s.start = start;
    s.end = std::max(s.end, end);
    m_highestWork = std::max<int64_t>(m_highestWork, int64_t(localIndex));
    m_newestStart = std::max(m_newestStart, start);
}

std::vector<StepWindow::StepSpan> StepWindow::takeFinishedSteps(bool all)
{
    std::vector<StepSpan> out;
    if (m_mode != Mode::Steps)
        return out;
    const uint64_t windowEnd = m_startLocal + m_steps;
    while (m_spanBase < windowEnd) {
        const uint64_t k = m_spanBase;
        if (!all
            && (m_highestWork < int64_t(k + 2) || m_spans.size() < 2 || m_spans[1].start == 0
                || m_newestStart - m_spans[1].start < kSettleNs))
            break;
        if (all && k >= stepsSeen())
            break; // never opened
        Span s = m_spans.empty() ? Span() : m_spans.front();
        const Span next = m_spans.size() > 1 ? m_spans[1] : Span();
        StepSpan span;
        span.localIndex = k;
        span.globalIndex = m_globalStart + (k - m_startLocal);
        span.hostTime = markerTime(k);
        span.start = s.start ? s.start : span.hostTime;
        span.end = (k + 1 < windowEnd && next.start > span.start) ? next.start : std::max(s.end, span.start);
        out.push_back(span);
        if (!m_spans.empty())
            m_spans.pop_front();
        ++m_spanBase;
        ++m_stepsEmitted;
    }
    return out;
}

bool StepWindow::endMarkerSeen() const
{
    if (m_mode != Mode::Steps)
        return false;
    const uint64_t endIndex = m_startLocal + m_steps;
    if (stepsSeen() <= endIndex)
        return false;
    const Bound* b = boundAt(endIndex);
    return !b || b->correlation != 0;
}

StepWindow::Evidence StepWindow::evidence() const
{
    Evidence e;
    e.stepsDuring = uint32_t(m_during.size());
    e.stepDuringMs = stepTimeMs(m_during);
    return e;
}

} // namespace gapscope::capture::inject
