// SPDX-License-Identifier: MIT
#pragma once

// The GEMV part of SelfCheck (selfcheck.h): checkGemvs runs every format and schedule, sweep and
// persistent, direct and over device-chosen expert slots, against the CPU reference, and two GEMVs
// chained by PDL; checkSlowTail checks the slow-kernel pathology's factor and its counted time.
// Threading: one rank's thread, its current device.

#include "model/base/status.h"

#include <random>

namespace gapscope::kernels::check {

struct Report;
Status checkGemvs(std::mt19937& rng, Report& rep);
Status checkSlowTail(std::mt19937& rng, Report& rep);

} // namespace gapscope::kernels::check
