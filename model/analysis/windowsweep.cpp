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

void WindowSweep::busy(TimeNs a, TimeNs b)
{
    a = std::max(a, m_in->clip0);
    b = std::min(b, m_in->clip1);
    if (b <= a || m_active.empty())
        return;
    TimeNs len = b - a;
    m_busyTotal += len;
    int64_t units = len * kUnitsPerNs;
    if (m_active.size() == 1) {
        m_units[m_active.front().second] += units;
        return;
    }
    int64_t k = int64_t(m_active.size());
    int64_t share = units / k, rest = units % k;
    for (size_t i = 0; i < m_active.size(); ++i)
        m_units[m_active[i].second] += share + (int64_t(i) < rest ? 1 : 0);
}

void WindowSweep::idle(TimeNs a, TimeNs b, bool tail)
{
    IdleKind kind = IdleKind::StepGap;
    if (!tail) {
        while (m_syncCursor < m_in->syncCount && m_in->syncs[m_syncCursor].end <= a)
            ++m_syncCursor;
        bool inFlight = m_syncCursor < m_in->syncCount && m_in->syncs[m_syncCursor].start <= a;
        kind = inFlight ? IdleKind::SyncStall : IdleKind::LaunchHost;
    }
    a = std::max(a, m_in->clip0);
    b = std::min(b, m_in->clip1);
    if (b <= a)
        return;
    m_out->idleNs[size_t(kind)] += b - a;
    if (m_in->collectGaps)
        m_out->gaps.push_back(Gap { a, b, kind });
}

void WindowSweep::flushUntil(TimeNs x)
{
    while (!m_active.empty() && m_active.front().first <= x) {
        TimeNs end = m_active.front().first;
        busy(m_t, end);
        m_t = std::max(m_t, end);
        while (!m_active.empty() && m_active.front().first == end) {
            std::pop_heap(m_active.begin(), m_active.end(), kHeapOrder);
            m_active.pop_back();
        }
    }
}

void WindowSweep::run(const Input& in, Result& out)
{
    m_in = &in;
    m_out = &out;
    m_units.assign(in.slotCount, 0);
    m_active.clear();
    m_t = in.w0;
    m_busyTotal = 0;
    m_syncCursor = 0;
    out.busyNs.assign(in.slotCount, 0);
    out.idleNs.fill(0);
    out.gaps.clear();
    out.lastEventEnd = in.w0;

    for (size_t i = 0; i < in.pieceCount; ++i) {
        const Piece& p = in.pieces[i];
        TimeNs s = std::max(p.start, m_t); // robust to slightly unsorted input: never count twice
        flushUntil(s);
        if (m_active.empty()) {
            if (m_t < s)
                idle(m_t, s, false);
        } else {
            busy(m_t, s);
        }
        m_t = std::max(m_t, s);
        if (p.end > s) {
            m_active.emplace_back(p.end, p.slot);
            std::push_heap(m_active.begin(), m_active.end(), kHeapOrder);
        }
        out.lastEventEnd = std::max(out.lastEventEnd, p.end);
    }
    flushUntil(INT64_MAX);
    if (m_t < in.w1)
        idle(m_t, in.w1, true);

    // Units -> whole ns, largest remainder first, so that the slots add up to the busy time.
    TimeNs assigned = 0;
    for (size_t s = 0; s < in.slotCount; ++s) {
        out.busyNs[s] = m_units[s] / kUnitsPerNs;
        assigned += out.busyNs[s];
    }
    TimeNs missing = m_busyTotal - assigned;
    if (missing > 0) {
        std::vector<std::pair<int64_t, size_t>> rem; // (-remainder, slot): sort puts largest first
        for (size_t s = 0; s < in.slotCount; ++s)
            if (m_units[s] % kUnitsPerNs)
                rem.emplace_back(-(m_units[s] % kUnitsPerNs), s);
        std::sort(rem.begin(), rem.end());
        for (size_t i = 0; i < rem.size() && missing > 0; ++i, --missing)
            ++out.busyNs[rem[i].second];
    }
    m_in = nullptr;
    m_out = nullptr;
}

} // namespace gapscope::model
