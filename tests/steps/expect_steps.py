#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check the steps gapscope finds in a Kineto JSON trace against this script's own reading of the raw file.

The expected steps, per process, from the file alone (not gapscope's rules):
  - engine step ranges (user_annotation named step[MODE ...] (SGLang), execute_..._context_..._generation_...
    or execute_new_N_cached_M (vLLM), decode_step): one step per range that launched GPU work, its kind,
    batch and tokens read from the name here;
  - otherwise inside each ProfilerStep#N range (or the whole trace when there is none): one step per CUDA/HIP
    graph launch, and one per embedding lookup (indexSelect*: the first kernel of every forward the
    fixtures write) outside graphs; a ProfilerStep with fewer than two of those is one step. Kinds: a graph
    replay is decode; an eager forward is prefill when it is the first one of a generate() call (the
    python_function range) or is followed by graph replays, decode otherwise; a step of a ProfilerStep
    without forwards is unknown.
A step starts at its first kernel. gapscope-cli's `summary --json` must give the same steps, starts (ns),
kinds, labels, batch and tokens; `info --json` the same counts per kind.
A real trace with a FILE.truth.json beside it (what the workload that wrote it did: `calls` generate()
calls of `new_tokens` tokens each, under tests/gpu/workloads/hf_generate.py) must give calls x new_tokens
steps, the first of each call prefill and the rest decode, each holding one embedding lookup (eager) or
one graph launch (a replayed decode forward): counts and kinds are compared, not starts.

Usage: expect_steps.py GAPSCOPE_CLI FILE [FILE...]     Exit 0 all match, 1 a mismatch (printed).
"""
import gzip
import json
import os
import re
import subprocess
import sys

ENGINE = re.compile(r"^(step\[|execute_(new_|(\d+_)?context_)|decode[_ ]step)", re.I)


def ns(us):
    return int(round(float(us) * 1000))


def parse_name(name):
    """(kind, batch, tokens) from an engine range name."""
    low = name.lower()
    m = re.match(r"step\[(\w+)(.*)\]$", low)
    if m:
        mode, rest = m.group(1), m.group(2)
        f = dict(re.findall(r"(\w+)=(\d+)", rest))
        bs = int(f.get("bs", 0))
        kind = {"decode": "decode", "extend": "prefill", "prefill": "prefill", "mixed": "mixed",
                "target_verify": "verify"}.get(mode, "draft" if mode.startswith("draft") else "unknown")
        tokens = {"decode": bs, "prefill": int(f.get("toks", 0)),
                  "mixed": int(f.get("c_sq", 0)) + int(f.get("g_sq", 0))}.get(kind, 0)
        return kind, bs, tokens
    m = re.match(r"execute_(?:(\d+)_)?context_(\d+)\((?:sq)?(\d+)[^)]*\)_generation_(\d+)\((?:sq)?(\d+)", low)
    if m:
        total, n, nt, g, gt = (int(x) if x else 0 for x in m.groups())
        kind = "mixed" if n and g else "prefill" if n else ("verify" if gt > g else "decode") if g else "unknown"
        return kind, n + g, total or nt + gt
    m = re.match(r"execute_new_(\d+)_cached_(\d+)$", low)
    if m:
        n, c = int(m.group(1)), int(m.group(2))
        return ("decode" if n == 0 else "prefill" if c == 0 else "mixed"), n + c, 0
    return "decode", 0, 0


def expected(path):
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        ev = json.load(f)["traceEvents"]
    xs = [e for e in ev if e.get("ph") == "X"]
    runtime = [e for e in xs if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})]
    kernels = sorted((e for e in xs if e.get("cat") == "kernel"),
                     key=lambda e: (e["args"]["correlation"], e["ts"]))
    graph_corr = {e["args"]["correlation"] for e in runtime if "GraphLaunch" in e["name"]}
    ann = [e for e in xs if e.get("cat") == "user_annotation"]
    gens = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in xs if e.get("cat") == "python_function"
            and e["name"].endswith(": generate")]

    def launched(r):
        t0, t1 = ns(r["ts"]), ns(r["ts"]) + ns(r["dur"])
        cs = {e["args"]["correlation"] for e in runtime if t0 <= ns(e["ts"]) < t1}
        return [k for k in kernels if k["args"]["correlation"] in cs]

    steps = []
    engine = sorted((r for r in ann if ENGINE.match(r["name"])), key=lambda r: r["ts"])
    if engine:
        for r in engine:
            ks = launched(r)
            if ks:
                kind, batch, tokens = parse_name(r["name"])
                steps.append({"start": min(ns(k["ts"]) for k in ks), "kind": kind, "label": r["name"],
                              "batch": batch, "tokens": tokens})
        return steps
    segments = [launched(r) + [r["name"]] for r in sorted((r for r in ann if r["name"].startswith("ProfilerStep#")),
                                                          key=lambda r: r["ts"])]
    if not segments:
        segments = [kernels + [None]]
    for seg in segments:
        label, ks = seg[-1], seg[:-1]
        found = []
        seen_graph = set()
        for k in ks:
            c = k["args"]["correlation"]
            if c in graph_corr:
                if c not in seen_graph:
                    seen_graph.add(c)
                    found.append({"start": ns(k["ts"]), "kind": "decode", "graph": True})
            elif k["name"].startswith("void at::native::indexSelect"):
                found.append({"start": ns(k["ts"]), "kind": "decode", "graph": False})
        for i, s in enumerate(found):
            if s["graph"]:
                continue
            first_of_call = any(g0 <= s["start"] < g1 for g0, g1 in gens) and not any(
                g0 <= p["start"] < g1 and p["start"] < s["start"] for g0, g1 in gens for p in found
                if g0 <= s["start"] < g1)
            if first_of_call or (i + 1 < len(found) and found[i + 1]["graph"]):
                s["kind"] = "prefill"
        if len(found) < 2 and label is not None:
            found = [{"start": min(ns(k["ts"]) for k in ks), "kind": "unknown", "label": label}] if ks else []
        for s in found:
            steps.append({"start": s["start"], "kind": s["kind"], "label": s.get("label", ""), "batch": 0,
                          "tokens": 0})
    return steps


def run(cli, *args):
    out = subprocess.run([cli] + list(args), capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("%s failed: %s" % (" ".join(args), out.stderr))
    return json.loads(out.stdout)


def truth_of(path):
    t = path[:-len(".json.gz")] + ".truth.json" if path.endswith(".json.gz") else None
    if t and os.path.exists(t):
        with open(t) as f:
            return json.load(f)
    return None


def check_truth(cli, path, truth):
    calls, tokens = truth["calls"], truth["new_tokens"]
    want = ["prefill" if i % tokens == 0 else "decode" for i in range(calls * tokens)]
    got = [s["kind"] for s in run(cli, "summary", "--json", "--top", "0", path)["steps"] if s["rank"] == 0]
    # Each forward holds one embedding lookup or one graph launch (the raw file's own count).
    with gzip.open(path, "rt") as f:
        ev = json.load(f)["traceEvents"]
    forwards = sum(1 for e in ev if e.get("cat") == "kernel" and "indexSelect" in e.get("name", "")) + sum(
        1 for e in ev if e.get("cat") == "cuda_runtime" and "GraphLaunch" in e.get("name", ""))
    bad = []
    if forwards != calls * tokens:
        bad.append("the file holds %d embedding lookups and graph launches, the workload ran %d forwards"
                   % (forwards, calls * tokens))
    if got != want:
        bad.append("kinds %s, expected %s" % (got, want))
    print("%-34s %3d steps %s" % (os.path.basename(path), len(want), "ok" if not bad else "MISMATCH"))
    for b in bad:
        print("    " + b)
    return not bad


def check(cli, path):
    truth = truth_of(path)
    if truth:
        return check_truth(cli, path, truth)
    want = expected(path)
    got = [s for s in run(cli, "summary", "--json", "--top", "0", path)["steps"] if s["rank"] == 0]
    info = run(cli, "info", "--json", path)
    bad = []
    if len(got) != len(want):
        bad.append("%d steps, expected %d" % (len(got), len(want)))
    for i, (g, w) in enumerate(zip(got, want)):
        t0 = int(g["start_ns"])
        for key, gv, wv in (("start", t0, w["start"]), ("kind", g["kind"], w["kind"]),
                            ("label", g.get("label", ""), w["label"]), ("batch", g.get("batch", 0), w["batch"]),
                            ("tokens", g.get("tokens", 0), w["tokens"])):
            if gv != wv:
                bad.append("step %d: %s %r, expected %r" % (i, key, gv, wv))
    kinds = {}
    for w in want:
        kinds[w["kind"]] = kinds.get(w["kind"], 0) + 1
    for k, n in info.get("step_kinds", {}).items():
        if n != kinds.get(k, 0):
            bad.append("info step_kinds[%s] = %d, expected %d" % (k, n, kinds.get(k, 0)))
    name = path.rsplit("/", 1)[-1]
    print("%-34s %3d steps %s" % (name, len(want), "ok" if not bad else "MISMATCH"))
    for b in bad[:12]:
        print("    " + b)
    return not bad


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    ok = all([check(sys.argv[1], p) for p in sys.argv[2:]])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
