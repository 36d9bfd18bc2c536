#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`diff --gate` against its targets on synthetic pairs of one workload (model/analysis/diffverdict.h):
  - false alarms: PAIRS pairs of traces that differ only in their seed; at most 1 may exit 1 (regression);
  - detection: the same pairs with B's kernels of one class (rotating over CLASSES) 3% slower; at least
    PAIRS - 1 must exit 1 naming that class's bar;
  - not comparable (different rank counts) exits 2 and says why in the JUnit error;
  - every --junit report validates against junit.xsd (xmllint, when installed) and every --markdown has its
    verdict line.
Prints one line per pair and a summary; exit 0 when the targets are met, 1 otherwise.

Usage: check_gate.py --cli gapscope-cli --work DIR [--pairs 20] [--ranks 4] [--steps 100] [--kernels 300]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

CLASSES = ["routed_experts", "linear", "attention_core", "other"]


def run(args, ok=(0,)):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode not in ok:
        raise RuntimeError(f"{' '.join(args)}: exit {p.returncode}: {p.stderr.strip()[:300]}")
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--kernels", type=int, default=300)
    ap.add_argument("--slow", type=float, default=1.03)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    xsd = os.path.join(os.path.dirname(os.path.abspath(__file__)), "junit.xsd")
    xmllint = shutil.which("xmllint")
    shape = ["--ranks", str(a.ranks), "--steps", str(a.steps), "--kernels-per-step", str(a.kernels)]
    problems = []
    false_alarms, detected = 0, 0
    validated = 0

    def trace(name, *args):
        path = os.path.join(a.work, name)
        run([a.cli, "synth", *shape, *args, "-o", path])
        return path

    def gate(fa, fb, tag):
        junit, md = os.path.join(a.work, f"{tag}.xml"), os.path.join(a.work, f"{tag}.md")
        p = run([a.cli, "diff", "--gate", "--json", "--junit", junit, "--markdown", md, fa, fb], ok=(0, 1, 2))
        doc = json.loads(p.stdout)
        nonlocal validated
        if xmllint:
            v = subprocess.run([xmllint, "--noout", "--schema", xsd, junit], capture_output=True, text=True)
            if v.returncode != 0:
                problems.append(f"{tag}: the JUnit report does not validate: {v.stderr.strip()[:300]}")
            validated += 1
        if "### gapscope diff:" not in open(md).read():
            problems.append(f"{tag}: the Markdown has no verdict line")
        return p.returncode, doc

    for i in range(a.pairs):
        seed_a, seed_b = 1000 + 2 * i, 1001 + 2 * i
        cls = CLASSES[i % len(CLASSES)]
        fa = trace(f"a{i}.gapscope", "--seed", str(seed_a))
        fb = trace(f"b{i}.gapscope", "--seed", str(seed_b))
        fs = trace(f"s{i}.gapscope", "--seed", str(seed_b), "--slow-class", cls, "--slow-factor", str(a.slow))
        rc, doc = gate(fa, fb, f"same{i}")
        false_alarms += rc == 1
        rs, ds = gate(fa, fs, f"slow{i}")
        hit = rs == 1 and cls in ds["gate"]["regressions"]
        detected += hit
        v = {x["name"]: x for x in ds["verdicts"] if x["kind"] == "bar"}.get(cls, {})
        print(f"pair {i:2d}: same seed {seed_a}/{seed_b}: exit {rc} {doc['gate']['regressions']}; "
              f"{cls} x{a.slow}: exit {rs} {ds['gate']['regressions']} "
              f"(delta {v.get('delta_ms', 0):+.4f} ms, interval {v.get('ci_low_ms', 0):+.4f}..{v.get('ci_high_ms', 0):+.4f},"
              f" threshold {v.get('threshold_ms', 0):.4f}){'' if hit else '  MISSED'}")
    # Not comparable: rank counts differ.
    other = os.path.join(a.work, "other_ranks.gapscope")
    run([a.cli, "synth", "--ranks", str(a.ranks + 1), "--steps", str(a.steps), "--kernels-per-step", str(a.kernels),
         "-o", other])
    rc, doc = gate(os.path.join(a.work, "a0.gapscope"), other, "notcompared")
    junit = open(os.path.join(a.work, "notcompared.xml")).read()
    if rc != 2 or doc["gate"]["result"] != "not compared" or "<error" not in junit:
        problems.append(f"different rank counts: exit {rc}, result {doc['gate']['result']} (want 2, not compared)")
    if false_alarms > 1:
        problems.append(f"{false_alarms} false regressions in {a.pairs} pairs (at most 1)")
    if detected < a.pairs - 1:
        problems.append(f"{detected} of {a.pairs} slowdowns of {a.slow}x detected (at least {a.pairs - 1})")
    print(f"false regressions: {false_alarms} of {a.pairs}; {a.slow}x slowdowns detected: {detected} of {a.pairs}; "
          f"not comparable: exit {rc}; JUnit reports validated: {validated}"
          + ("" if xmllint else " (xmllint not installed: not validated)"))
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
