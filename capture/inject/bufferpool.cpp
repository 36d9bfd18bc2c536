// SPDX-License-Identifier: MIT
#include "capture/inject/bufferpool.h"

namespace gapscope::capture::inject {

namespace {
constexpr size_t kAlign = 8; // CUPTI requires 8-byte aligned buffers
}

BufferPool::BufferPool(size_t bufferBytes, size_t count)
    : m_bufferBytes((bufferBytes + kAlign - 1) / kAlign * kAlign)
    , m_count(count ? count : 1)
    , m_data(new std::atomic<uint8_t*>[m_count])
    , m_state(new std::atomic<uint8_t>[m_count])
    , m_free(m_count)
    , m_completed(m_count)
{
    for (uint32_t i = 0; i < m_count; ++i) {
        m_data[i].store(allocateBlock(), std::memory_order_relaxed);
        m_state[i].store(Free, std::memory_order_relaxed);
        m_free.tryPush(i);
    }
}

BufferPool::~BufferPool() = default;

uint8_t* BufferPool::allocateBlock()
{
    m_blocks.emplace_back(new uint8_t[m_bufferBytes + kAlign]);
    const auto raw = reinterpret_cast<uintptr_t>(m_blocks.back().get());
    return reinterpret_cast<uint8_t*>((raw + kAlign - 1) / kAlign * kAlign);
}

int BufferPool::indexOf(const uint8_t* buffer) const
{
    // A short scan (pools hold tens to a few hundred buffers); completions are rare events.
    for (size_t i = 0; i < m_count; ++i)
        if (m_data[i].load(std::memory_order_acquire) == buffer)
            return int(i);
    return -1;
}

bool BufferPool::acquire(uint8_t** buffer, size_t* size)
{
    uint32_t index = 0;
    if (!m_free.tryPop(index)) {
        m_refused.fetch_add(1, std::memory_order_relaxed);
        *buffer = nullptr;
        *size = 0;
        return false;
    }
    m_state[index].store(WithCupti, std::memory_order_release);
    m_inUse.fetch_add(1, std::memory_order_relaxed);
    *buffer = m_data[index].load(std::memory_order_acquire);
    *size = m_bufferBytes;
    return true;
}

void BufferPool::complete(uint8_t* buffer, size_t validSize)
{
    const int index = indexOf(buffer);
    uint8_t expected = WithCupti;
    if (index < 0 || !m_state[index].compare_exchange_strong(expected, Filled_, std::memory_order_acq_rel)) {
        m_foreign.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    const Slot slot { uint32_t(index), uint32_t(validSize <= m_bufferBytes ? validSize : m_bufferBytes) };
    // Capacity equals the buffer count, so a buffer of ours always finds a place.
    m_completed.tryPush(slot);
    m_completedCount.fetch_add(1, std::memory_order_relaxed);
}

bool BufferPool::takeCompleted(Filled& out)
{
    Slot slot {};
    if (!m_completed.tryPop(slot))
        return false;
    out.data = m_data[slot.index].load(std::memory_order_acquire);
    out.validSize = slot.validSize;
    return true;
}

void BufferPool::release(uint8_t* buffer)
{
    const int index = indexOf(buffer);
    if (index < 0)
        return;
    m_state[index].store(Free, std::memory_order_release);
    m_free.tryPush(uint32_t(index));
    m_inUse.fetch_sub(1, std::memory_order_relaxed);
}

size_t BufferPool::abandonInFlight()
{
    size_t n = 0;
    for (uint32_t i = 0; i < m_count; ++i) {
        uint8_t expected = WithCupti;
        if (!m_state[i].compare_exchange_strong(expected, Free, std::memory_order_acq_rel))
            continue;
        m_data[i].store(allocateBlock(), std::memory_order_release);
        m_free.tryPush(i);
        m_inUse.fetch_sub(1, std::memory_order_relaxed);
        ++n;
    }
    m_abandoned.fetch_add(n, std::memory_order_relaxed);
    return n;
}

} // namespace gapscope::capture::inject
