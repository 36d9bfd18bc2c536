#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A tensor-parallel decode loop through real PyTorch ops, for the capture checks on the GPU box.

Each rank holds 1/world of a Llama-style decoder (column-parallel QKV and gate/up projections,
row-parallel output and down projections, an NCCL all_reduce after each, RMSNorm, SDPA attention
over a static KV cache) and decodes one token per step for a batch of sequences; every step ends
with the sampled tokens copied to the host (the sync a real server does). --mode graph captures one
step in a CUDA graph and replays it, as SGLang and vLLM do.

Run with torchrun (one process per GPU):
  python3 -m torch.distributed.run --nproc_per_node 2 tp_decode.py --mode graph --out DIR \
      --phases warm:50,idle:300,capture:300:400,profile:300

Phases, in order (timed steps record their host step time):
  warm:N              N untimed steps
  idle:N              N timed steps
  capture:N:S[:RULE[:PATTERN]]  ask inject_probe (files in --control) for an S-step capture
                      (rule graph in graph mode, nvtx in eager mode; pattern decode_step), wait
                      until it records, time N steps inside it, step on until it is done
  profile:N           N timed steps under torch.profiler (CPU + CUDA); per-step kernel count and
                      kernel time from its trace are written next to the results
  profile:N:noexport  the same without exporting the trace (timing only)
  profcap:0           torch.profiler active while a capture is asked for (must be refused, profiler
                      still records)
  rss:N:EVERY         N untimed steps, sampling this process's RSS every EVERY steps
Writes DIR/rank<R>.json.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["eager", "graph"], default="graph")
    p.add_argument("--layers", type=int, default=32)
    p.add_argument("--hidden", type=int, default=8192)
    p.add_argument("--heads", type=int, default=64)
    p.add_argument("--ffn", type=int, default=28672)
    p.add_argument("--vocab", type=int, default=32768)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--context", type=int, default=2048)
    p.add_argument("--phases", default="warm:20,idle:50")
    p.add_argument("--control", default="", help="inject_probe control folder (capture phases)")
    p.add_argument("--nvtx", action="store_true", help="wrap each step in an NVTX range 'decode_step'")
    p.add_argument("--out", required=True)
    p.add_argument("--tag", default="")
    p.add_argument("--timeout", type=float, default=60.0)
    return p.parse_args()


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


