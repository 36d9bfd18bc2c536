#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns the outputs of tests/gpu/capture_inject.sh into table rows and benchmark figures.

Inputs under --log: runs/<tag>-rank<R>.json (tp_decode.py), <tag>-<i>-<kind>.json (inject_probe
results, one per capture request, named after the phase that asked), <tag>.log (workload logs).
Appends `check | measured | target | PASS/FAIL` rows to --table and writes the figures to --bench
(JSON; NaN written as null).

Overhead, per mode:
- injected idle vs not injected: processes <mode>-base, <mode>-base2, ... and <mode>-inj, <mode>-inj2,
  ... (they ran alternating); per process the median step of its first idle phase (median over the
  ranks); per configuration the median of those; noise = the largest of the spread (max - min over
  median) between processes of one configuration and the drift between the halves of any process.
  PASS when |difference| <= max(0.5 %, noise); the row says which of the two set the threshold.
- capturing and torch.profiler: the blocks:R:N:KIND phases of <mode>-inj (one process); each block
  against the mean of the idle blocks just before and after it; a capture block keeps only the timed
  steps inside that rank's recording window (from the probe's first/last recorded boundary).
"""
import argparse
import glob
import json
import math
import os
import re
import statistics


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


class Report:
    def __init__(self, table):
        self.table = table
        self.rows = []

    def row(self, check, measured, target, ok):
        line = f"{check} | {measured} | {target} | {'PASS' if ok else 'FAIL'}"
        self.rows.append(line)
        print(line)
        with open(self.table, "a") as f:
            f.write(line + "\n")


def malloc_note(rss):
    """", malloc in use A -> B MB" over the settled samples, when the workload sampled it."""
    m = [s.get("malloc_mb", -1) for s in rss[2:]]
    if not m or min(m) < 0:
        return ""
    g = [s["gpu_used_mb"] for s in rss[2:] if "gpu_used_mb" in s]
    return f", malloc in use {m[0]:.0f} -> {m[-1]:.0f} MB" + (f", GPU in use {g[0]:.0f} -> {g[-1]:.0f} MB" if g else "")


def runs(log, tag):
    out = []
    for r in (0, 1):
        d = load(os.path.join(log, "runs", f"{tag}-rank{r}.json"))
        if d:
            for p in d.get("phases", []):
                # --canary-iters: each step over the canary timed right after it (its CPU's speed then).
                t, c = p.get("times_ms") or [], p.get("canary_ms") or []
                if t and len(c) == len(t) and min(c) > 0:
                    p["per_canary"] = [a / b for a, b in zip(t, c)]
            out.append(d)
    return out


def processes(log, mode, kind):
    """[(tag, ranks)] of <mode>-<kind>, <mode>-<kind>2, ... in the order they ran (the first one,
    without a number, is the injected process with every phase)."""
    tags = set()
    for p in glob.glob(os.path.join(log, "runs", f"{mode}-{kind}*-rank*.json")):
        m = re.fullmatch(rf"({re.escape(mode)}-{kind}(\d*))-rank\d+\.json", os.path.basename(p))
        if m:
            tags.add((int(m.group(2) or 1), m.group(1)))
    return [(t, runs(log, t)) for _, t in sorted(tags)]


def probe_for(log, name):
    """inject_probe's result for the request named after a phase."""
    return load(os.path.join(log, name + ".json")) or load(os.path.join(log, "control", name + ".json"))


def phases(run, kind):
    return [p for p in run.get("phases", []) if p.get("kind") == kind]


def pct(a, b):
    return 100.0 * (a - b) / b if b else float("nan")


def step_stats(rank):
    steps = rank.get("steps", [])
    return ([s["kernels"] for s in steps], [s["kernel_ns"] / 1e3 for s in steps],
            [s.get("compute_kernel_ns", 0) / 1e3 for s in steps])


