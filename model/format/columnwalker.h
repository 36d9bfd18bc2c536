// SPDX-License-Identifier: MIT
#pragma once

// ColumnWalker: decodes the common columns of an event block (trace.proto, message Columns) in
// order: lane, absolute start, duration, name, correlation id. Both time codings are understood
// (start_delta or start_gap, duration or duration_delta); a missing column reads as zeros. Values a
// damaged or hostile writer could make overflow are clamped (starts to +-2^62, durations to
// [0, 2^60]) with unsigned arithmetic, so decoding is free of undefined behaviour whatever the input.
// Call ChunkDecoder::validate() first: lane and name ids must be below the sizes given.
//
// The walker keeps scratch arrays (previous end per lane, previous duration per name) between
// blocks, so a walker per thread decodes without allocating. Not thread-safe.

#include "model/format/trace.pb.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gapscope::format {

constexpr int64_t kMaxAbsTime = int64_t(1) << 62;
constexpr uint64_t kMaxDuration = uint64_t(1) << 60;

class ColumnWalker {
public:
    // f(i, lane, start, duration, name, correlation) for each event of the block.
    template <typename F> void walk(const pb::Columns& c, int64_t base, size_t laneCount, size_t stringCount, F&& f)
    {
        const int n = c.lane_size();
        if (n == 0)
            return;
        const uint32_t* lane = c.lane().data();
        const int64_t* sd = ptr(c.start_delta());
        const int64_t* sg = ptr(c.start_gap());
        const uint64_t* du = ptr(c.duration());
        const int64_t* dd = ptr(c.duration_delta());
        const uint32_t* nm = ptr(c.name());
        const int64_t* cd = ptr(c.correlation_delta());
        if (sg)
            prepare(m_laneEnd, m_laneStamp, laneCount);
        if (dd)
            prepare(m_nameDur, m_nameStamp, stringCount + 1);
        if (++m_stamp == 0) { // wrapped: old stamps could match again
            std::fill(m_laneStamp.begin(), m_laneStamp.end(), 0u);
            std::fill(m_nameStamp.begin(), m_nameStamp.end(), 0u);
            m_stamp = 1;
        }
        uint64_t t = uint64_t(base), corr = 0;
        for (int i = 0; i < n; ++i) {
            const uint32_t l = lane[i];
            const uint32_t name = nm ? nm[i] : 0;
            int64_t dur;
            if (dd) {
                const uint64_t prev = m_nameStamp[name] == m_stamp ? uint64_t(m_nameDur[name]) : 0;
                dur = clampDuration(prev + uint64_t(dd[i]));
                m_nameDur[name] = dur;
                m_nameStamp[name] = m_stamp;
            } else {
                dur = du ? int64_t(std::min(du[i], kMaxDuration)) : 0;
            }
            int64_t start;
            if (sg) {
                const uint64_t ref = m_laneStamp[l] == m_stamp ? uint64_t(m_laneEnd[l]) : uint64_t(base);
                start = clampTime(ref + uint64_t(sg[i]));
                m_laneEnd[l] = start + dur;
                m_laneStamp[l] = m_stamp;
            } else {
                t += sd ? uint64_t(sd[i]) : 0;
                start = clampTime(t);
            }
            corr += cd ? uint64_t(cd[i]) : 0;
            f(i, l, start, dur, name, uint32_t(corr));
        }
    }

    static int64_t clampTime(uint64_t v) { return std::clamp(int64_t(v), -kMaxAbsTime, kMaxAbsTime); }
    static int64_t clampDuration(uint64_t v) { return std::clamp(int64_t(v), int64_t(0), int64_t(kMaxDuration)); }

private:
    template <typename R> static const typename R::value_type* ptr(const R& r) { return r.size() ? r.data() : nullptr; }
    template <typename T> void prepare(std::vector<T>& values, std::vector<uint32_t>& stamps, size_t n)
    {
        if (values.size() < n) {
            values.resize(n);
            stamps.resize(n, 0);
        }
    }
    std::vector<int64_t> m_laneEnd;
    std::vector<uint32_t> m_laneStamp;
    std::vector<int64_t> m_nameDur;
    std::vector<uint32_t> m_nameStamp;
    uint32_t m_stamp = 0;
};

} // namespace gapscope::format
