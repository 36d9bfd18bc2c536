#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check the steps gapscope finds in light-mode captures that recorded kernels only (no API calls):
real .gapscope files of tests/gpu/lasting.sh part `light` (HF generate(), static cache + torch.compile,
H100), each recording graph launches whole (CUDA events) and some blocks of launches kernel by kernel.

The expected figure comes from the capture itself, not from gapscope's step rules: the traced process
counted its graph launches while recording (`capture_overhead.steps_during`, from the launch callbacks).
Every one of them must be a decode step, found from the graph ids on the kernels and whole replays;
the only other steps are the eager forwards recorded in detailed blocks (prefill), and none is unknown.

Usage: expect_light.py GAPSCOPE_CLI FILE [FILE...]     Exit 0 all match, 1 a mismatch (printed).
"""
import json
import subprocess
import sys


def main():
    cli, files = sys.argv[1], sys.argv[2:]
    bad = 0
    for f in files:
        info = json.loads(subprocess.run([cli, "info", "--json", f], capture_output=True, text=True,
                                         check=True).stdout)
        launches = sum(r["capture_overhead"]["steps_during"] for r in info["ranks"])
        kinds = info["step_kinds"]
        problems = []
        if info["step_source"] != "graph":
            problems.append("steps from %s, not graph launches" % info["step_source"])
        if kinds["decode"] != launches:
            problems.append("%d decode steps for %d graph launches" % (kinds["decode"], launches))
        if kinds["unknown"]:
            problems.append("%d unknown steps" % kinds["unknown"])
        if info["step_count"] != kinds["decode"] + kinds["prefill"]:
            problems.append("%d steps, %d decode + %d prefill" % (info["step_count"], kinds["decode"], kinds["prefill"]))
        print("%s: %s (%d launches; %s)" % (f, "; ".join(problems) or "ok", launches, kinds))
        bad += bool(problems)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
