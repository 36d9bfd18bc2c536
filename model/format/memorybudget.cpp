// SPDX-License-Identifier: MIT
#include "model/format/memorybudget.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sys/resource.h>
#include <unistd.h>

namespace gapscope::format {
namespace {

std::atomic<uint64_t> g_limit { 0 }; // 0: the default
std::atomic<uint64_t> g_reserved { 0 };

std::string sizeText(uint64_t bytes)
{
    char b[32];
    if (bytes >= 1000000000)
        std::snprintf(b, sizeof b, "%.1f GB", double(bytes) / 1e9);
    else
        std::snprintf(b, sizeof b, "%.0f MB", std::ceil(double(bytes) / 1e6));
    return b;
}

} // namespace

uint64_t MemoryBudget::defaultLimit()
{
    static const uint64_t value = [] {
        uint64_t physical = uint64_t(1) << 34;
        long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
        if (pages > 0 && page > 0)
            physical = uint64_t(pages) * uint64_t(page);
        uint64_t cap = physical;
        struct rlimit rl { };
        if (::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
            cap = std::min<uint64_t>(cap, uint64_t(rl.rlim_cur));
        return cap / 4 * 3;
    }();
    return value;
}

uint64_t MemoryBudget::limit()
{
    const uint64_t l = g_limit.load(std::memory_order_relaxed);
    return l ? l : defaultLimit();
}

void MemoryBudget::setLimit(uint64_t bytes)
{
    g_limit.store(bytes, std::memory_order_relaxed);
}

bool MemoryBudget::parse(const std::string& text, uint64_t& bytes)
{
    if (text.empty())
        return false;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || !std::isfinite(v) || v <= 0)
        return false;
    const std::string unit(end);
    double scale = 1;
    if (unit == "K" || unit == "KB" || unit == "k")
        scale = 1e3;
    else if (unit == "M" || unit == "MB")
        scale = 1e6;
    else if (unit == "G" || unit == "GB")
        scale = 1e9;
    else if (unit == "T" || unit == "TB")
        scale = 1e12;
    else if (!unit.empty())
        return false;
    const double b = v * scale;
    if (b < 1 || b > 1e19)
        return false;
    bytes = uint64_t(b);
    return true;
}

std::string MemoryBudget::exceeded(uint64_t need, bool atLeast)
{
    const std::string size = atLeast ? "reading stopped when it was spent" : "it needs about " + sizeText(need);
    return "trace larger than the " + sizeText(limit()) + " memory budget (" + size
        + "); open fewer files, or raise --max-memory";
}

Status MemoryBudget::check(uint64_t bytes, const std::string& what)
{
    if (bytes <= limit())
        return Status::ok();
    return Status::error(what + ": " + exceeded(bytes));
}

MemoryBudget::Reservation& MemoryBudget::Reservation::operator=(Reservation&& o) noexcept
{
    if (this != &o) {
        release();
        m_bytes = o.m_bytes;
        o.m_bytes = 0;
    }
    return *this;
}

void MemoryBudget::Reservation::release()
{
    if (m_bytes)
        g_reserved.fetch_sub(m_bytes, std::memory_order_relaxed);
    m_bytes = 0;
}

Status MemoryBudget::Reservation::grow(uint64_t bytes)
{
    Reservation more;
    if (Status s = MemoryBudget::reserve(bytes, more); !s)
        return s;
    m_bytes += more.m_bytes;
    more.m_bytes = 0;
    return Status::ok();
}

Status MemoryBudget::reserve(uint64_t bytes, Reservation& out)
{
    out.release();
    const uint64_t l = limit();
    uint64_t cur = g_reserved.load(std::memory_order_relaxed);
    do {
        if (bytes > l || cur > l - bytes)
            return Status::error("a frame needs " + sizeText(bytes) + " to decompress, more than is left of the "
                + sizeText(l) + " memory budget (raise --max-memory)");
    } while (!g_reserved.compare_exchange_weak(cur, cur + bytes, std::memory_order_relaxed));
    out.m_bytes = bytes;
    return Status::ok();
}

uint64_t MemoryBudget::reserved()
{
    return g_reserved.load(std::memory_order_relaxed);
}

} // namespace gapscope::format
