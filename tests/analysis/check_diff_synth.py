#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`gapscope-cli diff` on synth pairs whose B differs from A by one known amount.

A is a synth trace; B is the same seed with one injection. The diff must put the injected amount in
the right place, within 5 %, and move every other bar by no more than the same seed's own noise: the
spread (max - min) of that bar over the steps and ranks of A (`analyze --json` of A). Cases:
  - host gap: --inject-host-gap-us 100 adds 0.100 ms of host time between steps: the median step's
    `step gap` bar grows by 0.100 ms (the mean step by 0.100 * (N-1)/N: the last step of a trace has
    no step after it), and no kernel's count or total changes;
  - slow class: --slow-class routed_experts --slow-factor 1.5: the `routed_experts` bar grows by half
    of A's, in the median and in the mean step;
  - straggler: --straggler-rank 1 --straggler-delay-us 50: rank 1 arrives 0.050 ms late at every
    collective, so rank 0's collective wait grows by 0.050 ms per collective of a step, and rank 1 is
    a straggler in B only.
Usage: check_diff_synth.py GAPSCOPE_CLI WORKDIR (exit 1 on any mismatch).
"""
import json
import os
import subprocess
import sys

STEPS = 8
BASE = ["--ranks", "2", "--steps", str(STEPS), "--kernels-per-step", "200", "--seed", "7"]


def run(cli, *args, want_rc=None):
    p = subprocess.run([cli] + list(args), capture_output=True, text=True)
    if p.returncode not in (0, 1) or (want_rc is not None and p.returncode != want_rc):
        raise SystemExit("%s %s: exit %d\n%s" % (cli, " ".join(args), p.returncode, p.stderr))
    return p.stdout


def synth(cli, path, *extra):
    run(cli, "synth", *BASE, *extra, "-o", path)


def spreads(analysis):
    """Per bar name: max - min over every step of every rank of A, in ms."""
    values = {}
    for rank in analysis["ranks"]:
        for step in rank["steps"]:
            if step.get("incomplete"):
                continue
            for bar in step["bars"]:
                values.setdefault(bar["name"], []).append(bar["ms"])
    return {name: max(v) - min(v) for name, v in values.items()}


def bar(bars, name):
    for b in bars:
        if b["name"] == name:
            return b
    raise KeyError(name)


class Check:
    def __init__(self):
        self.failures = []

    def near(self, what, got, want, rel=0.05):
        ok = abs(got - want) <= rel * abs(want)
        print("%-60s %10.4f  want %10.4f  %s" % (what, got, want, "ok" if ok else "FAIL"))
        if not ok:
            self.failures.append(what)

    def true(self, what, cond):
        print("%-60s %s" % (what, "ok" if cond else "FAIL"))
        if not cond:
            self.failures.append(what)

    def others_within_noise(self, case, bars, moved, noise):
        for b in bars:
            if b["name"] == moved:
                continue
            limit = noise.get(b["name"], 0.0)
            if abs(b["delta_ms"]) > limit + 1e-9:
                self.true("%s: %s moved %.4f ms, noise %.4f ms" % (case, b["name"], b["delta_ms"], limit), False)
        self.true("%s: every other bar within the noise of A" % case, True)


def main():
    cli, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    a = os.path.join(work, "diff_a.gapscope")
    synth(cli, a)
    noise = spreads(json.loads(run(cli, "analyze", "--json", a)))
    c = Check()

    b = os.path.join(work, "diff_hostgap.gapscope")
    synth(cli, b, "--inject-host-gap-us", "100")
    d = json.loads(run(cli, "diff", "--json", a, b))
    c.near("host gap: median step gap delta (ms)", bar(d["bars"], "step gap")["delta_ms"], 0.100)
    c.near("host gap: mean step gap delta (ms)", bar(d["mean_bars"], "step gap")["delta_ms"],
           0.100 * (STEPS - 1) / STEPS)
    c.true("host gap: the largest change comes first", d["bars"][0]["name"] == "step gap")
    c.near("host gap: median step time delta (ms)", d["steps"]["delta_median_ms"], 0.100)
    c.others_within_noise("host gap, median", d["bars"], "step gap", noise)
    c.others_within_noise("host gap, mean", d["mean_bars"], "step gap", noise)
    c.true("host gap: no kernel's count or total moved",
           all(k["match"] == "exact" and k["a_count"] == k["b_count"] and k["a_total_ns"] == k["b_total_ns"]
               for k in d["kernels"]))

    b = os.path.join(work, "diff_slow.gapscope")
    synth(cli, b, "--slow-class", "routed_experts", "--slow-factor", "1.5")
    d = json.loads(run(cli, "diff", "--json", a, b))
    for key in ("bars", "mean_bars"):
        r = bar(d[key], "routed_experts")
        c.near("slow class: %s routed_experts delta (ms)" % key, r["delta_ms"], 0.5 * r["a_ms"])
        c.others_within_noise("slow class, " + key, d[key], "routed_experts", noise)
    c.true("slow class: routed_experts moved most", d["mean_bars"][0]["name"] == "routed_experts")

    b = os.path.join(work, "diff_straggler.gapscope")
    synth(cli, b, "--straggler-rank", "1", "--straggler-delay-us", "50")
    d = json.loads(run(cli, "diff", "--json", a, b))
    ranks = {r["a_rank"]: r for r in d["ranks"]}
    per_step = ranks[1]["b"]["matched"] / ranks[1]["b"]["steps"]
    c.near("straggler: rank 0 collective wait delta (ms)", ranks[0]["delta_wait_ms"], 0.050 * per_step)
    c.true("straggler: rank 1 arrives last at every collective in B",
           ranks[1]["b"]["late_count"] == ranks[1]["b"]["matched"] > 0)
    c.true("straggler: rank 1 a straggler in B only", ranks[1]["b"]["straggler"] and not ranks[1]["a"]["straggler"])
    c.true("straggler: rank 0 no straggler", not ranks[0]["b"]["straggler"])

    b = os.path.join(work, "diff_onerank.gapscope")
    run(cli, "synth", "--ranks", "1", *BASE[2:], "-o", b)
    d = json.loads(run(cli, "diff", "--json", a, b, want_rc=1))
    c.true("rank counts: said", any(p.startswith("rank counts differ: A has 2 ranks (0, 1), B has 1 (0)")
                                    for p in d["problems"]))
    c.true("rank counts: rank 1 has no B side", [(r["a_rank"], r["b_rank"]) for r in d["ranks"]] == [(0, 0), (1, None)]
           and d["ranks"][1]["b"] is None and d["ranks"][1]["delta_step_ms"] is None)
    c.true("rank counts: bars and rank 0 still compared", len(d["bars"]) > 0 and d["ranks"][0]["delta_step_ms"] is not None)

    if len(sys.argv) > 3:
        b = os.path.join(work, "diff_onestep.gapscope")
        run(cli, "synth", "--ranks", "2", "--steps", "1", "--kernels-per-step", "40", "-o", b)
        d = json.loads(run(cli, "diff", "--json", "--before", *sys.argv[3:], "--after", b, want_rc=1))
        c.true("no common steps: said", any(p.startswith("no steps in common: A has steps 1 to 11, B has steps 0 to 0")
                                            for p in d["problems"]))
        c.true("no common steps: no bars", d["bars"] == [] and d["mean_bars"] == [] and d["steps"]["common"] == 0)
        c.true("no common steps: kernels still compared", len(d["kernels"]) > 0
               and all(k["a_count"] + k["b_count"] > 0 for k in d["kernels"]))

    if c.failures:
        print("FAILED: " + "; ".join(c.failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
