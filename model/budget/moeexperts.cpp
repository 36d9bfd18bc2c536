// SPDX-License-Identifier: MIT
#include "model/budget/moeexperts.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace gapscope::model {

namespace {

// Expert counts per EP rank: contiguous blocks, the first E % EP ranks hold one more.
std::vector<uint32_t> groupSizes(uint32_t experts, uint32_t ep)
{
    std::vector<uint32_t> g(ep, experts / ep);
    for (uint32_t r = 0; r < experts % ep; ++r)
        ++g[r];
    return g;
}

std::vector<double> binomialPmf(uint32_t n, double p)
{
    std::vector<double> pmf(n + 1, 0.0);
    if (p <= 0) {
        pmf[0] = 1;
        return pmf;
    }
    if (p >= 1) {
        pmf[n] = 1;
        return pmf;
    }
    double lp = std::log(p), lq = std::log1p(-p), ln = std::lgamma(n + 1.0);
    for (uint32_t j = 0; j <= n; ++j)
        pmf[j] = std::exp(ln - std::lgamma(j + 1.0) - std::lgamma(n - j + 1.0) + j * lp + (n - j) * lq);
    return pmf;
}

// P(sum of per-rank counts == u, every count <= m), counts ~ Bin(g_r, p) independent.
double jointAtMost(const std::vector<std::vector<double>>& pmfs, uint32_t m, uint32_t u)
{
    std::vector<double> acc(u + 1, 0.0), next(u + 1);
    acc[0] = 1;
    for (const auto& pmf : pmfs) {
        std::fill(next.begin(), next.end(), 0.0);
        uint32_t top = std::min<uint32_t>(m, uint32_t(pmf.size() - 1));
        for (uint32_t s = 0; s <= u; ++s) {
            if (acc[s] == 0)
                continue;
            for (uint32_t j = 0; j <= top && s + j <= u; ++j)
                next[s + j] += acc[s] * pmf[j];
        }
        acc.swap(next);
    }
    return acc[u];
}

// Independent-binomial approximation, O(EP x g): used when the exact sum would be too slow.
double busiestIndependent(const std::vector<uint32_t>& groups, double p)
{
    uint32_t gmax = *std::max_element(groups.begin(), groups.end());
    std::vector<std::vector<double>> cdfs;
    for (uint32_t g : groups) {
        auto pmf = binomialPmf(g, p);
        for (size_t j = 1; j < pmf.size(); ++j)
            pmf[j] += pmf[j - 1];
        cdfs.push_back(std::move(pmf));
    }
    double e = 0;
    for (uint32_t m = 0; m < gmax; ++m) {
        double all = 1;
        for (const auto& c : cdfs)
            all *= m < c.size() ? std::min(1.0, c[m]) : 1.0;
        e += 1 - all;
    }
    return e;
}

double busiestGivenTouched(uint32_t experts, uint32_t ep, uint32_t u)
{
    auto groups = groupSizes(experts, ep);
    uint32_t gmax = *std::max_element(groups.begin(), groups.end());
    if (u == 0)
        return 0;
    if (u >= experts)
        return gmax;
    double p = double(u) / experts;
    if (double(ep) * u * gmax * 8 > 4e7)
        return busiestIndependent(groups, p);
    std::vector<std::vector<double>> pmfs;
    for (uint32_t g : groups)
        pmfs.push_back(binomialPmf(g, p));
    double total = jointAtMost(pmfs, gmax, u);
    if (!(total > 0))
        return busiestIndependent(groups, p);
    uint32_t lowest = (u + ep - 1) / ep; // the busiest rank holds at least ceil(u / EP)
    double e = lowest;
    for (uint32_t m = lowest; m < gmax; ++m) {
        double below = std::min(1.0, jointAtMost(pmfs, m, u) / total);
        e += 1 - below;
        if (below > 1 - 1e-12)
            break;
    }
    return e;
}

struct MemoEntry {
    uint32_t experts = 0, perToken = 0, ep = 0;
    uint64_t tokens = 0;
    double value = 0;
};

} // namespace

