// SPDX-License-Identifier: MIT
#pragma once

// StepRule: how a trace's steps are to be found, as the user names it on every command that reads
// traces (`--step-rule`), in the viewer's Steps menu and in a capture request. One parser for all of
// them: an unknown rule is an error that says which rules exist.
//
//   auto          the evidence in order: engine step annotations (ProfilerStep#N enclosing), graph launches,
//                 one step per forward, the period of the kernel sequence
//   engine        only the engines' step annotations (SGLang, vLLM, ProfilerStep#N, gapscope's decode_step)
//   nvtx:RE       NVTX / record_function ranges whose name matches RE (case-insensitive), one step each
//   graph         one step per CUDA/HIP graph launch (cycles of piecewise graphs grouped)
//   forward       one step per model forward, found from the kernel sequence
//   period        one step per period of the kernel-name sequence (a training iteration)
//   anchor:RE     one step per kernel whose name matches RE (the first kernel of each step)
//   file          the steps stored in the file, as they are (the default for a capture that has them)
//
// Threading: plain value.

#include "model/base/status.h"

#include <string>

namespace gapscope::model {

struct StepRule {
    enum class Kind { Auto, Engine, Nvtx, Graph, Forward, Period, Anchor, File };
    Kind kind = Kind::Auto;
    std::string pattern; // Nvtx and Anchor: the regular expression (never empty for them)

    // Parses the text forms above; the error names the text and the rules that exist.
    static Expected<StepRule> parse(const std::string& text);
    std::string toString() const; // the text form parse() reads back
    static const char* help(); // one line listing the rules, for --help texts

    // The rule of a live capture request (`capture --step-rule`, the viewer's connect dialog): the ranks
    // find steps while the process runs, so only auto, graph, nvtx:RE and anchor:RE can be asked for (the
    // others need the whole trace: name them when the file is opened). The request's step_rule
    // ("auto", "graph", "nvtx", "anchor") and step_pattern; the error names the text and the rules a
    // capture takes.
    struct CaptureRequest {
        std::string rule;
        std::string pattern;
    };
    static Expected<CaptureRequest> forCapture(const std::string& text);
};

} // namespace gapscope::model
