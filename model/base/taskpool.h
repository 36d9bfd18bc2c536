// SPDX-License-Identifier: MIT
#pragma once

// TaskPool: the one pool of worker threads of a process, sized once. The loader, the importers,
// the exports, the gap analysis and the viewer's background jobs all run on TaskPool::shared();
// nothing else starts threads for parallel work (a few dedicated threads stay: a file prefetcher,
// the Kineto parser's pipeline stages, the capture agent's I/O).
//
// parallelFor(n, fn, width, cancel) runs fn(i) for every i in [0, n) on the calling thread plus
// up to width - 1 of the pool's workers (width 0: the pool's size), items handed out one at a time.
// The caller always works and never waits for a worker to become free, so parallelFor may be called
// from a task of the same pool (a viewer job that runs the analysis) without a second pool and
// without deadlock. Items not begun once `cancel` is cancelled are skipped; the call returns the
// number of items that ran, after every item begun has finished. An exception thrown by fn is
// rethrown in the caller (the first one) once every begun item has finished.
//
// submit(job) runs job on a worker later (the viewer's background jobs); parallelFor helpers go
// ahead of waiting jobs.
//
// Sizing: shared() is created on first use with configure()'s size, else one worker per hardware
// thread (at least 2). configure() after that returns false and changes nothing.
// Threading: every method is safe from any thread.

#include "model/base/canceltoken.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace gapscope::model {

class TaskPool {
public:
    explicit TaskPool(unsigned threads);
    ~TaskPool(); // runs the jobs still queued, then joins the workers
    TaskPool(const TaskPool&) = delete;
    TaskPool& operator=(const TaskPool&) = delete;

    static TaskPool& shared();
    static bool configure(unsigned threads);
    static unsigned defaultSize(); // the CPUs this process may run on (its affinity mask), at least 2

    unsigned size() const { return unsigned(m_workers.size()); }

    size_t parallelFor(
        size_t n, const std::function<void(size_t)>& fn, unsigned width = 0, const CancelToken& cancel = CancelToken());
    void submit(std::function<void()> job);

private:
    struct Batch;
    struct Entry {
        std::shared_ptr<Batch> batch; // a parallelFor to help with, or
        std::function<void()> job; // a submitted job
    };
    void workerLoop();
    static void help(Batch& b);

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<Entry> m_queue;
    bool m_stopping = false;
    std::vector<std::thread> m_workers;
};

} // namespace gapscope::model
