// SPDX-License-Identifier: MIT
#pragma once

// CancelToken: asks work to stop. Copies share one flag: whoever holds a copy may cancel(), and
// every copy then reads cancelled(). Work checks it between items (TaskPool::parallelFor does, and
// long jobs such as the gap analysis pass it on), so cancelled work stops within one item.
// A default-constructed token has a flag of its own, never cancelled unless someone cancels it.
//
// Threading: cancel() and cancelled() are lock-free and safe from any thread.

#include <atomic>
#include <memory>

namespace gapscope::model {

class CancelToken {
public:
    CancelToken()
        : m_flag(std::make_shared<std::atomic<bool>>(false))
    {
    }
    void cancel() const { m_flag->store(true, std::memory_order_release); }
    bool cancelled() const { return m_flag->load(std::memory_order_acquire); }

private:
    std::shared_ptr<std::atomic<bool>> m_flag;
};

} // namespace gapscope::model
