#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How much of the launch/host gap time the raw Kineto file could explain, gap by gap.

For every launch/host gap of every complete step window (the windows from `gapscope-cli analyze
--json`, the gaps recomputed from the raw JSON with host_check.py's rule), every moment goes to the
first class that covers it:
  a  explained: gapscope's rule (host_check.py): an imported host event (cpu_op, python_function,
     user_annotation, cuda_runtime/cuda_driver) on the launching thread, the step's own range left out;
  b  some other raw ph=X event on the launching thread (same pid and tid as the launching API call,
     numeric strings read as numbers), of ANY non-GPU category (also ones gapscope does not import:
     Trace, overhead, unknown ones), the step's own range left out by the same rule;
  c  only a raw host event on another thread of the same process (step's own range left out);
  d  nothing on that process's threads but its step-level ranges (d_step: the part inside such a range;
     d_pid: the part inside a host event of another pid that is not step-level either, e.g. Kineto's
     overhead events at pid -1; the two overlap);
  e  the gap's next GPU event has no recorded launch (no API call with its correlation id).
The check passes when a >= MIN_COVERED x (a + b): of the gap time where the raw file has events on the
launching thread, at least that share is explained. Also checks a against analyze's explained_ms,
ac2g flow starts against the launching thread chosen by correlation, and tid/pid spellings.

Usage: host_coverage.py GAPSCOPE_CLI FILE [--min-covered 0.9] [--top 5] [--json OUT]
Exit 0 when the check passes, 1 otherwise, 77 when FILE is not there.
"""
import bisect
import decimal
import gzip
import importlib.util
import json
import os
import subprocess
import sys

_spec = importlib.util.spec_from_file_location(
    "host_check", os.path.join(os.path.dirname(os.path.abspath(__file__)), "host_check.py"))
host_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(host_check)
ns, blocking = host_check.ns, host_check.blocking

# GPU-side categories (the device's activity, not a host thread's).
GPU_ACTIVITY = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset", "mtia_ccp_events"}
GPU_SIDE = GPU_ACTIVITY | {"gpu_user_annotation", "cuda_sync"}
# Launch API calls (gapscope's kinetoevents.cpp classify(): kRuntime / kDriver).
API_CATS = {"cuda_runtime": "cuda_runtime", "Runtime": "cuda_runtime", "xpu_runtime": "cuda_runtime",
            "mtia_runtime": "cuda_runtime", "glow_runtime": "cuda_runtime", "privateuse1_runtime": "cuda_runtime",
            "cuda_driver": "cuda_driver", "Driver": "cuda_driver", "privateuse1_driver": "cuda_driver"}
CPU_CATS = host_check.CPU_CATS
LONG = 1000000  # events longer than this (ns) are kept aside instead of searched by start


def load(path):
    """The trace events; a truncated file gives the events before the cut (as gapscope reads it)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        text = f.read()
    try:
        doc = json.loads(text, parse_float=decimal.Decimal)
        if isinstance(doc, list):
            return {"traceEvents": doc}, False
        return doc, False
    except ValueError:
        pass
    k = text.find('"traceEvents"')
    k = text.find("[", k if k >= 0 else 0)
    dec = json.JSONDecoder(parse_float=decimal.Decimal)
    events, i = [], k + 1
    while True:
        while i < len(text) and text[i] in " \t\r\n,":
            i += 1
        try:
            e, i = dec.raw_decode(text, i)
        except ValueError:
            break
        events.append(e)
    base = 0
    m = text.find('"baseTimeNanoseconds"')
    if m >= 0:
        try:
            base = int(text[text.find(":", m) + 1:].lstrip().split(",")[0].split("}")[0])
        except ValueError:
            pass
    return {"traceEvents": events, "baseTimeNanoseconds": base}, True


def norm(v):
    """pid/tid as the same thread whatever the spelling: "832" and 832 are one."""
    if isinstance(v, str):
        s = v.strip()
        if s.lstrip("-").isdigit():
            return int(s)
        return s
    if isinstance(v, decimal.Decimal) and v == int(v):
        return int(v)
    return v


