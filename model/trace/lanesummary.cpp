// SPDX-License-Identifier: MIT
#include "model/trace/eventaux.h"
#include "model/trace/trace.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace gapscope::model {
namespace {

FoldItem single(const LaneEvents& ev, size_t i, TimeNs d)
{
    FoldItem f;
    f.start = ev.start(i);
    f.end = addSaturated(f.start, d);
    f.count = 1;
    f.first = uint32_t(i);
    f.longest = uint32_t(i);
    f.busy = d;
    if (aux::nests(ev.aux(i)))
        f.depth = uint8_t(std::min<uint32_t>(aux::depth(ev.aux(i)), 255));
    return f;
}

} // namespace

void LaneSummary::build(const LaneEvents& events)
{
    m_levels.clear();
    buildFrom(events, 0);
}

void LaneSummary::extend(const LaneEvents& events)
{
    size_t firstNode = m_levels.empty() ? 0 : m_levels[0].size();
    if (firstNode)
        --firstNode; // the last leaf may have been partial
    buildFrom(events, firstNode);
}

void LaneSummary::buildFrom(const LaneEvents& ev, size_t firstNode)
{
    const size_t n = ev.size();
    if (m_levels.empty())
        m_levels.emplace_back();
    auto& leaves = m_levels[0];
    leaves.resize(std::min(firstNode, leaves.size()));
    leaves.reserve((n + kLeaf - 1) / kLeaf);
    for (size_t b = leaves.size() * kLeaf; b < n; b += kLeaf) {
        Node nd { ev.start(b), INT64_MIN, 0, uint32_t(b), 0, uint32_t(b), 0, 0, 0 };
        TimeNs longest = -1, gap = 0;
        for (size_t i = b; i < std::min(n, b + kLeaf); ++i) {
            TimeNs d = ev.duration(i);
            if (i > b)
                gap = std::max(gap, ev.start(i) - nd.end);
            nd.end = std::max(nd.end, addSaturated(ev.start(i), d));
            nd.busy = addSaturated(nd.busy, d);
            ++nd.count;
            if (d > longest) {
                longest = d;
                nd.longest = uint32_t(i);
            }
        }
        nd.longestDur = uint32_t(std::min<TimeNs>(longest, UINT32_MAX));
        nd.maxGap = uint32_t(std::min<TimeNs>(gap, UINT32_MAX));
        leaves.push_back(nd);
    }
    size_t dirty = firstNode;
    for (size_t level = 1; m_levels[level - 1].size() > 1; ++level) {
        dirty /= kFanout;
        if (m_levels.size() <= level)
            m_levels.emplace_back();
        const auto& below = m_levels[level - 1];
        auto& cur = m_levels[level];
        cur.resize(std::min(dirty, cur.size()));
        cur.reserve((below.size() + kFanout - 1) / kFanout);
        for (size_t b = cur.size() * kFanout; b < below.size(); b += kFanout) {
            Node nd = below[b];
            for (size_t c = b + 1; c < std::min(below.size(), b + kFanout); ++c) {
                const Node& x = below[c];
                const TimeNs gap = std::max<TimeNs>(0, x.start - nd.end);
                nd.maxGap = std::max({ nd.maxGap, x.maxGap, uint32_t(std::min<TimeNs>(gap, UINT32_MAX)) });
                nd.end = std::max(nd.end, x.end);
                nd.busy = addSaturated(nd.busy, x.busy);
                nd.count += x.count;
                if (x.longestDur > nd.longestDur
                    || (x.longestDur == UINT32_MAX && ev.duration(x.longest) > ev.duration(nd.longest))) {
                    nd.longest = x.longest;
                    nd.longestDur = x.longestDur;
                }
            }
            cur.push_back(nd);
        }
    }
    while (m_levels.size() > 1 && m_levels.back().size() <= 1 && m_levels[m_levels.size() - 2].size() <= 1)
        m_levels.pop_back();
}

