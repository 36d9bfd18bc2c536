// SPDX-License-Identifier: MIT
#pragma once

// CRC-32C (Castagnoli), the checksum of .gapscope frames. Uses the SSE 4.2 instruction when the
// CPU has it, a slicing table otherwise; both give identical results. Thread-safe.

#include <cstddef>
#include <cstdint>

namespace gapscope::format {

// crc32c(data) continuing from a previous value `crc` (0 to start).
uint32_t crc32c(const void* data, size_t size, uint32_t crc = 0);

} // namespace gapscope::format
