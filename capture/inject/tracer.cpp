// SPDX-License-Identifier: MIT
#include "capture/inject/tracer.h"

namespace gapscope::capture::inject {

StepRule parseStepRule(const std::string& text)
{
    if (text == "nvtx")
        return StepRule::Nvtx;
    if (text == "anchor")
        return StepRule::Anchor;
    if (text == "time" || text == "duration")
        return StepRule::Time;
    return StepRule::Graph;
}

const char* toString(StepRule rule)
{
    switch (rule) {
    case StepRule::Graph:
        return "graph";
    case StepRule::Nvtx:
        return "nvtx";
    case StepRule::Anchor:
        return "anchor";
    case StepRule::Time:
        return "time";
    }
    return "graph";
}

} // namespace gapscope::capture::inject
