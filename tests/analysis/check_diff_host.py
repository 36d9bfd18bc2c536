#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`gapscope-cli diff --json A B`'s host attribution against synth's ground truth, to the nanosecond.

A: an eager synth trace with CPU operators and Python frames; B: the same seed with an injected host
op (synth::host_delay) of a known duration. Per rank, host_attribution.ranks[] must give each side's
launch/host gap and explained time as the truth sums them over the steps, and every row's a_ms/b_ms
must equal the truth's time for that (name, kind) on that side; synth::host_delay must be the row
that moved most, absent from A. Each side's `a`/`b` array must be what `analyze --json` gives as
host_gaps for that trace alone.

Usage: check_diff_host.py GAPSCOPE_CLI WORKDIR
"""
import json
import os
import subprocess
import sys

from check_host_truth import truth_of

COMMON = ["--mode", "eager", "--ranks", "2", "--steps", "6", "--kernels-per-step", "60", "--host-ops", "--seed", "5"]


def run(cli, *args):
    return subprocess.run([cli, *args], check=True, capture_output=True, text=True).stdout


def truth_rows(truth):
    """rank -> (gap ns, explained ns, {(name, kind): ns})"""
    out = {}
    for rank in truth["ranks"]:
        gap, explained, rows = truth_of(rank)
        out[rank["rank"]] = (gap, explained, {k: v[0] for k, v in rows.items()})
    return out


def main():
    cli, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    files = {}
    for side, extra in (("a", []), ("b", ["--inject-host-op-us", "150"])):
        trace, truth = os.path.join(work, side + ".gapscope"), os.path.join(work, side + ".truth.json")
        run(cli, "synth", "-o", trace, "--truth", truth, *COMMON, *extra)
        with open(truth) as f:
            files[side] = (trace, truth_rows(json.load(f)))
    diff = json.loads(run(cli, "diff", "--json", files["a"][0], files["b"][0]))
    host = diff["host_attribution"]
    ns = lambda ms: round(ms * 1e6)
    bad = []
    if not host["available"]:
        bad.append("host attribution not available")
    for side in ("a", "b"):
        alone = json.loads(run(cli, "analyze", "--json", files[side][0]))["host_gaps"]
        if host[side] != alone:
            bad.append(f"{side}: differs from analyze --json host_gaps of that trace")
    for r in host["ranks"]:
        rank = r["a_rank"]
        for side in ("a", "b"):
            gap, explained, rows = files[side][1][rank]
            if (ns(r[side + "_gap_ms"]), ns(r[side + "_explained_ms"])) != (gap, explained):
                bad.append(f"rank {rank} {side}: gaps {ns(r[side + '_gap_ms'])}/{ns(r[side + '_explained_ms'])} ns, "
                           f"truth {gap}/{explained}")
            for row in r["top"]:
                want = rows.get((row["name"], row["kind"]), 0)
                if ns(row[side + "_ms"]) != want:
                    bad.append(f"rank {rank} {side}: {row['kind']} {row['name']} {ns(row[side + '_ms'])} ns, truth {want}")
        top = r["top"][0] if r["top"] else {}
        if top.get("name") != "synth::host_delay" or top.get("a_ms") != 0 or top.get("delta_ms", 0) <= 0:
            bad.append(f"rank {rank}: the row that moved most is {top.get('name')}, not a new synth::host_delay")
        print(f"rank {rank}: gaps {r['a_gap_ms']:.3f} -> {r['b_gap_ms']:.3f} ms, synth::host_delay "
              f"+{top.get('delta_ms', 0):.3f} ms")
    for b in bad:
        print("  " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
