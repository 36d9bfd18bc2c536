#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host attribution against synth's ground truth, to the nanosecond.

Writes a synth trace with CPU operators, Python frames and an injected host op (synth::host_delay of
a known duration) and its --truth, runs `gapscope-cli analyze --json` on it, and compares per rank
the launch/host gap time, the explained time and every host_gaps top entry (name, kind, ns, count)
with the truth summed over the steps (synth computes it from the generated timeline). Also checks
that the injected op is the top entry and holds at least half of its injected time and no more (the
GPU may still run work queued before it while it runs).

Usage: check_host_truth.py GAPSCOPE_CLI WORKDIR [synth options...]
"""
import json
import os
import subprocess
import sys


def truth_of(rank):
    """One rank of synth's truth summed over its steps: (gap ns, explained ns, {(name, kind): [ns, count]})."""
    gap = explained = 0
    rows = {}
    for step in rank["steps"]:
        h = step["host"]
        gap += h["launch_host_ns"]
        explained += h["explained_ns"]
        for e in h["events"]:
            r = rows.setdefault((e["name"], e["kind"]), [0, 0])
            r[0] += e["ns"]
            r[1] += e["count"]
    return gap, explained, rows


def main():
    cli, work = sys.argv[1], sys.argv[2]
    extra = sys.argv[3:]
    os.makedirs(work, exist_ok=True)
    trace, truth = os.path.join(work, "host_truth.gapscope"), os.path.join(work, "host_truth.json")
    subprocess.run([cli, "synth", "-o", trace, "--truth", truth] + extra, check=True, capture_output=True)
    report = json.loads(subprocess.run([cli, "analyze", "--json", trace], check=True, capture_output=True,
                                       text=True).stdout)
    with open(truth) as f:
        doc = json.load(f)
    injected = doc["injected"].get("host_op_us", 0)
    bad = []
    for rank in doc["ranks"]:
        gap, explained, rows = truth_of(rank)
        delay_ns = sum(v[0] for (name, _), v in rows.items() if name == "synth::host_delay")
        mine = next(x for x in report["host_gaps"] if x["rank"] == rank["rank"])
        to_ns = lambda ms: round(ms * 1e6)
        print(f"rank {rank['rank']}: truth {gap} ns of gaps, {explained} explained; gapscope "
              f"{to_ns(mine['gap_ms'])}, {to_ns(mine['explained_ms'])}")
        if (to_ns(mine["gap_ms"]), to_ns(mine["explained_ms"])) != (gap, explained):
            bad.append(f"rank {rank['rank']}: totals differ")
        expected = sorted(rows.items(), key=lambda kv: (-kv[1][0], kv[0][0], kv[0][1]))[:len(mine["top"])]
        if len(mine["top"]) < min(10, len(rows)):
            bad.append(f"rank {rank['rank']}: {len(mine['top'])} top entries, truth has {len(rows)}")
        for k, ((name, kind), (ns, count)) in enumerate(expected):
            got = mine["top"][k]
            if (got["name"], got["kind"], to_ns(got["ms"]), got["count"]) != (name, kind, ns, count):
                bad.append(f"rank {rank['rank']} row {k}: truth {kind} {name} {ns} ns x{count}, gapscope "
                           f"{got['kind']} {got['name']} {to_ns(got['ms'])} ns x{got['count']}")
        if injected > 0:
            want = injected * 1000 * len(rank["steps"])
            if delay_ns < 0.5 * want or delay_ns > want or mine["top"][0]["name"] != "synth::host_delay":
                bad.append(f"rank {rank['rank']}: synth::host_delay holds {delay_ns} ns of {want} injected, "
                           f"top entry {mine['top'][0]['name']}")
    for b in bad:
        print("  " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
