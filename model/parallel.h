// SPDX-License-Identifier: MIT
#pragma once

// parallelFor: runs fn(i) for i in [0, n) on `threads` threads (the caller is one of them), items
// handed out one at a time through an atomic counter. Internal helper of the trace core.

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace gapscope::model {

template <typename F> void parallelFor(size_t n, unsigned threads, F&& fn)
{
    std::atomic<size_t> next { 0 };
    auto work = [&]() {
        for (size_t i; (i = next.fetch_add(1)) < n;)
            fn(i);
    };
    threads = unsigned(std::max<size_t>(1, std::min<size_t>(threads, n)));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t)
        pool.emplace_back(work);
    work();
    for (auto& t : pool)
        t.join();
}

inline unsigned defaultThreads(unsigned requested)
{
    if (requested)
        return requested;
    return std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
}

} // namespace gapscope::model
