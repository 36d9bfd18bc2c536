// SPDX-License-Identifier: MIT
#pragma once

// The classifier and budget a gap analysis runs with, chosen the same way by every subcommand that
// analyses (`analyze`, and `convert` for the Perfetto export's budget waterfall): the flags first,
// else what the trace stores, else the built-in classifier and no budget.

#include "args.h"
#include "budgetoptions.h"

#include "model/analysis/gapanalyzer.h"
#include "model/trace/trace.h"

#include <optional>
#include <string>

namespace gapscope::cli {

// The budget from the flags, else from the settings stored in the trace, else none, for steps of `kind`
// (model/analysis/phasebudget.h: prefill steps get the prefill budget). `settings` receives what was
// used (for --save).
Expected<model::StepBudget> pickBudget(const ArgParser& p, const BudgetOptions& options, bool achievable,
    const model::Trace& trace, model::StepKind kind, std::optional<model::BudgetSettings>& settings);

// The analysis flags of `analyze` that other commands share (`query`, `export --sqlite`, `report`): budget,
// --kind, --classifier, --achievable, and --step-rule (added by the command with addStepRuleOption).
struct AnalysisFlags {
    BudgetOptions budget;
    std::string classifier, kind, stepRule;
    bool achievable = false;
    void addTo(ArgParser& p);
};

// The classifier, budget and step kind the flags ask for, as `analyze` picks them. Errors name the flag.
Status setUpAnalysis(const ArgParser& p, const AnalysisFlags& f, const model::Trace& trace,
    std::optional<model::KernelClassifier>& classifier, model::StepBudget& budget,
    model::GapAnalyzer::Options& options);

} // namespace gapscope::cli
