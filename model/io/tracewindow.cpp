// SPDX-License-Identifier: MIT
#include "model/io/tracewindow.h"

#include "model/base/taskpool.h"

#include <algorithm>
#include <optional>

namespace gapscope::model {

std::optional<TimeWindow> windowFor(
    const TraceOverview& overview, TimeNs t0, TimeNs t1, uint64_t maxEvents, double widen)
{
    const TimeNs lo = overview.startTime(), hi = overview.endTime() + 1;
    t0 = std::clamp(t0, lo, hi);
    t1 = std::clamp(t1, t0 + 1, std::max(hi, t0 + 1));
    if (overview.eventsIn(t0, t1) > maxEvents)
        return std::nullopt;
    const double width = double(t1 - t0);
    auto at = [&](double f) {
        const TimeNs pad = TimeNs(f * width);
        return TimeWindow { std::max(lo, t0 - pad), std::min(hi, t1 + pad) };
    };
    double good = 0, bad = widen;
    if (const TimeWindow w = at(widen); overview.eventsIn(w.start, w.end) <= maxEvents)
        return w;
    for (int i = 0; i < 16; ++i) { // the widest that fits, to 1/65536 of `widen`
        const double mid = (good + bad) / 2;
        const TimeWindow w = at(mid);
        (overview.eventsIn(w.start, w.end) <= maxEvents ? good : bad) = mid;
    }
    return at(good);
}

TimeWindow firstWindow(const TraceOverview& overview, uint64_t maxEvents)
{
    const TimeNs lo = overview.startTime(), hi = overview.endTime() + 1;
    if (overview.eventsIn(lo, hi) <= maxEvents)
        return TimeWindow { lo, hi };
    TimeNs good = lo + 1, bad = hi;
    while (bad - good > 1000) { // to a microsecond
        const TimeNs mid = good + (bad - good) / 2;
        (overview.eventsIn(lo, mid) <= maxEvents ? good : bad) = mid;
    }
    return TimeWindow { lo, good };
}

Expected<Trace> readWindow(
    const format::TraceReader& reader, const TraceOverview& overview, TimeWindow window, const ReadOptions& options)
{
    ReadOptions o = options;
    o.windowStart = window.start;
    o.windowEnd = window.end;
    o.detectSteps = false;
    o.graphNodes = overview.graphNodes();
    auto trace = readTrace(reader, o);
    if (!trace)
        return trace;
    for (uint32_t rank : overview.ranks()) {
        std::vector<Step> inside;
        for (const Step& s : overview.steps(rank))
            if (s.start >= window.start && s.end <= window.end)
                inside.push_back(s);
        trace->setSteps(rank, std::move(inside));
    }
    return trace;
}

Expected<Trace> readSkeleton(
    const format::TraceReader& reader, const TraceOverview& overview, const ReadOptions& options)
{
    ReadOptions o = options;
    o.windowStart = overview.startTime() - 2; // before every chunk: none is read
    o.windowEnd = overview.startTime() - 1;
    o.detectSteps = false;
    auto trace = readTrace(reader, o);
    if (!trace)
        return trace;
    for (uint32_t rank : overview.ranks())
        trace->setSteps(rank, overview.steps(rank));
    trace->setTimeSpan(overview.startTime(), overview.endTime());
    for (const std::string& w : overview.warnings())
        if (std::find(trace->warnings().begin(), trace->warnings().end(), w) == trace->warnings().end())
            trace->addWarning(w);
    return trace;
}

Expected<Trace> readBatch(const format::TraceReader& reader, const TraceOverview& overview, const StepBatch& batch,
    const ReadOptions& options)
{
    auto trace = readWindow(reader, overview, batch.window, options);
    if (trace)
        for (uint32_t rank : overview.ranks())
            trace->setSteps(rank, overview.steps(rank));
    return trace;
}

TimeNs stepWindowEnd(const std::vector<Step>& rankSteps, size_t i)
{
    return i + 1 < rankSteps.size() ? rankSteps[i + 1].start : rankSteps[i].end;
}

std::vector<StepBatch> stepBatches(const TraceOverview& overview, uint64_t maxEvents)
{
    std::vector<uint32_t> indices;
    for (uint32_t r : overview.ranks())
        for (const Step& s : overview.steps(r))
            indices.push_back(s.index);
    std::sort(indices.begin(), indices.end());
    indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
    if (indices.empty())
        return {};
    const uint64_t perStep = std::max<uint64_t>(1, overview.eventCount() / indices.size());
    const size_t stepsPerBatch = size_t(std::max<uint64_t>(1, maxEvents / perStep));
    std::vector<StepBatch> batches;
    for (size_t i = 0; i < indices.size(); i += stepsPerBatch) {
        StepBatch b;
        b.firstStep = indices[i];
        b.lastStep = indices[std::min(indices.size(), i + stepsPerBatch) - 1];
        b.window = { INT64_MAX, INT64_MIN };
        for (uint32_t r : overview.ranks()) {
            const std::vector<Step>& steps = overview.steps(r); // sorted by index
            auto it = std::lower_bound(
                steps.begin(), steps.end(), b.firstStep, [](const Step& s, uint32_t k) { return s.index < k; });
            for (; it != steps.end() && it->index <= b.lastStep; ++it) {
                b.window.start = std::min(b.window.start, it->start);
                b.window.end = std::max(b.window.end, stepWindowEnd(steps, size_t(it - steps.begin())));
            }
        }
        batches.push_back(b);
    }
    // Owned stretches: cut where each batch's steps begin, never going back in time.
    const TimeNs lo = overview.startTime(), hi = overview.endTime() + 1;
    TimeNs cut = INT64_MIN;
    for (size_t k = 0; k < batches.size(); ++k) {
        StepBatch& b = batches[k];
        b.ownedFrom = cut;
        cut = k + 1 < batches.size() ? std::max(cut, batches[k + 1].window.start) : INT64_MAX;
        b.ownedTo = cut;
        b.window.start = std::min(b.window.start, k == 0 ? lo : b.ownedFrom);
        b.window.end = std::max(b.window.end, k + 1 == batches.size() ? hi : b.ownedTo);
    }
    return batches;
}

Expected<SummaryTables> summaryTables(const format::TraceReader& reader, const TraceOverview& overview,
    KernelOrder order, uint64_t maxEvents, const ReadOptions& options)
{
    SummaryTables out;
    const std::vector<uint32_t> ranks = overview.ranks();
    std::vector<std::vector<StepRow>> byRank(ranks.size());
    KernelTableBuilder kernels;
    const std::vector<StepBatch> batches = stepBatches(overview, maxEvents);
    ReadOptions read = options;
    read.kernelConfigs = false; // counted and timed, never shown
    read.laneSummaries = false; // the tables walk the events
    std::optional<Trace> spare; // the last window: the next one reads into its memory
    for (const StepBatch& b : batches) {
        read.recycle = spare ? &*spare : nullptr;
        auto window = readWindow(reader, overview, b.window, read);
        if (!window)
            return window.status();
        out.largestBatchEvents = std::max<uint64_t>(out.largestBatchEvents, window->eventCount());
        TaskPool::shared().parallelFor(ranks.size(), [&](size_t k) {
            const std::vector<Step>& steps = overview.steps(ranks[k]);
            auto it = std::lower_bound(
                steps.begin(), steps.end(), b.firstStep, [](const Step& s, uint32_t i) { return s.index < i; });
            for (; it != steps.end() && it->index <= b.lastStep; ++it)
                byRank[k].push_back(stepRow(*window, ranks[k], *it, stepWindowEnd(steps, size_t(it - steps.begin()))));
        });
        kernels.add(*window, b.ownedFrom, b.ownedTo);
        ++out.batches;
        // Not more than one window's events held at a time; their memory goes to the next window
        // (handing it back to the system and faulting it in again cost a fifth of the time).
        spare = std::move(*window);
    }
    for (auto& rows : byRank)
        out.steps.insert(out.steps.end(), rows.begin(), rows.end());
    out.kernels = kernels.finish(order, [&overview](StringId id) { return overview.str(id); });
    return out;
}

} // namespace gapscope::model