class TPDecoder:
    """The model's weights and one decode step (all tensors on this rank's GPU)."""

    def __init__(self, a, rank, world, dev):
        g = torch.Generator(device=dev)
        g.manual_seed(1234 + rank)
        dt = torch.bfloat16
        self.world = world
        self.heads = a.heads // world
        self.hd = a.hidden // a.heads
        h, f = a.hidden, a.ffn // world

        def w(*shape, scale):
            return (torch.randn(*shape, generator=g, device=dev, dtype=torch.float32) * scale).to(dt)

        self.layers = []
        for _ in range(a.layers):
            self.layers.append(dict(
                n1=torch.ones(h, device=dev, dtype=dt),
                qkv=w(h, 3 * self.heads * self.hd, scale=h ** -0.5),
                o=w(self.heads * self.hd, h, scale=(h) ** -0.5),
                n2=torch.ones(h, device=dev, dtype=dt),
                gu=w(h, 2 * f, scale=h ** -0.5),
                down=w(f, h, scale=(a.ffn) ** -0.5),
                k=torch.zeros(a.batch, self.heads, a.context, self.hd, device=dev, dtype=dt),
                v=torch.zeros(a.batch, self.heads, a.context, self.hd, device=dev, dtype=dt),
            ))
        self.norm = torch.ones(h, device=dev, dtype=dt)
        self.lm_head = w(h, a.vocab // world, scale=h ** -0.5)
        self.embed = w(a.vocab // world, h, scale=1.0)
        self.pos = torch.zeros(1, dtype=torch.long, device=dev)
        self.ctx = a.context
        self.x = w(a.batch, h, scale=1.0)
        self.tokens = torch.zeros(a.batch, dtype=torch.long, device=dev)

    @staticmethod
    def rms(x, weight):
        return F.rms_norm(x, (x.shape[-1],), weight, 1e-5)

    def step(self):
        x = self.x
        b = x.shape[0]
        for L in self.layers:
            h = self.rms(x, L["n1"])
            q, k, v = (h @ L["qkv"]).view(b, 3, self.heads, 1, self.hd).unbind(1)
            L["k"].index_copy_(2, self.pos, k)
            L["v"].index_copy_(2, self.pos, v)
            att = F.scaled_dot_product_attention(q, L["k"], L["v"])
            o = att.reshape(b, -1) @ L["o"]
            dist.all_reduce(o)
            x = x + o
            h = self.rms(x, L["n2"])
            gate, up = (h @ L["gu"]).chunk(2, dim=-1)
            d = (F.silu(gate) * up) @ L["down"]
            dist.all_reduce(d)
            x = x + d
        logits = self.rms(x, self.norm) @ self.lm_head
        self.tokens.copy_(logits.argmax(dim=-1))
        self.x.copy_(self.embed[self.tokens])
        self.pos.add_(1).remainder_(self.ctx)


class Loop:
    def __init__(self, a, model, rank):
        self.a = a
        self.m = model
        self.rank = rank
        self.graph = None
        self.host_tokens = torch.zeros(a.batch, dtype=torch.long, pin_memory=True)
        if a.mode == "graph":
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    model.step()
            torch.cuda.current_stream().wait_stream(s)
            torch.cuda.synchronize()
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                model.step()
            torch.cuda.synchronize()

    def step(self):
        if self.a.nvtx:
            torch.cuda.nvtx.range_push("decode_step")
        if self.graph is not None:
            self.graph.replay()
        else:
            self.m.step()
        # Sampling: the tokens go to the host every step (a real server's per-step sync).
        self.host_tokens.copy_(self.m.tokens, non_blocking=False)
        if self.a.nvtx:
            torch.cuda.nvtx.range_pop()

    def timed(self, n, mark=None):
        times = []
        starts = []
        t_prev = time.perf_counter()
        for i in range(n):
            starts.append(time.time_ns())
            self.step()
            t = time.perf_counter()
            times.append((t - t_prev) * 1e3)
            t_prev = t
            if mark:
                mark(i)
        return times, starts


def control_flag(group, value):
    """Rank 0's decision, shared over the CPU (gloo) group: no GPU work, no extra kernels."""
    t = torch.tensor([1 if value else 0], dtype=torch.int32)
    dist.broadcast(t, src=0, group=group)
    return bool(t.item())


def summary(times):
    if not times:
        return {}
    s = sorted(times)
    return dict(steps=len(times), median_ms=statistics.median(times), mean_ms=statistics.fmean(times),
                p10_ms=s[len(s) // 10], p90_ms=s[(len(s) * 9) // 10], min_ms=s[0], max_ms=s[-1])


def capture_phase(loop, a, cpu, name, timed_steps, steps, rule, pattern):
    ctrl = a.control
    base = os.path.join(ctrl, name)
    if loop.rank == 0:
        with open(base + ".req.tmp", "w") as f:
            f.write(f"ranks={dist.get_world_size()} steps={steps} rule={rule} pattern={pattern} "
                    f"timeout_s={a.timeout} lead_ms=150\n")
        os.rename(base + ".req.tmp", base + ".req")
    t0 = time.time()
    waited = 0
    rss = [dict(step=0, rss_mb=rss_mb())]
    # Stop waiting when it records, or when the probe is done without recording (arm refused).
    while not control_flag(cpu, loop.rank == 0 and (os.path.exists(base + ".recording") or os.path.exists(base + ".done")
                                                    or time.time() - t0 > a.timeout)):
        loop.step()
        waited += 1
    times, starts = loop.timed(timed_steps)
    after = 0
    while not control_flag(cpu, loop.rank == 0 and (os.path.exists(base + ".done")
                                                    or time.time() - t0 > a.timeout)):
        loop.step()
        after += 1
        if after % 500 == 0:
            rss.append(dict(step=after, t=time.time() - t0, rss_mb=rss_mb()))
    rss.append(dict(step=after, t=time.time() - t0, rss_mb=rss_mb()))
    return dict(kind="capture", name=name, waited_steps=waited, steps_after=after, capture_steps=steps,
                recording_seen=os.path.exists(base + ".recording"), step_starts_ns=starts,
                times_ms=times, rss=rss, **summary(times))


def profcap_phase(loop, a, cpu, name):
    """torch.profiler running while a gapscope capture is asked for: the capture must be refused
    with the other client named, and the profiler must still record the kernels."""
    from torch.profiler import ProfilerActivity, profile
    base = os.path.join(a.control, name)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            loop.step()
        if loop.rank == 0:
            with open(base + ".req.tmp", "w") as f:
                f.write(f"ranks={dist.get_world_size()} steps=0 duration_s=0.5 rule=time timeout_s=30\n")
            os.rename(base + ".req.tmp", base + ".req")
        t0 = time.time()
        n = 0
        while not control_flag(cpu, loop.rank == 0 and (os.path.exists(base + ".done") or time.time() - t0 > 40)):
            loop.step()
            n += 1
    kernels = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    return dict(kind="profcap", name=name, steps=n + 5, profiler_kernels=kernels)


def profile_phase(loop, a, n, name, export=True):
    from torch.profiler import ProfilerActivity, profile, record_function
    starts = []
    times = []
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t_prev = time.perf_counter()
        for i in range(n):
            starts.append(time.time_ns())
            with record_function(f"gapscope_step_{i}"):
                loop.step()
            t = time.perf_counter()
            times.append((t - t_prev) * 1e3)
            t_prev = t
    per_step = []
    if export:
        trace = os.path.join(a.out, f"{name}-rank{loop.rank}.trace.json")
        prof.export_chrome_trace(trace)
        per_step = kernels_per_step(trace)
        try:
            os.remove(trace)
        except OSError:
            pass
    return dict(kind="profile", name=name, times_ms=times, step_starts_ns=starts, per_step=per_step,
                **summary(times))


def kernels_per_step(path):
    """Per step (record_function gapscope_step_i): kernels whose launch (by correlation id) lies
    inside the step's CPU range; their count and summed duration (us)."""
    with open(path) as f:
        trace = json.load(f)
    ev = trace["traceEvents"] if isinstance(trace, dict) else trace
    steps = []
    launches = {}
    kernels = []
    for e in ev:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat", "")
        name = e.get("name", "")
        if cat == "user_annotation" and name.startswith("gapscope_step_"):
            steps.append((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)), int(name.rsplit("_", 1)[1])))
        elif cat in ("cuda_runtime", "cuda_driver"):
            corr = e.get("args", {}).get("correlation")
            if corr is not None:
                launches[corr] = float(e["ts"])
        elif cat == "kernel":
            kernels.append((e.get("args", {}).get("correlation"), float(e.get("dur", 0)), "nccl" in name))
    steps.sort()
    out = {i: dict(kernels=0, kernel_us=0.0, compute_kernel_us=0.0) for _, _, i in steps}
    for corr, dur, nccl in kernels:
        ts = launches.get(corr)
        if ts is None:
            continue
        for s0, s1, i in steps:
            if s0 <= ts <= s1:
                out[i]["kernels"] += 1
                out[i]["kernel_us"] += dur
                if not nccl:  # NCCL kernels also hold the wait for the other ranks
                    out[i]["compute_kernel_us"] += dur
                break
    return [dict(index=i, **out[i]) for i in sorted(out)]


def main():
    a = parse_args()
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    cpu = dist.new_group(backend="gloo")
    os.makedirs(a.out, exist_ok=True)
    t_init = time.time()
    model = TPDecoder(a, rank, world, dev)
    loop = Loop(a, model, rank)
    torch.cuda.synchronize()
    dist.barrier()
    result = dict(rank=rank, world=world, mode=a.mode, tag=a.tag, layers=a.layers, hidden=a.hidden,
                  batch=a.batch, context=a.context, injected=bool(os.environ.get("CUDA_INJECTION64_PATH")),
                  init_s=time.time() - t_init, phases=[], rss_mb_start=rss_mb())
    for spec in a.phases.split(","):
        parts = spec.split(":")
        kind, n = parts[0], int(parts[1])
        name = f"{a.tag or a.mode}-{len(result['phases'])}-{kind}"
        if kind == "warm":
            for _ in range(n):
                loop.step()
            torch.cuda.synchronize()
            continue
        if kind == "idle":
            times, starts = loop.timed(n)
            result["phases"].append(dict(kind="idle", name=name, times_ms=times, step_starts_ns=starts, **summary(times)))
        elif kind == "capture":
            steps = int(parts[2]) if len(parts) > 2 else n
            rule = parts[3] if len(parts) > 3 else ("graph" if a.mode == "graph" else "nvtx")
            pattern = parts[4] if len(parts) > 4 else "decode_step"
            result["phases"].append(capture_phase(loop, a, cpu, name, n, steps, rule, pattern))
        elif kind == "profcap":
            result["phases"].append(profcap_phase(loop, a, cpu, name))
        elif kind == "profile":
            result["phases"].append(profile_phase(loop, a, n, name, export=len(parts) < 3 or parts[2] != "noexport"))
        elif kind == "rss":
            every = int(parts[2]) if len(parts) > 2 else 500
            samples = []
            t0 = time.time()
            for i in range(n):
                loop.step()
                if i % every == 0:
                    samples.append(dict(step=i, t=time.time() - t0, rss_mb=rss_mb()))
            samples.append(dict(step=n, t=time.time() - t0, rss_mb=rss_mb()))
            result["phases"].append(dict(kind="rss", name=name, samples=samples))
        print(f"[rank {rank}] {name}: {json.dumps({k: v for k, v in result['phases'][-1].items() if not isinstance(v, list)})}",
              flush=True)
    result["rss_mb_end"] = rss_mb()
    with open(os.path.join(a.out, f"{a.tag or a.mode}-rank{rank}.json"), "w") as f:
        json.dump(result, f)
    # Tearing down a NCCL group whose collectives live in a captured CUDA graph can hang: meet on
    # the CPU group and leave without it.
    dist.barrier(group=cpu)
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
