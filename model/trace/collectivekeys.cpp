// SPDX-License-Identifier: MIT
#include "model/trace/collectivekeys.h"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace gapscope::model {

namespace {

constexpr uint64_t kNameComm = 1ull << 63; // communicator "one per kernel name"
constexpr uint64_t kSeqBase = 1ull << 40; // shifted ordinals stay positive
constexpr uint64_t kNoOverlapBase = 1ull << 62; // keys of a rank that overlaps no other

struct Record {
    TimeNs start;
    uint64_t comm;
    uint64_t seq;
};

std::vector<Record> recordsOf(const Trace& trace, uint32_t rank)
{
    std::vector<Record> out;
    for (LaneId id : trace.lanesOf(rank, LaneKind::Collective)) {
        const LaneEvents& ev = trace.lane(id).events;
        for (size_t i = 0; i < ev.size(); ++i)
            if (const CollectiveInfo* c = trace.collective(id, i))
                out.push_back({ ev.start(i), c->comm, c->sequence });
    }
    auto earlier = [](const Record& a, const Record& b) { return a.start < b.start; };
    if (!std::is_sorted(out.begin(), out.end(), earlier)) // one lane is sorted already
        std::stable_sort(out.begin(), out.end(), earlier);
    return out;
}

TimeNs absDiff(TimeNs a, TimeNs b)
{
    return a > b ? a - b : b - a;
}

// Median |refEnds[k + shift] - ends[k]| over up to 64 evenly spread k of the overlap; -1 without overlap.
TimeNs score(const std::vector<TimeNs>& refEnds, const std::vector<TimeNs>& ends, int64_t shift)
{
    const int64_t lo = std::max<int64_t>(0, -shift),
                  hi = std::min<int64_t>(int64_t(ends.size()), int64_t(refEnds.size()) - shift);
    if (hi <= lo)
        return -1;
    std::vector<TimeNs> d;
    const int64_t n = hi - lo, step = std::max<int64_t>(1, n / 64);
    for (int64_t k = lo; k < hi; k += step)
        d.push_back(absDiff(refEnds[size_t(k + shift)], ends[size_t(k)]));
    std::nth_element(d.begin(), d.begin() + long(d.size() / 2), d.end());
    return d[d.size() / 2];
}

} // namespace

int64_t CollectiveKeys::bestShift(const std::vector<TimeNs>& refEnds, const std::vector<TimeNs>& ends, bool& overlaps)
{
    std::vector<int64_t> candidates;
    const size_t n = ends.size();
    for (size_t k : { size_t(0), n / 4, n / 2, 3 * n / 4, n - 1 }) {
        auto it = std::lower_bound(refEnds.begin(), refEnds.end(), ends[k]);
        for (auto j : { it - 1, it })
            if (j >= refEnds.begin() && j < refEnds.end())
                candidates.push_back(int64_t(j - refEnds.begin()) - int64_t(k));
    }
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    int64_t best = 0;
    TimeNs bestScore = -1;
    for (int64_t c : candidates) {
        TimeNs s = score(refEnds, ends, c);
        if (s >= 0 && (bestScore < 0 || s < bestScore || (s == bestScore && std::llabs(c) < std::llabs(best)))) {
            best = c;
            bestScore = s;
        }
    }
    // Matched ends must be closer than half the usual spacing of the communicator's collectives.
    std::vector<TimeNs> spacing;
    for (size_t k = 1; k < refEnds.size(); ++k)
        spacing.push_back(refEnds[k] - refEnds[k - 1]);
    TimeNs half = 0;
    if (!spacing.empty()) {
        std::nth_element(spacing.begin(), spacing.begin() + long(spacing.size() / 2), spacing.end());
        half = spacing[spacing.size() / 2] / 2;
    }
    overlaps = bestScore >= 0 && (refEnds.size() < 2 || bestScore < half);
    return best;
}

void CollectiveKeys::assign(
    const Trace& trace, const std::vector<uint32_t>& ranks, std::vector<std::vector<Item>>& perRank)
{
    // Communicator of each kernel; recorded sequence numbers where the records carry them.
    std::vector<std::vector<uint8_t>> recorded(perRank.size());
    for (size_t r = 0; r < perRank.size(); ++r) {
        auto& items = perRank[r];
        recorded[r].assign(items.size(), 0);
        const std::vector<Record> recs = recordsOf(trace, ranks[r]);
        size_t exact = 0;
        auto rec = recs.begin(); // both sorted by start: one walk
        for (size_t k = 0; k < items.size(); ++k) {
            auto& it = items[k];
            while (rec != recs.end() && rec->start < it.start)
                ++rec;
            const bool same = rec != recs.end() && rec->start == it.start && rec->comm;
            it.comm = same ? rec->comm : 0;
            if (same && rec->seq) {
                it.seq = rec->seq;
                recorded[r][k] = 1;
            }
            exact += same ? 1 : 0;
        }
        if (exact == 0 && !recs.empty() && recs.size() == items.size())
            for (size_t k = 0; k < items.size(); ++k) {
                items[k].comm = recs[k].comm;
                if (recs[k].seq) {
                    items[k].seq = recs[k].seq;
                    recorded[r][k] = 1;
                }
            }
        for (auto& it : items)
            if (!it.comm)
                it.comm = kNameComm | it.name;
    }
    // Ordinals per (rank, communicator), then the shift that lines each rank up with the reference.
    std::map<uint64_t, std::vector<std::vector<size_t>>> byComm; // comm -> per rank: item positions
    for (size_t r = 0; r < perRank.size(); ++r)
        for (size_t k = 0; k < perRank[r].size(); ++k)
            if (!recorded[r][k]) {
                auto& v = byComm[perRank[r][k].comm];
                v.resize(perRank.size());
                v[r].push_back(k);
            }
    for (auto& entry : byComm) {
        auto& pos = entry.second;
        size_t ref = 0;
        for (size_t r = 1; r < pos.size(); ++r)
            if (pos[r].size() > pos[ref].size())
                ref = r;
        auto endsOf = [&](size_t r) {
            std::vector<TimeNs> e;
            for (size_t k : pos[r])
                e.push_back(perRank[r][k].end);
            std::sort(e.begin(), e.end()); // one communicator runs one collective at a time
            return e;
        };
        const std::vector<TimeNs> refEnds = endsOf(ref);
        for (size_t r = 0; r < pos.size(); ++r) {
            if (pos[r].empty())
                continue;
            int64_t shift = 0;
            bool overlaps = true;
            if (r != ref)
                shift = bestShift(refEnds, endsOf(r), overlaps);
            const uint64_t base = overlaps ? kSeqBase : kNoOverlapBase + (uint64_t(r) << 40);
            for (size_t k = 0; k < pos[r].size(); ++k)
                perRank[r][pos[r][k]].seq = base + uint64_t(int64_t(k) + shift);
        }
    }
}

} // namespace gapscope::model
