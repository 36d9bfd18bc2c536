#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks `gapscope-cli analyze --json` on a multi-rank torch.profiler fixture against the ground truth
that crossrank_truth.py computes from the raw JSON:
- steps per rank = the rank's host decode_step ranges; incomplete steps = the aligned steps some rank
  lacks, the skewed first one named "capture started ... apart";
- per complete step and rank: the `collectives` bar = the wire time of its collectives (end - last
  arrival), `collective wait` = their wait (last arrival - own arrival), to the nanosecond;
- every step's bars add up exactly to its measured time;
- late arrivals per rank over the complete steps within 5% of the raw count (the rank that started
  last at each collective), the median and worst lateness, the straggler's late steps.

Usage: check_crossrank.py GAPSCOPE_CLI FIXTURE_DIR   (exit 1 with the differences on failure)
"""
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main(cli, fixture):
    files = sorted(glob.glob(os.path.join(fixture, "rank*.json.gz")))
    truth = json.loads(subprocess.run([sys.executable, os.path.join(HERE, "crossrank_truth.py")] + files,
                                      check=True, capture_output=True, text=True).stdout)
    got = json.loads(subprocess.run([cli, "analyze", "--json"] + files, check=True, capture_output=True,
                                    text=True).stdout)
    errors = []

    def expect(cond, what):
        if not cond:
            errors.append(what)

    ranks = {r["rank"]: r for r in got["ranks"]}
    expect(sorted(ranks) == sorted(int(r) for r in truth["ranks"]), "ranks %s" % sorted(ranks))
    for r, t in truth["ranks"].items():
        steps = ranks[int(r)]["steps"]
        expect(len(steps) == t["host_steps"], "rank %s: %d steps, host ranges %d" % (r, len(steps), t["host_steps"]))
        for s in steps:
            total = sum(b["ns"] for b in s["bars"])
            expect(total == s["measured_ns"], "rank %s step %d: bars %d != measured %d"
                   % (r, s["index"], total, s["measured_ns"]))
    incomplete = {s["index"]: s for s in truth["aligned_steps"] if not s["complete"]}
    got_incomplete = {i["index"]: i["why"] for i in got["incomplete_steps"]}
    expect(sorted(got_incomplete) == sorted(incomplete), "incomplete steps %s, truth %s"
           % (sorted(got_incomplete), sorted(incomplete)))
    for k, s in incomplete.items():
        started = any(w.startswith("capture of rank %d started" % r) for r in s["missing_ranks"] for w in s["reason"])
        why = got_incomplete.get(k, "")
        expect(started == why.startswith("capture started") and why.endswith("step %d left out" % k),
               "step %d: '%s' (truth: %s)" % (k, why, s["reason"]))
        expect(why in got["findings"], "step %d not in the findings" % k)
    # Wire and wait per complete step.
    for row in truth["per_step"]:
        if row["step"] is None or row["step"] in incomplete:
            continue
        step = next((s for s in ranks[row["rank"]]["steps"] if s["index"] == row["step"]), None)
        expect(step is not None, "rank %d has no step %s" % (row["rank"], row["step"]))
        if step is None:
            continue
        bars = {b["name"]: b["ns"] for b in step["bars"]}
        expect(bars["collectives"] == row["wire_ns"], "rank %d step %d: collectives %d ns, wire %d ns"
               % (row["rank"], row["step"], bars["collectives"], row["wire_ns"]))
        expect(bars["collective wait"] == row["wait_ns"], "rank %d step %d: collective wait %d ns, truth %d ns"
               % (row["rank"], row["step"], bars["collective wait"], row["wait_ns"]))
    # Stragglers over the complete steps.
    late = {s["rank"]: s for s in got["stragglers"]}
    for r, t in truth["late_in_complete_steps"].items():
        g = late[int(r)]
        raw = t["late_raw"]
        expect(abs(g["late_count"] - raw) <= max(1, 0.05 * raw), "rank %s: late at %d, raw count %d"
               % (r, g["late_count"], raw))
        expect(g["late_count"] == t["late"], "rank %s: late at %d, truth %d" % (r, g["late_count"], t["late"]))
        expect(abs(g["median_late_ms"] - t["median_ms"]) < 2e-6 and abs(g["max_late_ms"] - t["max_ms"]) < 2e-6,
               "rank %s: lateness median %.6f max %.6f ms, truth %.6f %.6f"
               % (r, g["median_late_ms"], g["max_late_ms"], t["median_ms"], t["max_ms"]))
        want_steps = [s for s in truth["late"][r]["steps"] if s not in incomplete]
        expect(g["late_steps"] == want_steps, "rank %s: late in steps %s, truth %s" % (r, g["late_steps"], want_steps))
    if errors:
        print("\n".join(errors))
        return 1
    print("%s: %d ranks, %d steps, %d incomplete: as the truth says" % (fixture, len(ranks),
                                                                       len(truth["aligned_steps"]), len(incomplete)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
