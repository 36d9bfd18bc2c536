// SPDX-License-Identifier: MIT
#include "views/common/jobtracker.h"

gapscope::model::TaskPool* jobPool()
{
    return &gapscope::model::TaskPool::shared();
}

bool JobTracker::Ticket::stale() const
{
    return !m_gen || m_gen->load(std::memory_order_acquire) != m_id;
}

JobTracker::JobTracker()
    : m_gen(std::make_shared<std::atomic<uint64_t>>(0))
{
}

JobTracker::~JobTracker()
{
    cancel();
}

JobTracker::Ticket JobTracker::begin()
{
    const uint64_t id = m_gen->fetch_add(1, std::memory_order_acq_rel) + 1;
    m_current.cancel();
    m_current = gapscope::model::CancelToken();
    return Ticket(m_gen, id, m_current);
}

void JobTracker::cancel()
{
    m_gen->fetch_add(1, std::memory_order_acq_rel);
    m_current.cancel();
}
