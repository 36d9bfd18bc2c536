#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes multi-rank torch.profiler (Kineto) traces of a tensor-parallel decode loop, one .json.gz per
rank, shaped like the files torch 2.x writes on H200s (the field names, categories, argument sets and
launch APIs of tests/import/fixtures/kineto/rank*.json.gz and of HTA's nccl_data trace):

- `decode_step` host ranges (cat user_annotation) enclosing cpu_op ranges, each with the launch call
  (cuda_runtime cudaLaunchKernel, or cuda_driver cuLaunchKernelEx for nvjet GEMMs and NCCL) whose
  correlation id the kernel carries, plus the ac2g flow pair; `nccl:all_reduce` / `nccl:all_gather`
  user annotations around the collectives; gpu_user_annotation copies of every range on the GPU;
- NCCL kernels with the `Collective name`, `In msg nelems`, `dtype`, `Process Group Name` ... args,
  on two process groups ("0": all-reduce after attention and after the MLP of each layer, "1":
  all-gather of the logits);
- the host enqueues up to `DEPTH` steps ahead of the GPU (it blocks only then);
- the ranks share one clock; every collective ends on all ranks when the last one has arrived plus
  its wire time.

The story of each fixture (world steps 0..12):
- the capture of the late rank starts about 1 s after the others: the others' first all-reduce waits
  for it that long; its own step 0 host range began before its capture (not recorded, its first
  kernels neither), so it records the host ranges of steps 1..12 while the others record 0..11;
- one rank launches one extra kernel in step 5;
- one rank sleeps in step 7 (torch.cuda._sleep: a 2 ms spin kernel before that step's third
  all-reduce): every other rank waits for it there;
- one rank runs its GEMMs 6% slower (it arrives last at most collectives).

Each fixture also comes as SGLang writes it (tp2_sglang/, tp8_sglang/): per-rank files named
`{id}-TP-{t}.trace.json.gz` (tp8: `-TP-{t}-DP-{d}`, four TP ranks per DP group) without
distributedInfo, and the merged file of its merge_profiles option.

Usage: make_crossrank_fixtures.py OUTDIR  (writes tp2/rank{0,1}.json.gz, tp8/rank{0..7}.json.gz and
the *_sglang/ variants)
Deterministic: a fixed seed per fixture.
"""
import gzip
import json
import os
import random
import sys

US = 1.0  # times below are in microseconds, as Kineto writes them
LAYERS = 6
DEPTH = 4  # steps the host may run ahead of the GPU
WORLD_STEPS = 14  # steps the loop runs; which of them each rank records depends on its capture window
SKEW_US = 1_000_000.0
LAUNCH_LATENCY = 4.0
T0 = 5_200_000_000.0  # trace start in us (Kineto's absolute ts)

GEMM = "nvjet_sm90_tst_64x8_64x16_4x2_h_bz_NNT"
ATTN = "void flashinfer::BatchDecodeWithPagedKVCacheKernel<128u, 8u, 16u, 4u, 1u, 8u>(flashinfer::paged_kv_t)"
NORM = "void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, unsigned int, unsigned int, float)"
ACT = "void flashinfer::activation::act_and_mul_kernel<__nv_bfloat16, &silu>(__nv_bfloat16*, __nv_bfloat16 const*, int)"
ARGMAX = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::ArgMaxOps<c10::BFloat16>, unsigned int, long, 4> >(at::native::ReduceOp<c10::BFloat16, at::native::ArgMaxOps<c10::BFloat16>, unsigned int, long, 4>)"
EXTRA = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)"
SPIN = "at::cuda::(anonymous namespace)::spin_kernel(long)"
AR = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
AG = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"

# (kind, cpu op, kernel, mean duration us); kind: k = kernel, ar/ag = collective
LAYER_OPS = [
    ("k", "aten::mm", GEMM, 38.0),
    ("k", "flashinfer::batch_decode", ATTN, 22.0),
    ("k", "aten::mm", GEMM, 20.0),
    ("ar", "c10d::allreduce_", AR, 12.0),
    ("k", "sgl_kernel::fused_add_rmsnorm", NORM, 4.0),
    ("k", "aten::mm", GEMM, 52.0),
    ("k", "sgl_kernel::silu_and_mul", ACT, 5.0),
    ("k", "aten::mm", GEMM, 41.0),
    ("ar", "c10d::allreduce_", AR, 12.0),
    ("k", "sgl_kernel::fused_add_rmsnorm", NORM, 4.0),
]
TAIL_OPS = [
    ("k", "aten::mm", GEMM, 60.0),
    ("ag", "c10d::_allgather_base_", AG, 9.0),
    ("k", "aten::argmax", ARGMAX, 6.0),
]
PG = {"ar": ("0", "default_pg", 16384, "allreduce"), "ag": ("1", "tp_group", 151936, "_allgather_base")}


class Rank:
    def __init__(self, r):
        self.r = r
        self.host = T0  # host cursor
        self.gpu = T0  # end of the last GPU work on the stream
        self.events = []  # trace events (dicts), recorded or not
        self.ext = 0
        self.corr = 0
        self.step_gpu_end = {}


def ops_of(cfg, r, step):
    ops = []
    for _ in range(LAYERS):
        ops += LAYER_OPS
    ops = ops + TAIL_OPS
    if r == cfg["extra_rank"] and step == cfg["extra_step"]:
        ops = ops[:2] + [("k", "aten::fill_", EXTRA, 3.0)] + ops[2:]
    if r == cfg["sleep_rank"] and step == cfg["sleep_step"]:
        third = [i for i, o in enumerate(ops) if o[0] == "ar"][2]
        ops = ops[:third] + [("k", "", SPIN, cfg["sleep_us"])] + ops[third:]
    return ops


def simulate(cfg):
    rng = random.Random(cfg["seed"])
    n = cfg["ranks"]
    ranks = [Rank(r) for r in range(n)]
    late = cfg["late_rank"]
    capture = {}
    for rk in ranks:
        start = T0 + (SKEW_US if rk.r == late else 0.0)
        capture[rk.r] = [start, None]
        rk.host = start + (-40.0 if rk.r == late else 50.0)
    for step in range(WORLD_STEPS):
        # Host side of every rank: one decode_step range, launches at the host's pace.
        plan = []
        for rk in ranks:
            if step >= DEPTH:
                rk.host = max(rk.host, rk.step_gpu_end[step - DEPTH] + 15.0)
            ops = ops_of(cfg, rk.r, step)
            s0 = rk.host
            rk.ext += 1
            step_ext = rk.ext
            launches = []
            t = s0 + 6.0
            for kind, cpu, kernel, mean in ops:
                rk.ext += 1
                rk.corr += 1
                launches.append((t, rk.ext, rk.corr))
                t += 11.0 + rng.random() * 3.0
            rk.host = t + 5.0
            plan.append((rk, ops, s0, step_ext, launches))
        # GPU side: run every rank up to its next collective, then resolve it on all ranks.
        pos = [0] * n
        gpu_rec = [[] for _ in range(n)]
        while True:
            for i, (rk, ops, _, _, launches) in enumerate(plan):
                while pos[i] < len(ops) and ops[pos[i]][0] == "k":
                    kind, cpu, kernel, mean = ops[pos[i]]
                    factor = cfg["slow_factor"] if (rk.r == cfg["slow_rank"] and kernel == GEMM) else 1.0
                    dur = mean if kernel == SPIN else mean * factor * (1.0 + (rng.random() - 0.5) * 0.06)
                    start = q(max(rk.gpu, launches[pos[i]][0] + LAUNCH_LATENCY))
                    end = q(start + dur)
                    gpu_rec[i].append((pos[i], start, end - start))
                    rk.gpu = end
                    pos[i] += 1
            if all(pos[i] >= len(plan[i][1]) for i in range(n)):
                break
            kinds = {plan[i][1][pos[i]][0] for i in range(n)}
            assert len(kinds) == 1, "ranks disagree on the next collective"
            kind = kinds.pop()
            arrivals = [q(max(plan[i][0].gpu, plan[i][4][pos[i]][0] + LAUNCH_LATENCY)) for i in range(n)]
            wire = plan[0][1][pos[0]][3] * (1.0 + rng.random() * 0.1)
            end = q(max(arrivals) + wire)
            for i in range(n):
                gpu_rec[i].append((pos[i], arrivals[i], end - arrivals[i]))
                plan[i][0].gpu = end
                pos[i] += 1
        for i, (rk, ops, s0, step_ext, launches) in enumerate(plan):
            rk.step_gpu_end[step] = rk.gpu
            emit_step(cfg, rk, step, ops, s0, step_ext, launches, gpu_rec[i])
    # Capture windows: the late rank records steps 1..12 (its stop comes one step later), the
    # others 0..11. A capture ends when the host leaves the last recorded range; the kernels it
    # launched until then are recorded (the profiler drains the device at stop).
    for rk in ranks:
        last = 12 if rk.r == late else 11
        end_host = [e for e in rk.events if e.get("_step") == last and e["name"] == "decode_step"][0]
        capture[rk.r][1] = end_host["ts"] + end_host["dur"] + 10.0
    return ranks, capture


def emit_step(cfg, rk, step, ops, s0, step_ext, launches, gpu):
    r = rk.r
    pid, tid = 4000 + r, 4000 + r
    host_end = launches[-1][0] + 16.0
    ev = rk.events
    ev.append(x("user_annotation", "decode_step", pid, tid, s0, host_end - s0,
                {"External id": step_ext, "Record function id": 0, "Ev Idx": step_ext}, step=step))
    gpu_by_pos = {p: (s, d) for p, s, d in gpu}
    for p, (kind, cpu, kernel, mean) in enumerate(ops):
        lt, ext, corr = launches[p]
        start, dur = gpu_by_pos[p]
        karg = {"External id": ext, "queued": 0, "device": r, "context": 1, "stream": 7, "correlation": corr,
                "registers per thread": 128, "shared memory": 0, "blocks per SM": 0.5, "warps per SM": 4.0,
                "grid": [66, 1, 1], "block": [256, 1, 1], "est. achieved occupancy %": 6}
        if kind in ("ar", "ag"):
            name, desc, nelems, coll = PG[kind]
            group = list(range(cfg["ranks"]))
            karg.update({"Collective name": coll, "In msg nelems": nelems,
                         "Out msg nelems": nelems * (cfg["ranks"] if kind == "ag" else 1),
                         "Group size": cfg["ranks"], "dtype": "BFloat16", "In split size": "[]",
                         "Out split size": "[]", "Process Group Name": name, "Process Group Description": desc,
                         "Process Group Ranks": json.dumps(group)})
            ann = "nccl:all_reduce" if kind == "ar" else "nccl:_all_gather_base"
            ev.append(x("user_annotation", ann, pid, tid, lt - 4.0, 10.0,
                        {"External id": ext, "Record function id": 0, "Ev Idx": ext}, step=step))
            ev.append(x("gpu_user_annotation", ann, r, 7, start, dur, {"External id": ext}, step=step))
            api = ("cuda_driver", "cuLaunchKernelEx", 652)
        elif kernel == GEMM:
            api = ("cuda_driver", "cuLaunchKernelEx", 652)
        else:
            api = ("cuda_runtime", "cudaLaunchKernel", 211)
        if cpu:
            ev.append(x("cpu_op", cpu, pid, tid, lt - 3.0, 9.0,
                        {"External id": ext, "Record function id": 0, "Sequence number": ext, "Fwd thread id": 0,
                         "Ev Idx": ext}, step=step))
        ev.append(x(api[0], api[1], pid, tid, lt, 5.0, {"External id": ext, "cbid": api[2], "correlation": corr},
                    step=step, gpu_start=start))
        ev.append({"ph": "s", "id": corr, "pid": pid, "tid": tid, "ts": rnd(lt), "cat": "ac2g", "name": "ac2g",
                   "_step": step, "_launch": lt})
        ev.append(x("kernel", kernel, r, 7, start, dur, karg, step=step, launch=lt))
        ev.append({"ph": "f", "id": corr, "pid": r, "tid": 7, "ts": rnd(start), "cat": "ac2g", "name": "ac2g",
                   "bp": "e", "_step": step, "_launch": lt, "_gpu": True})
    first = min(s for _, s, _ in gpu)
    last = max(s + d for _, s, d in gpu)
    ev.append(x("gpu_user_annotation", "decode_step", r, 7, first, last - first, {"External id": step_ext}, step=step))


def q(t):
    """GPU times fall on whole nanoseconds (as CUPTI's do), so back-to-back kernels touch exactly."""
    return round(t * 1000.0) / 1000.0


def rnd(t):
    return round(t, 3)


def x(cat, name, pid, tid, ts, dur, args, step=None, launch=None, gpu_start=None):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": rnd(ts), "dur": rnd(dur), "args": args}
    e["_step"] = step
    if launch is not None:
        e["_launch"] = launch
    if cat in ("kernel", "gpu_user_annotation"):
        e["_gpu"] = True
    return e


def recorded(e, window):
    c0, c1 = window
    if e.get("_gpu"):
        # GPU work is recorded when it starts inside the capture and was launched before its end.
        launch = e.get("_launch", e["ts"])
        return e["ts"] >= c0 and launch <= c1
    return e["ts"] >= c0 and e["ts"] + e.get("dur", 0.0) <= c1


def write(cfg, ranks, capture, outdir):
    os.makedirs(outdir, exist_ok=True)
    n = cfg["ranks"]
    docs = []
    for rk in ranks:
        r = rk.r
        c0, c1 = capture[r]
        events = []
        for e in rk.events:
            if recorded(e, (c0, c1)):
                events.append({k: v for k, v in e.items() if not k.startswith("_")})
        events.sort(key=lambda e: (e["ts"], 0 if e["ph"] == "X" else 1))
        pid = 4000 + r
        meta = [
            {"name": "process_name", "ph": "M", "ts": rnd(c0), "pid": pid, "tid": 0, "args": {"name": "python3"}},
            {"name": "process_labels", "ph": "M", "ts": rnd(c0), "pid": pid, "tid": 0, "args": {"labels": "CPU"}},
            {"name": "process_name", "ph": "M", "ts": rnd(c0), "pid": r, "tid": 0, "args": {"name": "python3"}},
            {"name": "process_labels", "ph": "M", "ts": rnd(c0), "pid": r, "tid": 0,
             "args": {"labels": "GPU %d" % r}},
            {"name": "thread_name", "ph": "M", "ts": rnd(c0), "pid": r, "tid": 7, "args": {"name": "stream 7 "}},
            {"name": "thread_name", "ph": "M", "ts": rnd(c0), "pid": pid, "tid": pid,
             "args": {"name": "thread %d (python3)" % pid}},
            {"ph": "X", "cat": "Trace", "ts": rnd(c0), "dur": rnd(c1 - c0), "pid": "Spans", "tid": "PyTorch Profiler",
             "name": "PyTorch Profiler (0)", "args": {"Op count": 0}},
        ]
        doc = {
            "schemaVersion": 1,
            "deviceProperties": [{"id": d, "name": "NVIDIA H200", "totalGlobalMem": 150109880320, "computeMajor": 9,
                                  "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
                                  "regsPerBlock": 65536, "warpSize": 32, "sharedMemPerBlock": 49152, "numSms": 132,
                                  "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448,
                                  "sharedMemPerMultiprocessor": 233472} for d in range(n)],
            "distributedInfo": {"backend": "nccl", "rank": r, "world_size": n, "pg_count": 2, "pg_config": [
                {"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": n,
                 "ranks": list(range(n))},
                {"pg_name": "1", "pg_desc": "tp_group", "backend_config": "cuda:nccl", "pg_size": n,
                 "ranks": list(range(n))}], "nccl_version": "2.28.9"},
            "cuda_driver_version": 13000,
            "cuda_runtime_version": 13000,
            "displayTimeUnit": "ms",
            "baseTimeNanoseconds": 1790857026000000000,
            "traceEvents": meta + events,
            "traceName": "/root/out/%s/rank%d.json" % (cfg["name"], r),
        }
        path = os.path.join(outdir, "rank%d.json.gz" % r)
        with gzip.GzipFile(path, "wb", mtime=0) as f:
            f.write(json.dumps(doc, separators=(",", ":")).encode())
        docs.append(doc)
    return docs


def label(r, tp_size):
    """SGLang's rank label of rank r with tp_size ranks per TP group ("TP01", or "TP01-DP01")."""
    return "TP%02d" % r if tp_size is None else "TP%02d-DP%02d" % (r % tp_size, r // tp_size)


def write_sglang(docs, outdir, profile_id, tp_size=None):
    """SGLang's files of the same run: per-rank files named {id}-TP-{t}[-DP-{d}].trace.json.gz without
    distributedInfo, and the file its merge_profiles option writes (profile_merger.py): every pid
    prefixed with the rank label, deviceProperties concatenated, the other top-level keys the first
    rank's."""
    os.makedirs(outdir, exist_ok=True)
    merged = {"traceEvents": []}
    devices = []
    for r, doc in enumerate(docs):
        own = {k: v for k, v in doc.items() if k != "distributedInfo"}
        suffix = "TP-%d" % r if tp_size is None else "TP-%d-DP-%d" % (r % tp_size, r // tp_size)
        with gzip.GzipFile(os.path.join(outdir, "%s-%s.trace.json.gz" % (profile_id, suffix)), "wb", mtime=0) as f:
            f.write(json.dumps(own).encode())
        tag = "[%s]" % label(r, tp_size)
        for e in doc["traceEvents"]:
            e = dict(e)
            if e.get("name") == "process_sort_index" and isinstance(e.get("pid"), int) and e["pid"] < 1000:
                e["args"] = {"sort_index": r * 100 + e["pid"]}
            e["pid"] = "%s %s" % (tag, e["pid"])
            merged["traceEvents"].append(e)
        devices += doc.get("deviceProperties", [])
        for k, v in doc.items():
            if k not in ("traceEvents", "deviceProperties") and k not in merged:
                merged[k] = v
    merged["deviceProperties"] = devices
    with gzip.GzipFile(os.path.join(outdir, "merged-%s.trace.json.gz" % profile_id), "wb", mtime=0) as f:
        f.write(json.dumps(merged).encode())


FIXTURES = [
    {"name": "tp2", "ranks": 2, "seed": 2, "late_rank": 1, "extra_rank": 1, "extra_step": 5, "sleep_rank": 0,
     "sleep_step": 7, "sleep_us": 2000.0, "slow_rank": 1, "slow_factor": 1.06},
    {"name": "tp8", "ranks": 8, "seed": 8, "late_rank": 5, "extra_rank": 2, "extra_step": 5, "sleep_rank": 3,
     "sleep_step": 7, "sleep_us": 2000.0, "slow_rank": 6, "slow_factor": 1.06, "sglang_tp": 4},
]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "fixtures")
    for cfg in FIXTURES:
        ranks, capture = simulate(cfg)
        docs = write(cfg, ranks, capture, os.path.join(out, cfg["name"]))
        write_sglang(docs, os.path.join(out, cfg["name"] + "_sglang"), "1790857026", cfg.get("sglang_tp"))


if __name__ == "__main__":
    main()
