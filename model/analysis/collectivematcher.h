// SPDX-License-Identifier: MIT
#pragma once

// CollectiveMatcher: matches the collective kernels of a trace across ranks and splits each into
// wait (for the last rank to arrive) and wire time; finds the stragglers.
//
// Matching: occurrences with a key (communicator, sequence number: CollectiveKeys) match the
// occurrences of equal key on the other ranks, whichever step they fall in (stepIndex kNoStep: in
// none, e.g. before a rank's first step); an occurrence no other rank shares is unmatched. The step
// of a match is the lowest step index among its participants. Occurrences without a key: the k-th
// (by start) of step i on one rank matches the k-th of step i on every other rank that has step i;
// when ranks have different counts, ordinals past the smallest count match among the ranks that
// have them, and each rank's surplus is counted as unmatched.
// Wait of an occurrence = min(duration, max(0, latest start of its match - own start)); a match
// with a single participant has no wait.
// Straggler: in a match with >= 2 participants, the last rank to start is late by
// lateness = its start - mean(start of the others); it counts when lateness >
// max(1 us, 5% of the median duration of the match).
//
// Threading: add() and match() from one thread; the const queries are safe from any thread after.

#include "model/trace/trace.h"

#include <cstdint>
#include <vector>

namespace gapscope::model {

class CollectiveMatcher {
public:
    struct Occurrence {
        TimeNs start = 0;
        TimeNs duration = 0;
        StringId name = 0;
        TimeNs wait = 0; // set by match()
        uint64_t tag = 0; // caller's reference
        bool keyed = false; // comm and seq are set
        uint64_t comm = 0, seq = 0;
    };
    struct Late {
        uint32_t rankSlot;
        TimeNs lateness;
        StringId name;
    };
    struct RankStats {
        uint64_t matched = 0; // occurrences that took part in a match with >= 2 ranks
        uint64_t unmatched = 0; // surplus occurrences (see above)
        uint64_t lateCount = 0;
        TimeNs lateSum = 0;
        TimeNs lateMax = 0;
        TimeNs lateMedian = 0; // the lower median of its lateness when late
        std::vector<uint32_t> lateSteps; // steps where it was late, ascending, unique
    };

    static constexpr TimeNs kMinLatenessNs = 1000;
    static constexpr uint32_t kNoStep = 0xFFFFFFFFu;
    static constexpr double kLatenessFraction = 0.05;

    explicit CollectiveMatcher(size_t rankSlots);

    // The collectives of step `stepIndex` on rank slot `rankSlot`, sorted by start. Call once per
    // (rank, step) that exists, even with an empty list (so the step counts as present).
    void add(uint32_t rankSlot, uint32_t stepIndex, std::vector<Occurrence> occurrences);
    void match();

    // Occurrences of (rank slot, step) with their waits; empty when absent.
    const std::vector<Occurrence>& occurrences(uint32_t rankSlot, uint32_t stepIndex) const;
    // Statistics over steps with index in [firstStep, lastStep] and not in `skip` (sorted), per rank slot.
    std::vector<RankStats> stats(uint32_t firstStep, uint32_t lastStep, const std::vector<uint32_t>& skip = {}) const;
    // Late arrivals of one step.
    const std::vector<Late>& late(uint32_t stepIndex) const;
    // Takes the matches of `other`'s steps with index in [firstStep, lastStep] (matched, with the same
    // rank slots, those steps absent here): stats() and late() then cover them too; their occurrences
    // are dropped (occurrences() is empty for them), as is the rest of `other`.
    void absorb(CollectiveMatcher&& other, uint32_t firstStep, uint32_t lastStep);
    size_t rankSlots() const { return m_ranks.size(); }

private:
    struct StepEntry {
        uint32_t step;
        std::vector<Occurrence> occ;
        uint64_t matched = 0;
        uint64_t unmatched = 0;
    };
    struct StepLate {
        uint32_t step;
        std::vector<Late> late;
    };
    StepEntry* find(uint32_t rankSlot, uint32_t stepIndex);
    const StepEntry* find(uint32_t rankSlot, uint32_t stepIndex) const;
    void matchStep(uint32_t stepIndex, std::vector<std::pair<uint32_t, StepEntry*>>& ranks);
    struct Ref {
        uint64_t comm, seq;
        uint32_t slot;
        uint32_t step;
        StepEntry* entry;
        size_t k;
    };
    void matchKeyed();
    void matchGroup(const std::vector<Ref>& group, std::vector<TimeNs>& durations);
    StepLate& lateOf(uint32_t stepIndex);

    std::vector<std::vector<StepEntry>> m_ranks; // per rank slot, sorted by step after match()
    std::vector<StepLate> m_late; // sorted by step
};

} // namespace gapscope::model