size_t LaneSummary::memoryBytes() const
{
    size_t b = 0;
    for (const auto& l : m_levels)
        b += l.capacity() * sizeof(Node);
    return b;
}

LaneSummary::Range LaneSummary::range(const LaneEvents& ev, size_t first, size_t last) const
{
    Range r;
    auto addEvent = [&](size_t i) {
        TimeNs d = ev.duration(i);
        r.busy = addSaturated(r.busy, d);
        r.maxEnd = std::max(r.maxEnd, addSaturated(ev.start(i), d));
        if (d > r.longestDuration) {
            r.longestDuration = d;
            r.longest = uint32_t(i);
        }
    };
    auto addNode = [&](const Node& nd) {
        r.busy = addSaturated(r.busy, nd.busy);
        r.maxEnd = std::max(r.maxEnd, nd.end);
        TimeNs d = nd.longestDur != UINT32_MAX ? TimeNs(nd.longestDur) : ev.duration(nd.longest);
        if (d > r.longestDuration) {
            r.longestDuration = d;
            r.longest = nd.longest;
        }
    };
    if (last <= first + 2 * kLeaf || m_levels.empty() || m_levels[0].size() * kLeaf < last) {
        for (size_t i = first; i < last; ++i)
            addEvent(i);
        return r;
    }
    size_t lo = first, hi = last;
    for (; lo < hi && lo % kLeaf; ++lo)
        addEvent(lo);
    for (; hi > lo && hi % kLeaf && hi != ev.size(); --hi)
        addEvent(hi - 1);
    if (lo >= hi)
        return r;
    // [lo, hi) now starts on a leaf boundary and ends on one (or at the last, partial leaf).
    size_t a = lo / kLeaf, b = (hi + kLeaf - 1) / kLeaf;
    for (size_t level = 0;; ++level) {
        const auto& nodes = m_levels[level];
        if (level + 1 == m_levels.size()) {
            for (; a < b; ++a)
                addNode(nodes[a]);
            break;
        }
        for (; a < b && a % kFanout; ++a)
            addNode(nodes[a]);
        for (; b > a && b % kFanout && b != nodes.size(); --b)
            addNode(nodes[b - 1]);
        if (a >= b)
            break;
        a /= kFanout;
        b = (b + kFanout - 1) / kFanout;
    }
    return r;
}

void LaneSummary::fold(
    const LaneEvents& ev, TimeNs t0, TimeNs t1, double nsPerPixel, double minPixels, std::vector<FoldItem>& out) const
{
    out.clear();
    auto [first, last] = ev.overlapping(t0, t1);
    if (first >= last)
        return;
    const TimeNs q = std::max<TimeNs>(1, TimeNs(std::ceil(nsPerPixel * minPixels)));
    if (aux::nests(ev.aux(first))) {
        foldNvtx(ev, first, last, t0, q, out);
        return;
    }
    size_t i = first;
    while (i < last) {
        TimeNs d = ev.duration(i);
        if (addSaturated(ev.start(i), d) <= t0) { // nested in an earlier event that reaches into the window
            ++i;
            continue;
        }
        if (d >= q) {
            out.push_back(single(ev, i, d));
            ++i;
            continue;
        }
        FoldItem f = single(ev, i, d);
        TimeNs longestDur = d;
        size_t j = i + 1;
        // Extend the run: whole summary nodes where they fit, single events elsewhere.
        while (j < last) {
            if (absorbNode(ev, j, last, q, f, longestDur))
                continue;
            const TimeNs dj = ev.duration(j);
            if (ev.start(j) >= addSaturated(f.end, q) || dj >= q)
                break;
            ++f.count;
            f.busy = addSaturated(f.busy, dj);
            f.end = std::max(f.end, addSaturated(ev.start(j), dj));
            if (dj > longestDur) {
                longestDur = dj;
                f.longest = uint32_t(j);
            }
            ++j;
        }
        out.push_back(f);
        i = j;
    }
}

