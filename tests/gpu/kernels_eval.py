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


def figures(p):
    """Every figure of a profile by name (the names of gapscope-calibrate's table)."""
    f = {"hbm copy": p["hbm_copy_gbs"], "hbm read": p["hbm_read_gbs"], "bf16 matmul": p["bf16_matmul_tflops"]}
    for q in p["gemv"]:
        f[f"gemv bf16 {q['bytes'] >> 20} MiB"] = q["us"]
    for q in p.get("gemv_formats", []):
        f[f"gemv {q['format']} {q['bytes'] >> 20} MiB"] = q["us"]
    for q in p.get("gemv_variants", []):
        f[f"gemv bf16 {q['bytes'] >> 20} MiB {q['schedule']}"] = q["us"]
    for q in p.get("copy_per_launch", []):
        f[f"copy per launch {q['bytes'] >> 20} MiB"] = q["us"]
    for q in p.get("read_per_launch", []):
        f[f"read per launch {q['bytes'] >> 20} MiB"] = q["us"]
    for k in ("eager_us", "graph_fixed_us", "graph_per_node_us"):
        f[f"launch {k}"] = p["launch"][k]
    for q in p["allreduce"]["points"]:
        f[f"allreduce {q['bytes']} B"] = q["us"]
    return f


def worst_spread_row(log_path):
    """The figure with the largest spread between repeats in a gapscope-calibrate table, with every
    repeat's value (rows: name, median, unit, spread%, [repeats])."""
    try:
        rows = []
        for line in open(log_path):
            if "%  [" not in line:
                continue
            head, reps = line.split("%  [", 1)
            name, _, _, spread = head.rsplit(None, 3)
            rows.append((float(spread), name.strip(), reps.strip().rstrip("]")))
        spread, name, reps = max(rows)
        return f"{name} {spread:.2f}%: {reps}"
    except (OSError, ValueError, IndexError):
        return "?"


