#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Kineto flows wherever they are in the file: a real trace against copies of it with the ac2g flow events
moved to the end of traceEvents (what a vLLM trace on B200 does: its flow starts and ends come after all
the events they connect).

From FILE (a corpus trace, read-only) this writes into WORKDIR:
  - moved.json.gz: the same events, the ac2g flow events ("ph" s/f) last, in their order;
  - stripped.json.gz: the original order, the correlation left out of the GPU events' args, so that
    only the flows can give it back;
  - stripped_moved.json.gz: both.
Each copy must import as its pair does (original / moved, stripped / stripped_moved): the counters
import_unmatched_flows and import_flow_correlations (`info --json`), the kernel table (`summary --json`)
and the launch flows of the Chrome-trace export (`convert`: one per kernel whose launch call is found).
Independently of gapscope, the flow correlations of the stripped copies must be the GPU events that an
ac2g flow end names (same pid, tid and ts), and their launch flows those of the original file.

Usage: kineto_flow_order.py --cli PATH FILE WORKDIR (exit 77 without FILE: no corpus here).
"""
import collections
import gzip
import json
import os
import sys

from derivedcheck import SKIP, Checks, arguments, run, run_json

GPU = {"kernel", "gpu_memcpy", "gpu_memset"}


def is_flow(e):
    return e.get("cat") == "ac2g" and e.get("ph") in ("s", "f")


def write(path, doc, events):
    out = dict(doc)
    out["traceEvents"] = events
    with gzip.open(path, "wt") as f:
        json.dump(out, f)


def variants(src, workdir):
    with gzip.open(src, "rt") as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    flows = [e for e in events if is_flow(e)]
    moved = [e for e in events if not is_flow(e)] + flows
    stripped = []
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in GPU and "correlation" in e.get("args", {}):
            e = dict(e, args={k: v for k, v in e["args"].items() if k != "correlation"})
        stripped.append(e)
    stripped_moved = [e for e in stripped if not is_flow(e)] + flows
    paths = {}
    for name, evs in (("moved", moved), ("stripped", stripped), ("stripped_moved", stripped_moved)):
        paths[name] = os.path.join(workdir, name + ".json.gz")
        write(paths[name], doc, evs)
    # The GPU events an ac2g flow end names: where the flows alone give a kernel its correlation.
    ends = {(e["pid"], e["tid"], e["ts"]) for e in flows if e["ph"] == "f"}
    named = sum(1 for e in events if e.get("ph") == "X" and e.get("cat") in GPU
                and (e["pid"], e["tid"], e["ts"]) in ends)
    return paths, named, len(flows)


def figures(cli, path, workdir):
    info = run_json(cli, "info", "--json", path)
    counters = collections.Counter()
    for c in info["counters"]:
        counters[c["name"]] += c["value"]
    kernels = run_json(cli, "summary", "--json", "--top", "1000000000", path)["kernels"]
    chrome = os.path.join(workdir, "chrome.json")
    run(cli, "convert", path, chrome)
    with open(chrome) as f:
        exported = json.load(f)
    exported = exported["traceEvents"] if isinstance(exported, dict) else exported
    return {
        "import_unmatched_flows": counters["import_unmatched_flows"],
        "import_flow_correlations": counters["import_flow_correlations"],
        "kernel_count": info["kernel_count"],
        "kernels": kernels,
        "launch_flows": sum(1 for e in exported if e.get("ph") == "s" and e.get("cat") == "launch"),
    }


def main():
    a = arguments("Kineto flows moved to the end of a real trace import as where they were.")
    if not a:
        return SKIP
    paths, named, flows = variants(a.file, a.workdir)
    got = {"original": figures(a.cli, a.file, a.workdir)}
    for name, path in paths.items():
        got[name] = figures(a.cli, path, a.workdir)
    checks = Checks()
    expect = checks.expect
    print("%s: %d ac2g flow events, %d GPU events named by a flow end" % (a.file, flows, named))
    for base, other in (("original", "moved"), ("stripped", "stripped_moved")):
        for key in ("import_unmatched_flows", "import_flow_correlations", "kernel_count", "launch_flows"):
            expect("%s %s (as %s)" % (other, key, base), got[base][key], got[other][key])
        expect("%s kernel table (as %s)" % (other, base), got[base]["kernels"] == got[other]["kernels"], True)
    for name in ("stripped", "stripped_moved"):
        expect("%s import_flow_correlations (GPU events a flow names)" % name, named,
               got[name]["import_flow_correlations"])
        expect("%s launch_flows (as the original file)" % name, got["original"]["launch_flows"],
               got[name]["launch_flows"])
    return checks.status()


if __name__ == "__main__":
    sys.exit(main())
