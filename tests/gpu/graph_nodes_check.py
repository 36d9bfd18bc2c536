#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Judges the captures of tests/gpu/graphnodes.sh: graph_nodes_check.py --cli CLI OUTDIR

From `gapscope-cli summary FILE --by-range --json` of each capture:
  1. graph_ranges: every kernel of a graph replay has its node's build context (capture-time ranges), and
     every node entry the call it was built in ("stream capture") and its type;
  2. per range ("decode > layer K[ > attention|mlp]"), kernels per step of the graph replays equal those
     of the same model run eagerly under the same ranges (eager_ranges);
  3. graph_noranges: a repeating block of as many layers as the model has, and per inferred layer as many
     kernels per step as the ranged graph runs per "layer K";
  4. graph_ranges with --infer-layers: the inferred layers give the same per-layer counts as the stored
     ranges (the kernel-by-kernel comparison runs in ctest on these files: analysis_graph_fixture).
Prints rows `check | measured | target | PASS/FAIL`; exit 1 when a row failed.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

LAYERS = 8


def summary(cli, path, *extra):
    out = subprocess.run([cli, "summary", path, "--by-range", "--json", "--top", "100000", *extra],
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"summary {os.path.basename(path)}: {out.stderr.strip()[:300]}")
    return json.loads(out.stdout)["ranges"]


def per_step(ranges, source=None):
    rows = {}
    for r in ranges["rows"]:
        if source and r["source"] != source:
            continue
        rows[r["path"]] = rows.get(r["path"], 0) + r["median_per_step"]
    return rows


def per_layer(rows):
    out = collections.Counter()
    for path, v in rows.items():
        m = re.match(r"^(?:decode > )?layer (\d+)\b", path)
        if m:
            out[int(m.group(1))] += v
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("outdir")
    a = ap.parse_args()
    rows, failed = [], False

    def row(check, measured, target, ok):
        nonlocal failed
        failed |= not ok
        rows.append(f"graphnodes: {check} | {measured} | {target} | {'PASS' if ok else 'FAIL'}")

    f = lambda name: os.path.join(a.outdir, name + ".gapscope")
    try:
        g = summary(a.cli, f("graph_ranges"))
        row("graph kernels with their node's build context",
            f"{g['graph_kernels_with_build_context']} of {g['graph_kernels']}", "all, > 0",
            g["graph_kernels"] > 0 and g["graph_kernels_with_build_context"] == g["graph_kernels"])
        # torch.cuda.graph builds by stream capture: every node says so, and has a type (kernel, memset...).
        nodes = g.get("graph_nodes", {})
        calls, types = nodes.get("by_call", {}), nodes.get("by_type", {})
        row("graph nodes with the call and type they were built by",
            f"{nodes.get('entries', 0)} entries; calls {calls}; types {types}", "all: stream capture, typed",
            nodes.get("entries", 0) > 0 and set(calls) == {"stream capture"} and "" not in types
            and types.get("kernel", 0) > 0)
        e = summary(a.cli, f("eager_ranges"))
        gs = {p: v for p, v in per_step(g, "capture").items() if "layer" in p}
        es = {p: v for p, v in per_step(e, "launch").items() if "layer" in p}
        diff = sorted(p for p in set(gs) | set(es) if abs(gs.get(p, 0) - es.get(p, 0)) > 1e-6)
        detail = "; ".join(f"{p}: graph {gs.get(p, 0):.2f} eager {es.get(p, 0):.2f}" for p in diff[:3])
        row("kernels per step per range, graph replay vs eager",
            f"{len(gs)} ranges, {len(diff)} differ" + (f" ({detail})" if detail else ""),
            "equal, >= 8 layers", not diff and len(per_layer(gs)) == LAYERS)
        n = summary(a.cli, f("graph_noranges"))
        blocks = [b for b in n["inferred_layer_blocks"] if b["period"]]
        layers = max((b["layers"] for b in blocks), default=0)
        nl = per_layer(per_step(n, "inferred"))
        gl = per_layer(gs)
        row("inferred layers without ranges", f"{layers} layers, block of "
            f"{max((b['period'] for b in blocks), default=0)} kernels; per layer {dict(sorted(nl.items()))}",
            f"{LAYERS} layers, per layer as with ranges {dict(sorted(gl.items()))}",
            layers == LAYERS and all(abs(nl[k] - gl[k]) < 1e-6 for k in range(LAYERS)))
        i = summary(a.cli, f("graph_ranges"), "--infer-layers")
        il = per_layer(per_step(i, "inferred"))
        row("inferred layers vs stored ranges, same capture", f"per layer {dict(sorted(il.items()))}",
            "as the stored ranges", all(abs(il[k] - gl[k]) < 1e-6 for k in range(LAYERS)))
    except Exception as ex:  # a missing file or a failed summary is a failed row, not a crash
        row("summaries", str(ex)[:300], "ran", False)
    print("\n".join(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
