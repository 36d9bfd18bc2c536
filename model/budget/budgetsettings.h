// SPDX-License-Identifier: MIT
#pragma once

// BudgetInputs <-> pb::BudgetSettings (model/format/trace.proto), so a trace file stores the budget
// settings it was analysed with and reproduces the same budget when opened elsewhere. The model's
// config.json and the hardware JSON travel as text, so the file does not depend on local presets.
// Fields without a slot in BudgetSettings go to its `extra` map (keys: indexer, allreduce_lib,
// allreduce_fixed, edge_collectives, extra_kernels_per_layer, expert_hits, expert_hits_source, hw_set).
// Pure functions; thread-safe.

#include "model/budget/budget.h"

namespace gapscope::pb {
class BudgetSettings;
}

namespace gapscope::model {

void toBudgetSettings(const BudgetInputs& in, pb::BudgetSettings* out);
Expected<BudgetInputs> fromBudgetSettings(const pb::BudgetSettings& settings);

} // namespace gapscope::model