double expectedDistinctExperts(uint32_t experts, uint32_t perToken, uint64_t tokens)
{
    if (experts == 0 || perToken == 0)
        return 0;
    double k = std::min<double>(perToken, experts);
    return experts * (1.0 - std::pow(1.0 - k / experts, double(tokens)));
}

double expectedBusiestRankExperts(uint32_t experts, uint32_t perToken, uint64_t tokens, uint32_t ep)
{
    double u = expectedDistinctExperts(experts, perToken, tokens);
    if (ep <= 1 || experts == 0)
        return u;
    ep = std::min(ep, experts);
    thread_local std::array<MemoEntry, 32> memo {};
    thread_local size_t next = 0;
    for (const auto& e : memo)
        if (e.experts == experts && e.perToken == perToken && e.tokens == tokens && e.ep == ep)
            return e.value;
    uint32_t lo = uint32_t(std::floor(u)), hi = uint32_t(std::ceil(u));
    double vlo = busiestGivenTouched(experts, ep, lo);
    double vhi = hi == lo ? vlo : busiestGivenTouched(experts, ep, hi);
    double value = vlo + (u - lo) * (vhi - vlo);
    memo[next++ % memo.size()] = { experts, perToken, ep, tokens, value };
    return value;
}

ExpertLoad expertLoadFromHits(
    const std::vector<std::vector<double>>& hits, uint32_t perToken, uint64_t tokens, uint32_t ep)
{
    ExpertLoad load;
    size_t layers = 0;
    for (const auto& h : hits) {
        double sum = 0;
        for (double x : h)
            sum += x;
        if (h.empty() || !(sum > 0))
            continue;
        uint32_t e = uint32_t(h.size());
        uint32_t ranks = std::max<uint32_t>(1, std::min<uint32_t>(ep, e));
        auto groups = groupSizes(e, ranks);
        double total = 0, busiest = 0;
        size_t idx = 0;
        for (uint32_t g : groups) {
            double rank = 0;
            for (uint32_t j = 0; j < g; ++j, ++idx) {
                double p = std::min(1.0, perToken * h[idx] / sum);
                rank += 1.0 - std::pow(1.0 - p, double(tokens));
            }
            total += rank;
            busiest = std::max(busiest, rank);
        }
        load.distinct += total;
        load.busiestRank += busiest;
        ++layers;
    }
    if (layers > 0) {
        load.distinct /= layers;
        load.busiestRank /= layers;
    }
    return load;
}

Expected<std::vector<std::vector<double>>> parseExpertHits(
    const json::Value& doc, uint32_t experts, const std::string& what)
{
    std::vector<const json::Value*> lists;
    if (doc.isArray() && (doc.size() == 0 || !doc.at(0).isArray())) {
        lists.push_back(&doc);
    } else if (doc.isObject() && doc["counts"].isArray()) {
        lists.push_back(&doc["counts"]);
    } else if (doc.isObject() && doc["layers"].isArray()) {
        for (const auto& l : doc["layers"].items())
            lists.push_back(&l);
    } else {
        return Status::error(what + ": expected {\"counts\": [...]} or {\"layers\": [[...], ...]}");
    }
    std::vector<std::vector<double>> out;
    for (size_t i = 0; i < lists.size(); ++i) {
        const json::Value& l = *lists[i];
        std::string where = what + ": histogram " + std::to_string(i);
        if (!l.isArray() || l.size() != experts)
            return Status::error(where + ": expected " + std::to_string(experts)
                + " counts (one per routed expert), got " + std::to_string(l.isArray() ? l.size() : 0));
        std::vector<double> h;
        double sum = 0;
        for (size_t e = 0; e < l.size(); ++e) {
            double x = l.at(e).toDouble(-1);
            if (!l.at(e).isNumber() || !(x >= 0) || !std::isfinite(x))
                return Status::error(where + ": entry " + std::to_string(e) + " is not a non-negative number");
            h.push_back(x);
            sum += x;
        }
        if (!(sum > 0))
            return Status::error(where + ": all counts are zero");
        out.push_back(std::move(h));
    }
    if (out.empty())
        return Status::error(what + ": no histogram");
    return out;
}

} // namespace gapscope::model
