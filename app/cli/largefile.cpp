// SPDX-License-Identifier: MIT
#include "largefile.h"

#include "model/open/traceopen.h"
#include "model/steps/steprule.h"

#include <iostream>

namespace gapscope::cli {

void addReadOption(ArgParser& p, std::string& mode, const char* overviewMeans)
{
    p.option("--read", "auto|full|overview",
        std::string("how: every event decoded at once (full), or ") + overviewMeans
            + " (overview: a .gapscope file's OVERVIEW frame, else one pass over its chunks); auto: overview for a "
              "file of 4M events or more",
        mode);
}

void addStepRuleOption(ArgParser& p, std::string& rule)
{
    p.option("--step-rule", "RULE",
        std::string("how to find the steps: ") + model::StepRule::help()
            + " (default: the rule saved with the trace's annotations (the viewer's Steps menu), else the steps "
              "stored in a capture, auto for other traces; auto re-finds a capture's; a rule reads every event)",
        rule);
}

bool stepRuleValid(const std::string& command, const std::string& rule, std::string* readMode)
{
    if (rule.empty())
        return true;
    if (auto r = model::StepRule::parse(rule); !r) {
        std::cerr << "gapscope-cli " << command << ": --step-rule: " << r.error() << "\n";
        return false;
    }
    if (readMode && *readMode == "overview") {
        std::cerr << "gapscope-cli " << command << ": --step-rule finds steps from every event: not with --read overview\n";
        return false;
    }
    if (readMode)
        *readMode = "full";
    return true;
}

bool readModeValid(const std::string& command, const std::string& mode)
{
    if (mode == "auto" || mode == "full" || mode == "overview")
        return true;
    std::cerr << "gapscope-cli " << command << ": --read takes auto, full or overview, not '" << mode << "'\n";
    return false;
}

std::optional<LargeFile> openLarge(
    const std::vector<std::string>& paths, const std::string& mode, std::string& error, bool keepPassFrame)
{
    if (mode == "full" || paths.size() != 1)
        return std::nullopt;
    auto reader = format::TraceReader::open(paths[0]);
    if (!reader || (mode != "overview" && model::fileEvents(**reader) < model::kLargeTraceEvents))
        return std::nullopt;
    // A step rule saved with the annotations finds the steps from every event, as --step-rule does;
    // "file" keeps the stored ones, which the overview has.
    if (const std::string saved = model::savedStepRule(**reader); !saved.empty() && saved != "file") {
        if (mode != "overview")
            return std::nullopt;
        std::cerr << "gapscope-cli: " << paths[0] << ": the step rule saved with its annotations (" << saved
                  << ") needs every event: not applied with --read overview (the stored steps are used)\n";
    }
    model::OverviewOptions options;
    options.keepPassFrame = keepPassFrame;
    auto o = model::TraceOverview::openRebuildingIndex(**reader, options);
    if (!o) {
        error = o.error();
        return std::nullopt;
    }
    if (!(*reader)->hasIndex()) // cut or damaged so that no index could be rebuilt: read whole
        return std::nullopt;
    return LargeFile { std::move(*reader), std::move(*o) };
}

} // namespace gapscope::cli
