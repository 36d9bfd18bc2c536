// SPDX-License-Identifier: MIT
#pragma once

// What this process holds in memory, for `info --json` (resident_bytes) and the viewer's Help > About:
// the resident set now and its peak, read from /proc/self (0 where there is no /proc); and a way to
// give freed memory back.
//
// Threading: any thread.

#include <cstdint>

namespace gapscope::model {

uint64_t residentBytes();
uint64_t peakResidentBytes();
// Hands memory freed by this process back to the system (glibc keeps freed blocks in its per-thread
// arenas, where they count as resident): after a large window of a file is dropped. No-op elsewhere.
void releaseFreedMemory();

} // namespace gapscope::model
