#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host attribution of launch/host gaps, counted straight from a raw Kineto (torch.profiler) file.

Independent of gapscope's code: the GPU idle gaps of each step window (the windows are taken from
`gapscope-cli analyze --json`, everything else from the raw JSON), less the in-graph ones (the event
after the gap and the one before it on its stream launched by one graph launch call), the sync-stall
rule, and for every
moment of every launch/host gap the innermost host event on the thread (pid, tid) that launched the
next GPU event (cpu_op, python_function, user_annotation, cuda_runtime/cuda_driver; events that
enclose every launch of the step left out). The moments with none are split by why: no recorded
launch, queued (after the launch call returned), another thread of the process busy (its innermost
event), nothing. A row's count is its host events, each once however many gaps it spans. Compares the
totals, the breakdown and the top entries of both lists with analyze's
`host_gaps`, and checks that at least MIN_EXPLAINED of the gap time is explained when the file has
cpu_op events.

Usage: host_check.py GAPSCOPE_CLI FILE [--min-explained 0.9] [--top 10]
Exit 0 when everything matches, 1 otherwise (the differences are printed), 77 when FILE is not there.
One rank per file: each file is analysed on its own, so its times are the raw file's.
"""
import bisect
import decimal
import gzip
import heapq
import json
import os
import subprocess
import sys

SYNC_CALLS = ("cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaThreadSynchronize",
              "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize")
GPU_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}
API_CATS = {"cuda_runtime": "cuda_runtime", "Runtime": "cuda_runtime", "cuda_driver": "cuda_driver",
            "Driver": "cuda_driver"}
CPU_CATS = {"cpu_op": "cpu_op", "Operator": "cpu_op", "python_function": "python_function",
            "python": "python_function"}


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        return json.load(f, parse_float=decimal.Decimal)


def ns(v):
    return int(decimal.Decimal(v) * 1000)


def thread_of(e):
    """A host thread: (pid, tid), a string of digits read as the number (as gapscope reads it)."""
    def norm(v):
        if isinstance(v, str) and v.lstrip("-").isdigit():
            return int(v)
        return v
    return (norm(e.get("pid")), norm(e.get("tid")))


def blocking(name):
    if name.startswith(SYNC_CALLS):
        return True
    return (name.startswith("cudaMemcpy") or name.startswith("cuMemcpy")) and "Async" not in name


def analyse(doc, windows):
    base = int(doc.get("baseTimeNanoseconds", 0) or 0)
    gpu, api_by_corr, host, syncs = [], {}, {}, []
    for e in doc["traceEvents"]:
        if not isinstance(e, dict) or e.get("ph") != "X" or "ts" not in e:
            continue
        cat, name, args = e.get("cat", ""), e.get("name", ""), e.get("args") or {}
        t0 = ns(e["ts"]) + base
        t1 = t0 + max(0, ns(e.get("dur", 0)))
        if cat in GPU_CATS:
            gpu.append((t0, t1, int(args.get("correlation", 0) or 0), (args.get("device"), args.get("stream"))))
        elif cat in API_CATS:
            corr = int(args.get("correlation", 0) or 0)
            runtime = API_CATS[cat] == "cuda_runtime"  # the launch is the runtime call when both exist
            if corr not in api_by_corr or (runtime and not api_by_corr[corr][3]):
                api_by_corr[corr] = (t0, t1, thread_of(e), runtime, name)
            host.setdefault(thread_of(e), []).append((t0, t1, 2, name, API_CATS[cat]))
            if blocking(name):
                syncs.append((t0, t1))
        elif cat in CPU_CATS:
            host.setdefault(thread_of(e), []).append((t0, t1, 1, name, CPU_CATS[cat]))
        elif cat == "user_annotation":
            host.setdefault(thread_of(e), []).append((t0, t1, 0, name, "user_annotation"))
        elif cat == "cuda_sync" and name != "Stream Wait Event":
            syncs.append((t0, t1))
    # One stream runs in order: a kernel launched early (PDL) counts from the end of the one before.
    by_stream = {}
    for g in sorted(gpu, key=lambda g: g[0]):
        by_stream.setdefault(g[3], []).append(g)
    # A piece that continues the graph launch of the event before it on its stream ends an in-graph
    # gap, not a launch/host gap (the launching call of both is one cudaGraphLaunch / cuGraphLaunch /
    # hipGraphLaunch).
    def graph_launch(corr):
        api = api_by_corr.get(corr)
        return api is not None and api[4].startswith(("cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch"))
    pieces = []
    for evs in by_stream.values():
        end, before = None, None
        for (t0, t1, corr, _) in evs:
            start = t0 if end is None else min(max(t0, end), t1)
            end = t1 if end is None else max(end, t1)
            pieces.append((start, t1, corr, before == corr and graph_launch(corr)))
            before = corr
    pieces.sort(key=lambda p: p[0])
    merged = []
    for s in sorted(syncs):
        if s[1] <= s[0]:
            continue
        if merged and s[0] <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], s[1]))
        else:
            merged.append(s)

    host = index(host)
    rows, gap_ns, explained_ns = {}, 0, 0
    why, others = {"queued": 0, "other_threads": 0, "nothing": 0, "no_launch": 0}, {}
    for (w0, w1) in windows:
        inside = [(max(p[0], w0), min(p[1], w1), p[2], p[3]) for p in pieces if p[1] > w0 and p[0] < w1]
        inside = [p for p in inside if p[0] <= p[1]]
        if not inside:
            continue
        inside.sort(key=lambda p: p[0])
        la, lb = api_by_corr.get(inside[0][2]), api_by_corr.get(inside[-1][2])
        scope = None
        if la and lb:
            scope = (min(la[0], lb[0]), max(la[1], lb[1]), la != lb)
        t = w0
        for (s, e, corr, in_graph) in inside:
            if s > t and not in_graph:
                launch_host = (t, s)
                launch = api_by_corr.get(corr)
                for (s0, s1) in merged:  # the first sync still running at t decides
                    if s1 <= t:
                        continue
                    if s0 < s and (launch is None or launch[0] >= max(t, s0)):
                        launch_host = (t, max(t, s0))
                    break
                a, b = launch_host
                if b > a:
                    gap_ns += b - a
                    explained_ns += attribute(a, b, launch, host, scope, rows, why, others)
            t = max(t, e)
    return gap_ns, explained_ns, rows, why, others


def index(host):
    """Per thread: the events of at most 1 ms sorted by start (searched), and the longer ones."""
    out = {}
    for tid, evs in host.items():
        short = sorted((e for e in evs if e[1] - e[0] <= 1000000), key=lambda e: e[0])
        out[tid] = ([e[0] for e in short], short, [e for e in evs if e[1] - e[0] > 1000000])
    return out


def overlapping(indexed, tid, a, b):
    if tid not in indexed:
        return []
    starts, short, long = indexed[tid]
    lo, hi = bisect.bisect_left(starts, a - 1000000), bisect.bisect_left(starts, b)
    return short[lo:hi] + long


def candidates(host, thread, a, b, scope):
    """The host events of one thread overlapping [a, b), the step's own range left out."""
    out = []
    for (t0, t1, prio, name, kind) in overlapping(host, thread, a, b):
        if t1 <= a or t0 >= b or t1 <= t0:
            continue
        if scope and prio != 2 and (scope[2] or prio == 0) and t0 <= scope[0] and t1 >= scope[1]:
            continue  # the step's own range, or a frame around the whole step
        out.append((t0, t1, prio, name, kind))
    return out


