// SPDX-License-Identifier: MIT
#include "capture/client/clocksync.h"

namespace gapscope::capture {

bool ClockSync::add(int64_t t1, int64_t t2, int64_t t3, int64_t t4)
{
    const Sample s { t1, t2, t3, t4 };
    if (t4 < t1 || t3 < t2 || s.delay() < -1000)
        return false;
    m_samples.push_back(s);
    if (m_best < 0 || s.delay() < m_samples[size_t(m_best)].delay())
        m_best = long(m_samples.size() - 1);
    return true;
}

int64_t ClockSync::offsetNs() const
{
    return valid() ? m_samples[size_t(m_best)].offset() : 0;
}

int64_t ClockSync::delayNs() const
{
    return valid() ? m_samples[size_t(m_best)].delay() : 0;
}

double ClockSync::errorNs() const
{
    return valid() ? double(m_samples[size_t(m_best)].delay() < 0 ? 0 : m_samples[size_t(m_best)].delay()) / 2.0 : 0.0;
}

} // namespace gapscope::capture
