// SPDX-License-Identifier: MIT
#pragma once

// MemoryBudget: the one limit on what reading a trace may allocate, shared by the .gapscope reader,
// the importers, the CLI (--max-memory) and the viewer.
//
// Two uses. check() asks, before a trace is built, whether the memory it needs (events times their
// in-memory size, see kTraceBytesPerEvent) fits; the answer is the message users see
// ("trace larger than the N GB budget ..."). reserve() takes transient bytes (a decompression buffer)
// out of the budget for as long as the returned Reservation lives, so decode threads together never
// hold more than the budget whatever the frames claim.
//
// The default limit is three quarters of the smaller of physical memory and the address-space limit
// (ulimit -v), so a process under a limit fails with a message instead of std::bad_alloc.
//
// Threading: all functions are thread-safe (one process-wide atomic limit and counter).

#include "model/base/status.h"

#include <cstdint>
#include <string>

namespace gapscope::format {

// Bytes one event takes in a loaded Trace (columns, summaries, side tables), rounded up.
constexpr uint64_t kTraceBytesPerEvent = 48;

class MemoryBudget {
public:
    static uint64_t limit();
    // 0 restores the default.
    static void setLimit(uint64_t bytes);
    static uint64_t defaultLimit();
    // Parses "8G", "512M", "1.5G", "1073741824" (bytes); false on anything else.
    static bool parse(const std::string& text, uint64_t& bytes);

    // Fails, with the message users see, when `bytes` (what a trace needs) is over the limit.
    static Status check(uint64_t bytes, const std::string& what);
    // "trace larger than the N GB budget ..."; `atLeast`: `need` is a lower bound (reading stopped).
    static std::string exceeded(uint64_t need, bool atLeast = false);

    class Reservation {
    public:
        Reservation() = default;
        ~Reservation() { release(); }
        Reservation(Reservation&& o) noexcept
            : m_bytes(o.m_bytes)
        {
            o.m_bytes = 0;
        }
        Reservation& operator=(Reservation&& o) noexcept;
        Reservation(const Reservation&) = delete;
        Reservation& operator=(const Reservation&) = delete;
        void release();
        // Takes `bytes` more; on failure the reservation keeps what it had.
        Status grow(uint64_t bytes);
        uint64_t bytes() const { return m_bytes; }

    private:
        friend class MemoryBudget;
        uint64_t m_bytes = 0;
    };
    // Takes `bytes` of transient memory out of the budget, or fails when the budget (less what
    // other reservations hold) cannot give them.
    static Status reserve(uint64_t bytes, Reservation& out);
    static uint64_t reserved();
};

} // namespace gapscope::format