def sweep(cands, a, b):
    """Stretches of [a, b) with the innermost candidate active (None where none is)."""
    cands = sorted(cands, key=lambda c: c[0])
    heap, i, t, out = [], 0, a, []
    while t < b:
        while i < len(cands) and cands[i][0] <= t:
            c = cands[i]
            heapq.heappush(heap, (-c[0], c[1] - c[0], -c[2], -i, c))  # ties: the later in the file is nested
            i += 1
        while heap and heap[0][4][1] <= t:
            heapq.heappop(heap)
        until = b
        if i < len(cands):
            until = min(until, cands[i][0])
        if heap:
            until = min(until, heap[0][4][1])
        out.append((t, until, heap[0][4] if heap else None))
        t = until
    return out


def count(rows, c, ns):
    """Time to the row of c's (name, kind); the row counts host events, each once however many gaps it
    spans (its last counted event is kept: events of one name that interleave count again)."""
    row = rows.setdefault((c[3], c[4]), [0, 0, None])
    row[0] += ns
    if row[2] != c:
        row[2] = c
        row[1] += 1


def attribute(a, b, launch, host, scope, rows, why, others):
    """Explained time of the gap [a, b); its unattributed time by why (`why`: queued, other_threads,
    nothing, no_launch) and the other threads' events behind it (`others`)."""
    if launch is None:
        why["no_launch"] += b - a
        return 0
    explained = 0
    for (x, y, c) in sweep(candidates(host, launch[2], a, b, scope), a, b):
        if c is not None:
            count(rows, c, y - x)
            explained += y - x
            continue
        if y > launch[1]:  # the launch call had returned: the work was queued
            why["queued"] += y - max(x, launch[1])
        y = min(y, launch[1])
        if x >= y:
            continue
        cands = []
        for thread in host:
            if thread != launch[2] and thread[0] == launch[2][0]:  # the same process's other threads
                cands += [c + (thread,) for c in candidates(host, thread, x, y, scope)]
        for (u, v, o) in sweep(cands, x, y):
            if o is None:
                why["nothing"] += v - u
            else:
                why["other_threads"] += v - u
                count(others, o, v - u)
    return explained


