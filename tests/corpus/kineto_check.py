#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks gapscope-cli's import of Kineto (torch.profiler) traces against an independent reading.

Each file is read here with Python's json (times parsed as exact decimals, microseconds to integer
nanoseconds rounded half away from zero, negative durations counted as 0) and compared with what
`gapscope-cli info --json` and `convert FILE OUT.json` (the Chrome-trace export of the imported events)
report:
  - kernel events (cat kernel, or another accelerator's device events: mtia_ccp_events): count, total time;
  - memcpy and memset events (gpu_memcpy/Memcpy, gpu_memset/Memset): counts, total times;
  - the rank: distributedInfo.rank, else 0; several files of one job (names differing only in their rank
    number) opened together: their distributedInfo ranks, or 0..N-1 in file order;
  - ProfilerStep#N ranges (user_annotation, and their gpu_user_annotation copies): names, start and
    duration, relative to the first one;
  - the steps: one per engine step range (SGLang step[...], vLLM execute_..., decode_step) that launched
    GPU work, else one per ProfilerStep#N range that launched GPU work (none of the corpus files is a
    decode loop inside one), with their kinds (read from the range's name; unknown for ProfilerSteps);
    a file with neither is a training loop when it has Optimizer.step ranges: then as many steps as
    Optimizer.step ranges, give or take the iterations its start and end cut (the period rule), kind
    unknown; otherwise no step count is expected;
  - a file that is not a Kineto trace (no traceEvents array: a PyTorch execution trace, {}) or holds
    nothing to import: gapscope-cli must refuse it (non-zero exit, naming the file).

check_kineto(path) returns a list of (what, expected, got) mismatches; check_kineto_ranks(paths) the
same for files opened together. Usage: kineto_check.py [--cli PATH] FILE_OR_DIR...  (exit 1 on any
mismatch). The CLI is taken from --cli, $GAPSCOPE_CLI, or build/dev/app/gapscope-cli.
"""
import argparse
import decimal
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

CLI = None
STEP = re.compile(r"ProfilerStep#\d+$")
KERNEL_CATS = {"kernel", "Kernel", "mtia_ccp_events"}
MEMCPY_CATS = {"gpu_memcpy", "Memcpy"}
MEMSET_CATS = {"gpu_memset", "Memset"}
# Categories that the importer keeps as events (anything else is skipped or counted as unknown).
# Host ranges: on the thread's CPU lane, by kind (gapscope-cli info --json: host_events). A file with
# nothing but these is still refused: they are not among IMPORTED_CATS.
HOST_CATS = {"cpu_op": "cpu_op", "Operator": "cpu_op", "python_function": "python_function",
             "python": "python_function"}
IMPORTED_CATS = KERNEL_CATS | MEMCPY_CATS | MEMSET_CATS | {
    "cuda_runtime", "cuda_driver", "Runtime", "Driver", "cuda_sync", "user_annotation", "gpu_user_annotation",
    "mtia_runtime", "glow_runtime", "xpu_runtime", "privateuse1_runtime", "privateuse1_driver"}


def cli():
    return CLI or os.environ.get("GAPSCOPE_CLI") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "dev", "app", "gapscope-cli")


def load_raw(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        return json.load(f, parse_float=decimal.Decimal)


def ns(us):
    """Kineto microseconds (number or decimal) to integer nanoseconds, rounded half away from zero."""
    v = decimal.Decimal(str(us)) * 1000
    return int(v.quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def skipped(path):
    """Why a file has no independent reading (a file cut short: Python cannot read it), or None."""
    try:
        load_raw(path)
    except EOFError:
        return "the gzip stream is cut short"
    except json.JSONDecodeError as e:
        if e.pos >= len(e.doc.rstrip()):
            return "the JSON text is cut short"
    return None


def expected_of(doc):
    """What an import of this document must show, or None when it is not importable."""
    if isinstance(doc, list):
        events = doc
    elif isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        events = doc["traceEvents"]
    else:
        return None
    e = {"kernel": [0, 0], "memcpy": [0, 0], "memset": [0, 0], "steps": [], "imported": 0,
         "host": {"cpu_op": 0, "python_function": 0}}
    for ev in events:
        if not isinstance(ev, dict) or ev.get("ph") != "X" or "ts" not in ev:
            continue
        cat = ev.get("cat")
        dur = max(0, ns(ev.get("dur", 0)))
        if cat in IMPORTED_CATS:
            e["imported"] += 1
        for kind, cats in (("kernel", KERNEL_CATS), ("memcpy", MEMCPY_CATS), ("memset", MEMSET_CATS)):
            if cat in cats:
                e[kind][0] += 1
                e[kind][1] += dur
        if cat in HOST_CATS:  # host ranges on the thread's CPU lane
            e["host"][HOST_CATS[cat]] += 1
        name = ev.get("name")
        if cat in ("user_annotation", "gpu_user_annotation") and isinstance(name, str) and STEP.match(name):
            e["steps"].append((name, ns(ev["ts"]), dur))
    info = doc.get("distributedInfo") if isinstance(doc, dict) else None
    e["rank"] = info.get("rank") if isinstance(info, dict) and isinstance(info.get("rank"), int) else None
    base = doc.get("baseTimeNanoseconds", 0) if isinstance(doc, dict) else 0
    e["base"] = int(base) if isinstance(base, (int, decimal.Decimal)) else 0
    return e


ENGINE = re.compile(r"^(step\[|execute_(new_|(\d+_)?context_)|decode[_ ]step)", re.I)
OPTIMIZER = re.compile(r"^Optimizer\.step#")


def expected_steps(doc):
    """(count, kinds, slack) of the steps the file's annotations say it has, or None to expect nothing."""
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    xs = [e for e in events if isinstance(e, dict) and e.get("ph") == "X" and "ts" in e]
    launches = sorted((ns(e["ts"]), ns(e.get("dur", 0)), e["args"]["correlation"]) for e in xs
                      if e.get("cat") in ("cuda_runtime", "cuda_driver", "Runtime", "Driver")
                      and isinstance(e.get("args"), dict) and "correlation" in e["args"])
    gpu = {e["args"]["correlation"] for e in xs if e.get("cat") in KERNEL_CATS | MEMCPY_CATS | MEMSET_CATS
           and isinstance(e.get("args"), dict) and "correlation" in e["args"]}

    def launched(r):
        t0 = ns(r["ts"])
        t1 = t0 + max(0, ns(r.get("dur", 0)))
        return any(t0 <= t < t1 and c in gpu for t, _, c in launches)

    ann = [e for e in xs if e.get("cat") == "user_annotation" and isinstance(e.get("name"), str)]
    engine = [r for r in ann if ENGINE.match(r["name"]) and launched(r)]
    if engine:
        kinds = {}
        for r in engine:
            n = r["name"].lower()
            k = "decode" if "decode" in n else "prefill" if "extend" in n or "prefill" in n else "unknown"
            kinds[k] = kinds.get(k, 0) + 1
        return len(engine), kinds, 0
    steps = [r for r in ann if STEP.match(r["name"]) and launched(r)]
    if steps:
        return len(steps), {"unknown": len(steps)}, 0
    opt = [r for r in ann if OPTIMIZER.match(r["name"])]
    if opt:
        return len(opt), {"unknown": len(opt)}, 2
    return None


def run(args):
    return subprocess.run([cli()] + args, capture_output=True, text=True)


def exported(paths):
    """The imported events, as gapscope-cli's Chrome-trace export writes them."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "export.json")
        r = run(["convert"] + list(paths) + [out])
        if r.returncode != 0:
            return None, r.stderr.strip()
        with open(out) as f:
            doc = json.load(f, parse_float=decimal.Decimal)
    return (doc["traceEvents"] if isinstance(doc, dict) else doc), None


def check_kineto(path):
    mismatches = []
    if skipped(path):
        return []
    try:
        doc = load_raw(path)
    except ValueError:  # malformed JSON: gapscope must refuse it too, naming the file
        doc = None
    exp = expected_of(doc) if doc is not None else None
    r = run(["info", "--json", path])
    if exp is None or exp["imported"] == 0:
        got = "exit %d: %s" % (r.returncode, (r.stderr.strip() or r.stdout[:80]))
        refused = r.returncode != 0 and os.path.basename(path) in r.stderr
        if not refused:
            mismatches.append(("not importable (refused, naming the file)", "non-zero exit", got))
        return mismatches
    if r.returncode != 0:
        return [("import", "exit 0", "exit %d: %s" % (r.returncode, r.stderr.strip()))]
    info = json.loads(r.stdout)
    for kind in ("kernel", "memcpy", "memset"):
        if info["events"].get(kind) != exp[kind][0]:
            mismatches.append((kind + " count", exp[kind][0], info["events"].get(kind)))
    host = info.get("host_events", {})
    for kind, n in exp["host"].items():
        if host.get(kind, 0) != n:
            mismatches.append((kind + " host events", n, host.get(kind, 0)))
    want_steps = expected_steps(doc)
    if want_steps is not None:
        count, kinds, slack = want_steps
        if abs(info["step_count"] - count) > slack:
            mismatches.append(("steps" + (" (+-%d)" % slack if slack else ""), count, info["step_count"]))
        got_kinds = {k: n for k, n in info.get("step_kinds", {}).items() if n}
        if not slack and got_kinds != kinds:
            mismatches.append(("step kinds", kinds, got_kinds))
        if slack and set(got_kinds) - set(kinds):
            mismatches.append(("step kinds", sorted(kinds), sorted(got_kinds)))
    if info["kernel_time_ns"] != exp["kernel"][1]:
        mismatches.append(("kernel time ns", exp["kernel"][1], info["kernel_time_ns"]))
    ranks = [x["rank"] for x in info["ranks"]]
    want_rank = exp["rank"] if exp["rank"] is not None else 0
    if ranks != [want_rank]:
        mismatches.append(("ranks", [want_rank], ranks))
    events, err = exported([path])
    if events is None:
        return mismatches + [("convert to Chrome JSON", "exit 0", err)]
    got = {"memcpy": [0, 0], "memset": [0, 0]}
    steps = []
    for ev in events:
        if ev.get("ph") != "X":
            continue
        if ev.get("cat") in got:
            got[ev["cat"]][0] += 1
            got[ev["cat"]][1] += ns(ev["dur"])
        if ev.get("cat") == "nvtx" and STEP.match(str(ev.get("name"))):
            steps.append((ev["name"], ns(ev["ts"]), ns(ev["dur"])))
    for kind in ("memcpy", "memset"):
        if got[kind][1] != exp[kind][1]:
            mismatches.append((kind + " time ns", exp[kind][1], got[kind][1]))
    # The export's times start at the trace's first event: compare the ranges relative to the first one.
    want = sorted(exp["steps"], key=lambda s: (s[1], s[0]))
    have = sorted(steps, key=lambda s: (s[1], s[0]))
    if [s[0] for s in want] != [s[0] for s in have]:
        mismatches.append(("ProfilerStep# ranges", [s[0] for s in want], [s[0] for s in have]))
    elif want:
        rel = lambda l: [(n, t - l[0][1], d) for n, t, d in l]
        if rel(want) != rel(have):
            mismatches.append(("ProfilerStep# start/duration ns", rel(want), rel(have)))
    return mismatches


def check_kineto_ranks(paths):
    """Files of one job opened together: one rank each, distributedInfo's when unique, else in order."""
    recorded = [expected_of(load_raw(p))["rank"] for p in paths]
    if None not in recorded and len(set(recorded)) == len(recorded):
        want = sorted(recorded)
    else:
        want = list(range(len(paths)))
    r = run(["info", "--json"] + list(paths))
    if r.returncode != 0:
        return [("import together", "exit 0", "exit %d: %s" % (r.returncode, r.stderr.strip()))]
    got = sorted(x["rank"] for x in json.loads(r.stdout)["ranks"])
    return [] if got == want else [("ranks of %d files together" % len(paths), want, got)]


def job_groups(paths):
    """Files whose names differ only in a rank number ("x_rank-0.json.gz", "x_rank-1.json.gz")."""
    groups = {}
    for p in paths:
        key = re.sub(r"rank[-_]?\d+", "rank#", os.path.basename(p))
        if key != os.path.basename(p):
            groups.setdefault((os.path.dirname(p), key), []).append(p)
    return [sorted(g) for g in groups.values() if len(g) > 1]


def is_json_trace(path):
    return (path.endswith(".json") or path.endswith(".json.gz")) and not path.endswith(".totals.json")


def main(argv=None):
    global CLI
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", help="gapscope-cli to check (default: $GAPSCOPE_CLI or build/dev/app/gapscope-cli)")
    ap.add_argument("paths", nargs="+", help="Kineto files, or folders of them (*.json, *.json.gz)")
    a = ap.parse_args(argv)
    CLI = a.cli
    files = []
    for p in a.paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p) if is_json_trace(f))
        else:
            files.append(p)
    failed = 0
    skips = 0
    for f in files:
        why = skipped(f)
        if why:
            skips += 1
            print("skip %s (%s: imported with a warning, see the unit tests)" % (f, why))
            continue
        m = check_kineto(f)
        failed += bool(m)
        print("%s %s" % ("FAIL" if m else "ok  ", f))
        for what, want, got in m:
            print("     %s: expected %s, got %s" % (what, want, got))
    for g in job_groups(files):
        m = check_kineto_ranks(g)
        failed += bool(m)
        print("%s %s (together)" % ("FAIL" if m else "ok  ", " ".join(g)))
        for what, want, got in m:
            print("     %s: expected %s, got %s" % (what, want, got))
    checked = len(files) - skips + len(job_groups(files))
    print("%d passed, %d failed" % (checked - failed, failed) + (", %d skipped" % skips if skips else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
