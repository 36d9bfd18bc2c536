// SPDX-License-Identifier: MIT
// budgetForSteps: see phasebudget.h.
#include "model/analysis/phasebudget.h"

#include <cstdio>
#include <map>

namespace gapscope::model {

namespace {

// The prefill steps of the trace by aligned index (the first rank's that has the index), as
// (prompt tokens, batch); 0 tokens: not known.
std::map<uint32_t, std::pair<uint64_t, uint32_t>> prefillSteps(const Trace& trace)
{
    std::map<uint32_t, std::pair<uint64_t, uint32_t>> out;
    for (uint32_t r : trace.ranks())
        for (const Step& s : trace.steps(r))
            if (s.kind == StepKind::Prefill)
                out.emplace(s.index, std::make_pair(uint64_t(s.tokens), s.batch));
    return out;
}

StepBudget notPresent(std::string why)
{
    StepBudget b;
    b.phase = "prefill";
    b.why = std::move(why);
    return b;
}

} // namespace

Expected<StepBudget> budgetForSteps(const Trace& trace, StepKind kind, const BudgetInputs& inputs, bool achievable,
    const std::string& description)
{
    if (kind != StepKind::Prefill) {
        BudgetInputs in = inputs;
        in.phase = BudgetPhase::Decode;
        auto budget = computeBudget(in);
        if (!budget)
            return budget.status();
        return makeStepBudget(*budget, achievable, description);
    }
    const auto steps = prefillSteps(trace);
    if (steps.empty())
        return notPresent("the trace has no prefill steps");
    std::map<std::pair<uint64_t, uint32_t>, uint32_t> shapes; // (tokens, batch) -> steps
    uint32_t fromSteps = 0, fromSetting = 0;
    for (const auto& [index, tb] : steps) {
        uint64_t tokens = tb.first;
        if (tokens)
            ++fromSteps;
        else if ((tokens = inputs.promptTokens))
            ++fromSetting;
        else
            continue;
        ++shapes[{ tokens, tb.second ? tb.second : inputs.batch }];
    }
    const uint32_t used = fromSteps + fromSetting;
    if (used == 0)
        return notPresent("prefill budget unknown: none of the " + std::to_string(steps.size())
            + " prefill steps says its prompt tokens (no engine annotation with them) and no --prompt-tokens "
              "setting was given; the kernels alone give no sound count");
    StepBudget mean;
    for (const auto& [shape, count] : shapes) {
        BudgetInputs in = inputs;
        in.phase = BudgetPhase::Prefill;
        in.promptTokens = shape.first;
        in.batch = shape.second;
        auto budget = computeBudget(in);
        if (!budget)
            return budget.status();
        const StepBudget one = makeStepBudget(*budget, achievable, {});
        for (const auto& [name, ms] : one.componentMs)
            mean.componentMs[name] += ms * count / used;
        if (mean.assumptions.empty())
            mean.assumptions = one.assumptions; // the first shape's; the others differ only in tokens
        mean.promptTokens += double(shape.first) * count / used;
    }
    mean.present = true;
    mean.phase = "prefill";
    mean.promptSteps = used;
    mean.promptTokensFrom = fromSteps && fromSetting ? "steps and setting" : fromSteps ? "steps" : "setting";
    char tokens[64];
    std::snprintf(tokens, sizeof tokens, "%.0f", mean.promptTokens);
    mean.description = description + ", prefill budget of " + tokens + " prompt tokens (mean over " + std::to_string(used)
        + " prefill step" + (used == 1 ? "" : "s") + ", tokens from " + mean.promptTokensFrom + ")";
    if (used < steps.size())
        mean.assumptions.push_back(std::to_string(steps.size() - used) + " of " + std::to_string(steps.size())
            + " prefill steps say no prompt tokens and no --prompt-tokens setting was given: left out of the "
              "budget's mean");
    if (shapes.size() > 1)
        mean.assumptions.push_back("prefill budget: the mean of " + std::to_string(shapes.size())
            + " budgets, one per prompt length and batch of the steps (assumptions above: the first)");
    return mean;
}

} // namespace gapscope::model
