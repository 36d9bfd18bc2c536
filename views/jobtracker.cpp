// SPDX-License-Identifier: MIT
#include "views/jobtracker.h"

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
    return Ticket(m_gen, id);
}

void JobTracker::cancel()
{
    m_gen->fetch_add(1, std::memory_order_acq_rel);
}
