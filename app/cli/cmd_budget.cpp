// SPDX-License-Identifier: MIT
// gapscope-cli budget: the theoretical latency budget of one decode step per GPU.
#include "budgetoptions.h"
#include "command.h"

#include "model/base/textcolumns.h"
#include "model/budget/resources.h"

#include <cmath>
#include <cstdio>
#include <iostream>

namespace gapscope::cli {

namespace {

double round6(double v)
{
    return std::round(v * 1e6) / 1e6;
}

using text::fixed;
using text::pad;

json::Value settingsJson(const model::BudgetInputs& in)
{
    json::Value s = json::Value::object();
    s.set("tp", in.tp);
    s.set("ep", in.ep);
    s.set("batch", in.batch);
    s.set("context", static_cast<unsigned long long>(in.context));
    s.set("precision", model::precisionSpec(in));
    s.set("engine", model::toString(in.engine));
    s.set("allreduce_us", in.allreduceUs >= 0 ? json::Value(in.allreduceUs) : json::Value("table"));
    s.set("indexer", model::toString(in.indexer));
    s.set("cuda_graphs", in.cudaGraphs);
    s.set("draft_tokens", in.draftTokens);
    s.set("accept_len", in.acceptanceLength > 0 ? in.acceptanceLength : 1.0);
    if (in.phase == model::BudgetPhase::Prefill) { // decode outputs keep their shape
        s.set("phase", model::toString(in.phase));
        s.set("prompt_tokens", static_cast<unsigned long long>(in.promptTokens));
    }
    return s;
}

json::Value budgetJson(const model::BudgetInputs& in, const model::Budget& b)
{
    json::Value doc = json::Value::object();
    doc.set("model", in.model.name);
    doc.set("hardware", in.hardware.name);
    doc.set("settings", settingsJson(in));
    doc.set("total_ms", round6(b.idealMs));
    doc.set("tok_s", round6(b.tokPerSecIdeal));
    doc.set("achievable_ms", round6(b.achievableMs));
    doc.set("achievable_tok_s", round6(b.tokPerSecAchievable));
    doc.set("weight_bytes_per_gpu", std::round(b.weightBytesPerGpu));
    doc.set("kernels_per_step", std::round(b.kernelsPerStep));
    doc.set("collectives_per_step", b.collectivesPerStep);
    doc.set("experts_per_layer", round6(b.expertsPerLayer));
    doc.set("busiest_rank_experts", round6(b.busiestRankExperts));
    json::Value items = json::Value::array();
    for (const auto& it : b.items) {
        json::Value c = json::Value::object();
        c.set("name", it.name);
        c.set("component", model::toString(it.component));
        c.set("bytes", std::round(it.bytes));
        c.set("flops", std::round(it.flops));
        c.set("ms", round6(it.idealMs));
        c.set("achievable_ms", round6(it.achievableMs));
        c.set("bound", it.bound);
        c.set("note", it.note);
        items.push(std::move(c));
    }
    doc.set("components", std::move(items));
    json::Value assumptions = json::Value::array();
    for (const auto& a : b.assumptions)
        assumptions.push(a);
    doc.set("assumptions", std::move(assumptions));
    return doc;
}

void printTable(const model::BudgetInputs& in, const model::Budget& b)
{
    std::cout << "budget: " << in.model.name << " on " << in.hardware.name << ", TP " << in.tp << ", EP " << in.ep
              << ", batch " << in.batch << ", context " << in.context << ", engine " << model::toString(in.engine)
              << (in.phase == model::BudgetPhase::Prefill
                         ? ", prefill of " + std::to_string(in.promptTokens) + " prompt tokens"
                         : std::string())
              << "\n\n";
    std::cout << pad("component", 30) << pad("MB/GPU", 11, true) << pad("GFLOP", 9, true) << pad("ideal ms", 10, true)
              << pad("achiev. ms", 11, true) << "  " << pad("bound", 8) << "note\n";
    for (const auto& it : b.items)
        std::cout << pad(it.name, 30) << pad(fixed(it.bytes / 1e6, 2), 11, true)
                  << pad(fixed(it.flops / 1e9, 2), 9, true) << pad(fixed(it.idealMs, 4), 10, true)
                  << pad(fixed(it.achievableMs, 4), 11, true) << "  " << pad(it.bound, 8) << it.note << "\n";
    std::cout << pad("total ms/step", 50) << pad(fixed(b.idealMs, 4), 10, true)
              << pad(fixed(b.achievableMs, 4), 11, true) << "\n"
              << pad("tok/s", 50) << pad(fixed(b.tokPerSecIdeal, 1), 10, true)
              << pad(fixed(b.tokPerSecAchievable, 1), 11, true) << "\n\n";
    std::cout << "weights read per GPU per step: " << fixed(b.weightBytesPerGpu / 1e9, 3) << " GB; about "
              << fixed(b.kernelsPerStep, 0) << " kernels and " << b.collectivesPerStep << " collectives per step\n\n";
    std::cout << "assumptions:\n";
    for (const auto& a : b.assumptions)
        std::cout << "  - " << a << "\n";
}

int listPresets()
{
    std::cout << "models (" << model::resourceDir() << "/models):\n";
    for (const auto& name : model::listPresets("models")) {
        auto m = model::loadModelConfig(name);
        std::cout << "  " << pad(name, 20);
        if (m)
            std::cout << m->modelType << ", " << m->layers << " layers" << (m->isMla() ? ", MLA" : ", GQA")
                      << (m->isMoe() ? ", " + std::to_string(m->experts) + " experts top-"
                                     + std::to_string(m->expertsPerToken)
                                     : "")
                      << (m->indexHeads ? ", DSA" : "") << "\n";
        else
            std::cout << "(unreadable: " << m.error() << ")\n";
    }
    std::cout << "hardware (" << model::resourceDir() << "/hardware):\n";
    for (const auto& name : model::listPresets("hardware")) {
        auto hw = model::loadHardwareProfile(name);
        std::cout << "  " << pad(name, 20) << (hw ? hw->displayName : "(unreadable: " + hw.error() + ")") << "\n";
    }
    return kExitOk;
}

int runBudget(const std::vector<std::string>& args)
{
    ArgParser p("budget", "",
        "Theoretical latency budget of one decode step per GPU: bytes, FLOPs and time per component, an ideal column "
        "(datasheet ceilings) and an achievable column (efficiencies, kernel floors, launch costs), and every "
        "assumption made.");
    BudgetOptions options;
    options.addTo(p);
    bool json = false, list = false, prefill = false;
    p.flag("--json", "machine-readable output", json);
    p.flag("--prefill", "the budget of a prefill step of --prompt-tokens N tokens (compute-bound: 2 x active "
        "parameters x tokens at the dense peak, or the weight read, whichever is longer per kernel)", prefill);
    p.flag("--list", "list the model and hardware presets", list);
    p.setPositionals(0, 0);
    if (int rc = p.parse(args); rc >= 0)
        return rc;
    if (list)
        return listPresets();
    if (!options.modelGiven() || !options.hardwareGiven())
        return p.usageError("--model and --hw are required (see --list for presets)");
    auto inputs = options.resolve();
    if (!inputs) {
        std::cerr << "gapscope-cli budget: " << inputs.error() << "\n";
        return kExitProblems;
    }
    if (prefill)
        inputs->phase = model::BudgetPhase::Prefill;
    auto budget = model::computeBudget(inputs.value());
    if (!budget) {
        std::cerr << "gapscope-cli budget: " << budget.error() << "\n";
        return kExitProblems;
    }
    if (json)
        std::cout << json::write(budgetJson(inputs.value(), budget.value()), 2);
    else
        printTable(inputs.value(), budget.value());
    return kExitOk;
}

} // namespace

GAPSCOPE_CLI_COMMAND(budget, "budget", "theoretical latency budget of a decode step per GPU", runBudget);

} // namespace gapscope::cli
