// SPDX-License-Identifier: MIT
#include "largefile.h"

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
    if (auto m = model::parseReadMode(mode); !m) {
        std::cerr << "gapscope-cli " << command << ": " << m.error() << "\n";
        return false;
    }
    return true;
}

std::optional<LargeFile> openLarge(
    const std::vector<std::string>& paths, const std::string& mode, std::string& error, bool keepPassFrame)
{
    model::LargeOptions options;
    auto m = model::parseReadMode(mode); // checked by readModeValid
    options.mode = m ? *m : model::ReadMode::Auto;
    options.overview.keepPassFrame = keepPassFrame;
    std::string note;
    auto large = model::openLarge(paths, options, &note);
    if (!note.empty())
        std::cerr << "gapscope-cli: " << note << "\n";
    if (!large) {
        error = large.error();
        return std::nullopt;
    }
    return std::move(*large);
}

} // namespace gapscope::cli
