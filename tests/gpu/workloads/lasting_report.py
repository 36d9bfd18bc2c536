#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What a capture costs a running process, before, while and after: reads the per-call timeline that
hf_generate.py --timeline writes and the capture windows that tests/gpu/lasting.sh records, and prints
table rows `check | measured | target | verdict`.

  lasting_report.py NAME TIMELINE WINDOWS [--gate-after PCT] [--gate-torch]

WINDOWS holds one line per capture: `k cmd_start_ns cmd_end_ns rec_start_ns rec_end_ns` (the capture
command's wall time, and the recorded file's first and last event). A call belongs to
  before      idle, ended before the first capture command started (less the first --skip);
  while k     started and ended inside capture k's recorded window;
  after k     idle, started after capture k's command ended and ended before the next one started
              (or before the first torch.profiler call), less the first --skip: the agent
              and the CLI are still writing the file then;
  torch       run under torch.profiler in the same process.
Medians of each; the verdicts compare the idle block after the last capture with the one before the
first (--gate-after, percent) and the median while capturing with the one under torch.profiler.

With --control TIMELINE (the same workload in a second process that is never captured, running at the
same time on other cores), each phase's median is divided by the control's median over the same span of
time: the shared machine's drift (other tenants, clocks) cancels, and the figures are ratios. Where the
control has fewer than 3 calls inside a block that has calls (it started late, or died), every figure is
the process's own median instead (never a mix), and the row says so.
"""
import argparse
import json
import statistics
import sys


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def phase(calls, control):
    """Median ms of `calls`, divided by the control's median over the same span when there is a control
    (then x the control's overall median, so the figure stays in ms)."""
    ms = median([c["ms"] for c in calls])
    if control is None or not calls:
        return ms
    t0, t1 = min(c["t0_ns"] for c in calls), max(c["t1_ns"] for c in calls)
    twin = [c["ms"] for c in control if c["t0_ns"] >= t0 and c["t1_ns"] <= t1]
    if len(twin) < 3:
        return float("nan")
    return ms / median(twin) * median([c["ms"] for c in control])


def stays_attached(info):
    """{capture k: why} for the captures whose info JSON carries a `cupti_stays_attached` counter."""
    out = {}
    for k, path in info.items():
        try:
            with open(path) as f:
                counters = json.load(f).get("counters", [])
        except (OSError, ValueError):
            continue
        for c in counters:
            if c.get("name") == "cupti_stays_attached" and c.get("value"):
                out[k] = c.get("detail", "")
    return out


def pct(x, base):
    return (x / base - 1.0) * 100.0 if base and x == x else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("timeline")
    ap.add_argument("windows")
    ap.add_argument("--gate-after", type=float, help="fail when idle after the last capture is this many %% slower")
    ap.add_argument("--gate-torch", action="store_true", help="fail when capturing costs more than torch.profiler")
    ap.add_argument("--gate-while", type=float, help="fail when calls while capturing are this many %% slower")
    ap.add_argument("--skip", type=int, default=0, help="leave out this many calls after each capture and at the start")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--control", help="timeline of an uncaptured twin process run at the same time")
    args = ap.parse_args()
    calls = [json.loads(line) for line in open(args.timeline) if line.strip()]
    wins, info = [], {}
    for line in open(args.windows):
        f = line.split()
        if len(f) >= 5:
            wins.append(tuple(int(x) for x in f[:5]))
            if len(f) >= 6:  # the capture's `gapscope-cli info --json`
                info[int(f[0])] = f[5]
    wins.sort()
    idle = [c for c in calls if c["state"] == "idle"]
    torch_calls = [c for c in calls if c["state"] == "torch"]
    torch_start = min((c["t0_ns"] for c in torch_calls), default=None)
    out = {"name": args.name, "captures": len(wins)}
    if not wins:
        print(f"lasting: {args.name} | no capture was written | captures | FAIL")
        return 1
    control = None
    if args.control:
        control = [json.loads(line) for line in open(args.control) if line.strip()]
    before = [c for c in idle if c["t1_ns"] < wins[0][1]][args.skip:]
    blocks = []  # (what, calls) in order: before, then while k / after k, then torch
    for i, (k, c0, c1, r0, r1) in enumerate(wins):
        during = [c for c in calls if c["t0_ns"] >= r0 and c["t1_ns"] <= r1]
        nxt = wins[i + 1][1] if i + 1 < len(wins) else (torch_start or float("inf"))
        after = [c for c in idle if c["t0_ns"] > c1 and c["t1_ns"] < nxt][args.skip:]
        blocks.append((during, after))
    # torch.profiler's first call pays its start-up: left out, as the first call of a capture window is.
    tms = torch_calls[1:]
    # Every block against the twin, or none: where the twin did not run through a block that has calls
    # (it started late, or died), all figures are the process's own medians and the row says so.
    everything = [before, tms] + [b for pair in blocks for b in pair]
    if control and any(x and phase(x, control) != phase(x, control) for x in everything):
        control, out["twin_gap"] = None, True
    out["control"] = bool(control)
    out["before"] = {"ms": phase(before, control), "calls": len(before)}
    out["while"] = [{"ms": phase(d, control), "calls": len(d)} for d, _ in blocks]
    out["after"] = [{"ms": phase(a, control), "calls": len(a)} for _, a in blocks]
    out["torch"] = {"ms": phase(tms, control), "calls": len(tms)}
    # Captures after which CUPTI stayed attached (their `cupti_stays_attached` counter), with why: where
    # the library could not let CUPTI go, that is what an idle-after figure over 2 % comes from.
    stayed = stays_attached(info)
    out["cupti_stayed_attached"] = stayed
    if args.json:
        json.dump(out, open(args.json, "w"), indent=1)

    b = out["before"]["ms"]
    last = out["after"][-1]
    during_all = [w["ms"] for w in out["while"] if w["calls"]]
    w_med = median(during_all)
    rc = 0
    after_txt = ", ".join("%.1f (%+.1f%%)" % (a["ms"], pct(a["ms"], b)) for a in out["after"])
    enough = out["before"]["calls"] >= 8 and last["calls"] >= 8
    if args.gate_after is not None:
        ok = enough and abs(pct(last["ms"], b)) <= args.gate_after
        rc |= 0 if ok else 1
        verdict = "PASS" if ok else "FAIL"
        target = "after the last capture within %g%% of before (>= 8 calls each)" % args.gate_after
    else:
        verdict, target = "INFO", "-"
    stayed_txt = ("; CUPTI stayed attached after capture %s (%s)" % (
        ", ".join(str(k) for k in sorted(stayed)), stayed[max(stayed)])) if stayed else ""
    norm = " (each against the uncaptured twin at the same time)" if control else \
        (" (own medians: the twin did not run through every block)" if out.get("twin_gap") else "")
    print("lasting: %s idle after %d captures | before %.1f ms/call (%d calls); after each capture %s; last block "
          "%d calls%s%s | %s | %s" % (args.name, len(wins), b, out["before"]["calls"], after_txt, last["calls"], norm,
                                      stayed_txt, target, verdict))
    t = out["torch"]["ms"]
    if args.gate_torch or out["torch"]["calls"]:
        ok = bool(during_all) and out["torch"]["calls"] >= 4 and w_med < t
        if args.gate_torch:
            rc |= 0 if ok else 1
        print("lasting: %s while capturing vs torch.profiler, same process | gapscope %.1f ms/call (%+.1f%%), "
              "torch.profiler %.1f ms/call (%+.1f%%, %d calls) | gapscope below torch.profiler | %s"
              % (args.name, w_med, pct(w_med, b), t, pct(t, b), out["torch"]["calls"],
                 ("PASS" if ok else "FAIL") if args.gate_torch else "INFO"))
    elif args.gate_while is None:
        print("lasting: %s while capturing | %.1f ms/call (%+.1f%%) | - | INFO" % (args.name, w_med, pct(w_med, b)))
    # Block by block, before normalisation: the process's own medians (and the twin's over the same
    # spans), so a verdict can be checked by hand (the two processes share the GPU).
    def raw(xs):
        if not xs:
            return "-"
        own = "%.1f" % median([c["ms"] for c in xs])
        if not control:
            return own
        t0, t1 = min(c["t0_ns"] for c in xs), max(c["t1_ns"] for c in xs)
        twin = [c["ms"] for c in control if c["t0_ns"] >= t0 and c["t1_ns"] <= t1]
        return "%s/%.1f" % (own, median(twin))
    seq = ["before " + raw(before)]
    for k, (d, a) in enumerate(blocks, 1):
        seq += ["while %d %s" % (k, raw(d)), "after %d %s" % (k, raw(a))]
    if tms:
        seq.append("torch " + raw(tms))
    print("lasting: %s %s ms per call, block by block | %s | - | INFO"
          % (args.name, "own/twin" if control else "own", ", ".join(seq)))
    if args.gate_while is not None:
        ok = bool(during_all) and pct(w_med, b) <= args.gate_while
        rc |= 0 if ok else 1
        print("lasting: %s while capturing | %.1f ms/call (%+.1f%%, %d captures) | <= %g%% above idle before | %s"
              % (args.name, w_med, pct(w_med, b), len(during_all), args.gate_while, "PASS" if ok else "FAIL"))
    return rc


if __name__ == "__main__":
    sys.exit(main())
