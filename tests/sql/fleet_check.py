#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Many captures in one database: 20 synthetic traces (seeds 1-20) written one by one with
`export --sqlite --append --label seed=N`, then
  - 20 captures with their labels; each capture's kernels and kernel time = `info` of its file;
  - a cross-capture query through `gapscope-cli query fleet.db` (and Python's sqlite3) gives one row per capture;
  - what must be refused is, and leaves the files as they were: a database that exists without --append,
    --append to an SQLite file that is not a gapscope database, a trace with nothing importable (the new
    file it began is removed).

Usage: fleet_check.py --cli gapscope-cli --work DIR [--captures 20]
"""
import argparse
import hashlib
import json
import os
import sqlite3
import subprocess
import sys


def run(cli, *args, ok=True):
    p = subprocess.run([cli, *args], capture_output=True, text=True)
    if ok and p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: exit {p.returncode}: {p.stderr.strip()[:400]}")
    return p


def digest(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--captures", type=int, default=20)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    db = os.path.join(a.work, "fleet.db")
    if os.path.exists(db):
        os.remove(db)
    problems = []

    def expect(what, got, want):
        print(f"{'ok  ' if got == want else 'FAIL'} {what}: {got}" + ("" if got == want else f" (want {want})"))
        if got != want:
            problems.append(what)

    want = {}
    for seed in range(1, a.captures + 1):
        trace = os.path.join(a.work, f"seed{seed}.gapscope")
        run(a.cli, "synth", "--ranks", "2", "--steps", "6", "--kernels-per-step", str(40 + seed), "--seed", str(seed),
            "-o", trace)
        info = json.loads(run(a.cli, "info", "--json", trace).stdout)
        want[seed] = (info["kernel_count"], info["kernel_time_ns"])
        run(a.cli, "export", "--sqlite", db, *(["--append"] if seed > 1 else []), "--label", f"seed={seed}",
            "--label", "fleet=nightly", trace)
    con = sqlite3.connect(db)
    got = {int(seed): (n, t) for seed, n, t in con.execute(
        "select l.value, count(*), sum(k.dur) from kernels k join labels l on l.capture = k.capture and "
        "l.key = 'seed' group by k.capture")}
    expect("captures", con.execute("select count(*) from captures").fetchone()[0], a.captures)
    expect("kernels and kernel time per capture = info", got, want)
    expect("labels", con.execute("select count(*) from labels where key = 'fleet' and value = 'nightly'").fetchone()[0],
           a.captures)
    q = ("select c.capture, l.value as seed, count(distinct k.rank || ':' || k.step) as steps, "
         "sum(k.dur) / count(distinct k.rank || ':' || k.step) as kernel_ns_per_step "
         "from kernels k join captures c using (capture) join labels l on l.capture = c.capture and l.key = 'seed' "
         "where k.step is not null group by c.capture order by c.capture")
    rows = json.loads(run(a.cli, "query", "--json", db, q).stdout)
    expect("cross-capture query rows (query)", len(rows), a.captures)
    expect("cross-capture query = sqlite3", [tuple(r.values()) for r in rows],
           [tuple(r) for r in con.execute(q)])
    expect("steps per capture", sorted({r["steps"] for r in rows}), [12])
    con.close()

    before = digest(db)
    p = run(a.cli, "export", "--sqlite", db, os.path.join(a.work, "seed1.gapscope"), ok=False)
    expect("an existing database without --append: refused", (p.returncode, "--append" in p.stderr), (3, True))
    expect("... and left as it was", digest(db), before)
    other = os.path.join(a.work, "other.sqlite")
    if os.path.exists(other):
        os.remove(other)
    c = sqlite3.connect(other)
    c.execute("create table t(x)")
    c.commit()
    c.close()
    before = digest(other)
    p = run(a.cli, "export", "--sqlite", other, "--append", os.path.join(a.work, "seed1.gapscope"), ok=False)
    expect("--append to another SQLite file: refused", (p.returncode, "not a gapscope database" in p.stderr),
           (3, True))
    expect("... and left as it was", digest(other), before)
    empty = os.path.join(a.work, "empty.json")
    open(empty, "w").write('{"traceEvents": []}')
    new = os.path.join(a.work, "new.db")
    if os.path.exists(new):
        os.remove(new)
    p = run(a.cli, "export", "--sqlite", new, empty, ok=False)
    expect("nothing importable: refused, naming the file", (p.returncode != 0, empty in p.stderr), (True, True))
    expect("... and the new file removed", os.path.exists(new), False)
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
