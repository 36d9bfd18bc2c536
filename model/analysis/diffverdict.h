// SPDX-License-Identifier: MIT
#pragma once

// DiffVerdicts: is a difference between A and B larger than the run-to-run noise? For every bar of the
// waterfall (and the measured step) and every kernel name, the change of the median per step, B - A,
// with a confidence interval from the steps' own spread, and a verdict only where the interval and a
// threshold say so.
//
// Samples: each side's complete steps in the range TraceDiff compares ([first, last]); per step the
// critical path's breakdown (GapAnalyzer::analyze of that one step, as `analyze` gives it), so a bar's
// sample is its time in each step; "measured step" is the step's time. A kernel name's sample is its own
// time in each step (owntime.h: a kernel belongs to the step whose window holds its start), summed over
// the ranks and divided by their number; names pair as TraceDiff pairs them (new and vanished ones
// count 0 on the side without them). Kernel verdicts need the events: a side read in windows of a large
// file has none (kernelsCompared() false).
//
// Interval: the percentile bootstrap of the difference of medians (each side resampled on its own,
// `resamples` times, a fixed seed: the same input gives the same interval), at `confidence`.
// Verdict, with the threshold T (a fraction of A's median, but at least `stepFloor` of A's median step and
// `floorNs`: a bar that moves by less than 0.2% of the step is no change, however small the bar (small bars
// such as the collective wait differ between runs of one workload by more than their own spread says); or
// an absolute time):
//   regression    the interval lies above +T      improvement   the interval lies below -T
//   no change     the interval lies within [-T, T] inconclusive  otherwise
// (with fewer than kMinSteps steps on a side: inconclusive, with no interval (NaN), and the gate cannot judge).
//
// Cost: for each bar and kernel name, resamples x (nA + nB) (a selection per resample); names in
// parallel on the task pool. Threading: computed in the constructor; const afterwards.

#include "model/analysis/tracediff.h"

#include <set>
#include <string>
#include <vector>

namespace gapscope::model {

class DiffVerdicts {
public:
    struct Options {
        double relative = 0.02; // threshold as a fraction of A's median (used when absoluteNs <= 0)
        double absoluteNs = 0; // threshold in ns (> 0: used instead of relative)
        double floorNs = 1000; // a relative threshold is never below this (bars that are 0 in A)
        double stepFloor = 0.002; // nor below this share of A's median step
        unsigned resamples = 2000;
        double confidence = 0.95;
        size_t kernels = 100; // kernel names judged: those with the most own time (A + B)
        uint64_t seed = 1;
    };
    static constexpr size_t kMinSteps = 5;
    static constexpr const char* kIdleTotal = "idle time (all gaps)"; // the second verdict: the gap bars added up

    enum class Outcome : uint8_t { Regression, Improvement, NoChange, Inconclusive };
    static const char* toString(Outcome o); // "regression", "improvement", "no change", "inconclusive"

    struct Verdict {
        std::string name; // the bar's name (as in `bars`), "measured step", or the kernel's name
        bool kernel = false;
        size_t aSteps = 0, bSteps = 0;
        double aMedianNs = 0, bMedianNs = 0;
        double deltaNs = 0, ciLowNs = 0, ciHighNs = 0, thresholdNs = 0;
        Outcome outcome = Outcome::Inconclusive;
    };

    DiffVerdicts(const TraceDiff& diff, Options options);
    DiffVerdicts(const TraceDiff& diff)
        : DiffVerdicts(diff, Options {})
    {
    }

    // "measured step" first, "idle time (all gaps)" second, then the bars in A's waterfall order (B's extra
    // ones after), then kernels by own time, most first.
    const std::vector<Verdict>& verdicts() const { return m_verdicts; }
    // What `diff --gate` fails on: the measured step is a regression; or a bar is while the step is not an
    // improvement, and for a gap bar (launch/host gaps, sync stalls, step gap, in-graph gaps) only when the
    // idle time as a whole (kIdleTotal) is a regression too. Other regressions are waived (gating() false):
    // idle time moving from one gap bar to another made 5 of 20 real capture pairs of one unchanged process
    // fail otherwise (H100, BENCHMARKS.md).
    bool regression() const;
    bool gating(const Verdict& v) const; // v is a regression that fails the gate
    bool waived(const Verdict& v) const; // v is a bar's regression waived by a faster step
    bool kernelsCompared() const { return m_kernelsCompared; }
    // Both sides have at least kMinSteps complete steps in the compared range: verdicts can be given.
    bool enoughSteps() const { return m_enoughSteps; }
    const Options& options() const { return m_options; }
    // Why kernels were not judged, or other limits, in words.
    const std::vector<std::string>& notes() const { return m_notes; }

    // The interval of the difference of medians of two samples (exposed for tests).
    struct Interval {
        double delta = 0, low = 0, high = 0;
    };
    static Interval bootstrap(const std::vector<double>& a, const std::vector<double>& b, unsigned resamples,
        double confidence, uint64_t seed);

private:
    Verdict judge(std::string name, bool kernel, const std::vector<double>& a, const std::vector<double>& b,
        uint64_t seed, double stepNs) const;
    Options m_options;
    std::vector<Verdict> m_verdicts;
    bool m_kernelsCompared = false;
    bool m_enoughSteps = false;
    std::set<std::string> m_idleBars; // the names of the gap bars
    std::vector<std::string> m_notes;
};

} // namespace gapscope::model
