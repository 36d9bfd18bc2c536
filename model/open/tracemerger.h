// SPDX-License-Identifier: MIT
#pragma once

// TraceMerger: several traces opened as one (one .gapscope capture per host, or captures next to an
// import): every lane and event of every part is kept, so a two-host capture shows all its ranks.
//
// 1. Ranks: a part's ranks stay as they are when no earlier part has them; the others take the lowest
//    free ranks (TraceAssembler::assignRanks, the importers' rule), each renumbering named in a
//    warning. Lanes, steps, counters, header ranks and annotations follow their rank.
// 2. Clocks: ClockAligner, as for several imported files: parts whose clocks are absolute and whose
//    time spans overlap keep their times; otherwise each part is shifted so that the end of its first
//    collective meets the first part's.
// 3. Lanes are matched by their full identity (LaneKey: host and pid included), so lanes of two hosts
//    never merge. Strings and launch configs are interned again; steps, annotations and counters are
//    copied (counters of the same name and rank summed); hosts and GPUs of the header are united. The
//    first part's budget settings and classifier table (else the next part's that has them) are kept.
//
// Cost: O(events) time; the merged trace is built while the parts are still held (peak about twice the
// trace). Threading: single-threaded; consumes the parts.

#include "model/trace/trace.h"

#include <string>
#include <vector>

namespace gapscope::model {

class TraceMerger {
public:
    // names[i] names parts[i] in warnings (its file). One part is returned as it is.
    static Trace merge(std::vector<Trace> parts, const std::vector<std::string>& names);

private:
    static void copyEvents(const Trace& part, const std::vector<uint32_t>& rankOf, int64_t offset, TraceBuilder& b);
};

} // namespace gapscope::model