class Raw:
    def __init__(self, doc):
        base = int(doc.get("baseTimeNanoseconds", 0) or 0)
        self.gpu, self.api_by_corr, self.syncs = [], {}, []
        self.imported = {}  # (pid, tid) -> [(t0, t1, prio, name, kind)], host_check's view (gapscope's)
        self.host = []  # every raw non-GPU ph=X event: (t0, t1, pid, tid, cat, name, rawpid, rawtid, ts, dur)
        self.flow_start = {}  # ac2g 's' id -> (pid, tid, t)
        flow_end = {}  # ac2g 'f' (pid, tid, t) -> id
        self.spellings = set()  # (kind, raw type) of host pids/tids
        for e in doc["traceEvents"]:
            if not isinstance(e, dict) or "ts" not in e:
                continue
            ph, cat = e.get("ph"), e.get("cat", "")
            if ph in ("s", "f") and cat == "ac2g":
                t = ns(e["ts"]) + base
                if ph == "s":
                    self.flow_start[int(e.get("id", 0) or 0)] = (norm(e.get("pid")), norm(e.get("tid")), t)
                else:
                    flow_end[(norm(e.get("pid")), norm(e.get("tid")), t)] = int(e.get("id", 0) or 0)
                continue
            if ph != "X":
                continue
            name, args = e.get("name", ""), e.get("args") or {}
            t0 = ns(e["ts"]) + base
            t1 = t0 + max(0, ns(e.get("dur", 0)))
            if cat in GPU_ACTIVITY:
                dev = args.get("device", e.get("pid"))
                stream = args.get("stream", e.get("tid"))
                self.gpu.append([t0, t1, int(args.get("correlation", 0) or 0), (norm(dev), norm(stream)),
                                 (norm(e.get("pid")), norm(e.get("tid")))])
                continue
            if cat in GPU_SIDE:
                if cat == "cuda_sync" and name != "Stream Wait Event":
                    self.syncs.append((t0, t1))
                continue
            pid, tid = norm(e.get("pid")), norm(e.get("tid"))
            self.spellings.add(("pid", type(e.get("pid")).__name__))
            self.spellings.add(("tid", type(e.get("tid")).__name__))
            self.host.append((t0, t1, pid, tid, cat, name, e.get("pid"), e.get("tid"), e["ts"], e.get("dur", 0)))
            thread = (pid, tid)
            if cat in API_CATS:
                corr = int(args.get("correlation", 0) or 0)
                runtime = API_CATS[cat] == "cuda_runtime"
                if corr not in self.api_by_corr or (runtime and not self.api_by_corr[corr][3]):
                    self.api_by_corr[corr] = (t0, t1, thread, runtime, pid, tid, name)
                self.imported.setdefault(thread, []).append((t0, t1, 2, name, API_CATS[cat]))
                if blocking(name):
                    self.syncs.append((t0, t1))
            elif cat in CPU_CATS:
                self.imported.setdefault(thread, []).append((t0, t1, 1, name, CPU_CATS[cat]))
            elif cat == "user_annotation":
                self.imported.setdefault(thread, []).append((t0, t1, 0, name, "user_annotation"))
        # ac2g flow ends name a GPU event's correlation when its args do not (gapscope's addFlow).
        self.flow_corr = 0
        for g in self.gpu:
            if g[2] == 0:
                fid = flow_end.get((g[4][0], g[4][1], g[0]))
                if fid:
                    g[2] = fid
                    self.flow_corr += 1
        self.imported_index = host_check.index(self.imported)
        # Every host event, by (pid, tid) and by pid: starts sorted, plus the long ones aside.
        self.by_thread, self.by_pid = {}, {}
        for h in self.host:
            self.by_thread.setdefault((h[2], h[3]), []).append(h)
            self.by_pid.setdefault(h[2], []).append(h)
        self.by_thread = {k: self._index(v) for k, v in self.by_thread.items()}
        self.by_pid = {k: self._index(v) for k, v in self.by_pid.items()}
        self.all_host = self._index(self.host)

    @staticmethod
    def _index(evs):
        short = sorted((h for h in evs if h[1] - h[0] <= LONG), key=lambda h: h[0])
        return ([h[0] for h in short], short, [h for h in evs if h[1] - h[0] > LONG])

    @staticmethod
    def overlapping(indexed, a, b):
        if indexed is None:
            return []
        starts, short, long = indexed
        lo, hi = bisect.bisect_left(starts, a - LONG), bisect.bisect_left(starts, b)
        return [h for h in short[lo:hi] + long if h[1] > a and h[0] < b and h[1] > h[0]]

    def gaps(self, windows):
        """host_check.analyse's gaps: (window, a, b, corr, launch, scope) per launch/host gap."""
        by_stream = {}
        for g in sorted(self.gpu, key=lambda g: g[0]):
            by_stream.setdefault(g[3], []).append(g)
        pieces = []
        for evs in by_stream.values():
            end = None
            for (t0, t1, corr, _, _) in evs:
                start = t0 if end is None else min(max(t0, end), t1)
                end = t1 if end is None else max(end, t1)
                pieces.append((start, t1, corr))
        pieces.sort(key=lambda p: p[0])
        merged = []
        for s in sorted(self.syncs):
            if s[1] <= s[0]:
                continue
            if merged and s[0] <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], s[1]))
            else:
                merged.append(s)
        out = []
        for wi, (w0, w1) in enumerate(windows):
            inside = [(max(p[0], w0), min(p[1], w1), p[2]) for p in pieces if p[1] > w0 and p[0] < w1]
            inside = [p for p in inside if p[0] <= p[1]]
            if not inside:
                continue
            inside.sort(key=lambda p: p[0])
            la, lb = self.api_by_corr.get(inside[0][2]), self.api_by_corr.get(inside[-1][2])
            scope = None
            if la and lb:
                scope = (min(la[0], lb[0]), max(la[1], lb[1]), la != lb)
            t = w0
            for (s, e, corr) in inside:
                if s > t:
                    launch = self.api_by_corr.get(corr)
                    a, b = t, s
                    for (s0, s1) in merged:
                        if s1 <= t:
                            continue
                        if s0 < s and (launch is None or launch[0] >= max(t, s0)):
                            b = max(t, s0)
                        break
                    if b > a:
                        out.append((wi, a, b, corr, launch, scope))
                t = max(t, e)
        return out


