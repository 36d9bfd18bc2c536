#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`gapscope-cli diff --json A B` on two real torch.profiler traces: its kernel table against the raw JSON.

Each file is read here with Python's json alone: every complete event ("ph": "X") of category kernel
is one kernel, its time the "dur" microseconds as exact decimals, rounded half away from zero to
integer ns (negative: 0). Per kernel name: count and total. The diff's rows must hold exactly those
figures: a row matched exactly, a new or a vanished kernel is one name; a row paired after normalising
lists the full names of each side (a_names, b_names) and holds their sums. Every name of each file
must be in exactly one row, and no row may hold a name the file lacks.
Usage: check_diff_kernels.py GAPSCOPE_CLI A.json[.gz] B.json[.gz] (exit 1 on any mismatch).
"""
import decimal
import gzip
import json
import subprocess
import sys

KERNEL_CATS = {"kernel", "Kernel"}


def ns(us):
    v = decimal.Decimal(str(us)) * 1000
    return max(0, int(v.quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP)))


def kernels_of(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    out = {}
    for ev in events:
        if isinstance(ev, dict) and ev.get("ph") == "X" and ev.get("cat") in KERNEL_CATS and "ts" in ev:
            row = out.setdefault(ev["name"], [0, 0])
            row[0] += 1
            row[1] += ns(ev.get("dur", 0))
    return out


def main():
    cli, a, b = sys.argv[1:4]
    want = {"a": kernels_of(a), "b": kernels_of(b)}
    p = subprocess.run([cli, "diff", "--json", a, b], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        print("diff failed (exit %d): %s" % (p.returncode, p.stderr))
        return 1
    rows = json.loads(p.stdout)["kernels"]
    got = {"a": {}, "b": {}}
    bad = []
    for r in rows:
        for side in ("a", "b"):
            if r["match"] == "normalised":
                names = r[side + "_names"]
                figures = [sum(want[side].get(n, [0, 0])[0] for n in names),
                           sum(want[side].get(n, [0, 0])[1] for n in names)]
                if [r[side + "_count"], r[side + "_total_ns"]] != figures:
                    bad.append("%s %s: %s, raw %s" % (side, names, [r[side + "_count"], r[side + "_total_ns"]], figures))
            elif r[side + "_count"]:
                names = [r["name"]]
            else:
                names = []
            for n in names:
                if n in got[side]:
                    bad.append("%s: %s in two rows" % (side, n))
                got[side][n] = want[side].get(n)
            if len(names) == 1 and r["match"] != "normalised":
                got[side][names[0]] = [r[side + "_count"], r[side + "_total_ns"]]
    for side in ("a", "b"):
        for name, figures in want[side].items():
            if got[side].get(name) != figures:
                bad.append("%s %s: diff %s, raw %s" % (side, name[:80], got[side].get(name), figures))
        for name in got[side]:
            if name not in want[side]:
                bad.append("%s %s: not a kernel of the file" % (side, name[:80]))
    counts = {s: sum(v[0] for v in want[s].values()) for s in want}
    print("A: %d names, %d kernels; B: %d names, %d kernels; %d rows" % (
        len(want["a"]), counts["a"], len(want["b"]), counts["b"], len(rows)))
    for line in bad:
        print("MISMATCH " + line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
