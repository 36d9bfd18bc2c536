// SPDX-License-Identifier: MIT
#include "model/steps/steprule.h"

#include "model/base/patternmatcher.h"

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

Expected<StepRule::CaptureRequest> StepRule::forCapture(const std::string& text)
{
    static const char* const kCaptureRules = "auto, graph, nvtx:REGEX or anchor:REGEX";
    if (text.empty())
        return Status::error(std::string("the step rule is empty: a capture takes ") + kCaptureRules);
    Expected<StepRule> rule = parse(text);
    if (!rule)
        return Status::error(rule.status().message() + " (a capture takes " + kCaptureRules + ")");
    switch (rule->kind) {
    case Kind::Auto:
        return CaptureRequest { "auto", "" };
    case Kind::Graph:
        return CaptureRequest { "graph", "" };
    case Kind::Nvtx:
        return CaptureRequest { "nvtx", rule->pattern };
    case Kind::Anchor:
        return CaptureRequest { "anchor", rule->pattern };
    default:
        return Status::error("step rule '" + text + "' needs the whole trace: a capture takes " + kCaptureRules
            + "; name it when the file is opened (--step-rule on info, summary, analyze)");
    }
}

} // namespace gapscope::model