def step_level(h, scope):
    """gapscope's stepLevel() for any raw host event (API calls never; one launch: only ranges)."""
    if not scope or h[4] in API_CATS:
        return False
    if not scope[2] and h[4] != "user_annotation":
        return False
    return h[0] <= scope[0] and h[1] >= scope[1]


def union(intervals, a, b):
    out = []
    for (x, y) in sorted((max(a, x), min(b, y)) for (x, y) in intervals):
        if y <= x:
            continue
        if out and x <= out[-1][1]:
            out[-1][1] = max(out[-1][1], y)
        else:
            out.append([x, y])
    return out


def minus(spans, cover):
    """spans minus the union `cover` (both sorted, disjoint)."""
    out, j = [], 0
    for (x, y) in spans:
        t = x
        while j < len(cover) and cover[j][1] <= t:
            j += 1
        k = j
        while t < y:
            if k < len(cover) and cover[k][0] < y:
                if cover[k][0] > t:
                    out.append([t, cover[k][0]])
                t = max(t, cover[k][1])
                k += 1
            else:
                out.append([t, y])
                break
    return out


def length(spans):
    return sum(y - x for (x, y) in spans)


def classify(raw, gap):
    wi, a, b, corr, launch, scope = gap
    res = {"window": wi, "start_ns": a, "end_ns": b, "ms": (b - a) / 1e6, "corr": corr,
           "a": 0, "b": 0, "c": 0, "d": 0, "d_step": 0, "d_pid": 0, "e": 0}
    if launch is None:
        res["e"] = b - a
        res["why_e"] = "no correlation" if corr == 0 else "correlation not among API calls"
        return res, [], []
    res["launch"] = {"name": launch[6], "pid": launch[4], "tid": launch[5], "ts_ns": launch[0]}
    # a: gapscope's rule, through host_check.attribute (exact against gapscope), and as a union.
    rows = {}
    why = {"queued": 0, "other_threads": 0, "nothing": 0, "no_launch": 0}
    explained = host_check.attribute(a, b, launch, raw.imported_index, scope, rows, why, {})
    cands = [(t0, t1) for (t0, t1, prio, _, _) in host_check.overlapping(raw.imported_index, launch[2], a, b)
             if t1 > a and t0 < b and t1 > t0
             and not (scope and prio != 2 and (scope[2] or prio == 0) and t0 <= scope[0] and t1 >= scope[1])]
    A = union(cands, a, b)
    assert length(A) == explained, (length(A), explained)
    rest = minus([[a, b]], A)
    pid, tid = launch[4], launch[5]
    own = [h for h in Raw.overlapping(raw.by_thread.get((pid, tid)), a, b) if not step_level(h, scope)]
    B = minus(union([(h[0], h[1]) for h in own], a, b), A)
    rest = minus(rest, B)
    others = [h for h in Raw.overlapping(raw.by_pid.get(pid), a, b) if h[3] != tid and not step_level(h, scope)]
    C = minus(minus(union([(h[0], h[1]) for h in others], a, b), A), B)
    rest = minus(rest, C)
    allh = Raw.overlapping(raw.all_host, a, b)
    stepevs = [h for h in allh if h[2] == pid and step_level(h, scope)]
    stepev = union([(h[0], h[1]) for h in stepevs], a, b)
    ds = length(rest) - length(minus(rest, stepev))
    res["d_step_by_event"] = innermost(minus(rest, minus(rest, stepev)), stepevs)
    otherpid = union([(h[0], h[1]) for h in allh if h[2] != pid and not step_level(h, scope)], a, b)
    dp = length(rest) - length(minus(rest, otherpid))
    res.update(a=explained, b=length(B), c=length(C), d=length(rest), d_step=ds, d_pid=dp)
    # The next GPU event's launch call had returned before the gap began: the host was not late with it.
    res["prelaunched"] = launch[1] <= a
    res["c_by_event"] = innermost(C, others)
    assert res["a"] + res["b"] + res["c"] + res["d"] == b - a
    bev = [h for h in own if any(h[0] < y and h[1] > x for (x, y) in B)]
    cev = [h for h in others if any(h[0] < y and h[1] > x for (x, y) in C)]
    return res, bev, cev


