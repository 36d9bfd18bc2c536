// SPDX-License-Identifier: MIT
// gapscope-cli synth: write a seeded synthetic decode trace (and its exact ground truth).
#include "args.h"
#include "command.h"

#include "model/synth/synth.h"

#include <chrono>
#include <fstream>
#include <iostream>

namespace gapscope::cli {
namespace {

bool toU32(int64_t v, uint32_t& out, const char* what, const ArgParser& p, int& rc)
{
    if (v < 0 || v > int64_t(UINT32_MAX)) {
        rc = p.usageError(std::string(what) + " out of range");
        return false;
    }
    out = uint32_t(v);
    return true;
}

int runSynth(const std::vector<std::string>& args)
{
    ArgParser p("synth", "-o FILE",
        "Write a realistic synthetic decode trace: every rank runs the same long-named kernel sequence\n"
        "(MLA attention, MoE, NCCL all-reduce, sampling) on one stream, launched by one cudaGraphLaunch\n"
        "per step (or eagerly), with NVTX step ranges, NCCL collective events and step boundaries.\n"
        "Gaps can be injected with known sizes; --truth writes the exact per-step ground truth.\n"
        "The same seed gives the same file.");
    int64_t ranks = 2, steps = 10, kernels = 200, seed = 1, every = 0, straggler = -1, level = 3, firstRank = 0;
    double hostGap = 250, extraGap = 0, launchGap = 0, stall = 0, delay = 0, slowFactor = 1.0, jitter = 0.02;
    double hostOp = 0;
    bool hostOps = false;
    std::string out, truthPath, mode = "graph", slowClass, host = model::SynthOptions().host;
    p.option("--ranks", "R", "ranks (GPUs), default 2", ranks);
    p.option("--steps", "S", "decode steps, default 10", steps);
    p.option("--host", "NAME", "host the ranks run on, default synth-node0 (one file per host of a job)", host);
    p.option("--first-rank", "R", "rank of the host's first GPU, default 0", firstRank);
    p.option("--kernels-per-step", "K", "kernels per step and rank (>= 8), default 200", kernels);
    p.option("--seed", "N", "random seed, default 1", seed);
    p.option("-o", "--output", "FILE", "the .gapscope file to write", out);
    p.option("--truth", "FILE.json", "also write the exact ground truth per rank and step", truthPath);
    p.option("--mode", "graph|eager", "one cudaGraphLaunch per step (default) or one launch per kernel", mode);
    p.option("--jitter", "X", "relative sigma of kernel durations, default 0.02", jitter);
    p.option("--host-gap-us", "US", "host work between steps, default 250", hostGap);
    p.option("--inject-host-gap-us", "US", "extra host time added between steps", extraGap);
    p.option(
        "--inject-launch-gap-us", "US", "idle inserted before every Nth kernel (see --launch-gap-every)", launchGap);
    p.option("--launch-gap-every", "N", "period of the injected launch gaps", every);
    p.option("--inject-sync-stall-us", "US", "per step: GPU idle while the host waits in cudaStreamSynchronize", stall);
    p.option("--straggler-rank", "R", "this rank arrives late at every collective", straggler);
    p.option("--straggler-delay-us", "US", "how late the straggler arrives", delay);
    p.option("--slow-class", "CLASS", "kernels of this analysis class run slower (e.g. routed_experts)", slowClass);
    p.option("--slow-factor", "F", "duration factor of --slow-class kernels", slowFactor);
    p.flag("--host-ops", "CPU operators and Python frames around the launches, on the thread's CPU lane", hostOps);
    p.option("--inject-host-op-us", "US",
        "per step: a CPU operator synth::host_delay of this duration (implies --host-ops)", hostOp);
    p.option("--zstd-level", "L", "zstd level of the file, default 3", level);
    p.setPositionals(0, 0);
    if (int rc = p.parse(args); rc >= 0)
        return rc;
    if (out.empty())
        return p.usageError("missing -o FILE");
    if (mode != "graph" && mode != "eager")
        return p.usageError("--mode must be graph or eager");
    model::SynthOptions o;
    int rc = 0;
    if (!toU32(ranks, o.ranks, "--ranks", p, rc) || !toU32(steps, o.steps, "--steps", p, rc)
        || !toU32(kernels, o.kernelsPerStep, "--kernels-per-step", p, rc)
        || !toU32(every, o.launchGapEvery, "--launch-gap-every", p, rc)
        || !toU32(firstRank, o.firstRank, "--first-rank", p, rc))
        return rc;
    if (launchGap > 0 && every == 0)
        return p.usageError("--inject-launch-gap-us needs --launch-gap-every N");
    o.seed = uint64_t(seed);
    o.graphMode = mode == "graph";
    o.jitter = jitter;
    o.hostGapUs = hostGap;
    o.extraHostGapUs = extraGap;
    o.launchGapUs = launchGap;
    o.syncStallUs = stall;
    o.stragglerRank = int32_t(straggler);
    o.stragglerDelayUs = delay;
    o.slowClass = slowClass;
    o.slowFactor = slowFactor;
    o.host = host;
    o.hostOps = hostOps || hostOp > 0;
    o.hostOpUs = hostOp;
    if (Status s = model::validate(o); !s)
        return p.usageError(s.message());

    const auto t0 = std::chrono::steady_clock::now();
    json::Value truth;
    if (Status s = model::synthesizeToFile(o, out, truthPath.empty() ? nullptr : &truth, int(level)); !s) {
        std::cerr << "gapscope-cli synth: " << s.message() << "\n";
        return kExitFailure;
    }
    if (!truthPath.empty()) {
        std::ofstream f(truthPath);
        f << json::write(truth, 1) << "\n";
        if (!f) {
            std::cerr << "gapscope-cli synth: " << truthPath << ": cannot write\n";
            return kExitFailure;
        }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cerr << "wrote " << out << ": " << uint64_t(o.ranks) * o.steps * o.kernelsPerStep << " kernels in " << s
              << " s\n";
    return kExitOk;
}

} // namespace

GAPSCOPE_CLI_COMMAND(synth, "synth", "write a seeded synthetic decode trace with known gaps", runSynth);

} // namespace gapscope::cli
