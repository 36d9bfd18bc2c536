// SPDX-License-Identifier: MIT
#pragma once

// BufferPool: the fixed set of activity buffers handed to CUPTI. Memory is bounded by
// construction (count x bytes, allocated once, one block). When every buffer is in use (the
// writer fell behind), acquire() refuses: CUPTI then drops records and counts them (safe on CUDA
// 13, see CAPTURE.md), and the pool counts the refusal, so a flood costs data, never memory.
//
// Flow: CUPTI's request callback -> acquire(); CUPTI's completion callback -> complete(); the
// library's own thread -> takeCompleted(), reads the records, release().
//
// Threading: acquire() and complete() run on any application or CUPTI thread and never block or
// allocate (lock-free queues); takeCompleted()/release() on the library's thread.

#include "capture/inject/boundedqueue.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace gapscope::capture::inject {

class BufferPool {
public:
    BufferPool(size_t bufferBytes, size_t count);
    ~BufferPool();
    BufferPool(const BufferPool&) = delete;
    BufferPool& operator=(const BufferPool&) = delete;

    size_t bufferBytes() const { return m_bufferBytes; }
    size_t count() const { return m_count; }
    size_t totalBytes() const { return m_bufferBytes * m_count; }

    // Request callback: a free buffer, or false (refusal counted) when none is free.
    bool acquire(uint8_t** buffer, size_t* size);
    // Completion callback: queues a filled buffer. A buffer that is not ours is counted and ignored.
    void complete(uint8_t* buffer, size_t validSize);

    struct Filled {
        uint8_t* data = nullptr;
        size_t validSize = 0;
    };
    bool takeCompleted(Filled& out);
    void release(uint8_t* buffer);

    uint64_t refused() const { return m_refused.load(std::memory_order_relaxed); }
    uint64_t foreign() const { return m_foreign.load(std::memory_order_relaxed); }
    uint64_t completedBuffers() const { return m_completedCount.load(std::memory_order_relaxed); }
    size_t inUse() const { return m_inUse.load(std::memory_order_relaxed); }

private:
    int indexOf(const uint8_t* buffer) const;

    struct Slot {
        uint32_t index;
        uint32_t validSize;
    };
    size_t m_bufferBytes;
    size_t m_count;
    std::unique_ptr<uint8_t[]> m_storage;
    uint8_t* m_base = nullptr;
    BoundedQueue<uint32_t> m_free;
    BoundedQueue<Slot> m_completed;
    std::atomic<uint64_t> m_refused { 0 };
    std::atomic<uint64_t> m_foreign { 0 };
    std::atomic<uint64_t> m_completedCount { 0 };
    std::atomic<size_t> m_inUse { 0 };
};

} // namespace gapscope::capture::inject