def innermost(spans, evs):
    """Each moment of `spans` to the covering event that started last (then the shorter): {(cat, name): ns}."""
    out = {}
    for (x, y) in spans:
        cuts = sorted({x, y} | {h[0] for h in evs if x < h[0] < y} | {h[1] for h in evs if x < h[1] < y})
        for (u, v) in zip(cuts, cuts[1:]):
            cover = [h for h in evs if h[0] <= u and h[1] >= v]
            if cover:
                h = max(cover, key=lambda h: (h[0], -(h[1] - h[0])))
                key = (h[4], h[5], h[3])
                out[key] = out.get(key, 0) + v - u
    return out


def fmt_event(h):
    return (f"cat={h[4]!r} name={h[5][:70]!r} ts={h[8]} dur={h[9]} pid={h[6]!r} tid={h[7]!r}")


def main():
    args = sys.argv[1:]
    min_covered, top, json_out, rule = 0.9, 5, None, []
    for flag in ("--min-covered", "--top", "--json", "--step-rule"):
        if flag in args:
            k = args.index(flag)
            v = args[k + 1]
            del args[k:k + 2]
            if flag == "--min-covered":
                min_covered = float(v)
            elif flag == "--top":
                top = int(v)
            elif flag == "--step-rule":  # a file whose steps only a named rule finds
                rule = ["--step-rule", v]
            else:
                json_out = v
    if len(args) != 2:
        print(__doc__)
        return 2
    cli, path = args
    if not os.path.exists(path):
        print(f"skipped: {path} is not there")
        return 77
    out = subprocess.run([cli, "analyze", "--json", path] + rule, capture_output=True, text=True)
    if out.returncode != 0:
        print(f"{path}: analyze failed: {out.stderr.strip()}")
        return 1
    report = json.loads(out.stdout)
    doc, truncated = load(path)
    raw = Raw(doc)
    ok, result = True, {"file": path, "truncated": truncated, "ranks": []}
    if truncated:
        print(f"{path}: truncated JSON: {len(doc['traceEvents'])} events read before the cut")
    for rank in report["ranks"]:
        windows = [(s["start_ns"], s["start_ns"] + s["measured_ns"]) for s in rank.get("steps", [])
                   if not s.get("incomplete")]
        gaps = raw.gaps(windows)
        tot = {k: 0 for k in ("gap", "a", "b", "c", "d", "d_step", "d_pid", "e", "pre_gap", "pre_a", "pre_c", "pre_d")}
        c_by, s_by = {}, {}
        details, wrong_thread, flows_checked = [], 0, 0
        for g in gaps:
            res, bev, cev = classify(raw, g)
            tot["gap"] += g[2] - g[1]
            for k in ("a", "b", "c", "d", "d_step", "d_pid", "e"):
                tot[k] += res[k]
            if res.get("prelaunched"):
                tot["pre_gap"] += g[2] - g[1]
                for k in ("a", "c", "d"):
                    tot["pre_" + k] += res[k]
            for key, v in res.get("c_by_event", {}).items():
                c_by[key] = c_by.get(key, 0) + v
            for key, v in res.get("d_step_by_event", {}).items():
                s_by[key] = s_by.get(key, 0) + v
            fs = raw.flow_start.get(g[3]) if g[4] else None
            if fs:
                flows_checked += 1
                if (fs[0], fs[1]) != (g[4][4], g[4][5]):
                    wrong_thread += 1
                    res["flow_start_thread"] = [fs[0], fs[1]]
            details.append((res, bev, cev))
        mine = next((h for h in report["host_gaps"] if h["rank"] == rank["rank"]), None)
        ms = {k: v / 1e6 for k, v in tot.items()}
        known = tot["a"] + tot["b"]
        passed = tot["a"] >= min_covered * known
        ok = ok and passed
        print(f"{path}: rank {rank['rank']}: {len(gaps)} launch/host gaps, {ms['gap']:.6f} ms: "
              f"a {ms['a']:.6f}  b {ms['b']:.6f}  c {ms['c']:.6f}  d {ms['d']:.6f} "
              f"(step range only {ms['d_step']:.6f}, other pid {ms['d_pid']:.6f})  e {ms['e']:.6f} ms; "
              f"a/(a+b) {100.0 * tot['a'] / max(1, known):.1f} % -> {'pass' if passed else 'FAIL'}")
        if mine is not None and (abs(mine["gap_ms"] - ms["gap"]) > 1e-6 or abs(mine["explained_ms"] - ms["a"]) > 1e-6):
            print(f"  note: gapscope says gaps {mine['gap_ms']:.6f} ms, explained {mine['explained_ms']:.6f} ms")
        print(f"  launches checked against ac2g flow starts: {flows_checked}, on another thread: {wrong_thread}; "
              f"GPU correlations taken from ac2g flow ends: {raw.flow_corr}; host pid/tid spellings: "
              f"{sorted(raw.spellings)}")
        print(f"  gaps whose next event's launch call returned before the gap began: {ms['pre_gap']:.6f} ms "
              f"(a {ms['pre_a']:.6f}, c {ms['pre_c']:.6f}, d {ms['pre_d']:.6f})")
        if c_by:
            print("  class c by the other thread's innermost event: " + "; ".join(
                f"{cat} {name[:50]!r} tid {tid} {v / 1e6:.3f} ms"
                for (cat, name, tid), v in sorted(c_by.items(), key=lambda kv: -kv[1])[:6]))
        if s_by:
            print("  class d covered only by a step-level range (left out by the rule): " + "; ".join(
                f"{cat} {name[:50]!r} tid {tid} {v / 1e6:.3f} ms"
                for (cat, name, tid), v in sorted(s_by.items(), key=lambda kv: -kv[1])[:4]))
        e_why = {}
        for (res, _, _) in details:
            if res["e"]:
                e_why[res["why_e"]] = e_why.get(res["why_e"], 0) + res["e"]
        if e_why:
            print("  class e: " + ", ".join(f"{k} {v / 1e6:.6f} ms" for k, v in sorted(e_why.items())))
        for cls, evk in (("b", 1), ("c", 2), ("d", None)):
            biggest = sorted((d for d in details if d[0][cls] > 0), key=lambda d: -d[0][cls])[:top]
            for (res, bev, cev) in biggest:
                ln = res.get("launch", {})
                print(f"  largest {cls}: step window {res['window']}, gap at {res['start_ns']} ns, {res['ms']:.6f} ms, "
                      f"{cls} {res[cls] / 1e6:.6f} ms (a {res['a'] / 1e6:.6f}); launch {ln.get('name')!r} "
                      f"pid {ln.get('pid')} tid {ln.get('tid')}")
                evs = bev if evk == 1 else cev if evk == 2 else []
                for h in sorted(evs, key=lambda h: h[0])[:8]:
                    print("      " + fmt_event(h))
        result["ranks"].append({"rank": rank["rank"], "gaps": len(gaps), **{k + "_ms": v for k, v in ms.items()},
                                "covered_share": tot["a"] / known if known else None, "pass": passed,
                                "flow_launch_other_thread": wrong_thread,
                                "gapscope_gap_ms": mine and mine["gap_ms"],
                                "gapscope_explained_ms": mine and mine["explained_ms"],
                                "c_by_event": [{"cat": k[0], "name": k[1], "tid": k[2], "ms": v / 1e6}
                                               for k, v in sorted(c_by.items(), key=lambda kv: -kv[1])],
                                "details": [dict({k: v for k, v in d[0].items() if not k.endswith("_by_event")}, b_events=[fmt_event(h) for h in d[1]][:20],
                                                 c_events=[fmt_event(h) for h in d[2]][:20]) for d in details]})
    if json_out:
        with open(json_out, "w") as f:
            json.dump(result, f, indent=1, default=str)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
