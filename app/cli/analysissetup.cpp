// SPDX-License-Identifier: MIT
#include "analysissetup.h"

#include "model/analysis/phasebudget.h"
#include "model/budget/budgetsettings.h"
#include "model/trace/traceclassifier.h"

namespace gapscope::cli {

namespace {

std::string describe(const model::BudgetInputs& in, bool tpFromTrace, bool achievable, bool stored)
{
    std::string precision = model::precisionSpec(in);
    return in.model.name + " on " + in.hardware.name + ", TP " + std::to_string(in.tp)
        + (tpFromTrace ? " (the trace's rank count)" : "") + ", EP " + std::to_string(in.ep) + ", batch "
        + std::to_string(in.batch) + ", context " + std::to_string(in.context)
        + (precision.empty() ? "" : ", precision " + precision) + ", engine " + model::toString(in.engine) + ", "
        + (achievable ? "achievable" : "ideal") + " column" + (stored ? " (settings stored in the trace)" : "");
}

} // namespace

Expected<model::StepBudget> pickBudget(const ArgParser& p, const BudgetOptions& options, bool achievable,
    const model::Trace& trace, model::StepKind kind, std::optional<model::BudgetSettings>& settings)
{
    if (!options.modelGiven() && !options.hardwareGiven() && !trace.budgetSettings())
        return model::StepBudget {};
    if (options.modelGiven() != options.hardwareGiven())
        return Status::error("--model and --hw go together");
    bool stored = !options.modelGiven();
    bool tpFromTrace = false;
    Expected<model::BudgetInputs> inputs
        = stored ? model::fromBudgetSettings(*trace.budgetSettings()) : options.resolve();
    if (!inputs)
        return inputs.status().withContext(stored ? "stored budget settings" : "budget");
    if (!stored && !p.given("--tp") && trace.ranks().size() > 1) {
        inputs->tp = uint32_t(trace.ranks().size());
        tpFromTrace = true;
    }
    if (!stored && !p.given("--prompt-tokens") && trace.budgetSettings()) // the stored setting, unless given
        inputs->promptTokens = trace.budgetSettings()->promptTokens;
    auto budget = model::budgetForSteps(
        trace, kind, inputs.value(), achievable, describe(inputs.value(), tpFromTrace, achievable, stored));
    if (!budget)
        return budget.status().withContext("budget");
    settings = model::toBudgetSettings(inputs.value());
    return budget;
}

void AnalysisFlags::addTo(ArgParser& p)
{
    budget.addTo(p);
    p.option("--kind", "KIND",
        "the kind of step analysed for bars and gaps: decode, prefill, mixed, draft, verify or all (default: "
        "decode where the trace has decode steps, else all)",
        kind);
    p.option("--classifier", "FILE", "kernel classification table (default: the trace's, else the built-in one)",
        classifier);
    p.flag("--achievable", "bars against the budget's achievable column (default: ideal)", achievable);
}

Status setUpAnalysis(const ArgParser& p, const AnalysisFlags& f, const model::Trace& trace,
    std::optional<model::KernelClassifier>& classifier, model::StepBudget& budget, model::GapAnalyzer::Options& options)
{
    auto c = model::traceClassifier(trace, f.classifier);
    if (!c)
        return c.status().withContext("--classifier");
    classifier = std::move(c).value();
    options.kind = model::GapAnalyzer::defaultKind(trace);
    if (!f.kind.empty() && f.kind != "all" && !model::parseStepKind(f.kind, options.kind))
        return Status::error("--kind takes decode, prefill, mixed, draft, verify or all, not '" + f.kind + "'");
    if (f.kind == "all")
        options.kind = model::StepKind::Unknown;
    std::optional<model::BudgetSettings> settings;
    auto b = pickBudget(p, f.budget, f.achievable, trace, options.kind, settings);
    if (!b)
        return b.status();
    budget = std::move(b).value();
    return Status::ok();
}

} // namespace gapscope::cli
