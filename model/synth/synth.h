// SPDX-License-Identifier: MIT
#pragma once

// synth: a seeded generator of realistic decode traces with exactly known gaps.
//
// Every rank runs the same kernel sequence (synthcatalog.h) on one compute stream; a host thread
// per rank launches it (one cudaGraphLaunch per step, or one cudaLaunchKernel per kernel in eager
// mode) inside an NVTX range "decode step N"; a collectives lane carries NCCL-style events for the
// collective kernels. Ranks are generated in lockstep, so a collective ends at the same time on every
// rank (latest start + wire time) and the time a rank spends waiting in it is known.
//
// Durations: a typical value per kernel, a per-rank speed factor (+-0.5%) and per-launch jitter
// (normal, `jitter` relative sigma, a few %). Injections (all off by default): extra host time
// between steps, launch gaps before every Nth kernel, a host synchronisation stall in the middle of
// each step (a blocking D2H copy followed by cudaStreamSynchronize while the GPU idles), a straggler
// rank arriving late at every collective, and a slower kernel class.
//
// Host events (off by default, `hostOps`): a Python frame "model.forward" around each step's
// launches, a CPU operator around every launch ("aten::<class>" around cudaLaunchKernel in eager
// mode, "CUDAGraph::replay" around cudaGraphLaunch) on the thread's CPU lane; `hostOpUs` injects a
// CPU operator "synth::host_delay" of exactly that duration before the launch of a quarter of each
// step's kernels. Their ground truth (per step "host": the launch/host gap time attributed to each
// host event name, the rule of model/analysis/hostattribution.h) follows from the generated timeline.
//
// Ground truth (`truth`) follows from construction: per rank per step the
// measured window, kernel time per analysis class (the default classifier's classes), collective
// wait, launch/host gaps, sync stalls, step gap and memory ops, adding up exactly to measured_ns.
//
// Deterministic for a seed. Not thread-safe (one generator per call).

#include "model/base/json.h"
#include "model/trace/trace.h"

#include <string>

namespace gapscope::model {

struct SynthOptions {
    uint32_t ranks = 2;
    uint32_t steps = 10;
    uint32_t kernelsPerStep = 200;
    uint64_t seed = 1;
    bool graphMode = true; // false: eager launches
    double jitter = 0.02; // relative sigma of kernel durations
    double hostGapUs = 250; // host work between steps (GPU idle), before injections
    // Injections.
    double extraHostGapUs = 0; // added to every gap between steps
    double launchGapUs = 0; // idle inserted before every `launchGapEvery`-th kernel
    uint32_t launchGapEvery = 0;
    double syncStallUs = 0; // per step: GPU idle while the host is blocked in a sync
    int32_t stragglerRank = -1; // this rank starts every collective `stragglerDelayUs` late
    double stragglerDelayUs = 0;
    std::string slowClass; // kernels of this analysis class run `slowFactor` times longer
    double slowFactor = 1.0;
    bool hostOps = false; // CPU operators and Python frames around the launches
    double hostOpUs = 0; // per step: an injected CPU operator "synth::host_delay" (implies hostOps)
    TimeNs startNs = 1764460800000000000; // 2025-11-30T00:00:00Z, CLOCK_REALTIME-like
    // Where the ranks run: one host's share of a larger job (ranks firstRank .. firstRank+ranks-1,
    // devices 0 .. ranks-1 of `host`), so that several files make one multi-host trace.
    std::string host = "synth-node0";
    uint32_t firstRank = 0;
};

Status validate(const SynthOptions& options);

// Generates into a Trace (tests, small traces).
Expected<Trace> synthesize(const SynthOptions& options, json::Value* truth = nullptr);
// Generates straight into a .gapscope file with bounded memory (benchmarks, large traces).
Status synthesizeToFile(
    const SynthOptions& options, const std::string& path, json::Value* truth = nullptr, int zstdLevel = 3);

} // namespace gapscope::model
