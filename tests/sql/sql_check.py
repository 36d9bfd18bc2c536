#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The SQL tables against what info, summary and analyze print for the same file.

For each trace: `export --sqlite` into a fresh database (read with Python's own sqlite3), then
  kernels      count and duration sum per rank = info's ranks; count, total and own total per name =
               summary's kernel rows; the kernels of each step = the steps table's `kernels`
  steps        every row = summary's steps (rank, index, kind, start, window, busy, kernels)
  bars         every (rank, step)'s bars in order = analyze's per-step bars (name, kind, ns)
  gaps         per complete (rank, step), the idle time by kind = that step's gap bars; per rank the
               launch/host gap time and its explained part = analyze's host_gaps
  collectives  per rank, the kernels in steps = analyze's stragglers matched + unmatched
  counters, ranks, gpus = info's
  query        the same aggregates through `query` (virtual tables) as from the database file
With --streamed, a .gapscope file is exported again in windows of whole steps (--read overview) and every
table must hold the same rows as the whole read's.

Usage: sql_check.py --cli gapscope-cli --work DIR [--streamed] [--synth] FILE_OR_DIR...
--synth first writes two synthetic traces into DIR (2 ranks with CPU operators, 8 ranks) and checks them too.
Exit 0 when all match, 1 with the differences listed, 77 when no file exists (skipped).
"""
import argparse
import collections
import json
import os
import sqlite3
import subprocess
import sys

GAP_BAR = {"launch/host gap": "launch/host gaps", "sync stall": "sync stalls", "step gap": "step gap",
           "in-graph gap": "in-graph gaps"}


def run(cli, *args):
    p = subprocess.run([cli, *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: exit {p.returncode}: {p.stderr.strip()[:400]}")
    return p.stdout


def export(cli, path, db, *extra):
    if os.path.exists(db):
        os.remove(db)
    run(cli, "export", "--sqlite", db, *extra, path)
    return sqlite3.connect(db)


class Checker:
    def __init__(self, name):
        self.name, self.problems, self.checks = name, [], 0

    def eq(self, what, got, want):
        self.checks += 1
        if got != want:
            g, w = str(got), str(want)
            self.problems.append(f"{self.name}: {what}: tables {g[:300]} != cli {w[:300]}")


def check_file(cli, path, work, streamed):
    c = Checker(os.path.basename(path))
    refused = subprocess.run([cli, "info", "--json", path], capture_output=True, text=True)
    if refused.returncode != 0:  # nothing importable: export must refuse it too, and say why
        p = subprocess.run([cli, "export", "--sqlite", os.path.join(work, "refused.db"), path],
                           capture_output=True, text=True)
        c.eq("refused like info, naming the file", (p.returncode != 0, path in p.stderr), (True, True))
        return c
    db = export(cli, path, os.path.join(work, "whole.db"))
    info = json.loads(refused.stdout)
    summary = json.loads(run(cli, "summary", "--json", "--top", "100000000", path))
    analyzed = subprocess.run([cli, "analyze", "--json", path], capture_output=True, text=True)
    analyze = json.loads(analyzed.stdout) if analyzed.returncode == 0 else None

    # kernels
    c.eq("kernel count", db.execute("select count(*) from kernels").fetchone()[0], info["kernel_count"])
    c.eq("kernel time", db.execute("select coalesce(sum(dur),0) from kernels").fetchone()[0], info["kernel_time_ns"])
    per_rank = {r: (n, t) for r, n, t in db.execute("select rank, count(*), sum(dur) from kernels group by rank")}
    for r in info["ranks"]:
        c.eq(f"rank {r['rank']} kernels", per_rank.get(r["rank"], (0, 0)) if r["kernel_count"] else (0, 0),
             (r["kernel_count"], r["kernel_time_ns"]) if r["kernel_count"] else (0, 0))
    by_name = {n: (k, t, o) for n, k, t, o in
               db.execute("select name, count(*), sum(dur), sum(own) from kernels group by name")}
    want = {k["name"]: (k["count"], k["total_ns"], k["own_total_ns"]) for k in summary["kernels"]}
    c.eq("kernels by name", by_name, want)

    # steps
    rows = set(db.execute("select rank, step, kind, start, window, gpu_busy, kernels from steps"))
    want = {(s["rank"], s["index"], s["kind"], s["start_ns"], s["window_ns"], s["busy_ns"], s["kernels"])
            for s in summary["steps"]}
    c.eq("steps", rows, want)
    per_step = dict(((r, s), n) for r, s, n in
                    db.execute("select rank, step, count(*) from kernels where step is not null group by 1, 2"))
    c.eq("kernels per step", {k: v for k, v in per_step.items()},
         {(r, s): n for r, s, n in db.execute("select rank, step, kernels from steps where kernels > 0")})

    if analyze:
        # bars
        got = collections.defaultdict(list)
        for r, s, name, kind, ns in db.execute("select rank, step, bar, kind, ns from bars order by rank, step, position"):
            got[(r, s)].append((name, kind, ns))
        want = {}
        incomplete = set()
        for rk in analyze["ranks"]:
            for st in rk["steps"]:
                want[(rk["rank"], st["index"])] = [(b["name"], b["kind"], b["ns"]) for b in st["bars"]]
                if st.get("incomplete"):
                    incomplete.add((rk["rank"], st["index"]))
        c.eq("bars", dict(got), want)
        # gaps against the gap bars of each complete step
        gaps = collections.defaultdict(int)
        for r, s, kind, ns in db.execute("select rank, step, kind, sum(dur) from gaps group by 1, 2, 3"):
            gaps[(r, s, GAP_BAR[kind])] = ns
        bars = {}
        for (r, s), bl in want.items():
            if (r, s) in incomplete:
                continue
            for name, kind, ns in bl:
                if name in GAP_BAR.values() and kind == "gap":
                    bars[(r, s, name)] = ns
        c.eq("gap time per step and kind", {k: v for k, v in gaps.items() if v},
             {k: v for k, v in bars.items() if v})
        host = {r: (g, e) for r, g, e in db.execute(
            "select rank, sum(dur), coalesce(sum(explained),0) from gaps where kind = 'launch/host gap' group by rank")}
        for h in analyze.get("host_gaps", []):
            got_h = host.get(h["rank"], (0, 0))
            c.eq(f"rank {h['rank']} host gaps (ms)", (round(got_h[0] / 1e6, 6), round(got_h[1] / 1e6, 6)),
                 (round(h["gap_ms"], 6), round(h["explained_ms"], 6)))
        # collectives in steps
        coll = dict(db.execute("select rank, count(*) from collectives where step is not null group by rank"))
        for s in analyze.get("stragglers", []) if len(analyze["ranks"]) > 1 else []:  # one rank matches nothing
            if s["rank"] in coll or s["matched"] + s["unmatched"]:
                c.eq(f"rank {s['rank']} collectives", coll.get(s["rank"], 0), s["matched"] + s["unmatched"])

    # counters, ranks, gpus
    c.eq("counters", sorted(db.execute("select coalesce(rank, -1), name, value from counters")),
         sorted((k.get("rank", -1), k["name"], k["value"]) for k in info["counters"]))
    c.eq("ranks", sorted(db.execute("select rank, kernels, kernel_ns, steps, events from ranks")),
         sorted((r["rank"], r["kernel_count"], r["kernel_time_ns"], r["step_count"], r["event_count"])
                for r in info["ranks"]))
    c.eq("gpus", sorted(db.execute("select device, name, sm_count from gpus")),
         sorted((g["device"], g["name"], g.get("sm_count") or None) for g in info["gpus"]))  # info: 0 = not known

    # the virtual tables of `query` against the database file
    for q in ["select count(*), sum(dur), sum(own), count(distinct name), count(step) from kernels",
              "select count(*), sum(window), sum(gpu_busy) from steps",
              "select count(*), sum(ns) from bars", "select count(*), sum(dur), sum(explained) from gaps",
              "select count(*), sum(dur), count(distinct name) from host_events",
              "select count(*), sum(wait), sum(wire) from collectives"]:
        got = json.loads(run(cli, "query", "--json", path, q))
        want = [dict(zip([d[0] for d in cur.description], row)) for cur in [db.execute(q)] for row in cur]
        c.eq(f"query: {q}", got, want)

    if streamed and path.endswith(".gapscope"):
        sdb = export(cli, path, os.path.join(work, "streamed.db"), "--read", "overview", "--window-events", "20000")
        for t in ["kernels", "steps", "bars", "collectives", "host_events", "gaps", "counters", "ranks", "gpus",
                  "captures", "labels"]:
            a = collections.Counter(db.execute(f"select * from {t}"))
            b = collections.Counter(sdb.execute(f"select * from {t}"))
            c.eq(f"streamed {t} ({sum(a.values())} rows)", b, a)
        sdb.close()
    db.close()
    return c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--streamed", action="store_true")
    ap.add_argument("files", nargs="*")
    ap.add_argument("--synth", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    files = []
    for f in a.files:
        if os.path.isdir(f):
            files += sorted(os.path.join(d, n) for d, _, names in os.walk(f) for n in names
                            if not n.endswith((".md", ".py")))
        elif os.path.exists(f):
            files.append(f)
    if a.synth:
        for name, args in [("synth_r2.gapscope", ["--ranks", "2", "--steps", "20", "--kernels-per-step", "100",
                                                   "--host-ops", "--inject-sync-stall-us", "30", "--mode", "eager"]),
                           ("synth_r8.gapscope", ["--ranks", "8", "--steps", "12", "--kernels-per-step", "300",
                                                   "--seed", "7"])]:
            out = os.path.join(a.work, name)
            run(a.cli, "synth", *args, "-o", out)
            files.append(out)
    if not files:
        print("skipped: none of " + ", ".join(a.files) + " is here (the corpus ../shared/corpus is not next to the "
              "source tree)")
        return 77
    problems, checks = [], 0
    for f in files:
        try:
            c = check_file(a.cli, f, a.work, a.streamed)
        except RuntimeError as e:
            problems.append(f"{os.path.basename(f)}: {e}")
            continue
        problems += c.problems
        checks += c.checks
        print(f"{os.path.basename(f)}: {c.checks} checks, {len(c.problems)} differences")
    for p in problems:
        print("DIFF", p)
    print(f"{len(files)} files, {checks} checks, {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
