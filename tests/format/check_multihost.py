#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks that gapscope-cli opens several trace files as one trace that keeps all of them.

Usage: check_multihost.py CLI FILE FILE...

Runs `CLI info --json` on each file alone and on all of them together, and asserts from those
outputs alone (not from gapscope's merge code) that the merged trace has every rank of every file
(ranks that collide renumbered, with one warning each), the sum of their lanes and of their events
of every kind, and each file's hosts.
"""
import json
import subprocess
import sys


def info(cli, files):
    out = subprocess.run([cli, "info", "--json", *files], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    cli, files = sys.argv[1], sys.argv[2:]
    parts = [info(cli, [f]) for f in files]
    merged = info(cli, files)
    fail = []

    def expect(what, got, want):
        if got != want:
            fail.append(f"{what}: got {got}, want {want}")

    expect("ranks", len(merged["ranks"]), sum(len(p["ranks"]) for p in parts))
    expect("distinct ranks", len({r["rank"] for r in merged["ranks"]}), len(merged["ranks"]))
    expect("lanes", sum(r["lanes"] for r in merged["ranks"]), sum(r["lanes"] for p in parts for r in p["ranks"]))
    expect("events", merged["event_count"], sum(p["event_count"] for p in parts))
    for kind in merged["events"]:
        expect(f"{kind} events", merged["events"][kind], sum(p["events"].get(kind, 0) for p in parts))
    # Per rank, as (host, pid, events, lanes): the same multiset as the files' ranks.
    key = lambda r: (r.get("host", ""), r.get("pid", 0), r["event_count"], r["lanes"], r["kernel_time_ns"])
    expect("ranks by host and pid", sorted(map(key, merged["ranks"])), sorted(key(r) for p in parts for r in p["ranks"]))
    taken, collisions = set(), 0
    for p in parts:
        for r in p["ranks"]:
            collisions += r["rank"] in taken
            taken.add(r["rank"])
    renumbered = [w for w in merged["warnings"] if "renumbered to" in w]
    expect("renumbering warnings", len(renumbered), collisions)
    if fail:
        print("\n".join(fail))
        return 1
    print(f"ok: {len(files)} files, {len(merged['ranks'])} ranks, {merged['event_count']} events, "
          f"{collisions} ranks renumbered")
    return 0


if __name__ == "__main__":
    sys.exit(main())
