// SPDX-License-Identifier: MIT
#pragma once

// What this process holds in memory, for `info --json` (resident_bytes) and the viewer's Help > About:
// the resident set now and its peak, read from /proc/self (0 where there is no /proc).
//
// Threading: any thread.

#include <cstdint>

namespace gapscope::model {

uint64_t residentBytes();
uint64_t peakResidentBytes();

} // namespace gapscope::model
