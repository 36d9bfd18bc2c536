// SPDX-License-Identifier: MIT
#pragma once

// Fuzz targets of file readers run with a 256 MB memory budget: the readers must refuse what does
// not fit with a message, and libFuzzer's -rss_limit_mb (1024 for them) turns any allocation that
// bypasses the budget into a crash.

#include "model/format/memorybudget.h"

namespace gapscope::fuzz {

inline const bool kBudgetSet = (format::MemoryBudget::setLimit(uint64_t(256) << 20), true);

} // namespace gapscope::fuzz
