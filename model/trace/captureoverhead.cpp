// SPDX-License-Identifier: MIT
#include "model/trace/captureoverhead.h"

#include <cstdio>
#include <vector>

namespace gapscope::model {

namespace {

std::string ms(double v)
{
    char b[32];
    std::snprintf(b, sizeof b, "%.3f ms", v);
    return b;
}

std::string pct(double v)
{
    char b[32];
    std::snprintf(b, sizeof b, "%+.1f %%", v);
    return b;
}

std::string steps(uint32_t n)
{
    return std::to_string(n) + (n == 1 ? " step" : " steps") + (n < kOverheadMinSteps ? ", fewer than 50" : "");
}
static_assert(kOverheadMinSteps == 50, "the text names the minimum");

std::string captures(uint32_t n)
{
    return std::to_string(n) + (n == 1 ? " capture" : " captures");
}

bool hasBaseline(const OverheadEvidence& o)
{
    return o.baselineSteps > 0 && o.stepMsMedianBaseline > 0;
}

bool hasBefore(const OverheadEvidence& o)
{
    return o.stepsBefore > 0 && o.stepMsMedianBefore > 0;
}

bool hasDuring(const OverheadEvidence& o)
{
    return o.stepsDuring > 0 && o.stepMsMedianDuring > 0;
}

} // namespace

const OverheadEvidence* rankOverheadEvidence(const TraceHeader& header, uint32_t rank)
{
    for (const auto& r : header.ranks)
        if (r.rank == rank && r.hasOverhead)
            return &r.overhead;
    return nullptr;
}

const OverheadEvidence* captureOverhead(const TraceHeader& header, uint32_t rank)
{
    const OverheadEvidence* o = rankOverheadEvidence(header, rank);
    return o && hasDuring(*o) && captureOverheadReferenceMs(*o) > 0 ? o : nullptr;
}

bool againstBaseline(const OverheadEvidence& o)
{
    return hasBaseline(o);
}

double captureOverheadReferenceMs(const OverheadEvidence& o)
{
    if (hasBaseline(o))
        return o.stepMsMedianBaseline;
    return hasBefore(o) ? o.stepMsMedianBefore : 0;
}

double captureOverheadPct(const OverheadEvidence& o)
{
    const double ref = captureOverheadReferenceMs(o);
    return ref > 0 ? 100.0 * (o.stepMsMedianDuring - ref) / ref : 0;
}

bool captureLastingPct(const OverheadEvidence& o, double* out)
{
    if (o.capturesBefore == 0 || !hasBaseline(o) || !hasBefore(o))
        return false;
    *out = 100.0 * (o.stepMsMedianBefore - o.stepMsMedianBaseline) / o.stepMsMedianBaseline;
    return true;
}

const char* toString(OverheadEvidence::CuptiAfterLast state)
{
    switch (state) {
    case OverheadEvidence::CuptiAfterLast::None:
        return "none";
    case OverheadEvidence::CuptiAfterLast::Detached:
        return "detached";
    case OverheadEvidence::CuptiAfterLast::StillAttached:
        return "still attached";
    case OverheadEvidence::CuptiAfterLast::DetachPending:
        return "detach pending";
    }
    return "none";
}

json::Value captureOverheadJson(const OverheadEvidence& o)
{
    json::Value c = json::Value::object();
    c.set("steps_before", o.stepsBefore);
    c.set("before_ms", o.stepMsMedianBefore);
    c.set("steps_during", o.stepsDuring);
    c.set("during_ms", o.stepMsMedianDuring);
    c.set("pct", captureOverheadPct(o));
    c.set("arm_latency_ms", o.armLatencyMs);
    c.set("against", againstBaseline(o) ? "baseline" : "before");
    c.set("baseline_steps", o.baselineSteps);
    c.set("baseline_ms", o.stepMsMedianBaseline);
    c.set("baseline_captures_before", o.baselineCapturesBefore);
    c.set("captures_before", o.capturesBefore);
    c.set("cupti_after_last", toString(o.cuptiAfterLast));
    c.set("min_steps", kOverheadMinSteps);
    if (o.capturesBefore > 0) {
        c.set("after_last_steps", o.stepsBefore);
        c.set("after_last_ms", o.stepMsMedianBefore);
        double lasting = 0;
        c.set("after_last_pct", captureLastingPct(o, &lasting) ? json::Value(lasting) : json::Value(nullptr));
    }
    return c;
}

std::string captureOverheadLine(const OverheadEvidence& o, bool timeWindow)
{
    const std::string window = timeWindow ? " (time window)" : "";
    const std::string state = captures(o.capturesBefore) + " before, CUPTI " + toString(o.cuptiAfterLast);
    std::vector<std::string> parts;
    if (!hasBaseline(o) && !hasBefore(o) && !hasDuring(o)) {
        parts.push_back("no step boundaries while armed" + window);
        if (o.capturesBefore > 0)
            parts.push_back(state);
    } else {
        if (hasBaseline(o) && o.baselineCapturesBefore == 0)
            parts.push_back(
                ms(o.stepMsMedianBaseline) + " before the first capture (baseline, " + steps(o.baselineSteps) + ")");
        else if (hasBaseline(o))
            parts.push_back(ms(o.stepMsMedianBaseline) + " baseline (" + steps(o.baselineSteps) + ", refreshed after "
                + captures(o.baselineCapturesBefore) + " with CUPTI detached)");
        else if (hasBefore(o) && o.capturesBefore == 0)
            parts.push_back(ms(o.stepMsMedianBefore) + " before arming (" + steps(o.stepsBefore) + ")");
        else
            parts.push_back("no baseline from before the first capture");
        double lasting = 0;
        if (o.capturesBefore > 0 && !hasBefore(o))
            parts.push_back("after the last capture: no step boundaries before recording (" + state + ")");
        else if (o.capturesBefore > 0)
            parts.push_back(ms(o.stepMsMedianBefore) + " after the last capture ("
                + (captureLastingPct(o, &lasting) ? pct(lasting) + ", " : std::string()) + steps(o.stepsBefore) + ", "
                + state + ")");
        if (!hasDuring(o))
            parts.push_back("no step boundaries while capturing" + window);
        else
            parts.push_back(ms(o.stepMsMedianDuring) + " while capturing ("
                + (captureOverheadReferenceMs(o) > 0 ? pct(captureOverheadPct(o)) + ", " : std::string())
                + steps(o.stepsDuring) + ")");
    }
    if (o.armLatencyMs > 0) {
        char b[48];
        std::snprintf(b, sizeof b, "arm latency %.1f ms", o.armLatencyMs);
        parts.push_back(b);
    }
    std::string line = parts[0][0] >= '0' && parts[0][0] <= '9' ? "step " : "";
    for (size_t i = 0; i < parts.size(); ++i)
        line += (i ? "; " : "") + parts[i];
    return line;
}

std::string captureLastingNote(const OverheadEvidence& o)
{
    if (o.cuptiAfterLast != OverheadEvidence::CuptiAfterLast::StillAttached)
        return {};
    double lasting = 0;
    const std::string cost = captureLastingPct(o, &lasting) ? " (" + pct(lasting) + " against the baseline now)" : "";
    return "the last capture left CUPTI attached, and the process keeps its cost" + cost
        + " until it exits: it recorded kernels of CUDA-graph replays, which this CUPTI cannot let go of (or the "
          "driver is older than CUDA 12.6, or GAPSCOPE_CUPTI_DETACH=0); captures with --whole-replays record "
          "none and leave a graph process as it was (capture/README.md)";
}

} // namespace gapscope::model
