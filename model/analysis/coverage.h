// SPDX-License-Identifier: MIT
#pragma once

// Coverage: how much of the trace an answer of the analysis stands on, item by item, each with ok / warn
// / bad and one line saying what it means for the answer. `analyze --json` and `diff --json` carry it
// (`coverage: [{name, value, unit, verdict, meaning}]`), their text ends with it, and `diff --gate`
// does not judge when an item of either side is bad (exit 2).
//
//   kernel time in steps      own kernel time inside the steps' windows / all of the analysed ranks'
//                             (the rest is before the first step, after the last, or between ranks'
//                             captures): ok >= 80 %, warn >= 10 %, bad below. Needs the events (not for
//                             a file analysed in windows).
//   ranks                     ranks with steps against the job's world size as the trace says it (the
//                             capture's rank list, Kineto's distributedInfo): warn when some are missing.
//   complete steps            steps every analysed rank has / all steps: ok 100 %, warn >= 50 %, bad
//                             below; the meaning names the runs left out ("steps 20-39: capture started
//                             ...").
//   clock alignment residual  per rank, the median distance of its collective ends from the others' (a
//                             collective ends together on every rank), the largest rank's: ok < 50 us,
//                             warn < 1 ms, bad above. Needs keyed collectives on 2+ ranks.
//   capture overhead          the capture's own cost while recording (captureoverhead.h), the largest
//                             rank's: ok < 5 %, warn < 25 %, bad above. Captures only.
//   data lost                 events the trace says were lost (counters of severity data_loss): bad > 0.
//   anomalies                 counters of severity error or warning: warn > 0.
//   unclassified kernel time  share of the kernel time in steps no classifier rule matches: ok < 10 %,
//                             warn above (never bad: it is still in the measured bars).
//
// Threading: pure function of the analyzer; thread-safe.

#include "model/analysis/gapanalyzer.h"
#include "model/base/json.h"

#include <string>
#include <vector>

namespace gapscope::model {

enum class CoverageVerdict : uint8_t { Ok, Warn, Bad };
const char* toString(CoverageVerdict v); // "ok", "warn", "bad"

// What coverage needs from the events, gathered from the whole trace or window by window (a large file
// analysed in batches, analysisstream.h: each batch's share added, its own steps and the kernels it owns):
// the analysed ranks' own kernel time, and the ends of each matched collective by rank.
struct CoverageInputs {
    bool measured = false; // some share was gathered (else the items that need events are left out)
    TimeNs kernelOwnNs = 0;
    std::vector<std::vector<std::pair<uint32_t, TimeNs>>> collectiveEnds; // per keyed collective: (rank, end)
    // One batch's (or the whole trace's) share: the kernels starting in [ownedFrom, ownedTo), the
    // collectives of steps [firstStep, lastStep] and those in no step that start in the owned range.
    void add(const GapAnalyzer& analyzer, uint32_t firstStep, uint32_t lastStep, TimeNs ownedFrom, TimeNs ownedTo);
};

struct CoverageItem {
    std::string name;
    double value = 0;
    std::string unit; // "%", "ranks", "us", "events", "counters"
    CoverageVerdict verdict = CoverageVerdict::Ok;
    std::string meaning;
};

// With the inputs gathered from the analyzer's own events (it must hold them), or given.
std::vector<CoverageItem> coverageOf(const GapAnalyzer& analyzer);
std::vector<CoverageItem> coverageOf(const GapAnalyzer& analyzer, const CoverageInputs& inputs);
json::Value coverageJson(const std::vector<CoverageItem>& items);
// "coverage:" and one line per item ("  ok    kernel time in steps  97.2 %  ...").
std::string coverageText(const std::vector<CoverageItem>& items);
bool anyBad(const std::vector<CoverageItem>& items);

} // namespace gapscope::model
