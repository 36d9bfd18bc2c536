// SPDX-License-Identifier: MIT
// gapscope-decode-sim: decode steps of a model on N GPUs with known, injected gaps (see --help).
#include "kernels/calibrationprofile.h"
#include "kernels/cudastatus.h"
#include "kernels/decodeplan.h"
#include "kernels/groundtruth.h"
#include "kernels/rankgroup.h"
#include "kernels/selfcheck.h"
#include "kernels/simoptions.h"
#include "kernels/simrank.h"

#include <cstdio>
#include <fstream>
#include <iostream>

using namespace gapscope;
using namespace gapscope::kernels;

namespace {

// Sum of the per-kernel floors of one step from a calibration profile, in microseconds.
double floorUs(const DecodePlan& plan, const SimOptions& o, const CalibrationProfile& prof)
{
    double us = o.mode == LaunchMode::Graph ? prof.graphFixedUs : 0;
    plan.forEachOp([&](const PlanOp& op) {
        switch (op.kind) {
        case OpKind::Gemv:
            us += prof.gemvUs(static_cast<double>(op.weightBytes));
            break;
        case OpKind::Attention:
            us += prof.gemvUs(static_cast<double>(op.cacheBytes)) + prof.kernelFloorUs(); // + combine
            break;
        case OpKind::AllReduce:
        case OpKind::AllGather:
            us += prof.allreduceUs(static_cast<double>(op.messageBytes));
            break;
        default:
            us += prof.kernelFloorUs();
            break;
        }
    });
    return us;
}

void printPlan(const DecodePlan& plan, const SimOptions& o)
{
    std::printf("model %s (%s), %zu layers, tp %u, batch %u, context %llu, mode %s\n", plan.config().name.c_str(),
        plan.config().modelType.c_str(), plan.layers().size(), o.plan.tp, o.plan.batch,
        static_cast<unsigned long long>(o.plan.context), toString(o.mode));
    std::printf("per GPU per step: %zu kernels, %zu collectives, weights %.1f MB, KV cache %.1f MB\n",
        plan.kernelCount(), plan.collectiveCount(), plan.weightBytes() / 1e6, plan.cacheBytes() / 1e6);
    for (const auto& [c, b] : plan.weightBytesByComponent())
        std::printf("  %-16s %10.1f MB\n", model::toString(c), b / 1e6);
}

int runCheck(const SimOptions& o)
{
    auto res = RankGroup::run(o.plan.tp, [&](uint32_t rank, const ncclUniqueId& id, json::Value& out) {
        std::vector<std::string> lines;
        int failures = 0;
        Status st = SelfCheck::run(rank, o.plan.tp, id, lines, failures);
        out = json::Value::object();
        json::Value l = json::Value::array();
        for (auto& s : lines)
            l.push(s);
        out.set("lines", std::move(l));
        out.set("failures", failures);
        return st;
    });
    if (!res) {
        std::fprintf(stderr, "gapscope-decode-sim --check: %s\n", res.error().c_str());
        return 1;
    }
    int failures = 0, checks = 0;
    for (size_t r = 0; r < res->size(); ++r) {
        for (const auto& line : (*res)[r]["lines"].items()) {
            std::printf("rank %zu %s\n", r, line.toString().c_str());
            ++checks;
        }
        failures += static_cast<int>((*res)[r]["failures"].toInt());
    }
    std::printf("%d passed, %d failed\n", checks - failures, failures);
    return failures ? 1 : 0;
}

void printSummary(const std::vector<RankResult>& ranks, const json::Value& truth, double floor)
{
    std::printf("%-5s %12s %12s %12s %14s %12s\n", "rank", "step_ms", "gpu_ms", "extra_ms", "profiled_ms", "floor_ms");
    for (size_t i = 0; i < ranks.size(); ++i) {
        std::vector<double> m, g, x;
        for (const auto& s : truth["ranks"].at(i)["steps"].items()) {
            m.push_back(s["measured_ns"].toDouble());
            g.push_back(s["gpu_ns"].toDouble());
            x.push_back(s["expected_extra_ns"].toDouble());
        }
        std::printf("%-5u %12.4f %12.4f %12.4f %14.4f %12.4f\n", ranks[i].rank, median(m) / 1e6, median(g) / 1e6,
            median(x) / 1e6, ranks[i].cleanProfiledStepNs / 1e6, floor >= 0 ? floor / 1e3 : 0.0);
    }
}

int runSim(const SimOptions& o, const DecodePlan& plan, double floor)
{
    auto res = RankGroup::run(o.plan.tp, [&](uint32_t rank, const ncclUniqueId& id, json::Value& out) {
        SimRank sim(plan, o, rank, id);
        GS_TRY(sim.setup());
        RankResult r;
        GS_TRY(sim.run(r));
        out = r.toJson();
        return Status::ok();
    });
    if (!res) {
        std::fprintf(stderr, "gapscope-decode-sim: %s\n", res.error().c_str());
        return 1;
    }
    std::vector<RankResult> ranks;
    for (const auto& v : *res) {
        auto r = RankResult::fromJson(v);
        if (!r) {
            std::fprintf(stderr, "gapscope-decode-sim: %s\n", r.error().c_str());
            return 1;
        }
        ranks.push_back(std::move(*r));
    }
    const json::Value truth = GroundTruth::build(o, plan, ranks, floor);
    if (!o.truthPath.empty()) {
        std::ofstream f(o.truthPath);
        f << json::write(truth, 1) << "\n";
        if (!f) {
            std::fprintf(stderr, "gapscope-decode-sim: cannot write %s\n", o.truthPath.c_str());
            return 1;
        }
    }
    if (o.json)
        std::printf("%s\n", json::write(truth, 1).c_str());
    else
        printSummary(ranks, truth, floor);
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    bool help = false;
    auto opt = SimOptions::parse(std::vector<std::string>(argv + 1, argv + argc), &help);
    if (!opt) {
        std::fprintf(help ? stdout : stderr, "%s%s\n", help ? "" : "gapscope-decode-sim: ", opt.error().c_str());
        return help ? 0 : 2;
    }
    if (opt->check)
        return runCheck(*opt);
    auto cfg = model::loadModelConfig(opt->model);
    if (!cfg) {
        std::fprintf(stderr, "gapscope-decode-sim: %s\n", cfg.error().c_str());
        return 2;
    }
    auto plan = DecodePlan::build(*cfg, opt->plan);
    if (!plan) {
        std::fprintf(stderr, "gapscope-decode-sim: %s\n", plan.error().c_str());
        return 2;
    }
    double floor = -1;
    if (!opt->profilePath.empty()) {
        auto prof = CalibrationProfile::load(opt->profilePath);
        if (!prof) {
            std::fprintf(stderr, "gapscope-decode-sim: %s\n", prof.error().c_str());
            return 2;
        }
        floor = floorUs(*plan, *opt, *prof);
    }
    if (!opt->json)
        printPlan(*plan, *opt);
    std::fflush(stdout);
    return runSim(*opt, *plan, floor);
}
