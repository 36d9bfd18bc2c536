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
// Pure function of its inputs; thread-safe.

#include "model/import/stagedtrace.h"

#include <optional>
#include <string>
#include <vector>

namespace gapscope::model::importer {

class ClockAligner {
public:
    struct Result {
        std::vector<int64_t> offsets; // per source, added to its times
        std::string method;           // "single source", "absolute", "first-collective", "absolute (unaligned)"
        std::vector<std::string> warnings;
    };
    static Result align(const std::vector<StagedTrace>& sources);
    // End of the earliest collective event (or NCCL kernel) of a source, in source time.
    static std::optional<int64_t> firstCollectiveEnd(const StagedTrace& source);
};

} // namespace gapscope::model::importer
