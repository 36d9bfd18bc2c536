// SPDX-License-Identifier: MIT
#pragma once

// KernelStats: per kernel name and per component statistics over a scope (a time range, one rank
// or all): count, total, own total, mean, p50, p99, max (exact: order statistics per name), bytes
// moved where the trace knows them (memcpy/memset sizes), and the share of the step time. Own time
// follows the analysis's one-stream rule (model/trace/owntime.h): an event counts from the latest end of the earlier
// events of its stream (a kernel launched early by programmatic dependent launch waits until then). Computed off the
// GUI thread for large traces (O(events in scope)); cancellable through a JobTracker ticket.
//
// "% of step" = total / (sum over the ranks in scope of the decode-step time inside the scope), or
// of the scope's length when the trace has no steps. Pure (no Qt widgets); any thread.

#include "model/trace/trace.h"
#include "views/common/jobtracker.h"

#include <QString>

#include <vector>

class EventColors;

struct StatsScope {
    gapscope::model::TimeNs t0 = INT64_MIN;
    gapscope::model::TimeNs t1 = INT64_MAX;
    int rank = -1; // -1: all ranks
};

struct NameStats {
    QString name; // full name (or "memcpy HtoD" for unnamed memory operations)
    QString shortName; // model::shortKernelName of the name (what tables show)
    QString component; // budget component, "memory ops" or "" (unclassified)
    uint64_t count = 0;
    double totalNs = 0;
    double ownTotalNs = 0; // without the part overlapped by earlier work of the same stream
    double meanNs = 0;
    double p50Ns = 0;
    double p99Ns = 0;
    double maxNs = 0;
    uint64_t bytes = 0; // 0 = unknown
    double percentOfStep = 0;
    double gbPerSecond() const { return bytes && totalNs > 0 ? double(bytes) / totalNs : 0; }
};

struct KernelStatsResult {
    std::vector<NameStats> names; // sorted by total, descending
    std::vector<NameStats> components; // one row per component (names aggregated; p50/p99 over the events)
    double stepTimeNs = 0; // the denominator of "% of step"
    uint32_t steps = 0; // decode steps (of the ranks in scope) inside the scope
    uint32_t ranks = 0;
    bool canceled = false;
};

KernelStatsResult computeKernelStats(const gapscope::model::Trace& trace, const StatsScope& scope,
    const EventColors* colors, const JobTracker::Ticket& ticket = {});
