// SPDX-License-Identifier: MIT
#pragma once

// ClockAligner: chooses the time offset of each staged source so that several sources (one Kineto
// file per rank) share one time axis.
//
// Rule: a source's base offset converts its times to absolute ones (Kineto's baseTimeNanoseconds, nsys'
// session start). When every source is wall-clock based and their time spans overlap, that is all:
// ranks of one host share the clock, and hosts kept in sync by NTP are close enough to read.
// Otherwise (a source without an absolute clock, or spans that do not overlap: clocks that disagree)
// every source is shifted so that the END of its first collective kernel (NCCL) meets the reference
// source's: a collective completes at about the same moment on every rank, while its start is where
// the waiting shows. Without a collective in every source, the absolute times are kept and a warning
// says the ranks may be misaligned. GAPSCOPE_IMPORT_ALIGN=absolute|collective forces either rule.
//
// The same rule aligns whole traces (several .gapscope captures, or captures and an import, opened as
// one trace: model/open/tracemerger.h), a trace being one source with offset 0.
//
// Pure function of its inputs; thread-safe.

#include "model/import/stagedtrace.h"
#include "model/trace/trace.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gapscope::model::importer {

class ClockAligner {
public:
    struct Result {
        std::vector<int64_t> offsets; // per source, added to its times
        std::string method; // "single source", "absolute", "first-collective", "absolute (unaligned)"
        std::vector<std::string> warnings;
    };
    // What the rule needs of one source: its base offset, whether its clock is absolute, and the span
    // of its events in source time (none: empty).
    struct Span {
        int64_t offset = 0;
        bool absolute = false;
        bool empty = true;
        int64_t minStart = 0, maxEnd = 0;
    };
    static Result align(const std::vector<StagedTrace>& sources);
    static Result align(const std::vector<const Trace*>& traces);
    // The rule itself; firstCollectiveEnd(i) is asked only when the collectives decide.
    static Result align(
        const std::vector<Span>& spans, const std::function<std::optional<int64_t>(size_t)>& firstCollectiveEnd);
    // End of the earliest collective event (or NCCL kernel) of a source, in source time.
    static std::optional<int64_t> firstCollectiveEnd(const StagedTrace& source);
    static std::optional<int64_t> firstCollectiveEnd(const Trace& trace);
    // True for the name of an NCCL kernel ("nccl…", "NCCL…").
    static bool isNcclKernel(std::string_view name);
};

} // namespace gapscope::model::importer
