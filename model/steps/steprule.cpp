// SPDX-License-Identifier: MIT
#include "model/steps/steprule.h"

#include "model/patternmatcher.h"

namespace gapscope::model {

Expected<StepRule> StepRule::parse(const std::string& text)
{
    const size_t colon = text.find(':');
    const std::string kind = text.substr(0, colon);
    StepRule r;
    r.pattern = colon == std::string::npos ? std::string() : text.substr(colon + 1);
    const bool wantsPattern = kind == "nvtx" || kind == "anchor";
    if (kind == "auto" || kind.empty())
        r.kind = Kind::Auto;
    else if (kind == "engine")
        r.kind = Kind::Engine;
    else if (kind == "nvtx")
        r.kind = Kind::Nvtx;
    else if (kind == "graph")
        r.kind = Kind::Graph;
    else if (kind == "forward")
        r.kind = Kind::Forward;
    else if (kind == "period")
        r.kind = Kind::Period;
    else if (kind == "anchor")
        r.kind = Kind::Anchor;
    else if (kind == "file")
        r.kind = Kind::File;
    else
        return Status::error("step rule '" + text + "' is not one of: " + help());
    if (wantsPattern && r.pattern.empty())
        return Status::error("step rule '" + text + "' needs a pattern: " + kind + ":REGEX");
    if (!wantsPattern && !r.pattern.empty())
        return Status::error("step rule '" + text + "' takes no pattern");
    if (wantsPattern && !PatternMatcher::compile(r.pattern))
        return Status::error("step rule '" + text + "': '" + r.pattern + "' is not a valid regular expression");
    return r;
}

std::string StepRule::toString() const
{
    switch (kind) {
    case Kind::Auto:
        return "auto";
    case Kind::Engine:
        return "engine";
    case Kind::Nvtx:
        return "nvtx:" + pattern;
    case Kind::Graph:
        return "graph";
    case Kind::Forward:
        return "forward";
    case Kind::Period:
        return "period";
    case Kind::Anchor:
        return "anchor:" + pattern;
    case Kind::File:
        return "file";
    }
    return "auto";
}

const char* StepRule::help()
{
    return "auto, engine, nvtx:REGEX, graph, forward, period, anchor:REGEX, file";
}

} // namespace gapscope::model