def main():
    args = sys.argv[1:]
    min_explained, top = 0.9, 10
    if "--min-explained" in args:
        k = args.index("--min-explained")
        min_explained = float(args[k + 1])
        del args[k:k + 2]
    if "--top" in args:
        k = args.index("--top")
        top = int(args[k + 1])
        del args[k:k + 2]
    rule = []
    if "--step-rule" in args:  # a file whose steps only a named rule finds
        k = args.index("--step-rule")
        rule = ["--step-rule", args[k + 1]]
        del args[k:k + 2]
    cli, path = args
    if not os.path.exists(path):
        print(f"skipped: no corpus here ({path} is not there; ../shared/corpus sits next to the source tree)")
        return 77
    out = subprocess.run([cli, "analyze", "--json", path] + rule, capture_output=True, text=True)
    if out.returncode != 0:
        print(f"{path}: analyze failed: {out.stderr.strip()}")
        return 1
    report = json.loads(out.stdout)
    doc = load(path)
    has_cpu_ops = any(isinstance(e, dict) and e.get("cat") in CPU_CATS for e in doc["traceEvents"])
    problems = []
    for rank in report["ranks"]:
        windows = [(s["start_ns"], s["start_ns"] + s["measured_ns"]) for s in rank.get("steps", [])
                   if not s.get("incomplete")]
        gap_ns, explained_ns, rows, why, others = analyse(doc, windows)
        mine = next(h for h in report["host_gaps"] if h["rank"] == rank["rank"])
        print(f"{path}: rank {rank['rank']}: gaps {gap_ns / 1e6:.6f} ms, explained {explained_ns / 1e6:.6f} ms "
              f"({100.0 * explained_ns / max(1, gap_ns):.1f} %); gapscope {mine['gap_ms']:.6f} / "
              f"{mine['explained_ms']:.6f} ms")
        if abs(mine["gap_ms"] - gap_ns / 1e6) > 1e-6 or abs(mine["explained_ms"] - explained_ns / 1e6) > 1e-6:
            problems.append(f"rank {rank['rank']}: totals differ")
        for key, value in why.items():
            if abs(mine["unattributed"][key + "_ms"] - value / 1e6) > 1e-6:
                problems.append(f"rank {rank['rank']}: unattributed {key}: expected {value / 1e6:.6f} ms, gapscope "
                                f"{mine['unattributed'][key + '_ms']:.6f} ms")
        print(f"  unattributed: " + ", ".join(f"{k} {v / 1e6:.3f} ms" for k, v in why.items()))
        for label, got_rows, want_rows in (("row", mine["top"], rows), ("other-thread row", mine["other_threads"], others)):
            expected = sorted(want_rows.items(), key=lambda kv: (-kv[1][0], kv[0][0], kv[0][1]))[:top]
            for k, ((name, kind), (t, count, _)) in enumerate(expected):
                if k >= len(got_rows):
                    problems.append(f"rank {rank['rank']}: missing {label} {name}")
                    continue
                got = got_rows[k]
                if (got["name"], got["kind"], got["count"]) != (name, kind, count) or abs(got["ms"] - t / 1e6) > 1e-6:
                    problems.append(f"rank {rank['rank']} {label} {k}: expected {kind} {name} {t / 1e6:.6f} ms "
                                    f"x{count}, gapscope {got['kind']} {got['name']} {got['ms']:.6f} ms x{got['count']}")
        if has_cpu_ops and gap_ns > 0 and explained_ns < min_explained * gap_ns:
            problems.append(f"rank {rank['rank']}: only {100.0 * explained_ns / gap_ns:.1f} % of the launch/host "
                            f"gaps explained (want >= {100 * min_explained:.0f} %)")
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
