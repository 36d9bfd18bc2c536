#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks the host attribution of `gapscope-cli analyze --json` (`host_gaps`) of a captured
gapscope-decode-sim run with `--host-delay-mode thread --nvtx` against the sim's ground truth, and
prints table rows `check | measured | target | PASS/FAIL`.

    host_check.py --truth T.json --analysis A.json [--clean-analysis C.json] [--label NAME]
                  [--range host_delay] [--tolerance 0.10]

The sim spins on its launching thread inside an NVTX range `host_delay` before each layer; the GPU
idles across each spin (truth `launch_host_ns` per step: CUDA events before and after each delay).
The launch/host gap time attributed to the range, per analysed step, must equal that idle within the
tolerance (default +-10%), per rank, in the steps that were captured. With --clean-analysis the clean
run's attribution of the same name is subtracted (it should be none). Also printed: how much of the
launch/host gap time is explained by named host events. python3 standard library only.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from analysis_check import captured_steps, load, ranks_by_id, row, truth_median  # noqa: E402


def attributed_ms(host_rank, name):
    return sum(t.get("ms", 0.0) for t in host_rank.get("top", []) if t.get("name") == name)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--truth", required=True)
    p.add_argument("--analysis", required=True)
    p.add_argument("--clean-analysis")
    p.add_argument("--label", default="host")
    p.add_argument("--range", default="host_delay")
    p.add_argument("--tolerance", type=float, default=0.10)
    a = p.parse_args()
    truth, analysis = load(a.truth), load(a.analysis)
    clean = load(a.clean_analysis) if a.clean_analysis else None
    hosts = {h["rank"]: h for h in analysis.get("host_gaps", [])}
    chosts = {h["rank"]: h for h in (clean or {}).get("host_gaps", [])}
    ar, cr = ranks_by_id(analysis), ranks_by_id(clean) if clean else {}
    ok = row(f"{a.label}: host_gaps in analyze --json", f"{len(hosts)} ranks", f"{len(truth.get('ranks', []))} ranks",
             len(hosts) == len(truth.get("ranks", [])) and len(hosts) > 0)
    for tr in truth.get("ranks", []):
        rank = tr["rank"]
        h, mine = hosts.get(rank), ar.get(rank)
        if h is None or mine is None:
            ok &= row(f"{a.label}: rank {rank} host attribution", "missing", "present", False)
            continue
        steps = len(mine.get("steps") or []) or 1
        got = attributed_ms(h, a.range) / steps
        base = 0.0
        if rank in chosts:
            base = attributed_ms(chosts[rank], a.range) / max(1, len((cr.get(rank) or {}).get("steps") or []))
        cap = captured_steps(tr, mine)
        want = truth_median(tr, "launch_host_ns", steps=cap)
        spin = truth_median(tr, "host_delay_ns", steps=cap)
        ok &= row(f"{a.label}: rank {rank} gap time in NVTX '{a.range}'",
                  f"{got - base:.3f} ms/step" + (f" (clean {base:.3f})" if clean else ""),
                  f"{want:.3f} ms +-{a.tolerance:.0%} (GPU idle across the delays; spin {spin:.3f} ms)",
                  want > 0 and abs(got - base - want) <= a.tolerance * want)
        gap, explained = h.get("gap_ms", 0.0), h.get("explained_ms", 0.0)
        row(f"{a.label}: rank {rank} launch/host gaps explained by host events",
            f"{explained:.3f} of {gap:.3f} ms ({explained / gap:.0%})" if gap else "no gap",
            "reported", True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
