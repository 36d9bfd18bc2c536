// SPDX-License-Identifier: MIT
#pragma once

// The attention part of SelfCheck (selfcheck.h) beyond the plain decode cases: the GQA kernels
// (tensor-core and CUDA-core rows) with fused RoPE and cache append (the query read at a token
// stride, as from the fused qkv buffer), against RoPE + attention on the CPU, and the appended
// cache row against the rotated key.
// Threading: one rank's thread, its current device.

#include "model/base/status.h"

#include <random>

namespace gapscope::kernels::check {

struct Report;
Status checkAttentionRope(std::mt19937& rng, Report& rep);

} // namespace gapscope::kernels::check
