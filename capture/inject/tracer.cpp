// SPDX-License-Identifier: MIT
#include "capture/inject/tracer.h"

namespace gapscope::capture::inject {

bool parseStepRule(const std::string& text, StepRule* out)
{
    if (text.empty() || text == "auto" || text == "graph")
        *out = StepRule::Graph;
    else if (text == "nvtx")
        *out = StepRule::Nvtx;
    else if (text == "anchor")
        *out = StepRule::Anchor;
    else if (text == "time" || text == "duration")
        *out = StepRule::Time;
    else
        return false;
    return true;
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