def check_capture(rep, name, res, steps_wanted, bench, key, world=2):
    if not res:
        rep.row(f"{name}: probe result", "missing", "present", False)
        return None
    ranks = res.get("ranks", [])
    rep.row(f"{name}: ranks registered and recorded", f"{len(ranks)} ranks, steps "
            f"{[r.get('steps_recorded') for r in ranks]}", f"{world} rank(s) x {steps_wanted}",
            len(ranks) == world and all(r.get("steps_recorded") == steps_wanted for r in ranks))
    per_rank = {}  # by rank: the probe lists ranks in the order they registered
    for r in ranks:
        counts, times, compute = step_stats(r)
        per_rank[r["rank"]] = (counts, times, compute)
        if counts:
            rep.row(f"{name}: rank {r['rank']} kernels per step equal across steps",
                    f"min {min(counts)} max {max(counts)} over {len(counts)} steps", "min == max",
                    min(counts) == max(counts) and min(counts) > 0)
    if len(ranks) == 2 and all(r.get("steps") for r in ranks):
        s0 = [s["start"] for s in ranks[0]["steps"]]
        s1 = [s["start"] for s in ranks[1]["steps"]]
        n = min(len(s0), len(s1))
        period = statistics.median([b - a for a, b in zip(s0, s0[1:])]) if n > 2 else 1
        # Ranks on different step indices would be a whole step apart on every step; one rank's
        # host hiccup moves a single step. So: the median skew under a quarter step, and at most
        # one step in ten over half a step (the largest is reported).
        skews = [abs(a - b) for a, b in zip(s0[:n], s1[:n])]
        med = statistics.median(skews) if n else 0
        over = sum(1 for x in skews if x >= period / 2)
        rep.row(f"{name}: both ranks on the same steps (start skew)",
                f"median {med / 1e3:.1f} us, max {max(skews, default=0) / 1e3:.1f} us, {over} of {n} steps over half "
                f"a step (step {period / 1e6:.2f} ms)", "median < 1/4 step, <= 1 in 10 steps over 1/2",
                n > 0 and med < period / 4 and over <= max(1, n // 10))
        lags = [s["start"] - s["host_ns"] for s in ranks[0]["steps"] if s.get("host_ns")]
        if lags:
            med = statistics.median(lags)
            rep.row(f"{name}: GPU step start after its host launch (one clock)",
                    f"median {med / 1e3:.1f} us, min {min(lags) / 1e3:.1f} us", "0 .. 5000 us",
                    min(lags) > -50e3 and med < 5e6)
            bench[key + "_launch_to_gpu_us"] = med / 1e3
    bench[key] = dict(ranks=[dict(rank=r["rank"], steps=r.get("steps_recorded"),
                                  kernels_per_step=statistics.median(step_stats(r)[0]) if r.get("steps") else 0,
                                  kernel_us_per_step=statistics.median(step_stats(r)[1]) if r.get("steps") else 0,
                                  counters=r.get("counters"), overhead=r.get("overhead"),
                                  collectives=r.get("collectives"), collective_ops=r.get("collective_ops"),
                                  collective_samples=r.get("collective_samples"), chunk_bytes=r.get("chunk_bytes"),
                                  cupti=r.get("cupti_api_version"), nccl_plugin=r.get("nccl_plugin_version"))
                             for r in ranks], probe=res.get("probe"), errors=res.get("errors"))
    return per_rank


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def spread(xs):
    """(max - min) / median in %, of values that should be equal; nan below two values."""
    return 100.0 * (max(xs) - min(xs)) / statistics.median(xs) if len(xs) > 1 else float("nan")


def first_idle(run):
    """The process-level idle phase (the first idle outside interleaved blocks)."""
    for p in phases(run, "idle"):
        if "block_set" not in p and p.get("times_ms"):
            return p
    return None


def halves_pct(times):
    h = len(times) // 2
    return abs(pct(statistics.median(times[h:]), statistics.median(times[:h]))) if h >= 2 else float("nan")


def process_figures(tag, ranks, key="times_ms"):
    """One process (both ranks): its median step over the first idle phase (median of the ranks'
    medians), the drift between the halves of its steps, its cores. key: times_ms (wall) or cpu_ms
    (the launching thread's CPU time)."""
    meds, halves, steps = [], [], 0
    for r in ranks:
        p = first_idle(r)
        if p and p.get(key):
            meds.append(statistics.median(p[key]))
            halves.append(halves_pct(p[key]))
            steps = max(steps, len(p[key]))
    if not meds:
        return None
    return dict(tag=tag, median_ms=median(meds), rank_medians_ms=meds, halves_pct=max(halves), steps=steps,
                cores=[(r.get("affinity") or {}).get("cpus") for r in ranks])


def fmt(xs):
    return "[" + ", ".join(f"{x:.3f}" for x in xs) + "]"


def idle_vs_not_injected(rep, mode, bases, injs, key="times_ms"):
    """Separate processes by nature: alternating runs, the median of the per-process medians per
    configuration, the noise being the spread between processes of one configuration and between
    the halves of each."""
    pb = [f for f in (process_figures(t, r, key) for t, r in bases) if f]
    pi = [f for f in (process_figures(t, r, key) for t, r in injs) if f]
    what = KEY_LABEL[key]
    if not pb or not pi:
        rep.row(f"{mode}: injected idle vs not injected{what}", "runs missing", "present", False)
        return {}
    mb, mi = median([f["median_ms"] for f in pb]), median([f["median_ms"] for f in pi])
    sb, si = spread([f["median_ms"] for f in pb]), spread([f["median_ms"] for f in pi])
    hmax = max([f["halves_pct"] for f in pb + pi if f["halves_pct"] == f["halves_pct"]] or [float("nan")])
    noise = max([x for x in (sb, si, hmax) if x == x] or [float("nan")])
    diff = pct(mi, mb)
    thr = max(0.5, noise) if noise == noise else 0.5
    by = "noise" if noise == noise and noise > 0.5 else "0.5 % floor"
    rep.row(f"{mode}: injected idle vs not injected{what} (median of per-process medians, {len(pb)}+{len(pi)} processes "
            f"alternating)", f"{mi:.3f} vs {mb:.3f} ms ({diff:+.2f}%); per process: not injected "
            f"{fmt([f['median_ms'] for f in pb])}, injected {fmt([f['median_ms'] for f in pi])} ms; noise {noise:.2f}% "
            f"(between processes: not injected {sb:.2f}%, injected {si:.2f}%; halves max {hmax:.2f}%); "
            f"threshold {thr:.2f}% by {by}" + (" (noise above 2%: this cannot show 0.5%)" if thr > 2.0 else ""),
            "|difference| <= max(0.5%, noise), noise <= 2%", abs(diff) <= thr and noise == noise and noise <= 2.0)
    return dict(not_injected_ms=mb, injected_idle_ms=mi, idle_pct=diff, noise_pct=noise,
                idle_threshold_pct=thr, idle_verdict_by=by, spread_not_injected_pct=sb, spread_injected_pct=si,
                halves_max_pct=hmax, processes_not_injected=pb, processes_injected=pi)


def in_window(phase, probe, rank, key="times_ms"):
    """The timed steps of a capture phase that lie inside that rank's recording window (from the
    probe's first/last recorded step boundary; a step's host start comes just before its boundary)."""
    times, starts = phase.get(key, []), phase.get("step_starts_ns", [])
    for r in (probe or {}).get("ranks", []):
        if r.get("rank") == rank and r.get("first_recording_boundary_ns"):
            lo, hi = r["first_recording_boundary_ns"] - 2_000_000, r["last_recording_boundary_ns"]
            return [t for t, s in zip(times, starts) if lo <= s <= hi]
    return []


def block_sets(run_ranks, log, key="times_ms"):
    """{block_set: [blocks in order]}; a block: kind, per-rank times (capture: only the steps inside
    the recording window), timed steps, probe result."""
    sets = {}
    for r in run_ranks:
        for p in r.get("phases", []):
            if "block_set" not in p:
                continue
            blocks = sets.setdefault(p["block_set"], {})
            b = blocks.setdefault(p["block"], dict(kind=p["kind"], name=p["name"], kinds=p.get("block_kinds"),
                                                   times={}, timed={}, probe=None, started_by={}))
            if p["kind"] == "capture":
                if b["probe"] is None:
                    b["probe"] = probe_for(log, p["name"]) or {}
                b["times"][r["rank"]] = in_window(p, b["probe"], r["rank"], key)
                b["started_by"][r["rank"]] = p.get("started_by")
            else:
                b["times"][r["rank"]] = p.get(key, [])
            b["timed"][r["rank"]] = len(p.get("times_ms", []))
    out = {}
    for k, blocks in sets.items():
        seq = [blocks[i] for i in sorted(blocks)]
        for b in seq:
            meds = [statistics.median(t) for t in b["times"].values() if t]
            b["median_ms"] = median(meds)
            b["inside"] = sum(len(t) for t in b["times"].values())
            b["timed_total"] = sum(b["timed"].values())
        out[k] = seq
    return out


def interleaved(rep, mode, inj_ranks, log, key="times_ms"):
    """Capturing and torch.profiler against the idle blocks around each block, in one process."""
    sets = block_sets(inj_ranks, log, key)
    per_kind = {}
    for seq in sets.values():
        idle = [b["median_ms"] for b in seq if b["kind"] == "idle"]
        for i, b in enumerate(seq):
            if b["kind"] == "idle":
                continue
            around = [seq[j]["median_ms"] for j in (i - 1, i + 1)
                      if 0 <= j < len(seq) and seq[j]["kind"] == "idle" and seq[j]["median_ms"] == seq[j]["median_ms"]]
            ref = statistics.fmean(around) if around else float("nan")
            k = per_kind.setdefault(b["kind"], dict(blocks=[], idle_ms=idle, idle_spread_pct=spread(idle)))
            k["blocks"].append(dict(name=b["name"], median_ms=b["median_ms"], idle_around_ms=ref,
                                    overhead_pct=pct(b["median_ms"], ref), steps_inside=b["inside"],
                                    steps_timed=b["timed_total"], started_by=b["started_by"] or None))
    res = {}
    for kind, k in per_kind.items():
        valid = [b for b in k["blocks"] if b["overhead_pct"] == b["overhead_pct"]]
        res[kind] = dict(k, median_ms=median([b["median_ms"] for b in valid]),
                         idle_median_ms=median(k["idle_ms"]),
                         overhead_pct=median([b["overhead_pct"] for b in valid]), valid_blocks=len(valid))
    return res


# Host-bound loops (their step follows the launching thread): also compared by that thread's CPU
# time per step, which leaves out what the machine takes from it (steal, run-queue waits) and keeps
# what a tool adds on it (CUPTI callbacks, NVTX handlers, torch.profiler's op records).
HOST_BOUND = ("eager", "eager1")
KEY_LABEL = {"times_ms": "", "cpu_ms": ", launching thread CPU time",
             "instr_m": ", launching thread user-space instructions (values in millions, not ms)",
             "per_canary": ", per canary (each step over the CPU-speed canary right after it; values in canary units)"}


def sched_row(rep, bench, mode, procs):
    """What the machine took from the launching thread during each process's first idle phase."""
    figs = []
    for tag, ranks in procs:
        for r in ranks:
            p = first_idle(r)
            if p and p.get("sched"):
                sc = p["sched"]
                figs.append(dict(tag=tag, rank=r["rank"], steps=len(p.get("times_ms", [])),
                                 wall_ms=statistics.median(p["times_ms"]) if p.get("times_ms") else None,
                                 cpu_ms=statistics.median(p["cpu_ms"]) if p.get("cpu_ms") else None,
                                 canary_ms=statistics.median(p["canary_ms"]) if p.get("canary_ms") else None, **sc))
    if not figs:
        return
    bench[f"sched_{mode}"] = figs
    rep.row(f"{mode}: what the machine took from the launching thread (first idle phase of each process)",
            "; ".join(f"{f['tag']} r{f['rank']}: wall {f['wall_ms']:.3f} / CPU {f['cpu_ms']:.3f} ms per step"
                      + (f", canary {f['canary_ms']:.3f} ms" if f.get("canary_ms") else "") + ", "
                      f"steal {f.get('steal_pct_per_cpu', float('nan')):.2f}% per CPU, run-queue wait "
                      f"{f.get('runq_wait_ms', float('nan')) / max(1, f['steps']):.3f} ms per step"
                      for f in figs if f["wall_ms"] is not None and f["cpu_ms"] is not None), "report", True)


def overhead(rep, bench, mode, bases, injs, log):
    """Step-time overhead by wall time; for host-bound loops also by the launching thread's CPU time."""
    overhead_by(rep, bench, mode, bases, injs, log, "times_ms")
    if mode in HOST_BOUND:
        sched_row(rep, bench, mode, bases + injs)
        for key in ("cpu_ms", "per_canary", "instr_m"):
            if any(first_idle(r) and first_idle(r).get(key) for _, rs in bases + injs for r in rs):
                overhead_by(rep, bench, mode, bases, injs, log, key)


def overhead_by(rep, bench, mode, bases, injs, log, key):
    fig = idle_vs_not_injected(rep, mode, bases, injs, key)
    inj = injs[0][1] if injs else []
    blocks = interleaved(rep, mode, inj, log, key) if inj else {}
    cap, prof = blocks.get("capture"), blocks.get("profile")
    what = KEY_LABEL[key]
    if not cap or not prof:
        if key == "times_ms":
            overhead_legacy(rep, bench, mode, fig, inj)
        return
    for name, k in (("capturing", cap), ("torch.profiler", prof)):
        each = ", ".join(f"{b['overhead_pct']:+.2f}" for b in k["blocks"])
        rep.row(f"{mode}: {name} vs the idle blocks around it{what} (one process, {len(k['blocks'])} blocks interleaved)",
                f"{k['median_ms']:.3f} ms vs idle {k['idle_median_ms']:.3f} ms: {k['overhead_pct']:+.2f}% "
                f"(per block {each} %; idle blocks {fmt(k['idle_ms'])} ms, spread {k['idle_spread_pct']:.2f}%)",
                ">= 2 valid blocks", k["valid_blocks"] >= 2)
    inside = sum(b["steps_inside"] for b in cap["blocks"])
    timed = sum(b["steps_timed"] for b in cap["blocks"])
    starts = sorted({v for b in cap["blocks"] for v in (b["started_by"] or {}).values() if v})
    if key == "times_ms":
        rep.row(f"{mode}: capture blocks: timed steps inside the recording window", f"{inside} of {timed} "
                f"(timing started on: {', '.join(starts) or '?'})", ">= 90%", timed > 0 and inside >= 0.9 * timed)
    oc, op = cap["overhead_pct"], prof["overhead_pct"]
    noise = max(x for x in (cap["idle_spread_pct"], prof["idle_spread_pct"], 0.0) if x == x)
    mi = cap["idle_median_ms"]
    # Below means separated: every capture block's overhead under every torch.profiler block's (each
    # against its own neighbouring idle blocks), not only the medians, which noise alone can order.
    cb = [b["overhead_pct"] for b in cap["blocks"] if b["overhead_pct"] == b["overhead_pct"]]
    pb = [b["overhead_pct"] for b in prof["blocks"] if b["overhead_pct"] == b["overhead_pct"]]
    separated = bool(cb) and bool(pb) and max(cb) < min(pb)
    ok = oc < op and separated and (mode != "graph" or oc <= 3.0 or mi < 5.0)
    target = ("<= 3% at >= 5 ms per step, " if mode == "graph" else "") + "below torch.profiler in every block"
    rep.row(f"{mode}: capturing vs torch.profiler, each against its own idle blocks{what} (one process)",
            f"capturing {oc:+.2f}% vs torch.profiler {op:+.2f}% (difference {op - oc:.2f} points; capture blocks "
            f"up to {max(cb or [float('nan')]):+.2f}%, torch.profiler blocks from {min(pb or [float('nan')]):+.2f}%"
            f"{'' if separated else ': not separated'}; idle block spread up to {noise:.2f}%)", target, ok)
    bench[f"overhead_{mode}" + {"times_ms": "", "cpu_ms": "_cpu", "per_canary": "_per_canary", "instr_m": "_instr"}[key]] = dict(
                                     fig, capturing_ms=cap["median_ms"], torch_profiler_ms=prof["median_ms"],
                                     capturing_pct=oc, profiler_pct=op, interleaved_idle_ms=mi,
                                     interleaved_noise_pct=noise, interleaved=blocks,
                                     steps=[f["steps"] for f in fig.get("processes_not_injected", [])
                                            + fig.get("processes_injected", [])])


def overhead_legacy(rep, bench, mode, fig, inj):
    """Outputs without interleaved blocks: capturing and torch.profiler phases of >= 200 steps against
    the injected process's idle phase."""
    idle = [p for r in inj for p in phases(r, "idle")]
    caps = [p for r in inj for p in phases(r, "capture") if p.get("steps", 0) >= 200]
    profs = [p for r in inj for p in phases(r, "profile") if p.get("steps", 0) >= 200]
    med = lambda ps: statistics.median([p["median_ms"] for p in ps]) if ps else float("nan")
    mi, mc, mp = med(idle), med(caps), med(profs)
    rep.row(f"{mode}: interleaved capture/profile blocks", "missing: the phases hold no blocks:R:N:KIND", "present", False)
    target = "<= 3%" if mode == "graph" else "below torch.profiler"
    ok = pct(mc, mi) < pct(mp, mi) and (mode != "graph" or pct(mc, mi) <= 3.0 or mi < 5.0)
    rep.row(f"{mode}: capturing vs idle (median step, separate phases)", f"{mc:.3f} vs {mi:.3f} ms ({pct(mc, mi):+.2f}%); "
            f"torch.profiler {mp:.3f} ms ({pct(mp, mi):+.2f}%)", target + ", below torch.profiler", ok)
    bench[f"overhead_{mode}"] = dict(fig, capturing_ms=mc, torch_profiler_ms=mp, capturing_pct=pct(mc, mi),
                                     profiler_pct=pct(mp, mi),
                                     steps=[len(p.get("times_ms", [])) for p in idle + caps + profs])


def compare_profiler(rep, bench, mode, inj, per_rank):
    profs = [(r["rank"], p) for r in inj for p in phases(r, "profile") if p.get("per_step")][:2]
    if not profs or not per_rank:
        rep.row(f"{mode}: torch.profiler comparison", "missing", "present", False)
        return
    for i, p in profs:  # the same rank's capture and profile
        steps = p["per_step"][2:]  # the first steps carry profiler start-up work
        g = per_rank.get(i)
        if not steps or not g:
            rep.row(f"{mode}: rank {i} torch.profiler comparison", "no steps", "present", False)
            continue
        pk = statistics.median([s["kernels"] for s in steps])
        pt = statistics.median([s["kernel_us"] for s in steps])
        gk = statistics.median(g[0]) if g[0] else 0
        gt = statistics.median(g[1]) if g[1] else 0
        bench[f"profiler_compare_{mode}_rank{i}"] = dict(gapscope_kernels=gk, profiler_kernels=pk,
                                                        gapscope_kernel_us=gt, profiler_kernel_us=pt)
        rep.row(f"{mode}: rank {i} kernels per step, gapscope vs torch.profiler", f"{gk:.0f} vs {pk:.0f}",
                "within 2%", pk > 0 and abs(pct(gk, pk)) <= 2.0)
        # NCCL kernels last until every rank arrives, so their time follows the host overhead of
        # the run (torch.profiler slows the host more): the kernel time compared is the rest; the
        # total is shown beside it.
        pc = statistics.median([s.get("compute_kernel_us", 0) for s in steps])
        gc = statistics.median(g[2]) if g[2] else 0
        bench[f"profiler_compare_{mode}_rank{i}"].update(gapscope_compute_us=gc, profiler_compute_us=pc)
        rep.row(f"{mode}: rank {i} kernel time per step without NCCL kernels, gapscope vs torch.profiler",
                f"{gc:.1f} vs {pc:.1f} us ({pct(gc, pc):+.2f}%); all kernels {gt:.1f} vs {pt:.1f} us ({pct(gt, pt):+.2f}%)",
                "within 2%", pc > 0 and abs(pct(gc, pc)) <= 2.0)


def no_nan(v):
    if isinstance(v, float) and v != v:
        return None
    if isinstance(v, dict):
        return {k: no_nan(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [no_nan(x) for x in v]
    return v


def capture_roles(inj, log):
    """The injected process's capture requests by role, from rank 0's phases in order: the first
    capture outside blocks (kernel counts), the block captures, the first capture after torch.profiler
    ran, captures of >= 200 timed steps outside blocks (older layouts), the profcap request."""
    roles = dict(count=None, blocks=[], after_profiler=None, long=[], profcap=None)
    profiled = False
    for p in (inj[0].get("phases", []) if inj else []):
        kind = p.get("kind")
        if kind == "profile":
            profiled = True
        elif kind == "profcap" and roles["profcap"] is None:
            roles["profcap"] = (p["name"], probe_for(log, p["name"]))
        elif kind == "capture":
            item = (p["name"], probe_for(log, p["name"]))
            if "block_set" in p:
                roles["blocks"].append(item)
            elif profiled:
                roles["after_profiler"] = roles["after_profiler"] or item
            elif roles["count"] is None:
                roles["count"] = item
            elif p.get("steps", 0) >= 200:
                roles["long"].append(item)
    return roles


def pinning(rep, mode, inj):
    aff = [(r["rank"], r.get("affinity")) for r in inj if r.get("affinity")]
    if not aff:
        rep.row(f"{mode}: ranks pinned to their own cores", "no affinity recorded", "disjoint cores per rank", False)
        return None
    sets = [set(parse_cpus(a.get("cpus", ""))) for _, a in aff]
    disjoint = len(sets) == 2 and all(sets) and not (sets[0] & sets[1])
    rep.row(f"{mode}: ranks pinned to their own cores",
            "; ".join(f"rank {k} {a.get('cpus')} ({a.get('source')}, GPU {a.get('pci') or '?'}, NUMA {a.get('numa_node') or '?'})"
                      for k, a in aff) + f"; torch threads {[r.get('torch_threads') for r in inj]}",
            "disjoint cores per rank", disjoint)
    return {f"rank{k}": a for k, a in aff}


def parse_cpus(text):
    out = []
    for part in (text or "").split(","):
        if part.strip():
            lo, _, hi = part.partition("-")
            out += range(int(lo), int(hi or lo) + 1)
    return out


def captures_for_overhead(rep, bench, mode, items):
    """Arm latency and losses of the captures that timed steps."""
    losses_by_rank = {}
    for name, res in items:
        for r in (res or {}).get("ranks", []):
            oh = r.get("overhead", {})
            bench.setdefault(f"arm_{mode}", []).append(dict(capture=name, rank=r["rank"], arm_latency_ms=oh.get("arm_latency_ms"),
                                                            cupti_enable_us=r.get("counters", {}).get("cupti_enable_us"),
                                                            before_ms=oh.get("step_ms_median_before"),
                                                            during_ms=oh.get("step_ms_median_during"),
                                                            steps_before=oh.get("steps_before"),
                                                            steps_during=oh.get("steps_during"),
                                                            steps_recorded=r.get("steps_recorded"),
                                                            armed_error=r.get("armed_error")))
            agg = losses_by_rank.setdefault(r["rank"], {})
            for k, v in r.get("counters", {}).items():
                if k in ("cupti_dropped_records", "refused_buffers", "rank_chunks_dropped", "pending_dropped", "late_dropped", "stopped_for_memory_growth") and v:
                    agg[k] = agg.get(k, 0) + v
    for rank in sorted(losses_by_rank):
        rec = [r.get("steps_recorded") for _, res in items for r in (res or {}).get("ranks", []) if r.get("rank") == rank]
        rep.row(f"{mode}: timed captures rank {rank}: steps recorded, losses", f"steps {rec}; losses "
                f"{json.dumps(losses_by_rank[rank]) if losses_by_rank[rank] else 'none'}", "each recorded, no losses",
                not losses_by_rank[rank] and all(rec))
    arms = [a["arm_latency_ms"] for a in bench.get(f"arm_{mode}", []) if a.get("arm_latency_ms") is not None]
    if arms:
        bench[f"arm_latency_{mode}_ms"] = dict(first=arms[0], median=statistics.median(arms), max=max(arms))


def record_kinds(rep, bench, mode, log):
    """Diagnostic: the cost of each CUPTI record kind, from the second injected process's captures
    with some kinds left off (request keys, e.g. api=0), each against the idle phase that follows it."""
    rows = []
    for tag, ranks in processes(log, mode, "inj")[1:]:
        for r in ranks[:1]:
            ph = r.get("phases", [])
            for i, p in enumerate(ph):
                if p.get("kind") != "capture" or not p.get("times_ms"):
                    continue
                idle = next((q for q in ph[i + 1:] if q.get("kind") == "idle" and q.get("times_ms")), None)
                inside = in_window(p, probe_for(log, p["name"]), r["rank"])
                if not idle or not inside:
                    continue
                ref = statistics.median(idle["times_ms"])
                rows.append(dict(request=p.get("request") or "all kinds", median_ms=statistics.median(inside),
                                 idle_ms=ref, overhead_pct=pct(statistics.median(inside), ref), steps=len(inside)))
    if rows:
        bench[f"record_kinds_{mode}"] = rows
        rep.row(f"{mode}: capture cost by record kind (rank 0, vs the idle phase after each)",
                "; ".join(f"{x['request']}: {x['median_ms']:.3f} vs {x['idle_ms']:.3f} ms ({x['overhead_pct']:+.1f}%)"
                          for x in rows), "report", True)


def timed_after_meet(run):
    """The first timed phase (idle, capture or profile) of a side-by-side process."""
    for p in run.get("phases", []):
        if p.get("kind") in ("idle", "capture", "profile") and p.get("times_ms") and p.get("step_starts_ns"):
            return p
    return None


def windowed_ratio(px, py, key="times_ms", win_s=0.5):
    """Two processes that ran their timed phases at the same time: the overlap cut into win_s windows
    (by each step's host start, CLOCK_REALTIME), per window median(X) / median(Y) over the steps that
    started in it (>= 5 of each). Returns (median ratio, its standard error as a share, ratios) or
    None. The error is robust (from the median absolute deviation of the log ratios): a window where
    the two processes' CPUs were slowed unequally for a moment does not widen it."""
    sx, sy = px.get("step_starts_ns") or [], py.get("step_starts_ns") or []
    vx, vy = px.get(key) or [], py.get(key) or []
    if len(sx) != len(vx) or len(sy) != len(vy) or not sx or not sy:
        return None
    lo, hi = max(sx[0], sy[0]), min(sx[-1], sy[-1])
    w = int(win_s * 1e9)
    if hi - lo < 4 * w:
        return None
    bins = {}
    for s, v, side in [(s, v, 0) for s, v in zip(sx, vx)] + [(s, v, 1) for s, v in zip(sy, vy)]:
        if lo <= s < hi:
            bins.setdefault((s - lo) // w, ([], []))[side].append(v)
    ratios = [statistics.median(a) / statistics.median(b) for _, (a, b) in sorted(bins.items())
              if len(a) >= 5 and len(b) >= 5 and statistics.median(b) > 0]
    if len(ratios) < 4:
        return None
    logs = [math.log(r) for r in ratios]
    mid = statistics.median(logs)
    sigma = 1.4826 * statistics.median(abs(x - mid) for x in logs)
    se = 1.2533 * sigma / math.sqrt(len(logs))  # the standard error of a median
    return math.exp(mid), se, ratios


SIDE_ROLES = ("base", "inj", "cap", "prof")


def side_tags(log):
    """{set: {pair letter: {"x"|"y": (tag, role)}}} of the side-by-side runs."""
    out = {}
    for p in glob.glob(os.path.join(log, "runs", "side*-rank0.json")):
        m = re.fullmatch(r"(side(\d+)-([a-e])-([xy])(base|inj|cap|prof))-rank0\.json", os.path.basename(p))
        if m:
            out.setdefault(int(m.group(2)), {}).setdefault(m.group(3), {})[m.group(4)] = (m.group(1), m.group(5))
    return out


def side_pair(log, sides, key):
    """One pair's X / Y figures, or None."""
    if "x" not in sides or "y" not in sides:
        return None
    rx, ry = runs(log, sides["x"][0]), runs(log, sides["y"][0])
    px = timed_after_meet(rx[0]) if rx else None
    py = timed_after_meet(ry[0]) if ry else None
    wr = windowed_ratio(px, py, key) if px and py else None
    if not wr:
        return None
    rs = sorted(wr[2])
    return dict(ratio=wr[0], se=wr[1], windows=len(rs), p10=rs[len(rs) // 10], p90=rs[(len(rs) * 9) // 10],
                x_ms=statistics.median(px[key]), y_ms=statistics.median(py[key]), x_steps=len(px[key]),
                y_steps=len(py[key]), roles=f"{sides['x'][1]}|{sides['y'][1]}")


def side_by_side(rep, bench, log):
    """Step-time overhead measured side by side: two one-process host-bound loops timed at the same
    time on cores X and Y, each pair's ratio X / Y over windows of the time both ran. Per set, pairs
    a (base|base), b (inj|base), c (base|inj), d (cap|base), e (prof|base). b = o * bias and
    c = bias / o give the injected-idle overhead o = sqrt(b / c) and the cores' bias sqrt(b * c),
    which a measures again; d / a and e / a give capturing's and torch.profiler's overhead. The idle
    noise is the larger of that bias disagreement and two standard errors of o; capturing is below
    torch.profiler when their difference exceeds two standard errors of it. Sets combine by the mean
    of their log figures."""
    sets = side_tags(log)
    for key in ("times_ms", "cpu_ms"):
        idle, cap, prof = [], [], []
        for i in sorted(sets):
            got = {k: side_pair(log, v, key) for k, v in sets[i].items()}
            got = {k: v for k, v in got.items() if v}
            if key == "times_ms":
                bench.setdefault("side_by_side_pairs", {})[str(i)] = got
            if "a" not in got:
                if key == "times_ms":
                    rep.row(f"side by side set {i}: base|base pair", "missing", "present", False)
                continue
            a = got["a"]
            if "b" in got and "c" in got:
                b, c = got["b"], got["c"]
                o = math.sqrt(b["ratio"] / c["ratio"])
                bias = math.sqrt(b["ratio"] * c["ratio"])
                idle.append(dict(set=i, log=math.log(o), se=0.5 * math.hypot(b["se"], c["se"]),
                                 disagreement_pct=100.0 * abs(bias / a["ratio"] - 1.0), a=a["ratio"], b=b["ratio"],
                                 c=c["ratio"], windows=[a["windows"], b["windows"], c["windows"]]))
            for letter, into in (("d", cap), ("e", prof)):
                if letter in got:
                    g = got[letter]
                    into.append(dict(set=i, log=math.log(g["ratio"] / a["ratio"]), se=math.hypot(g["se"], a["se"]),
                                     windows=g["windows"], x_ms=g["x_ms"], y_ms=g["y_ms"]))
        what = KEY_LABEL[key]
        sfx = {"times_ms": "", "cpu_ms": "_cpu"}[key]

        def combine(items):
            n = len(items)
            return (100.0 * math.expm1(statistics.fmean(x["log"] for x in items)),
                    100.0 * math.sqrt(sum(x["se"] ** 2 for x in items)) / n)

        if idle:
            over, se = combine(idle)
            disagree = max(x["disagreement_pct"] for x in idle)
            noise = max(disagree, 2.0 * se)
            thr = max(0.5, noise)
            detail = "; ".join("set %d: a %.4f b %.4f c %.4f, windows %s" % (x["set"], x["a"], x["b"], x["c"], x["windows"])
                               for x in idle)
            rep.row(f"eager1 side by side: injected idle vs not injected{what} ({len(idle)} set(s), pairs run at the "
                    f"same time, windows of 0.5 s)",
                    f"{over:+.2f}% (per set {', '.join('%+.2f' % (100.0 * math.expm1(x['log'])) for x in idle)}); noise "
                    f"{noise:.2f}% (2 standard errors {2.0 * se:.2f}%, core bias disagreement {disagree:.2f}%); X/Y {detail}",
                    "|overhead| <= max(0.5%, noise), noise <= 2%", abs(over) <= thr and noise <= 2.0)
            bench["side_by_side_idle" + sfx] = dict(overhead_pct=over, se_pct=se, noise_pct=noise,
                                                    disagreement_pct=disagree, threshold_pct=thr, sets=idle)
        if cap and prof:
            oc, sc = combine(cap)
            op, sp = combine(prof)
            gap_se = math.hypot(sc, sp)
            ok = op - oc > 2.0 * gap_se
            rep.row(f"eager1 side by side: capturing vs torch.profiler, each against not injected{what}",
                    f"capturing {oc:+.2f}% (+-{2 * sc:.2f}), torch.profiler {op:+.2f}% (+-{2 * sp:.2f}); difference "
                    f"{op - oc:.2f} points, 2 standard errors {2 * gap_se:.2f}; per set capturing "
                    f"{', '.join('%+.2f' % (100.0 * math.expm1(x['log'])) for x in cap)}, torch.profiler "
                    f"{', '.join('%+.2f' % (100.0 * math.expm1(x['log'])) for x in prof)}",
                    "capturing below torch.profiler by more than 2 standard errors", ok)
            bench["side_by_side_capture" + sfx] = dict(capturing_pct=oc, capturing_se_pct=sc, profiler_pct=op,
                                                       profiler_se_pct=sp, sets_capture=cap, sets_profiler=prof)


def long_tags(log):
    """small-long, small-long2, ... (GAPSCOPE_INJECT_LONG_REPEAT), in the order they ran."""
    tags = set()
    for p in glob.glob(os.path.join(log, "runs", "small-long*-rank*.json")):
        m = re.fullmatch(r"small-long(\d*)-rank\d+\.json", os.path.basename(p))
        if m:
            tags.add(int(m.group(1) or 1))
    return ["small-long" + ("" if i == 1 else str(i)) for i in sorted(tags)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--bench", required=True)
    a = ap.parse_args()
    rep = Report(a.table)
    bench = {}
    # eagergpu: the eager loop sized so the GPU, not the host, sets the step time.
    for mode in ("graph", "eager", "eagergpu"):
        injs = processes(a.log, mode, "inj")
        if not injs and not processes(a.log, mode, "base"):
            continue
        bases = processes(a.log, mode, "base")
        inj = injs[0][1] if injs else []
        logtext = ""
        try:
            logtext = open(os.path.join(a.log, f"{mode}-inj.log")).read()
        except OSError:
            pass
        rep.row(f"{mode}: library loads via CUDA_INJECTION64_PATH and connects",
                f"{logtext.count('gapscope-inject: connected')} connections", ">= 2 (one per rank)",
                logtext.count("gapscope-inject: connected") >= 2)
        aff = pinning(rep, mode, inj)
        if aff:
            bench[f"affinity_{mode}"] = aff
        roles = capture_roles(inj, a.log)
        per_rank = None
        if roles["count"]:
            per_rank = check_capture(rep, f"{mode}: 20-step capture", roles["count"][1], 20, bench, f"capture20_{mode}")
        else:
            rep.row(f"{mode}: 20-step capture", "missing", "present", False)
        timed = roles["blocks"] + roles["long"]
        if timed:
            captures_for_overhead(rep, bench, mode, [roles["count"]] * bool(roles["count"]) + timed)
        if roles["after_profiler"]:
            # Kineto keeps its CUPTI subscriber after profiling: a later capture either records or is
            # refused with the other client named (never silently empty).
            res = roles["after_profiler"][1] or {}
            rs = res.get("ranks", [])
            refused = len(rs) == 2 and all(r.get("armed_error") == 2 and r.get("other_cupti_client") for r in rs)
            recorded = len(rs) == 2 and not refused and all(r.get("steps_recorded") == 20 for r in rs)
            rep.row(f"{mode}: capture after torch.profiler ran",
                    f"steps {[r.get('steps_recorded') for r in rs]}, arm errors {[r.get('armed_error') for r in rs]}",
                    "2 x 20 steps, or refused naming the client", recorded or refused)
        if roles["profcap"] and roles["profcap"][1]:
            rs = roles["profcap"][1].get("ranks", [])
            others = [r.get("other_cupti_client") for r in rs]
            kernels = [p.get("profiler_kernels", 0) for r in inj for p in phases(r, "profcap")]
            rep.row(f"{mode}: capture while torch.profiler runs", f"arm errors {[r.get('armed_error') for r in rs]}, "
                    f"other client {others}, profiler kernels {kernels}", "refused (2), client named, profiler > 0",
                    bool(rs) and all(r.get("armed_error") == 2 and r.get("other_cupti_client") for r in rs)
                    and bool(kernels) and all(k > 0 for k in kernels))
        overhead(rep, bench, mode, bases, injs, a.log)
        compare_profiler(rep, bench, mode, inj, per_rank)
        record_kinds(rep, bench, mode, a.log)

    # eager1: the host-bound eager loop in one process, overhead only (no collectives to compare).
    if processes(a.log, "eager1", "inj") or processes(a.log, "eager1", "base"):
        overhead(rep, bench, "eager1", processes(a.log, "eager1", "base"), processes(a.log, "eager1", "inj"), a.log)
    side_by_side(rep, bench, a.log)
    errs = sorted({d.get("instr_error") for d in (load(p) for p in glob.glob(os.path.join(a.log, "runs", "*-rank0.json")))
                   if d and d.get("instr_error")})
    if errs:
        rep.row("instruction counts per step", "; ".join(errs), "report", True)

    long_captures = []  # (tag, rank, growth MB) of every 10,000-step capture
    for tag in long_tags(a.log):
        small = runs(a.log, tag)
        sfx = "" if tag == "small-long" else f" ({tag})"
        caps = [(p["name"], probe_for(a.log, p["name"])) for p in phases(small[0], "capture")] if small else []
        if caps:
            check_capture(rep, f"nvtx rule: 20-step capture{sfx}", caps[0][1], 20, bench,
                          "capture20_nvtx" + sfx.replace(" ", "_"), world=small[0].get("world", 2))
        if len(caps) > 1 and caps[1][1]:
            res = caps[1][1]
            rec = [r.get("steps_recorded") for r in res.get("ranks", [])]
            world = small[0].get("world", 2)
            rep.row(f"long capture{sfx}: steps recorded per rank", f"{rec}", f">= 10000 each, {world} rank(s)",
                    len(rec) == world and all(x >= 10000 for x in rec))
            for r in res.get("ranks", []):
                # Every step holds its kernels (a CUDA graph: the same kernels each step).
                ks = [s["kernels"] for s in r.get("steps", [])]
                if ks:
                    empty = sum(1 for k in ks if k == 0)
                    rep.row(f"long capture{sfx}: rank {r['rank']} kernels in every step",
                            f"{len(ks)} steps, {empty} without kernels, per step min {min(ks)} median "
                            f"{statistics.median(ks):.0f} max {max(ks)}, {r.get('kernels')} kernels",
                            "every step, min == max", empty == 0 and min(ks) == max(ks))
            for r in res.get("ranks", []):
                # The library's own memory guard: the most RSS growth it saw while recording.
                cs = r.get("counters", {})
                rep.row(f"long capture{sfx}: rank {r['rank']} memory guard (rank_rss_growth_mb)",
                        f"{cs.get('rank_rss_growth_mb', 'missing')} MB, stopped_for_memory_growth "
                        f"{cs.get('stopped_for_memory_growth', 0)}", "reported, not stopped",
                        "rank_rss_growth_mb" in cs and not cs.get("stopped_for_memory_growth"))
                losses = {k: v for k, v in r.get("counters", {}).items() if v and k not in ("activity_records", "cupti_enable_us")}
                bench.setdefault("long_capture", {})[f"{tag}-rank{r['rank']}"] = dict(counters=r.get("counters"),
                                                                                     chunk_bytes=r.get("chunk_bytes"),
                                                                                     kernels=r.get("kernels"))
                rep.row(f"long capture{sfx}: rank {r['rank']} counters", json.dumps(losses), "no data_loss counters",
                        not any(v for k, v in losses.items() if k in ("cupti_dropped_records", "refused_buffers",
                                                                       "rank_chunks_dropped", "pending_dropped", "late_dropped", "stopped_for_memory_growth")))
        for run in small:
            # The same loop for as many steps without a capture (after the 20-step one): what the
            # process grows by on its own, to set the capture's growth against.
            for p in phases(run, "rss"):
                smp = p.get("samples", [])
                if len(smp) >= 4:
                    settled = [s["rss_mb"] for s in smp[2:]]
                    bench.setdefault("long_idle_rss", {})[f"{tag}-rank{run['rank']}"] = dict(samples=smp)
                    rep.row(f"long run without capture{sfx}: rank {run['rank']} RSS", f"{settled[0]:.0f} -> {settled[-1]:.0f} MB "
                            f"({settled[-1] - settled[0]:+.1f} MB over {smp[-1]['step']} steps)", "report", True)
            for p in phases(run, "capture"):
                rss = p.get("rss", []) if p.get("capture_steps", 0) >= 1000 else []
                if len(rss) >= 4:
                    settled = [s["rss_mb"] for s in rss[2:]]
                    growth = settled[-1] - settled[0]
                    long_captures.append((tag, run["rank"], growth))
                    bench.setdefault("long_capture_rss", {})[f"{tag}-rank{run['rank']}"] = dict(samples=rss)
                    rep.row(f"long capture{sfx}: rank {run['rank']} RSS while recording", f"{settled[0]:.0f} -> {settled[-1]:.0f} MB "
                            f"({growth:+.1f} MB over {rss[-1]['step']} steps){malloc_note(rss)}", "flat (< 20 MB growth)",
                            growth < 20)
    if len(long_captures) > 2:
        flat = [g for _, _, g in long_captures if g < 20]
        rep.row("long captures: rank captures flat", f"{len(flat)} of {len(long_captures)} (growth "
                f"{min(g for _, _, g in long_captures):+.1f} .. {max(g for _, _, g in long_captures):+.1f} MB)",
                "all flat (< 20 MB growth)", len(flat) == len(long_captures))
        bench["long_captures_flat"] = dict(flat=len(flat), of=len(long_captures),
                                           growth_mb=[dict(tag=t, rank=r, mb=g) for t, r, g in long_captures])
    # GAPSCOPE_INJECT_LONG_KEYS: the same capture with record kinds left off, one process each.
    k = 1
    while os.path.exists(os.path.join(a.log, f"small-long-k{k}.keys")):
        keys = open(os.path.join(a.log, f"small-long-k{k}.keys")).read().strip()
        what = keys if keys.startswith("with ") else "without " + keys
        for run in runs(a.log, f"small-long-k{k}"):
            for p in phases(run, "capture"):
                if p.get("capture_steps", 0) < 1000:
                    continue
                res = probe_for(a.log, p["name"]) if run["rank"] == 0 else None
                for r in (res or {}).get("ranks", []):
                    cs = {c: v for c, v in r.get("counters", {}).items()
                          if c.startswith(("rank_", "cupti_")) or c in ("activity_records", "records_without_timestamps")}
                    rep.row(f"long capture {what}: rank {r['rank']} counters", json.dumps(cs), "report", True)
                rss = p.get("rss", [])
                if len(rss) >= 4:
                    settled = [s["rss_mb"] for s in rss[2:]]
                    growth = settled[-1] - settled[0]
                    bench.setdefault("long_capture_rss_keys", {}).setdefault(keys, {})[f"rank{run['rank']}"] = dict(samples=rss)
                    rep.row(f"long capture {what}: rank {run['rank']} RSS while recording",
                            f"{settled[0]:.0f} -> {settled[-1]:.0f} MB ({growth:+.1f} MB over {rss[-1]['step']} steps)"
                            f"{malloc_note(rss)}",
                            "report", True)
        k += 1
    with open(a.bench, "w") as f:
        json.dump(no_nan(bench), f, indent=1, default=str)


if __name__ == "__main__":
    main()
