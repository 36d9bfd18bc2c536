// SPDX-License-Identifier: MIT
#include "model/analysis/windowsweep.h"

#include <algorithm>
#include <cstdint>
#include <functional>

namespace gapscope::model {

namespace {
using Active = std::pair<TimeNs, uint32_t>;
constexpr auto kHeapOrder = std::greater<Active>(); // min-heap on end
} // namespace

TimeNs WindowSweep::Result::total() const
{
    TimeNs t = 0;
    for (TimeNs v : busyNs)
        t += v;
    for (TimeNs v : idleNs)
        t += v;
    return t;
}

void WindowSweep::run(const Input& in, Result& out)
{
    begin(in, out);
    for (size_t i = 0; i < in.pieceCount; ++i)
        add(in.pieces[i]);
    finish();
}

void WindowSweep::begin(const Input& in, Result& out)
{
    m_in = &in;
    m_out = &out;
    m_t = in.w0;
    m_syncCursor = 0;
    m_activeCount = 0;
    m_active.clear();
    m_units.assign(in.slotCount, 0);
    m_sharedTotal = 0;
    m_overlapped = false;
    out.busyNs.assign(in.slotCount, 0);
    out.idleNs.fill(0);
    out.gaps.clear();
    out.lastEventEnd = in.w0;
}

void WindowSweep::busy(TimeNs a, TimeNs b)
{
    if (m_activeCount == 1) {
        busySingle(a, b, m_singleSlot);
        return;
    }
    a = std::max(a, m_in->clip0);
    b = std::min(b, m_in->clip1);
    if (b <= a || m_active.empty())
        return;
    TimeNs len = b - a;
    m_sharedTotal += len;
    int64_t units = len * kUnitsPerNs;
    int64_t k = int64_t(m_active.size());
    int64_t share = units / k, rest = units % k;
    for (size_t i = 0; i < m_active.size(); ++i)
        m_units[m_active[i].second] += share + (int64_t(i) < rest ? 1 : 0);
}

void WindowSweep::keepGap(const Gap& g)
{
    auto& gaps = m_out->gaps;
    if (m_in->gaps == Input::Gaps::All) {
        gaps.push_back(g);
        return;
    }
    // The kTopGaps longest, longest first; ties keep the earlier gap first.
    const TimeNs len = g.end - g.start;
    if (gaps.size() == kTopGaps && gaps.back().end - gaps.back().start >= len)
        return;
    size_t i = gaps.size() < kTopGaps ? gaps.size() : kTopGaps - 1;
    if (gaps.size() < kTopGaps)
        gaps.push_back(g);
    for (; i > 0 && gaps[i - 1].end - gaps[i - 1].start < len; --i)
        gaps[i] = gaps[i - 1];
    gaps[i] = g;
}

void WindowSweep::toHeap()
{
    m_active.assign(1, Active { m_singleEnd, m_singleSlot });
}

void WindowSweep::flushUntil(TimeNs x)
{
    while (m_activeCount > 0) {
        if (m_activeCount == 1) {
            if (m_singleEnd > x)
                return;
            busySingle(m_t, m_singleEnd, m_singleSlot);
            m_t = std::max(m_t, m_singleEnd);
            m_activeCount = 0;
            return;
        }
        const TimeNs end = m_active.front().first;
        if (end > x)
            return;
        busy(m_t, end);
        m_t = std::max(m_t, end);
        while (!m_active.empty() && m_active.front().first == end) {
            std::pop_heap(m_active.begin(), m_active.end(), kHeapOrder);
            m_active.pop_back();
        }
        m_activeCount = m_active.size();
        if (m_activeCount == 1) { // back to the cheap representation
            m_singleEnd = m_active.front().first;
            m_singleSlot = m_active.front().second;
            m_active.clear();
        }
    }
}

void WindowSweep::addGeneral(const Piece& p)
{
    const TimeNs s = std::max(p.start, m_t); // robust to slightly unsorted input: never count twice
    flushUntil(s);
    if (m_activeCount == 0) {
        if (m_t < s)
            idle(m_t, s, false, p.tag);
    } else {
        busy(m_t, s);
    }
    m_t = std::max(m_t, s);
    if (p.end > s) {
        if (m_activeCount == 0) {
            m_singleEnd = p.end;
            m_singleSlot = p.slot;
            m_activeCount = 1;
        } else {
            if (m_activeCount == 1)
                toHeap();
            m_active.emplace_back(p.end, p.slot);
            std::push_heap(m_active.begin(), m_active.end(), kHeapOrder);
            m_activeCount = m_active.size();
            m_overlapped = true;
        }
    }
    m_out->lastEventEnd = std::max(m_out->lastEventEnd, p.end);
}

void WindowSweep::finish()
{
    flushUntil(INT64_MAX);
    if (m_t < m_in->w1)
        idle(m_t, m_in->w1, true, kNoTag);
    // Shared stretches: units -> whole ns, largest remainder first, so the slots add up exactly.
    if (m_sharedTotal > 0) {
        TimeNs assigned = 0;
        for (size_t s = 0; s < m_units.size(); ++s) {
            m_out->busyNs[s] += m_units[s] / kUnitsPerNs;
            assigned += m_units[s] / kUnitsPerNs;
        }
        TimeNs missing = m_sharedTotal - assigned;
        std::vector<std::pair<int64_t, size_t>> rem; // (-remainder, slot): sorting puts the largest first
        for (size_t s = 0; s < m_units.size(); ++s)
            if (m_units[s] % kUnitsPerNs)
                rem.emplace_back(-(m_units[s] % kUnitsPerNs), s);
        std::sort(rem.begin(), rem.end());
        for (size_t i = 0; i < rem.size() && missing > 0; ++i, --missing)
            ++m_out->busyNs[rem[i].second];
    }
    m_in = nullptr;
    m_out = nullptr;
}

} // namespace gapscope::model
