// SPDX-License-Identifier: MIT
#include "model/import/clockaligner.h"

#include <algorithm>
#include <cstdlib>

namespace gapscope::model::importer {

namespace {
constexpr int64_t kYear2000Ns = 946684800LL * 1000000000LL;

std::string forcedRule()
{
    const char* v = std::getenv("GAPSCOPE_IMPORT_ALIGN");
    return v ? std::string(v) : std::string();
}
} // namespace

bool ClockAligner::isNcclKernel(std::string_view name)
{
    return name.size() >= 4 && (name.compare(0, 4, "nccl") == 0 || name.compare(0, 4, "NCCL") == 0);
}

std::optional<int64_t> ClockAligner::firstCollectiveEnd(const Trace& t)
{
    std::optional<int64_t> bestStart, bestEnd;
    for (const Lane& lane : t.lanes()) {
        const LaneEvents& ev = lane.events;
        for (size_t i = 0; i < ev.size(); ++i) {
            if (bestStart && ev.start(i) >= *bestStart)
                break; // events are in start order
            const EventKind k = t.kindOf(lane.id, i);
            if (k == EventKind::Collective || (k == EventKind::Kernel && isNcclKernel(t.str(ev.name(i))))) {
                bestStart = ev.start(i);
                bestEnd = addTimes(ev.start(i), ev.duration(i));
                break;
            }
        }
    }
    return bestEnd;
}

std::optional<int64_t> ClockAligner::firstCollectiveEnd(const StagedTrace& s)
{
    std::optional<int64_t> bestStart, bestEnd;
    for (uint64_t i = 0; i < s.eventCount(); ++i) {
        const StagedEvent& e = s.event(i);
        const bool coll = e.kind == StagedKind::Collective
            || (e.kind == StagedKind::Kernel && isNcclKernel(s.strings().str(e.name)));
        if (coll && (!bestStart || e.start < *bestStart)) {
            bestStart = e.start;
            bestEnd = addTimes(e.start, s.duration(i));
        }
    }
    return bestEnd;
}

ClockAligner::Result ClockAligner::align(const std::vector<StagedTrace>& sources)
{
    std::vector<Span> spans;
    for (const auto& s : sources)
        spans.push_back({ s.timeOffsetNs, s.absoluteClock, s.eventCount() == 0, s.minStart(), s.maxEnd() });
    return align(spans, [&sources](size_t i) { return firstCollectiveEnd(sources[i]); });
}

ClockAligner::Result ClockAligner::align(const std::vector<const Trace*>& traces)
{
    std::vector<Span> spans;
    for (const Trace* t : traces)
        spans.push_back(
            { 0, t->header().clockDomain == "CLOCK_REALTIME", t->eventCount() == 0, t->startTime(), t->endTime() });
    return align(spans, [&traces](size_t i) { return firstCollectiveEnd(*traces[i]); });
}

ClockAligner::Result ClockAligner::align(
    const std::vector<Span>& spans, const std::function<std::optional<int64_t>(size_t)>& firstCollectiveEnd)
{
    Result r;
    for (const auto& s : spans)
        r.offsets.push_back(s.offset);
    if (spans.size() <= 1) {
        r.method = "single source";
        return r;
    }
    bool absolute = true;
    int64_t latestStart = INT64_MIN, earliestEnd = INT64_MAX;
    for (size_t i = 0; i < spans.size(); ++i) {
        const auto& s = spans[i];
        if (s.empty)
            continue;
        absolute = absolute && (s.absolute || addTimes(s.minStart, r.offsets[i]) > kYear2000Ns);
        latestStart = std::max(latestStart, addTimes(s.minStart, r.offsets[i]));
        earliestEnd = std::min(earliestEnd, addTimes(s.maxEnd, r.offsets[i]));
    }
    const std::string forced = forcedRule();
    const bool overlap = latestStart < earliestEnd;
    if (forced == "absolute" || (forced != "collective" && absolute && overlap)) {
        r.method = "absolute";
        return r;
    }
    std::vector<std::optional<int64_t>> ends;
    for (size_t i = 0; i < spans.size(); ++i)
        ends.push_back(firstCollectiveEnd(i));
    const bool all = std::all_of(ends.begin(), ends.end(), [](const auto& e) { return e.has_value(); });
    if (!all) {
        r.method = "absolute (unaligned)";
        r.warnings.push_back("the sources' clocks do not agree (their time spans do not overlap) and not every "
                             "source has a collective kernel to align on: ranks may be misaligned");
        return r;
    }
    const int64_t reference = addTimes(*ends[0], r.offsets[0]);
    for (size_t i = 1; i < spans.size(); ++i)
        r.offsets[i] = addTimes(reference, -clampTime(*ends[i]));
    r.method = "first-collective";
    r.warnings.push_back("the sources' clocks do not agree; ranks were aligned on the end of their first collective "
                         "kernel (differences before it are not measured)");
    return r;
}

} // namespace gapscope::model::importer
