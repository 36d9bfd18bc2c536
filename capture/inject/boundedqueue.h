// SPDX-License-Identifier: MIT
#pragma once

// BoundedQueue<T>: a fixed-capacity multi-producer multi-consumer queue (Vyukov's bounded MPMC
// design: one sequence number per cell, two atomic cursors). It never allocates after
// construction and never blocks: tryPush() fails when the queue is full and the caller counts the
// loss; tryPop() fails when it is empty.
//
// It is how everything crosses from the traced application's threads (CUPTI, NVTX and NCCL
// callbacks) to the injection library's own thread, so those callbacks never take a lock.
//
// Invariants: capacity is a power of two (rounded up); T is trivially copyable (fixed-size records).
// Threading: any number of threads may push and pop concurrently.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

namespace gapscope::capture::inject {

template <typename T> class BoundedQueue {
    static_assert(std::is_trivially_copyable_v<T>, "BoundedQueue holds fixed-size records only");

public:
    explicit BoundedQueue(size_t capacity)
    {
        size_t n = 2;
        while (n < capacity)
            n <<= 1;
        m_mask = n - 1;
        m_cells.reset(new Cell[n]);
        for (size_t i = 0; i < n; ++i)
            m_cells[i].sequence.store(i, std::memory_order_relaxed);
    }
    BoundedQueue(const BoundedQueue&) = delete;
    BoundedQueue& operator=(const BoundedQueue&) = delete;

    size_t capacity() const { return m_mask + 1; }

    bool tryPush(const T& value)
    {
        size_t pos = m_tail.load(std::memory_order_relaxed);
        for (;;) {
            Cell& cell = m_cells[pos & m_mask];
            const size_t seq = cell.sequence.load(std::memory_order_acquire);
            const intptr_t diff = intptr_t(seq) - intptr_t(pos);
            if (diff == 0) {
                if (m_tail.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
                    cell.value = value;
                    cell.sequence.store(pos + 1, std::memory_order_release);
                    return true;
                }
            } else if (diff < 0) {
                return false; // full
            } else {
                pos = m_tail.load(std::memory_order_relaxed);
            }
        }
    }

    bool tryPop(T& out)
    {
        size_t pos = m_head.load(std::memory_order_relaxed);
        for (;;) {
            Cell& cell = m_cells[pos & m_mask];
            const size_t seq = cell.sequence.load(std::memory_order_acquire);
            const intptr_t diff = intptr_t(seq) - intptr_t(pos + 1);
            if (diff == 0) {
                if (m_head.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
                    out = cell.value;
                    cell.sequence.store(pos + m_mask + 1, std::memory_order_release);
                    return true;
                }
            } else if (diff < 0) {
                return false; // empty
            } else {
                pos = m_head.load(std::memory_order_relaxed);
            }
        }
    }

    // Approximate (exact when no push/pop runs concurrently).
    size_t size() const
    {
        const size_t t = m_tail.load(std::memory_order_acquire);
        const size_t h = m_head.load(std::memory_order_acquire);
        return t >= h ? t - h : 0;
    }

private:
    struct Cell {
        std::atomic<size_t> sequence;
        T value;
    };
    std::unique_ptr<Cell[]> m_cells;
    size_t m_mask = 0;
    alignas(64) std::atomic<size_t> m_tail { 0 };
    alignas(64) std::atomic<size_t> m_head { 0 };
};

} // namespace gapscope::capture::inject
