// SPDX-License-Identifier: MIT
#pragma once

// The budget that the steps of one kind are compared with: decode steps (and any other kind, or all
// kinds together) with the decode budget, prefill steps with the prefill budget (BudgetPhase::Prefill,
// budget.h) of their own prompt tokens. The CLI's analyze/diff and the viewer's waterfall all pick it
// here.
//
// Prefill: a step's prompt tokens are its `tokens` where its engine annotation says them (SGLang
// `toks=`, vLLM's context tokens), else the stored setting BudgetInputs::promptTokens (`--prompt-tokens`);
// its batch the step's where known, else BudgetInputs::batch. Each distinct (tokens, batch) gets its
// budget; the step budget is their mean over the trace's prefill steps (aligned indices), so that the
// waterfall's budget (mean x steps) is the sum of the steps' own budgets over all of them. Prefill
// steps that neither say nor have the setting are left out of the mean (the description says how
// many); when none is left the budget is not present and `why` says so: the trace's events give no
// sound count of prompt tokens (kernel grids vary by engine and padding), so none is guessed.
//
// Pure functions; thread-safe.

#include "model/analysis/waterfall.h"
#include "model/budget/budget.h"
#include "model/trace/trace.h"

#include <string>

namespace gapscope::model {

// `description`: what the budget was made from (model, hardware, column), completed with the phase.
Expected<StepBudget> budgetForSteps(const Trace& trace, StepKind kind, const BudgetInputs& inputs, bool achievable,
    const std::string& description);

} // namespace gapscope::model
