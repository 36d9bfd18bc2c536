// SPDX-License-Identifier: MIT
#pragma once

// CollectiveKeys: names every collective kernel of every rank by (communicator, sequence number), so
// that equal keys mean the same operation on every rank. NCCL runs the collectives of one
// communicator in one order on all its ranks, so the k-th collective of a communicator is the same
// operation everywhere; keys match ranks by that order, not by step index or by time.
//
// Communicator and sequence of a kernel, in this order:
//   - a record of the rank's collective lanes starting exactly when the kernel starts (Kineto's
//     `Process Group Name`, synth): its communicator, and its sequence number when it has one;
//   - else, when the rank has as many collective records as collective kernels (the capture's NCCL
//     plugin records each call on the host): the record of the same position, its communicator and,
//     when it has one, its sequence number, which is then the key as it is;
//   - else one communicator per kernel name.
// Without recorded sequence numbers, a kernel's number is its position among its rank's kernels of
// that communicator, shifted per rank so that they line up with the rank that has the most: the shift
// is the one under which matched kernels end closest together (a collective ends on every rank when
// the last one has arrived plus its wire time), tried from the kernels nearest in end time to a few
// of the rank's own. A rank whose best shift still leaves them ended further apart than half the
// usual spacing of that communicator's collectives shares no operation with the others (its capture
// does not overlap): its keys match nothing.
//
// Cost: O(n log n) per rank and communicator. Pure; thread-safe.

#include "model/trace/trace.h"

#include <cstdint>
#include <vector>

namespace gapscope::model {

class CollectiveKeys {
public:
    struct Item {
        TimeNs start = 0, end = 0;
        StringId name = 0;
        uint64_t comm = 0; // set by assign()
        uint64_t seq = 0; // set by assign()
    };
    // perRank[i] holds the collective kernels of ranks[i], sorted by start.
    static void assign(const Trace& trace, const std::vector<uint32_t>& ranks, std::vector<std::vector<Item>>& perRank);

private:
    static int64_t bestShift(const std::vector<TimeNs>& refEnds, const std::vector<TimeNs>& ends, bool& overlaps);
};

} // namespace gapscope::model
