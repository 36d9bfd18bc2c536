// SPDX-License-Identifier: MIT
#include "views/jobtracker.h"

#include <QThread>
#include <QThreadPool>

#include <algorithm>

QThreadPool* jobPool()
{
    static QThreadPool* pool = [] {
        auto* p = new QThreadPool; // lives until exit: jobs may still hold it while the app quits
        p->setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
        p->setExpiryTimeout(30'000);
        return p;
    }();
    return pool;
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
    return Ticket(m_gen, id);
}

void JobTracker::cancel()
{
    m_gen->fetch_add(1, std::memory_order_acq_rel);
}