bool LaneSummary::absorbNode(
    const LaneEvents& ev, size_t& j, size_t last, TimeNs q, FoldItem& f, TimeNs& longestDur) const
{
    if (j % kLeaf || m_levels.empty() || m_levels[0].size() * kLeaf < ev.size())
        return false;
    // The highest level at which a node starts exactly at j.
    size_t level = 0, span = kLeaf;
    while (level + 1 < m_levels.size() && (j / span) % kFanout == 0) {
        ++level;
        span *= kFanout;
    }
    for (;; --level, span /= kFanout) {
        const Node& nd = m_levels[level][j / span];
        if (nd.first + nd.count <= last && nd.start < addSaturated(f.end, q) && TimeNs(nd.longestDur) < q
            && TimeNs(nd.maxGap) < q && nd.longestDur != UINT32_MAX && nd.maxGap != UINT32_MAX) {
            f.count += nd.count;
            f.busy = addSaturated(f.busy, nd.busy);
            f.end = std::max(f.end, nd.end);
            if (TimeNs(nd.longestDur) > longestDur) {
                longestDur = nd.longestDur;
                f.longest = nd.longest;
            }
            j += nd.count;
            return true;
        }
        if (level == 0)
            return false;
    }
}

void LaneSummary::foldNvtx(
    const LaneEvents& ev, size_t first, size_t last, TimeNs t0, TimeNs q, std::vector<FoldItem>& out) const
{
    // NVTX and host ranges nest: fold each depth on its own (a linear pass over the window).
    constexpr size_t kDepths = 64;
    FoldItem open[kDepths];
    TimeNs openLongest[kDepths];
    bool isOpen[kDepths] = {};
    for (size_t i = first; i < last; ++i) {
        TimeNs d = ev.duration(i);
        if (addSaturated(ev.start(i), d) <= t0)
            continue;
        size_t depth = std::min<size_t>(aux::depth(ev.aux(i)), kDepths - 1);
        FoldItem& o = open[depth];
        if (isOpen[depth] && (d >= q || ev.start(i) - o.end >= q)) {
            out.push_back(o);
            isOpen[depth] = false;
        }
        if (d >= q) {
            out.push_back(single(ev, i, d));
        } else if (!isOpen[depth]) {
            o = single(ev, i, d);
            openLongest[depth] = d;
            isOpen[depth] = true;
        } else {
            ++o.count;
            o.busy = addSaturated(o.busy, d);
            o.end = std::max(o.end, addSaturated(ev.start(i), d));
            if (d > openLongest[depth]) {
                openLongest[depth] = d;
                o.longest = uint32_t(i);
            }
        }
    }
    for (size_t depth = 0; depth < kDepths; ++depth)
        if (isOpen[depth])
            out.push_back(open[depth]);
    std::stable_sort(out.begin(), out.end(), [](const FoldItem& a, const FoldItem& b) { return a.start < b.start; });
}

LaneSummary::Totals LaneSummary::totals(const LaneEvents& ev, TimeNs t0, TimeNs t1) const
{
    Totals t;
    auto [first, last] = ev.overlapping(t0, t1);
    auto clipped = [&](size_t i) {
        TimeNs s = std::max(ev.start(i), t0), e = std::min(ev.end(i), t1);
        if (e > s || (ev.duration(i) == 0 && ev.start(i) >= t0)) {
            t.busy = addSaturated(t.busy, std::max<TimeNs>(0, e - s));
            ++t.count;
        }
    };
    // Events starting before t0 and events that may reach past t1 are clipped one by one; the
    // ones in between (start >= t0, end <= t1 guaranteed) come from the pyramid.
    const size_t a = std::max(first, ev.lowerBound(t0));
    const size_t c = std::max(a, ev.lowerBound(t1 - ev.maxDuration()));
    for (size_t i = first; i < a; ++i)
        clipped(i);
    if (c > a) {
        Range r = range(ev, a, c);
        t.busy = addSaturated(t.busy, r.busy);
        t.count += c - a;
    }
    for (size_t i = c; i < last; ++i)
        clipped(i);
    return t;
}

} // namespace gapscope::model
