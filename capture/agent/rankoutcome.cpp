// SPDX-License-Identifier: MIT
#include "capture/agent/rankoutcome.h"

#include "model/base/steptime.h"
#include "model/format/stats.h"
#include "model/format/trace.pb.h"

#include <algorithm>
#include <set>

namespace gapscope::capture {

namespace {
// The step time of host step periods (ns), by the rule the ranks use (model/base/steptime.h).
double stepMs(const std::vector<int64_t>& periodsNs)
{
    std::vector<double> ms;
    ms.reserve(periodsNs.size());
    for (int64_t v : periodsNs)
        ms.push_back(double(v) / 1e6);
    return model::stepTimeMs(ms);
}
} // namespace

pb::RankInfo RankOutcome::rankInfo() const
{
    pb::RankInfo r = rec.rankInfo();
    if (!otherCupti.empty())
        r.set_other_cupti_client(otherCupti);
    auto* o = r.mutable_overhead();
    *o = rankOverhead; // the rank's GPU-side figures win; host boundaries fill what it did not send
    if (!o->baseline_steps() && liveOverhead.baseline_steps()) {
        // No RecordingDone (stopped early, rank lost): the baseline as its last status said.
        o->set_baseline_steps(liveOverhead.baseline_steps());
        o->set_step_ms_median_baseline(liveOverhead.step_ms_median_baseline());
        o->set_baseline_captures_before(liveOverhead.baseline_captures_before());
        o->set_captures_before(liveOverhead.captures_before());
        o->set_cupti_after_last(liveOverhead.cupti_after_last());
        if (!o->steps_before() && liveOverhead.steps_before()) {
            o->set_steps_before(liveOverhead.steps_before());
            o->set_step_ms_median_before(liveOverhead.step_ms_median_before());
        }
    }
    if (!o->steps_before() && !before.empty()) {
        o->set_steps_before(uint32_t(before.size()));
        o->set_step_ms_median_before(stepMs(before));
    }
    if (!o->steps_during() && !during.empty()) {
        o->set_steps_during(uint32_t(during.size()));
        o->set_step_ms_median_during(stepMs(during));
    }
    if (rankArmLatencyMs > 0)
        o->set_arm_latency_ms(rankArmLatencyMs);
    if (disarmLatencyMs > 0)
        o->set_disarm_latency_ms(disarmLatencyMs);
    return r;
}

void RankOutcome::addCounters(pb::FileHeader& h) const
{
    const int32_t rank = int32_t(rec.rank);
    if (dropped)
        *h.add_counters() = format::makeCounter(format::Stat::AgentDroppedEvents, rank, dropped);
    for (const auto& [name, c] : counters) {
        pb::Counter copy = c;
        copy.set_rank(rank);
        *h.add_counters() = copy;
    }
    if (gone)
        *h.add_counters() = format::makeCounter(format::Stat::RankLost, rank, 1, error);
    if (failed)
        *h.add_counters() = format::makeCounter(format::Stat::RankArmFailed, rank, 1, error);
    if (!otherCupti.empty())
        *h.add_counters() = format::makeCounter(format::Stat::OtherCuptiClient, rank, 1,
            std::string(format::statInfo(format::Stat::OtherCuptiClient).description) + ": " + otherCupti);
}

void addRanks(const std::vector<const RankOutcome*>& outcomes, const std::string& hostName, pb::FileHeader& h)
{
    auto* host = h.add_hosts();
    host->set_name(hostName);
    host->set_clock_offset_method("none");
    std::set<std::string> gpus;
    std::string rules;
    for (const RankOutcome* s : outcomes) {
        *h.add_ranks() = s->rankInfo();
        if (gpus.insert(s->rec.reg.gpu().uuid()).second) {
            pb::GpuInfo g = s->rec.reg.gpu();
            if (g.host().empty())
                g.set_host(s->rec.reg.host());
            *h.add_gpus() = g;
        }
        if (!s->stepRule.empty())
            rules += (rules.empty() ? "" : ",") + ("rank" + std::to_string(s->rec.rank) + "=" + s->stepRule);
    }
    if (!rules.empty())
        (*h.mutable_metadata())["step_rule_used"] = rules;
}

} // namespace gapscope::capture
