#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks `gapscope-cli analyze --json` of a captured gapscope-decode-sim run against the sim's own
ground truth (kernels/README.md, "kind": "gapscope-decode-sim-truth") and prints table rows
`check | measured | target | PASS/FAIL` (tests/gpu/README.md).

    analysis_check.py --truth T.json --analysis A.json \
        [--clean-analysis C.json] [--label NAME] [--tolerance 0.15]

Each injected pathology must land in its bar, per rank, within the tolerance (default +-15%):
  host delay (--host-delay-us)      -> "launch/host gaps"  vs truth launch_host_ns; in graph mode the
                                       delay is a host function inside the step's graph: "in-graph gaps"
  sync after every layer            -> "sync stalls"        vs truth sync_stall_ns
  host gap between steps            -> "step gap"           vs truth step_gap_idle_ns (--step-stamps;
                                       without them step_gap_ns, the host spin, with the clean run
                                       subtracted)
  straggler rank (--straggler-rank) -> "collective wait" on the other ranks vs truth collective_wait_ns,
                                       and the straggler is the critical rank and the one found late
  slow component (--slow C:F)       -> the class holding C ("<class> inefficiency", or "<class>"
                                       without a budget) vs truth components_ns[C]
The measured amount is the bar's median per step; with --clean-analysis (the same sim options without
the pathology, captured the same way) the clean run's median is subtracted first, as the truth counts
only what was injected. The step gap with --step-stamps is the exception: its truth is the whole GPU
idle between steps (the sim's clock stamps after a step's last copy and at the next step's first
kernel, the interval the bar measures, in the clock of the capture's kernel timestamps), so the bar
is compared as it is; the host spin and the clean run's step gap are printed beside it. The host spin
alone is not what the GPU idles: the idle also holds the sync's wake-up and the next step's launch,
which differ between processes and GPUs and do not cancel against a clean run. The truth is the sim's own measurement in the steps that were captured: each
analysed step (`start_ns`, the trace's CLOCK_REALTIME) is matched with the sim's step whose host start
(`start_unix_ns`) came last before it; the median over all of the sim's steps is printed beside it,
so what the capture itself added shows. Also checked: every step's bars add up to its measured time,
and the captured step time agrees with the sim's own CUDA-event timing of the same steps.
python3 standard library only.
"""
import argparse
import bisect
import json
import statistics
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def row(check, measured, target, ok):
    print(f"{check} | {measured} | {target} | {'PASS' if ok else 'FAIL'}")
    return ok


def ms(ns):
    return ns / 1e6


def captured_steps(truth_rank, analysis_rank, slack_ns=50_000_000):
    """The sim's steps that the analysed steps are (matched by start time), or None without start
    times or when fewer than half of the analysed steps match."""
    starts = sorted((s["start_unix_ns"], s) for s in truth_rank.get("steps", []) if s.get("start_unix_ns"))
    steps = (analysis_rank or {}).get("steps") or []
    if not starts or not steps:
        return None
    keys = [k for k, _ in starts]
    out = []
    for a in steps:
        t = a.get("start_ns")
        if t is None:
            continue
        i = bisect.bisect_right(keys, t) - 1
        if i >= 0 and t - keys[i] <= slack_ns:
            out.append(starts[i][1])
    return out if len(out) * 2 >= len(steps) else None


def truth_median(truth_rank, key, component=None, steps=None):
    vals = []
    for s in (steps if steps else truth_rank["steps"]):
        v = s.get("components_ns", {}).get(component, 0) if component else s.get(key, 0)
        vals.append(v)
    return ms(statistics.median(vals)) if vals else 0.0


def bar_median(rank_json, names):
    """Median per step of the first bar in `names` that exists (ms); falls back to the mean block."""
    steps = rank_json.get("steps") or []
    for name in names:
        vals = [b["ms"] for s in steps for b in s["bars"] if b["name"] == name]
        if vals:
            return statistics.median(vals), name
        mean = rank_json.get("mean") or {}
        for b in mean.get("bars", []):
            if b["name"] == name:
                return b["ms"], name
    return None, names[0]


def class_of(analysis, component):
    for c in analysis.get("classifier", {}).get("classes", []):
        if c["name"] == component or component in c.get("components", []):
            return c["name"]
    return component


def ranks_by_id(doc):
    return {r["rank"]: r for r in doc.get("ranks", [])}


def check_amount(label, rank, analysis_rank, clean_rank, bar_names, want, tol):
    """`want`: (truth in the captured steps, truth over all of the sim's steps) in ms."""
    want_ms, all_ms = want
    got, name = bar_median(analysis_rank, bar_names)
    if got is None:
        return row(f"{label}: rank {rank} '{bar_names[0]}'", "bar missing", f"{want_ms:.3f} ms +-{tol:.0%}", False)
    base = 0.0
    if clean_rank is not None:
        base_val, _ = bar_median(clean_rank, [name])
        base = base_val or 0.0
    delta = got - base
    ok = want_ms > 0 and abs(delta - want_ms) <= tol * want_ms
    what = f"{delta:.3f} ms/step" + (f" ({got:.3f} - clean {base:.3f})" if clean_rank is not None else "")
    where = f"truth in the captured steps; {all_ms:.3f} over all steps" if all_ms is not None else "truth"
    return row(f"{label}: rank {rank} '{name}'", what, f"{want_ms:.3f} ms +-{tol:.0%} ({where})", ok)


def check_step_gap(label, rank, truth_rank, analysis_rank, clean_rank, cap, tol):
    """The step gap bar against the GPU idle between steps (--step-stamps: step_gap_idle_ns, GPU
    clock stamps after a step's last copy and at the next step's first kernel). Without the stamps,
    the host spin against the bar less the clean run's (the old check: the idle around the spin, the
    sync's wake-up and the next launch, is assumed the same in both processes)."""
    def med(key, steps=None):
        # The last step has no gap after it (0): steps without one are left out.
        vals = [s.get(key, 0) for s in (steps if steps else truth_rank["steps"]) if s.get("step_gap_ns", 0) > 0]
        return ms(statistics.median(vals)) if vals else 0.0

    stamped = any(s.get("step_gap_idle_ns", 0) > 0 for s in truth_rank.get("steps", []))
    if not stamped:
        return check_amount(label, rank, analysis_rank, clean_rank, ["step gap"],
                            (med("step_gap_ns", cap), med("step_gap_ns") if cap else None), tol)
    want_ms, all_ms, spin_ms = med("step_gap_idle_ns", cap), med("step_gap_idle_ns"), med("step_gap_ns", cap)
    got, name = bar_median(analysis_rank, ["step gap"])
    target = f"{want_ms:.3f} ms +-{tol:.0%} (GPU idle between steps, sim's clock stamps, " + \
        ("in the captured steps; " if cap else "") + f"{all_ms:.3f} over all steps)"
    if got is None:
        return row(f"{label}: rank {rank} 'step gap'", "bar missing", target, False)
    clean = ""
    if clean_rank is not None:
        base, _ = bar_median(clean_rank, [name])
        clean = f", clean run's step gap {base or 0.0:.3f}"
    ok = want_ms > 0 and abs(got - want_ms) <= tol * want_ms
    what = f"{got:.3f} ms/step (host spin {spin_ms:.3f}, GPU idle - spin {want_ms - spin_ms:+.3f}{clean})"
    return row(f"{label}: rank {rank} '{name}'", what, target, ok)


def check_bars_add_up(label, analysis):
    worst, steps = 0.0, 0
    for r in analysis.get("ranks", []):
        for s in r.get("steps", []):
            total = sum(b["ms"] for b in s["bars"])
            worst = max(worst, abs(total - s["measured_ms"]))
            if "measured_ns" in s and all("ns" in b for b in s["bars"]):
                worst = max(worst, abs(sum(b["ns"] for b in s["bars"]) - s["measured_ns"]) / 1e6)
            steps += 1
    return row(f"{label}: bars add up to the measured step ({steps} steps)", f"max diff {worst * 1e6:.0f} ns",
               "0 ns (ns fields)", steps > 0 and worst < 1e-6)


def check_step_time(label, analysis, truth, tol=0.05):
    ok_all = True
    ar = ranks_by_id(analysis)
    for tr in truth.get("ranks", []):
        r = ar.get(tr["rank"])
        steps = (r or {}).get("steps") or []
        if not steps:
            continue
        got = statistics.median(s["measured_ms"] for s in steps)
        cap = captured_steps(tr, r)
        want = truth_median(tr, "measured_ns", steps=cap)
        ok = want > 0 and abs(got - want) <= tol * want
        ok_all &= row(f"{label}: rank {tr['rank']} median step time, capture vs sim events", f"{got:.3f} ms",
                      f"{want:.3f} ms +-{tol:.0%}" + (" (the same steps)" if cap else " (all steps)"), ok)
    return ok_all


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--truth", required=True)
    p.add_argument("--analysis", required=True)
    p.add_argument("--clean-analysis")
    p.add_argument("--label", default="analysis")
    p.add_argument("--tolerance", type=float, default=0.15)
    a = p.parse_args()
    truth, analysis = load(a.truth), load(a.analysis)
    clean = load(a.clean_analysis) if a.clean_analysis else None
    if truth.get("kind") != "gapscope-decode-sim-truth":
        print(f"{a.label}: truth file kind | {truth.get('kind')} | gapscope-decode-sim-truth | FAIL")
        return 1
    inj, tol, label = truth.get("injected", {}), a.tolerance, a.label
    ar, cr = ranks_by_id(analysis), ranks_by_id(clean) if clean else {}
    ok = check_bars_add_up(label, analysis)
    ok &= check_step_time(label, analysis, truth)
    straggler = inj.get("straggler_rank", -1) if inj.get("straggler_ns", 0) > 0 else -1
    for tr in truth.get("ranks", []):
        rank = tr["rank"]
        mine, base = ar.get(rank), cr.get(rank) if clean else None
        if mine is None:
            ok &= row(f"{label}: rank {rank} analysed", "missing", "present", False)
            continue
        cap = captured_steps(tr, mine)

        def want(key, comp=None):  # noqa: E306
            return (truth_median(tr, key, comp, steps=cap), truth_median(tr, key, comp) if cap else None)

        if inj.get("host_delay_ns", 0) > 0:
            # A host function captured into the step's graph (callback mode) idles the GPU inside the
            # replay: in-graph gaps. Launched from the host between kernels: launch/host gaps.
            in_graph = truth.get("config", {}).get("mode") == "graph" and inj.get("host_delay_mode") == "callback"
            ok &= check_amount(f"{label} host delay", rank, mine, base,
                               ["in-graph gaps"] if in_graph else ["launch/host gaps"], want("launch_host_ns"), tol)
        if inj.get("sync_every_layer"):
            ok &= check_amount(f"{label} sync every layer", rank, mine, base, ["sync stalls"],
                               want("sync_stall_ns"), tol)
        if inj.get("step_gap_ns", 0) > 0:
            ok &= check_step_gap(f"{label} step gap", rank, tr, mine, base, cap, tol)
        if straggler >= 0 and rank != straggler:
            ok &= check_amount(f"{label} straggler", rank, mine, base, ["collective wait"],
                               want("collective_wait_ns"), tol)
        comp = inj.get("slow_component", "")
        if comp:
            cls = class_of(analysis, comp)
            ok &= check_amount(f"{label} slow {comp}", rank, mine, base, [f"{cls} inefficiency", cls],
                               want(None, comp), tol)
    if straggler >= 0:
        crit = analysis.get("critical", {}).get("rank")
        ok &= row(f"{label} straggler: critical rank", f"rank {crit}", f"rank {straggler}", crit == straggler)
        late = {s["rank"]: s for s in analysis.get("stragglers", [])}
        s = late.get(straggler, {})
        frac = s.get("late_count", 0) / max(1, s.get("matched", 0))
        tr = next((t for t in truth.get("ranks", []) if t["rank"] == straggler), {})
        want, per_step = tr.get("straggler_collectives_per_step", 0), tr.get("collectives_per_step", 0)
        want_frac = want / per_step if per_step and want else 1.0
        ok &= row(f"{label} straggler: rank {straggler} last at its collectives",
                  f"{frac:.0%} ({s.get('late_count', 0)} of {s.get('matched', 0)}, mean {s.get('mean_late_ms', 0):.3f} ms)",
                  f">= {0.85 * want_frac:.0%} (truth {want} of {per_step} per step)", frac >= 0.85 * want_frac)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
