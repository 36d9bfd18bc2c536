#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns gapscope-calibrate profiles and gapscope-decode-sim truth files into table rows
`check | measured | target | PASS/FAIL` (tests/gpu/kernels.sh)."""
import json
import statistics
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def row(check, measured, target, ok):
    print(f"{check} | {measured} | {target} | {'PASS' if ok else 'FAIL'}")


def calib(a_path, b_path):
    a, b = load(a_path), load(b_path)
    copy = a["hbm_copy_gbs"]
    row("calibrate: HBM copy bandwidth", f"{copy:.0f} GB/s", "measured", copy > 0)
    row("calibrate: HBM read bandwidth", f"{a['hbm_read_gbs']:.0f} GB/s", "measured", a["hbm_read_gbs"] > 0)
    big = [p for p in a["gemv"] if p["bytes"] >= 64 << 20]
    worst = min(p["gbs"] for p in big) if big else 0
    row("kernels: GEMV bf16 >= 64 MiB vs copy bandwidth", f"{worst / copy * 100:.1f}% (min {worst:.0f} GB/s)",
        ">= 85%", worst >= 0.85 * copy)
    for p in a.get("gemv_formats", []):
        row(f"kernels: GEMV {p['format']} {p['bytes'] >> 20} MiB", f"{p['gbs']:.0f} GB/s = {p['gbs'] / copy * 100:.1f}%",
            "report", True)
    row("calibrate: spread between repeats in one run", f"{a['max_spread_pct']:.2f}%", "<= 5%",
        a["max_spread_pct"] <= 5)
    keys = [("hbm_copy_gbs", None), ("hbm_read_gbs", None), ("bf16_matmul_tflops", None)]
    diffs = []
    for k, _ in keys:
        diffs.append(abs(a[k] - b[k]) / max(a[k], 1e-9) * 100)
    for pa, pb in zip(a["gemv"], b["gemv"]):
        if pa["bytes"] >= 64 << 20:
            diffs.append(abs(pa["us"] - pb["us"]) / pa["us"] * 100)
    for pa, pb in zip(a["allreduce"]["points"], b["allreduce"]["points"]):
        diffs.append(abs(pa["us"] - pb["us"]) / pa["us"] * 100)
    row("calibrate: two runs agree (bandwidths, GEMV >= 64 MiB, AllReduce)", f"max diff {max(diffs):.2f}%", "<= 5%",
        max(diffs) <= 5)
    row("calibrate: bf16 matmul (cuBLAS, random)", f"{a['bf16_matmul_tflops']:.0f} TFLOP/s", "measured", True)
    ar = a["allreduce"]["points"]
    if ar:
        row(f"calibrate: NCCL AllReduce x{a['allreduce']['ranks']} {ar[0]['bytes']} B / 16 KiB",
            f"{ar[0]['us']:.1f} us / {next((p['us'] for p in ar if p['bytes'] >= 16384), 0):.1f} us", "measured", True)
    la = a["launch"]
    row("calibrate: launch eager / graph fixed / per node",
        f"{la['eager_us']:.2f} / {la['graph_fixed_us']:.1f} / {la['graph_per_node_us']:.3f} us", "measured", True)


def median_ms(truth, key="measured_ns", rank=0):
    return statistics.median(s[key] for s in truth["ranks"][rank]["steps"]) / 1e6


def step(clean_path, label, budget_ms=None):
    t = load(clean_path)
    ms = median_ms(t)
    floor = t.get("floor_ns", 0) / 1e6
    c = t["config"]
    desc = f"{c['model']} tp{c['tp']} b{c['batch']} ctx{c['context']} {c['mode']}"
    if floor > 0:
        row(f"sim: clean step vs sum of per-kernel floors ({desc})", f"{ms:.3f} ms / {floor:.3f} ms = {ms / floor:.2f}x",
            "<= 1.3x", ms <= 1.3 * floor)
    if budget_ms:
        row(f"sim: clean step vs budget achievable ({desc})", f"{ms:.3f} ms / {budget_ms:.3f} ms = {ms / budget_ms:.2f}x",
            "<= 1.3x", ms <= 1.3 * budget_ms)
    prof = t["ranks"][0].get("clean_profiled_step_ns", 0) / 1e6
    row(f"sim: {label} ({desc})", f"{ms:.3f} ms (eager op-by-op profile {prof:.3f} ms)", "measured", ms > 0)


def delta(clean_path, path, label):
    c, p = load(clean_path), load(path)
    worst = 0.0
    parts = []
    for r in range(len(p["ranks"])):
        d = median_ms(p, rank=r) - median_ms(c, rank=r)
        exp = statistics.median(s["expected_extra_ns"] for s in p["ranks"][r]["steps"]) / 1e6
        err = abs(d - exp) / exp * 100 if exp > 0 else float("inf")
        worst = max(worst, err)
        parts.append(f"r{r} {d:.3f}/{exp:.3f} ms")
    spin = statistics.median(s["host_delay_ns"] for s in p["ranks"][0]["steps"]) / 1e6
    note = f" (host spin {spin:.3f} ms)" if spin > 0 else ""
    row(f"sim: {label} (measured delta / injected)", ", ".join(parts) + f", worst {worst:.1f}%" + note, "+-10%",
        worst <= 10)


def budget_ms(path):
    b = load(path)
    for k in ("achievable_ms", "achievableMs"):
        if k in b:
            return b[k]
    return b.get("totals", {}).get("achievable_ms")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "calib":
        calib(sys.argv[2], sys.argv[3])
    elif cmd == "step":
        step(sys.argv[2], sys.argv[3], float(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] else None)
    elif cmd == "delta":
        delta(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "budget":
        v = budget_ms(sys.argv[2])
        print(v if v else "")
