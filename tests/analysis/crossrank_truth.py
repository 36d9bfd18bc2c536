#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Ground truth of a multi-rank torch.profiler trace (one Kineto .json.gz per rank), computed from the
raw JSON alone, independently of gapscope:

- steps per rank: the host `decode_step` ranges (cat user_annotation on a host pid); a step's kernels
  are the ones whose launch call (cuda_runtime / cuda_driver, same correlation id) lies inside it;
- collectives: kernels with a `Collective name` arg, per `Process Group Name`. The same operation
  ends at the same time on every rank (a ring collective completes when the last rank has arrived
  plus its wire time), so the occurrences of one group are clustered by end time (within 20 us);
- per group seen on every rank: arrival = kernel start, last = latest arrival, wait(r) = last -
  arrival(r), wire(r) = end(r) - last; the late rank is the one that arrived last; `late_raw` counts
  it always, `late` only when its lateness against the mean of the others exceeds max(1 us, 5% of
  the group's median kernel duration);
- aligned steps: the host steps of all ranks clustered by the groups their collectives belong to; a
  step some rank lacks is incomplete (named with the rank whose capture it lies outside).

Usage: crossrank_truth.py RANKFILE...   prints JSON.
"""
import gzip
import json
import statistics
import sys

STEP = "decode_step"


def ns(us):
    return int(round(us * 1000.0))


def load(path):
    with gzip.open(path) if path.endswith(".gz") else open(path) as f:
        doc = json.load(f)
    rank = doc["distributedInfo"]["rank"]
    ev = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    launches = {}
    for e in ev:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            launches[e["args"]["correlation"]] = ns(e["ts"])
    steps = sorted((ns(e["ts"]), ns(e["ts"] + e["dur"])) for e in ev if e.get("cat") == "user_annotation"
                   and e["name"] == STEP)
    kernels = sorted((e for e in ev if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    step_of = []
    for k in kernels:
        lt = launches.get(k["args"]["correlation"])
        s = None
        if lt is not None:
            for i, (a, b) in enumerate(steps):
                if a <= lt < b:
                    s = i
                    break
        step_of.append(s)
    colls = []
    for k, s in zip(kernels, step_of):
        a = k["args"]
        if "Collective name" in a:
            colls.append({"pg": a["Process Group Name"], "op": a["Collective name"], "start": ns(k["ts"]),
                          "end": ns(k["ts"]) + ns(k["dur"]), "dur": ns(k["dur"]), "step": s})
    first = min(ns(e["ts"]) for e in ev if e.get("cat") != "Trace")
    return {"rank": rank, "steps": steps, "kernels": len(kernels), "colls": colls, "first": first,
            "kernels_per_step": [sum(1 for s in step_of if s == i) for i in range(len(steps))],
            "orphan_kernels": sum(1 for s in step_of if s is None)}


def groups_of(ranks):
    out = []
    for pg in sorted({c["pg"] for r in ranks for c in r["colls"]}):
        occ = sorted(((c["end"], r["rank"], c) for r in ranks for c in r["colls"] if c["pg"] == pg),
                     key=lambda t: (t[0], t[1]))
        cur = []
        for end, rank, c in occ:
            if cur and end - cur[0][0] > 20_000:
                out.append((pg, cur))
                cur = []
            assert all(rank != r for _, r, _ in cur), "two occurrences of one rank in a group"
            cur.append((end, rank, c))
        if cur:
            out.append((pg, cur))
    return out


def main(paths):
    ranks = sorted((load(p) for p in paths), key=lambda r: r["rank"])
    ids = [r["rank"] for r in ranks]
    groups = groups_of(ranks)
    full = [(pg, g) for pg, g in groups if len(g) == len(ranks)]
    late = {r: {"late": 0, "late_raw": 0, "lateness_ns": [], "steps": set()} for r in ids}
    wait = {r: 0 for r in ids}
    # per (rank, host step index): wait and wire of its collectives
    per_step = {}
    for gi, (pg, g) in enumerate(groups):
        for _, rank, c in g:
            c["group"] = gi
    for pg, g in full:
        last = max(c["start"] for _, _, c in g)
        lr = max(g, key=lambda t: (t[2]["start"], -t[1]))[1]
        others = [c["start"] for _, r, c in g if r != lr]
        lateness = last - statistics.mean(others)
        med = sorted(c["dur"] for _, _, c in g)[len(g) // 2]
        late[lr]["late_raw"] += 1
        if lateness > max(1000, 0.05 * med):
            late[lr]["late"] += 1
            late[lr]["lateness_ns"].append(int(round(lateness)))
            late[lr]["steps"].add(next(c["step"] for _, r, c in g if r == lr))
        for _, r, c in g:
            w = min(c["dur"], last - c["start"])
            key = (r, c["step"])
            d = per_step.setdefault(key, {"wait_ns": 0, "wire_ns": 0, "collectives": 0})
            d["wait_ns"] += w
            d["wire_ns"] += c["dur"] - w
            d["collectives"] += 1
            wait[r] += w
    # Aligned steps: host steps clustered through the groups of their collectives.
    # Two host steps (of different ranks) are one aligned step when they share a group.
    owner = {}
    aligned = []
    for r in ranks:
        for i, (a, _) in enumerate(r["steps"]):
            gs = {c["group"] for c in r["colls"] if c["step"] == i}
            hits = {owner[g] for g in gs if g in owner}
            assert len(hits) <= 1, "a host step spans two aligned steps"
            if hits:
                k = hits.pop()
            else:
                k = len(aligned)
                aligned.append({"members": {}, "start": a})
            aligned[k]["members"][r["rank"]] = i
            aligned[k]["start"] = min(aligned[k]["start"], a)
            for g in gs:
                owner[g] = k
    aligned.sort(key=lambda a: a["start"])
    aligned_of = {(r, i): k for k, a in enumerate(aligned) for r, i in a["members"].items()}
    # Late arrivals over the groups of complete aligned steps (a group's step: the lowest aligned
    # step among its participants).
    complete = {k for k, a in enumerate(aligned) if len(a["members"]) == len(ranks)}
    late_complete = {r: {"late": 0, "late_raw": 0, "lateness_ns": []} for r in ids}
    for pg, g in full:
        steps = [aligned_of[(r, c["step"])] for _, r, c in g if c["step"] is not None]
        if not steps or min(steps) not in complete:
            continue
        last = max(c["start"] for _, _, c in g)
        lr = max(g, key=lambda t: (t[2]["start"], -t[1]))[1]
        lateness = last - statistics.mean(c["start"] for _, r, c in g if r != lr)
        med = sorted(c["dur"] for _, _, c in g)[len(g) // 2]
        late_complete[lr]["late_raw"] += 1
        if lateness > max(1000, 0.05 * med):
            late_complete[lr]["late"] += 1
            late_complete[lr]["lateness_ns"].append(int(round(lateness)))
    first = {r["rank"]: r["first"] for r in ranks}
    steps_out = []
    for k, a in enumerate(aligned):
        missing = [r for r in ids if r not in a["members"]]
        entry = {"index": k, "members": {str(r): i for r, i in sorted(a["members"].items())},
                 "complete": not missing}
        if missing:
            start = min(ranks[ids.index(r)]["steps"][i][0] for r, i in a["members"].items())
            entry["missing_ranks"] = missing
            entry["reason"] = ["capture of rank %d started after it" % r if first[r] > start
                               else "capture of rank %d stopped before it" % r for r in missing]
        steps_out.append(entry)
    out = {
        "ranks": {str(r["rank"]): {"host_steps": len(r["steps"]), "kernels": r["kernels"],
                                   "kernels_per_step": r["kernels_per_step"], "orphan_kernels": r["orphan_kernels"],
                                   "collectives": len(r["colls"]), "first_event_ns": r["first"]} for r in ranks},
        "capture_skew_ms": (max(first.values()) - min(first.values())) / 1e6,
        "groups": len(groups),
        "groups_on_every_rank": len(full),
        "aligned_steps": steps_out,
        "late": {str(r): {"late": v["late"], "late_raw": v["late_raw"],
                          "median_ms": statistics.median(v["lateness_ns"]) / 1e6 if v["lateness_ns"] else 0.0,
                          "max_ms": max(v["lateness_ns"]) / 1e6 if v["lateness_ns"] else 0.0,
                          "steps": sorted(aligned_of[(r, s)] for s in v["steps"] if s is not None)}
                 for r, v in late.items()},
        "late_in_complete_steps": {str(r): {"late": v["late"], "late_raw": v["late_raw"],
                                            "median_ms": statistics.median_low(v["lateness_ns"]) / 1e6
                                            if v["lateness_ns"] else 0.0,
                                            "max_ms": max(v["lateness_ns"]) / 1e6 if v["lateness_ns"] else 0.0}
                                   for r, v in late_complete.items()},
        "wait_ns": {str(r): w for r, w in wait.items()},
        "per_step": [{"rank": r, "host_step": s, "step": aligned_of.get((r, s)), **d} for (r, s), d in sorted(per_step.items(),
                                                                               key=lambda t: (t[0][0], t[0][1] if t[0][1] is not None else -1))],
    }
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
