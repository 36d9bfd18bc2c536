// SPDX-License-Identifier: MIT
#pragma once

// How a subcommand reads its trace: `--read auto|full|overview`. A single .gapscope file goes through
// its overview (model/io/overview.h; for summary and analyze also windows of whole steps,
// model/io/tracewindow.h, model/analysis/analysisstream.h) when
// asked (overview), or by default when it holds model::kLargeTraceEvents events or more (auto);
// otherwise, and always for several files or other formats, every event is decoded (full).

#include "args.h"
#include "model/open/document.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gapscope::cli {

using LargeFile = model::LargeFile; // model/open/document.h: the decision is made there, for the viewer too

// Adds the --read option to `p` (the help names what "overview" means for this command).
void addReadOption(ArgParser& p, std::string& mode, const char* overviewMeans);
// Adds --step-rule RULE (model/steps/steprule.h). Finding steps needs every event: a rule read with
// --read auto reads in full.
void addStepRuleOption(ArgParser& p, std::string& rule);
// False (after printing the usage error) when `rule` does not parse or is asked with --read overview;
// with a rule, `readMode` auto becomes full (pass nullptr for commands without --read).
bool stepRuleValid(const std::string& command, const std::string& rule, std::string* readMode);
// False (after printing the usage error) when `mode` is not auto, full or overview.
bool readModeValid(const std::string& command, const std::string& mode);
// The file's reader and overview when it is to be read through them (model::openLarge); nothing
// otherwise, or on error (`error` says what went wrong opening the overview). A file whose annotations
// name a step rule (model::savedStepRule) is read in full with `auto`, as with --step-rule.
// keepPassFrame: see model::OverviewOptions (info --save-overview).
std::optional<LargeFile> openLarge(
    const std::vector<std::string>& paths, const std::string& mode, std::string& error, bool keepPassFrame = false);

} // namespace gapscope::cli
