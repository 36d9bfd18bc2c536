// SPDX-License-Identifier: MIT
#include "capture/inject/bufferpool.h"

namespace gapscope::capture::inject {

namespace {
constexpr size_t kAlign = 8; // CUPTI requires 8-byte aligned buffers
}

BufferPool::BufferPool(size_t bufferBytes, size_t count)
    : m_bufferBytes((bufferBytes + kAlign - 1) / kAlign * kAlign)
    , m_count(count ? count : 1)
    , m_free(m_count)
    , m_completed(m_count)
{
    m_storage.reset(new uint8_t[m_bufferBytes * m_count + kAlign]);
    const auto raw = reinterpret_cast<uintptr_t>(m_storage.get());
    m_base = reinterpret_cast<uint8_t*>((raw + kAlign - 1) / kAlign * kAlign);
    for (uint32_t i = 0; i < m_count; ++i)
        m_free.tryPush(i);
}

BufferPool::~BufferPool() = default;

int BufferPool::indexOf(const uint8_t* buffer) const
{
    if (buffer < m_base)
        return -1;
    const size_t offset = size_t(buffer - m_base);
    if (offset % m_bufferBytes != 0 || offset / m_bufferBytes >= m_count)
        return -1;
    return int(offset / m_bufferBytes);
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
    m_inUse.fetch_add(1, std::memory_order_relaxed);
    *buffer = m_base + size_t(index) * m_bufferBytes;
    *size = m_bufferBytes;
    return true;
}

void BufferPool::complete(uint8_t* buffer, size_t validSize)
{
    const int index = indexOf(buffer);
    if (index < 0) {
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
    out.data = m_base + size_t(slot.index) * m_bufferBytes;
    out.validSize = slot.validSize;
    return true;
}

void BufferPool::release(uint8_t* buffer)
{
    const int index = indexOf(buffer);
    if (index < 0)
        return;
    m_free.tryPush(uint32_t(index));
    m_inUse.fetch_sub(1, std::memory_order_relaxed);
}

} // namespace gapscope::capture::inject