def calib(a_path, b_path):
    a, b = load(a_path), load(b_path)
    copy = a["hbm_copy_gbs"]
    row("calibrate: HBM copy bandwidth (2 GiB cudaMemcpy, read+write)", f"{copy:.0f} GB/s", "measured", copy > 0)
    row("calibrate: HBM read bandwidth", f"{a['hbm_read_gbs']:.0f} GB/s", "measured", a["hbm_read_gbs"] > 0)
    curve = ", ".join(f"{p['bytes'] >> 20}:{p['gbs']:.0f}" for p in a["gemv"])
    row("kernels: GEMV bf16 curve, MiB:GB/s per launch", curve, "report", True)
    big = [p for p in a["gemv"] if p["bytes"] >= 64 << 20]
    worst = min(big, key=lambda p: p["gbs"]) if big else {"gbs": 0, "bytes": 0}
    row("kernels: GEMV bf16 >= 64 MiB vs copy bandwidth", f"{worst['gbs'] / copy * 100:.1f}% (min {worst['gbs']:.0f} GB/s "
        f"at {worst['bytes'] >> 20} MiB)", ">= 85%", worst["gbs"] >= 0.85 * copy)
    gemv = {p["bytes"]: p for p in a["gemv"]}
    for c in a.get("copy_per_launch", []):
        g = gemv.get(c["bytes"])
        if g:
            row(f"kernels: GEMV bf16 {c['bytes'] >> 20} MiB vs copy of the same size per launch",
                f"{g['us']:.2f} us vs {c['us']:.2f} us: {g['gbs']:.0f} vs {c['gbs']:.0f} GB/s = {g['gbs'] / c['gbs'] * 100:.1f}%",
                "report", True)
    for r in a.get("read_per_launch", []):
        g = gemv.get(r["bytes"])
        if g:
            row(f"kernels: GEMV bf16 {r['bytes'] >> 20} MiB vs a streaming read of the same size per launch",
                f"{g['us']:.2f} us vs {r['us']:.2f} us: read {r['gbs']:.0f} GB/s = {r['gbs'] / copy * 100:.1f}% of the copy "
                f"bandwidth; GEMV at {r['us'] / g['us'] * 100:.1f}% of the read", "report", True)
    ks = a.get("gemv_kernels", [])
    if ks:
        row("kernels: GEMV kernel registers (blocks of 256 threads per SM)",
            ", ".join(f"{k['kernel']} {k['registers']} ({k['blocks_per_sm']})" for k in ks), "report", True)
    for v in a.get("gemv_variants", []):
        row(f"kernels: GEMV bf16 {v['bytes'] >> 20} MiB, schedule {v['schedule']}",
            f"{v['us']:.2f} us = {v['gbs']:.0f} GB/s = {v['gbs'] / copy * 100:.1f}%", "report", True)
    for p in a.get("gemv_formats", []):
        row(f"kernels: GEMV {p['format']} {p['bytes'] >> 20} MiB", f"{p['gbs']:.0f} GB/s = {p['gbs'] / copy * 100:.1f}%",
            "report", True)
    fa, fb = figures(a), figures(b)
    diffs = {k: abs(fa[k] - fb[k]) / max(abs(fa[k]), 1e-9) * 100 for k in fa if k in fb}
    # The eager launch cost and the graph launch's fixed part are set by the host CPU (launch
    # throughput, host work around the replay); every other figure by the GPU (bandwidths, kernel
    # times, AllReduce, matmul, and the per-node slope of graph replays).
    host = {"launch eager_us", "launch graph_fixed_us"}
    for label, keys in (("GPU-bound figures", [k for k in diffs if k not in host]),
                        ("CPU-bound launch figures", [k for k in diffs if k in host])):
        if keys:
            name = max(keys, key=diffs.get)
            row(f"calibrate: two runs agree, {label} ({len(keys)})", f"max diff {diffs[name]:.2f}% ({name}: "
                f"{fa[name]:.3f} vs {fb[name]:.3f})", "<= 5%", diffs[name] <= 5)
    log = a_path[:-5] + ".log" if a_path.endswith(".json") else ""
    row("calibrate: largest spread between the 3 repeats of one run", worst_spread_row(log), "report", True)
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
        # The target is the graph-mode step (one CUDA graph per step, as engines run decode) against
        # the budget's achievable column; the sum of the per-kernel floors stands in only when no
        # budget was computed. The eager step, with its launch gaps, is reported against the floors.
        target = c["mode"] == "graph" and not budget_ms
        row(f"sim: clean step vs sum of per-kernel floors ({desc})", f"{ms:.3f} ms / {floor:.3f} ms = {ms / floor:.2f}x",
            "<= 1.3x" if target else "report", ms <= 1.3 * floor or not target)
    if budget_ms:
        row(f"sim: clean step vs budget achievable ({desc})", f"{ms:.3f} ms / {budget_ms:.3f} ms = {ms / budget_ms:.2f}x",
            "<= 1.3x", ms <= 1.3 * budget_ms)
    prof = t["ranks"][0].get("clean_profiled_step_ns", 0) / 1e6
    row(f"sim: {label} ({desc})", f"{ms:.3f} ms (op-by-op profile, an event between ops: {prof:.3f} ms)", "measured",
        ms > 0)
    ops = t["ranks"][0].get("clean_ops", {})
    top = sorted(ops.items(), key=lambda kv: -kv[1]["ns"])[:4]
    if top and top[0][1]["ns"] > 0:
        row(f"sim: largest ops per step ({desc})", ", ".join(f"{k} {v['ns'] / 1e3:.0f} us/{v['count']}" for k, v in top),
            "report", True)


def delta(clean_path, path, label, mode="exact"):
    """Step delta against the clean run vs the injected amount per rank. mode "bounds": the GPU-visible
    idle from events is a lower bound and the host spin an upper bound (eager thread delays: queued
    work hides part of each delay, and the launches after it can leave the GPU idle too). mode
    "lower": the injected amount is only a lower bound (eager syncs: after each one the host launches
    the next layer from an empty queue, and the GPU waits on those launches as well)."""
    c, p = load(clean_path), load(path)
    worst = 0.0
    ok = True
    parts = []
    spin = statistics.median(s["host_delay_ns"] for s in p["ranks"][0]["steps"]) / 1e6
    # Ranks meet at every collective, so each step grows by what the rank that lost the most time
    # injected (the others wait for it in the collective): per step the largest expected amount.
    steps = [{s["index"]: s["expected_extra_ns"] for s in rk["steps"]} for rk in p["ranks"]]
    exp = statistics.median(max(st.get(i, 0) for st in steps) for i in steps[0]) / 1e6
    for r in range(len(p["ranks"])):
        d = median_ms(p, rank=r) - median_ms(c, rank=r)
        if mode == "bounds":
            ok = ok and 0.9 * exp <= d <= 1.1 * spin
            parts.append(f"r{r} {d:.3f} in [{exp:.3f}, {spin:.3f}] ms")
            continue
        err = abs(d - exp) / exp * 100 if exp > 0 else float("inf")
        worst = max(worst, err)
        parts.append(f"r{r} {d:.3f}/{exp:.3f} ms")
    if mode == "bounds":
        row(f"sim: {label} (measured delta within [GPU idle from events (largest rank), host spin])", ", ".join(parts),
            "-10% .. +10%", ok)
        return
    if mode == "lower":
        lowest = min(median_ms(p, rank=r) - median_ms(c, rank=r) for r in range(len(p["ranks"])))
        row(f"sim: {label} (measured delta / GPU idle at the syncs, largest rank per step)",
            ", ".join(parts) + f": the idle is {exp / lowest * 100 if lowest > 0 else 0:.0f}% of the delta",
            "report (a lower bound)", lowest >= 0.9 * exp)
        return
    note = f" (host spin {spin:.3f} ms)" if spin > 0 else ""
    if any(rk.get("boundary_ns") for rk in p["ranks"]):
        note += " (per boundary outside the markers: " + ", ".join(
            f"r{rk['rank']} {rk.get('boundary_ns', 0) / 1e3:.2f} us" for rk in p["ranks"]) + ")"
    row(f"sim: {label} (measured delta / injected, largest rank per step)", ", ".join(parts) + f", worst {worst:.1f}%" + note,
        "+-10%", worst <= 10)


