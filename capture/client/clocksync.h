// SPDX-License-Identifier: MIT
#pragma once

// ClockSync: NTP-style estimate of a peer's clock offset from ping/pong exchanges.
// For one exchange with t1 (our send), t2 (peer receive), t3 (peer send), t4 (our receive):
//   offset = ((t2 - t1) + (t3 - t4)) / 2   (peer clock - our clock)
//   delay  = (t4 - t1) - (t3 - t2)          (round trip spent on the wire)
// The estimate is taken from the exchange with the smallest delay (least queuing), and its error
// is bounded by delay / 2. Add -offset() to the peer's timestamps to put them on our clock.
//
// Threading: a plain value type.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gapscope::capture {

class ClockSync {
public:
    struct Sample {
        int64_t t1, t2, t3, t4;
        int64_t offset() const { return ((t2 - t1) + (t3 - t4)) / 2; }
        int64_t delay() const { return (t4 - t1) - (t3 - t2); }
    };

    // Ignores samples that are impossible (negative delay beyond 1 us of clock granularity).
    bool add(int64_t t1, int64_t t2, int64_t t3, int64_t t4);

    bool valid() const { return m_best >= 0; }
    size_t samples() const { return m_samples.size(); }
    int64_t offsetNs() const; // peer - local; 0 when no sample
    int64_t delayNs() const; // round trip of the best sample
    double errorNs() const; // bound on |true offset - offsetNs()|

private:
    std::vector<Sample> m_samples;
    long m_best = -1;
};

} // namespace gapscope::capture
