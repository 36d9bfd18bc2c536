// SPDX-License-Identifier: MIT
#pragma once

// BudgetOptions: the budget flags shared by `gapscope-cli budget` and `gapscope-cli analyze`, so
// both take exactly the same spelling:
//   --model FILE|NAME --hw FILE|NAME [--tp N] [--ep N] [--batch N] [--context N]
//   [--precision COMPONENT=FORMAT,...] [--engine sglang|none] [--allreduce-us X]
//   [--allreduce-lib NAME] [--graphs on|off] [--draft-tokens N] [--accept-len X]
//   [--expert-hits FILE] [--indexer auto|on|off] [--edge-collectives on|off] [--extra-kernels N]
//   [--hw-set FIGURE=VALUE,...] [--prompt-tokens N]
// Usage: declare one, addTo(parser) before parser.parse(), then resolve() to load the model and
// hardware and build the inputs. Not thread-safe (holds the parser's targets).

#include "args.h"

#include "model/budget/budget.h"

#include <string>

namespace gapscope::cli {

class BudgetOptions {
public:
    void addTo(ArgParser& parser);
    bool modelGiven() const { return !m_model.empty(); }
    bool hardwareGiven() const { return !m_hw.empty(); }
    // Loads --model and --hw and applies every flag. Errors name the flag or file.
    Expected<model::BudgetInputs> resolve() const;

private:
    Status applyNumbers(model::BudgetInputs& in) const;
    Status applyChoices(model::BudgetInputs& in) const;

    std::string m_model, m_hw, m_precision, m_engine = "sglang", m_graphs = "on", m_indexer = "auto";
    std::string m_allreduceLib, m_expertHits, m_edge, m_hwSet;
    int64_t m_tp = 1, m_ep = 1, m_batch = 1, m_context = 0, m_draftTokens = 0, m_extraKernels = 8, m_promptTokens = 0;
    double m_allreduceUs = -1, m_acceptLen = 0;
};

} // namespace gapscope::cli
