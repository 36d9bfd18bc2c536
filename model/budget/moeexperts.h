// SPDX-License-Identifier: MIT
#pragma once

// How many routed experts a decode step touches.
//  - expectedDistinctExperts: U(B) = E (1 - (1 - k/E)^B), B tokens each routed to k of E experts
//    uniformly (GLM-5: 8.0, 15.8, 30.5, 57.4 for B = 1, 2, 4, 8).
//  - expectedBusiestRankExperts: with expert parallelism the experts are dealt to EP ranks in
//    contiguous blocks and the step waits for the rank that must read the most distinct experts.
//    Exact for an integral number u of touched experts: given u, the touched set is a uniform
//    u-subset (the routing is exchangeable), so per-rank counts are multivariate hypergeometric;
//    E[max] = sum_m (1 - P(all ranks <= m)), P computed by convolving binomial weights conditioned
//    on the total. U(B) is not integral in general: the result is interpolated between floor and
//    ceil of U(B). GLM-5, EP8, B=1: 2.56 experts on the busiest rank.
//  - expertLoadFromHits: the same two figures from a measured expert-hit histogram (counts per
//    expert, optionally per layer): p_e = k h_e / sum h, U = sum_e 1 - (1 - p_e)^B, busiest rank =
//    the largest expected per-rank load (a lower bound of the expected maximum).
// Pure functions; a small thread-local memo makes repeated calls cheap.

#include "model/base/json.h"
#include "model/base/status.h"

#include <cstdint>
#include <vector>

namespace gapscope::model {

double expectedDistinctExperts(uint32_t experts, uint32_t perToken, uint64_t tokens);
double expectedBusiestRankExperts(uint32_t experts, uint32_t perToken, uint64_t tokens, uint32_t ep);

struct ExpertLoad {
    double distinct = 0; // expected distinct experts touched per layer (all ranks)
    double busiestRank = 0; // expected distinct experts on the busiest EP rank per layer
};
// `hits`: one histogram (size E) or one per MoE layer; per-layer results are averaged.
ExpertLoad expertLoadFromHits(
    const std::vector<std::vector<double>>& hits, uint32_t perToken, uint64_t tokens, uint32_t ep);

// Reads {"counts": [...]} or {"layers": [[...], ...]} (or a bare array of counts). Every histogram
// must have `experts` entries, non-negative, not all zero.
Expected<std::vector<std::vector<double>>> parseExpertHits(
    const json::Value& doc, uint32_t experts, const std::string& what);

} // namespace gapscope::model
