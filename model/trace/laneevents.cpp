// SPDX-License-Identifier: MIT
#include "model/trace/trace.h"

#include <algorithm>
#include <climits>
#include <numeric>

namespace gapscope::model {
namespace {

template <typename T> void applyPermutation(std::vector<T>& v, const std::vector<uint32_t>& perm)
{
    std::vector<T> out(v.size());
    for (size_t i = 0; i < perm.size(); ++i)
        out[i] = v[perm[i]];
    v.swap(out);
}

// Hands back the room a column grew into (up to half of it, after doubling). A column less than 1/8
// too large stays: copying it would cost more than the room (a window read into a larger one's memory).
template <typename T> void shrinkLoose(std::vector<T>& v)
{
    if (v.capacity() - v.size() > v.size() / 8)
        v.shrink_to_fit();
}

} // namespace

TimeNs LaneEvents::longDuration(size_t i) const
{
    auto it = m_longDur.find(uint32_t(i));
    return it != m_longDur.end() ? it->second : TimeNs(UINT32_MAX);
}

size_t LaneEvents::lowerBound(TimeNs t) const
{
    if (m_blockStart.size() * kPrefixBlock < m_start.size()) // index not built (yet)
        return size_t(std::lower_bound(m_start.begin(), m_start.end(), t) - m_start.begin());
    // The block index first, then one block of starts.
    const size_t b = size_t(std::lower_bound(m_blockStart.begin(), m_blockStart.end(), t) - m_blockStart.begin());
    const size_t lo = b ? (b - 1) * kPrefixBlock : 0, hi = std::min(m_start.size(), b * kPrefixBlock);
    return size_t(std::lower_bound(m_start.begin() + long(lo), m_start.begin() + long(hi), t) - m_start.begin());
}

void LaneEvents::push(TimeNs start, TimeNs duration, StringId name, uint32_t corr, uint32_t aux)
{
    if (duration < 0)
        duration = 0;
    if (duration >= TimeNs(UINT32_MAX)) {
        m_longDur[uint32_t(m_start.size())] = duration;
        m_dur.push_back(UINT32_MAX);
    } else {
        m_dur.push_back(uint32_t(duration));
    }
    m_start.push_back(start);
    m_name.push_back(name);
    m_corr.push_back(corr);
    m_aux.push_back(aux);
}

bool LaneEvents::sortIfNeeded()
{
    const size_t n = size();
    bool sorted = true;
    for (size_t i = 1; i < n && sorted; ++i)
        sorted = m_start[i] > m_start[i - 1] || (m_start[i] == m_start[i - 1] && duration(i) <= duration(i - 1));
    if (sorted)
        return false;
    std::vector<uint32_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0u);
    std::stable_sort(perm.begin(), perm.end(), [this](uint32_t a, uint32_t b) {
        return m_start[a] != m_start[b] ? m_start[a] < m_start[b] : duration(a) > duration(b);
    });
    applyPermutation(m_start, perm);
    applyPermutation(m_dur, perm);
    applyPermutation(m_name, perm);
    applyPermutation(m_corr, perm);
    applyPermutation(m_aux, perm);
    if (!m_longDur.empty()) {
        std::unordered_map<uint32_t, TimeNs> moved;
        for (size_t i = 0; i < n; ++i)
            if (auto it = m_longDur.find(perm[i]); it != m_longDur.end())
                moved[uint32_t(i)] = it->second;
        m_longDur.swap(moved);
    }
    return true;
}

void LaneEvents::buildIndex(size_t fromEvent)
{
    const size_t n = size();
    size_t firstBlock = fromEvent / kPrefixBlock;
    m_blockMaxEnd.resize(firstBlock);
    m_blockMaxEnd.reserve((n + kPrefixBlock - 1) / kPrefixBlock);
    m_blockStart.resize(firstBlock);
    m_blockStart.reserve((n + kPrefixBlock - 1) / kPrefixBlock);
    TimeNs running = firstBlock ? m_blockMaxEnd.back() : INT64_MIN;
    if (fromEvent == 0)
        m_maxDuration = 0;
    for (size_t b = firstBlock; b * kPrefixBlock < n; ++b) {
        size_t end = std::min(n, (b + 1) * kPrefixBlock);
        for (size_t i = b * kPrefixBlock; i < end; ++i) {
            TimeNs d = m_dur[i] != UINT32_MAX ? TimeNs(m_dur[i]) : duration(i);
            m_maxDuration = std::max(m_maxDuration, d);
            running = std::max(running, m_start[i] + d);
        }
        m_blockMaxEnd.push_back(running);
        m_blockStart.push_back(m_start[b * kPrefixBlock]);
    }
}

void LaneEvents::shrink()
{
    shrinkLoose(m_start);
    shrinkLoose(m_dur);
    shrinkLoose(m_name);
    shrinkLoose(m_corr);
    shrinkLoose(m_aux);
    shrinkLoose(m_blockMaxEnd);
    shrinkLoose(m_blockStart);
}

size_t LaneEvents::memoryBytes() const
{
    return m_start.capacity() * 8 + (m_dur.capacity() + m_name.capacity() + m_corr.capacity() + m_aux.capacity()) * 4
        + (m_blockMaxEnd.capacity() + m_blockStart.capacity()) * 8 + m_longDur.size() * 32;
}

std::pair<size_t, size_t> LaneEvents::overlapping(TimeNs t0, TimeNs t1) const
{
    if (t1 <= t0 || m_start.empty())
        return { 0, 0 };
    const size_t last = lowerBound(t1);
    // First block whose prefix-maximum end passes t0, then the first event inside it that does.
    auto it = std::upper_bound(m_blockMaxEnd.begin(), m_blockMaxEnd.end(), t0);
    if (it == m_blockMaxEnd.end())
        return { last, last };
    size_t b = size_t(it - m_blockMaxEnd.begin());
    TimeNs running = b ? m_blockMaxEnd[b - 1] : INT64_MIN;
    size_t first = b * kPrefixBlock;
    const size_t blockEnd = std::min(size(), first + kPrefixBlock);
    for (; first < blockEnd; ++first) {
        running = std::max(running, end(first));
        if (running > t0)
            break;
    }
    return { std::min(first, last), last };
}

} // namespace gapscope::model
