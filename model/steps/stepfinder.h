// SPDX-License-Identifier: MIT
#pragma once

// StepFinder: the one place that finds a trace's steps, after any reader (capture file, import,
// several files merged, live snapshot): openTrace and the live session call it once per trace.
//
// Rules, tried per rank in order of evidence by `auto` (or one of them alone, StepRule):
//   engine   the serving engine's own step annotations (StepAnnotation: SGLang step[...], vLLM
//            execute_..., gapscope's decode_step): one step per outermost range, however few, with
//            its kind, batch and tokens. Final: nothing cuts a step below such a range.
//            ProfilerStep#N ranges enclose steps instead: the rules below run inside each one, and a
//            ProfilerStep inside which they find fewer than two steps is one step.
//   graph    one step per CUDA/HIP graph launch; launches of piecewise graphs (a launch sequence that
//            cycles through several graphs) are grouped by cycle. Eager work between replays that is
//            large enough to be a forward (the prefill of a generate() call) is a step of its own.
//   forward  one step per model forward of an eager process (ForwardRule), accepted only when the
//            forwards agree in size (a decode loop), so that stages of a network are not steps.
//   period   one step per period of the kernel-name sequence (training iterations), refused at the
//            scale of a layer.
//   nvtx:RE, anchor:RE   only where the user names them.
// A step is the GPU work its range or launches started, wherever and whenever it ran: the kernels
// whose correlation ids it holds (GPU start times where the trace has no launches). Its window:
// [first start, last end] over those kernels; analysis uses [start_i, start_{i+1}).
//
// Steps are aligned across ranks by the collectives they hold (CollectiveKeys), else by time; each
// step then gets a kind (StepKinds). When no rule makes steps, the report says which rules were tried,
// what each found, and names the kernels that occur once per forward (candidates for anchor:RE).
//
// Pure function of the trace; thread-safe.

#include "model/steps/steprule.h"
#include "model/trace/trace.h"

#include <string>
#include <vector>

namespace gapscope::model {


class StepFinder {
public:
    // keepStored: the steps stored in the file (a capture's, a converted trace's) stay, and only ranks
    // without any get steps by `rule` (what opening a file without naming a rule does).
    explicit StepFinder(StepRule rule = {}, bool keepStored = false);

    // Finds the steps of every rank and stores them in `trace` (replacing stored ones unless the rule
    // is `file` or keepStored), with their kinds. The report's lines also go to the trace's warnings
    // ("steps: ...") when no step was found.
    StepReport find(Trace& trace) const;

    // Steps of one rank, numbered 0..n-1 and not aligned; lines for the report go to `tried`.
    std::vector<Step> findRank(const Trace& trace, uint32_t rank, StepReport& report) const;

    // What each rule that needs no pattern would make of `trace`: (rule, steps of the rank with most),
    // for a user choosing one (the viewer's Steps menu). Runs every rule on every rank.
    struct Candidate {
        std::string rule;
        uint32_t steps = 0;
    };
    static std::vector<Candidate> candidates(const Trace& trace);

private:
    static void kindsOfStored(Trace& trace);
    StepRule m_rule;
    bool m_keepStored;
};

} // namespace gapscope::model
