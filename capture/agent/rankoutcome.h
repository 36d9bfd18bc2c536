// SPDX-License-Identifier: MIT
#pragma once

// RankOutcome: what a capture learned about one rank, and how that goes into the file header: the
// RankInfo (with the overhead evidence: the rank's own figures when it sent them, its baseline from
// before the process's first capture included; host step time (model/base/steptime.h) before arming vs while
// recording from the boundaries it reported otherwise; and its arm latency), its GPU, and a counter for
// every loss or anomaly (agent drops, the rank's own counters, a lost rank, a failed arm, another
// CUPTI client). CaptureSession keeps one per rank and adds its control state on top.
//
// Threading: a plain value type.

#include "capture/agent/rankrecord.h"

#include <map>
#include <string>
#include <vector>

namespace gapscope::capture {

struct RankOutcome {
    RankRecord rec;
    bool gone = false, failed = false;
    std::string error, otherCupti, stepRule;
    std::vector<int64_t> before, during; // step periods (ns) from host boundaries
    std::map<std::string, pb::Counter> counters; // the rank's own, latest cumulative values
    uint64_t dropped = 0; // events the agent dropped (merge queue full)
    pb::OverheadEvidence rankOverhead; // RecordingDone's
    pb::OverheadEvidence liveOverhead; // the latest RankStatus's: baseline and steps before recording so far
    double rankArmLatencyMs = -1;
    double disarmLatencyMs = -1;

    void takeCounters(const google::protobuf::RepeatedPtrField<pb::Counter>& cs)
    {
        for (const auto& c : cs)
            counters[c.name()] = c;
    }
    pb::RankInfo rankInfo() const;
    void addCounters(pb::FileHeader& h) const;
};

// Ranks, GPUs (once per UUID) and the host of `outcomes` into `h`; metadata "step_rule_used".
void addRanks(const std::vector<const RankOutcome*>& outcomes, const std::string& host, pb::FileHeader& h);

} // namespace gapscope::capture
