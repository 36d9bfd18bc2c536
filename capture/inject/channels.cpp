// SPDX-License-Identifier: MIT
#include "capture/inject/channels.h"

namespace gapscope::capture::inject {

void Channels::allocate(size_t bufferBytes, size_t bufferCount)
{
    if (!m_markers) {
        m_markers = std::make_unique<BoundedQueue<StepMarker>>(1u << 14);
        markers.store(m_markers.get(), std::memory_order_release);
    }
    if (!m_nvtx) {
        m_nvtx = std::make_unique<BoundedQueue<NvtxRecord>>(1u << 15);
        nvtx.store(m_nvtx.get(), std::memory_order_release);
    }
    if (!m_collectives) {
        m_collectives = std::make_unique<BoundedQueue<CollectiveRecord>>(1u << 13);
        collectives.store(m_collectives.get(), std::memory_order_release);
    }
    if (!m_pool) {
        m_pool = std::make_unique<BufferPool>(bufferBytes, bufferCount);
        pool.store(m_pool.get(), std::memory_order_release);
    }
}

Channels& channels()
{
    // Never destroyed: callbacks may still run while the process exits.
    static Channels* instance = new Channels();
    return *instance;
}

} // namespace gapscope::capture::inject
