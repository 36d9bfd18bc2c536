// SPDX-License-Identifier: MIT
#pragma once

// BufferPool: the fixed set of activity buffers handed to CUPTI. Memory is bounded by
// construction (count x bytes, allocated once). When every buffer is in use (the writer fell
// behind), acquire() refuses: CUPTI then drops records and counts them (safe on CUDA 13, see
// CAPTURE.md), and the pool counts the refusal, so a flood costs data, never memory.
//
// Flow: CUPTI's request callback -> acquire(); CUPTI's completion callback -> complete(); the
// library's own thread -> takeCompleted(), reads the records, release().
//
// CUPTI may keep a buffer after activity is switched off and later hand it to whichever client
// registered buffer callbacks last (torch.profiler's Kineto logs "unknown buffer" and ignores it).
// abandonInFlight() gives up such buffers after a capture: their slots get fresh memory, the old
// blocks are left to CUPTI (a bounded leak of the buffers in flight at that moment), and a late
// return of an old block is counted as foreign and ignored.
//
// Threading: acquire() and complete() run on any application or CUPTI thread and never block or
// allocate (lock-free queues, atomic slot states); takeCompleted(), release() and
// abandonInFlight() run on the library's thread.

#include "capture/inject/boundedqueue.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

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

    // After activity is off: buffers still held by CUPTI are replaced by fresh ones. Returns how many.
    size_t abandonInFlight();

    uint64_t refused() const { return m_refused.load(std::memory_order_relaxed); }
    uint64_t foreign() const { return m_foreign.load(std::memory_order_relaxed); }
    uint64_t completedBuffers() const { return m_completedCount.load(std::memory_order_relaxed); }
    uint64_t abandoned() const { return m_abandoned.load(std::memory_order_relaxed); }
    size_t inUse() const { return m_inUse.load(std::memory_order_relaxed); }

private:
    enum State : uint8_t { Free = 0, WithCupti = 1, Filled_ = 2 };
    int indexOf(const uint8_t* buffer) const;
    uint8_t* allocateBlock();

    struct Slot {
        uint32_t index;
        uint32_t validSize;
    };
    size_t m_bufferBytes;
    size_t m_count;
    std::unique_ptr<std::atomic<uint8_t*>[]> m_data;
    std::unique_ptr<std::atomic<uint8_t>[]> m_state;
    std::vector<std::unique_ptr<uint8_t[]>>
        m_blocks; // every block ever allocated (never freed while CUPTI may hold it)
    BoundedQueue<uint32_t> m_free;
    BoundedQueue<Slot> m_completed;
    std::atomic<uint64_t> m_refused { 0 };
    std::atomic<uint64_t> m_foreign { 0 };
    std::atomic<uint64_t> m_completedCount { 0 };
    std::atomic<uint64_t> m_abandoned { 0 };
    std::atomic<size_t> m_inUse { 0 };
};

} // namespace gapscope::capture::inject
