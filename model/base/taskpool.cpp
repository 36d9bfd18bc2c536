// SPDX-License-Identifier: MIT
#include "model/base/taskpool.h"

#ifdef __linux__
#include <sched.h>
#endif

#include <algorithm>
#include <atomic>
#include <exception>

namespace gapscope::model {

namespace {

std::mutex g_sharedMutex;
unsigned g_configured = 0;
bool g_created = false;

} // namespace

// One parallelFor. Items are claimed through `next`; the caller closes the batch by pushing `next`
// past n, so that no item is claimed after it stops waiting.
struct TaskPool::Batch {
    const std::function<void(size_t)>* fn = nullptr;
    size_t n = 0;
    CancelToken cancel;
    std::atomic<size_t> next { 0 };
    std::atomic<size_t> finished { 0 };
    std::mutex mutex;
    std::condition_variable allDone;
    std::exception_ptr error; // under mutex
};

TaskPool::TaskPool(unsigned threads)
{
    threads = std::max(1u, threads);
    m_workers.reserve(threads);
    for (unsigned i = 0; i < threads; ++i)
        m_workers.emplace_back([this] { workerLoop(); });
}

TaskPool::~TaskPool()
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    for (auto& t : m_workers)
        t.join();
}

unsigned TaskPool::defaultSize()
{
    unsigned cpus = std::thread::hardware_concurrency();
#ifdef __linux__
    // The CPUs this process may run on (taskset, a container's cpuset), not every CPU of the machine.
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        cpus = std::min(cpus ? cpus : unsigned(CPU_COUNT(&set)), unsigned(CPU_COUNT(&set)));
#endif
    return std::max(2u, cpus);
}

TaskPool& TaskPool::shared()
{
    static TaskPool* pool = [] {
        std::lock_guard<std::mutex> lock(g_sharedMutex);
        g_created = true;
        // Never destroyed: jobs may still run while the process exits.
        return new TaskPool(g_configured ? g_configured : defaultSize());
    }();
    return *pool;
}

bool TaskPool::configure(unsigned threads)
{
    std::lock_guard<std::mutex> lock(g_sharedMutex);
    if (g_created)
        return false;
    g_configured = threads;
    return true;
}

void TaskPool::help(Batch& b)
{
    for (size_t i; !b.cancel.cancelled() && (i = b.next.fetch_add(1)) < b.n;) {
        try {
            (*b.fn)(i);
        } catch (...) {
            std::lock_guard<std::mutex> lock(b.mutex);
            if (!b.error)
                b.error = std::current_exception();
        }
        b.finished.fetch_add(1);
        if (b.next.load() >= b.n) { // exhausted or closed: the caller may be waiting
            std::lock_guard<std::mutex> lock(b.mutex);
            b.allDone.notify_all();
        }
    }
}

size_t TaskPool::parallelFor(size_t n, const std::function<void(size_t)>& fn, unsigned width, const CancelToken& cancel)
{
    if (n == 0)
        return 0;
    const size_t threads = std::min<size_t>(n, width ? std::min(width, size()) : size());
    auto b = std::make_shared<Batch>();
    b->fn = &fn;
    b->n = n;
    b->cancel = cancel;
    if (threads > 1) {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            for (size_t t = 1; t < threads; ++t)
                m_queue.push_front(Entry { b, {} });
        }
        if (threads > 2)
            m_wake.notify_all();
        else
            m_wake.notify_one();
    }
    help(*b);
    // Close the batch: a claim from now on gets an index >= n.
    const size_t claimed = std::min(n, b->next.fetch_add(n));
    {
        std::unique_lock<std::mutex> lock(b->mutex);
        b->allDone.wait(lock, [&] { return b->finished.load() >= claimed; });
    }
    if (b->error)
        std::rethrow_exception(b->error);
    return claimed;
}

void TaskPool::submit(std::function<void()> job)
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_queue.push_back(Entry { nullptr, std::move(job) });
    }
    m_wake.notify_one();
}

void TaskPool::workerLoop()
{
    for (;;) {
        Entry e;
        {
            std::unique_lock<std::mutex> lock(m_mutex);
            m_wake.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
            if (m_queue.empty())
                return; // stopping, and nothing left to run
            e = std::move(m_queue.front());
            m_queue.pop_front();
        }
        if (e.batch)
            help(*e.batch);
        else if (e.job)
            e.job();
    }
}

} // namespace gapscope::model