def tokens(paths):
    """The next tokens every rank computed at the end of each run, grouped by launch mode: runs with
    the same shapes, seed and step count compute the same tokens whatever was injected, so a
    difference means a race (e.g. a kernel reading its input before the one before it finished)."""
    by_mode = {}
    for path in paths:
        t = load(path)
        key = (t["config"].get("mode"), t["config"].get("model"), t["config"].get("steps"), t["config"].get("warmup"))
        for r in t["ranks"]:
            by_mode.setdefault(key, {}).setdefault(tuple(r.get("last_tokens", [])), []).append(
                f"{path.rsplit('/', 1)[-1]}:r{r['rank']}")
    for (mode, model, steps, _), seen in sorted(by_mode.items(), key=lambda kv: str(kv[0])):
        runs = sum(len(v) for v in seen.values())
        detail = "; ".join(f"{list(tok)} in {len(where)}" for tok, where in seen.items())
        row(f"sim: next tokens equal across the {mode} runs ({model}, {steps} steps)", f"{runs} rank runs: {detail}",
            "one value", len(seen) == 1)


def attention(path):
    """tests/bench/bench_attention.sh output: one row per shape, the tensor-core and CUDA-core
    kernels at their own split choice against the read floor. PASS when the tensor-core output
    matches the CUDA-core kernel's within 1e-3 (outputs are about 1e-2 on these random inputs)."""
    shape, floor, rows = None, None, {}

    def flush():
        if not shape:
            return
        tc, cc = rows.get(("tensor_cores", "auto")), rows.get(("cuda_cores", "auto"))
        if not tc or not cc or not floor:
            row(f"attention alone: {shape}", "incomplete output", "both kernels", False)
            return
        best = min((v[0], k[1]) for k, v in rows.items() if k[0] == "tensor_cores")
        measured = (f"tensor cores {tc[0]:.2f} us (split {tc[1]:.2f} + combine {tc[2]:.2f}), CUDA cores {cc[0]:.2f} us, "
                    f"read floor {floor:.2f} us; {tc[0] / floor:.2f}x floor; best splits {best[1]} {best[0]:.2f} us; "
                    f"max diff {tc[4]:.1e}")
        row(f"attention alone: {shape}", measured, "report; outputs agree (1e-3)", tc[4] <= 1e-3)

    for line in open(path):
        if line.startswith("decode attention:"):
            flush()
            shape, floor, rows = line.split(":", 1)[1].split(", NVIDIA")[0].strip(), None, {}
        elif line.startswith("read floor"):
            floor = float(line.split(":")[1].split()[0])
        else:
            f = line.split()
            if len(f) == 7 and f[0] in ("tensor_cores", "cuda_cores"):
                rows[(f[0], f[1])] = [float(x) for x in f[2:]]
    flush()


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
        delta(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else "exact")
    elif cmd == "step_ms":
        print(round(median_ms(load(sys.argv[2])), 3))
    elif cmd == "tokens":
        tokens(sys.argv[2:])
    elif cmd == "attention":
        attention(sys.argv[2])
    elif cmd == "budget":
        v = budget_ms(sys.argv[2])
        print(v if v else "")
