// SPDX-License-Identifier: MIT
#pragma once

// BudgetInputs <-> BudgetSettings (model/trace/tracemeta.h), so a trace file stores the budget
// settings it was analysed with and reproduces the same budget when opened elsewhere. The model's
// config.json and the hardware JSON travel as text, so the file does not depend on local presets.
// Fields without a slot in BudgetSettings go to its `extra` map (keys: indexer, allreduce_lib,
// allreduce_fixed, edge_collectives, extra_kernels_per_layer, expert_hits, expert_hits_source, hw_set).
// Pure functions; thread-safe.

#include "model/budget/budget.h"
#include "model/trace/tracemeta.h"

namespace gapscope::model {

BudgetSettings toBudgetSettings(const BudgetInputs& in);
Expected<BudgetInputs> fromBudgetSettings(const BudgetSettings& settings);

} // namespace gapscope::model
