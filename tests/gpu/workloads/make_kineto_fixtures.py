#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate real torch.profiler (Kineto) traces for the importer fixtures.

Runs on a GPU box with PyTorch (and, when present, transformers):
  1. decode.json.gz    a small Hugging Face causal LM (random weights, no download) decoding a few tokens,
                       one record_function("decode_step") per step, a host sync and a DtoH copy per step;
  2. graph.json.gz     a small MLP captured in a CUDA graph and replayed once per "decode_step";
  3. rank0.json.gz,    two processes (one GPU each) running a matmul + NCCL all-reduce loop, one
     rank1.json.gz     "decode_step" per iteration (distributedInfo carries rank / world size);
  4. crossrank-TP-R.trace.json.gz (one per rank, named as SGLang names them; GAPSCOPE_CROSSRANK_WORLD ranks,
                       default every GPU up to 8, at least 2): a TP decode loop (16 layers, an AllReduce per
                       layer on the world group, one on a second communicator every 4 layers), no host sync
                       per step, so the host's "decode_step" ranges run ahead of the GPU; rank 0 starts its
                       profiler 1 s before the others (the first profiled AllReduce of rank 0 waits ~1 s);
                       the last rank sleeps ~2 ms on the GPU (torch.cuda._sleep) before its first AllReduce
                       of the middle step; rank 0 runs one extra kernel in step 1. crossrank.truth.json holds
                       what was injected (ranks, steps, skew, straggler rank and step).

Each trace is written gzip-compressed under --out, with <name>.totals.json beside it (counts per category
and the summed kernel time, computed by Python's json module from the written file).

Usage: make_kineto_fixtures.py --out DIR [--steps N] [--only decode|graph|nccl|crossrank]
"""
import argparse
import ctypes
import ctypes.util
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile, record_function  # noqa: E402


def log(*a):
    print("[fixtures]", *a, flush=True)


def totals_of(path):
    """Independent totals of a Kineto trace, for the importer tests to compare against."""
    with gzip.open(path, "rt") as f:
        doc = json.load(f)
    cats = {}
    kernel_ns = 0.0
    memcpy = memset = 0
    for e in doc.get("traceEvents", []):
        cat = e.get("cat", "")
        ph = e.get("ph", "")
        key = f"{ph}:{cat}"
        cats[key] = cats.get(key, 0) + 1
        if ph == "X" and cat == "kernel":
            kernel_ns += float(e.get("dur", 0)) * 1000.0
    return {
        "file": os.path.basename(path),
        "bytes_gz": os.path.getsize(path),
        "counts": dict(sorted(cats.items())),
        "kernel_count": cats.get("X:kernel", 0),
        "kernel_total_ns": round(kernel_ns),
        "memcpy_count": cats.get("X:gpu_memcpy", 0),
        "memset_count": cats.get("X:gpu_memset", 0),
        "runtime_count": cats.get("X:cuda_runtime", 0),
        "driver_count": cats.get("X:cuda_driver", 0),
        "user_annotation_count": cats.get("X:user_annotation", 0),
        "gpu_user_annotation_count": cats.get("X:gpu_user_annotation", 0),
        "distributedInfo": doc.get("distributedInfo"),
        "baseTimeNanoseconds": doc.get("baseTimeNanoseconds"),
        "top_level_keys": list(doc.keys()),
        "torch": torch.__version__,
    }


def export(prof, out_dir, name):
    raw = os.path.join(out_dir, name + ".json")
    prof.export_chrome_trace(raw)
    gz = raw + ".gz"
    with open(raw, "rb") as src, gzip.open(gz, "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(raw)
    with open(os.path.join(out_dir, name + ".totals.json"), "w") as f:
        json.dump(totals_of(gz), f, indent=1, sort_keys=True)
    log(f"{name}: {os.path.getsize(gz)} bytes gz")


def cudart_memset():
    """cudaMemsetAsync through the CUDA runtime torch loaded, for a real memset record; None if unavailable."""
    cands = [ctypes.util.find_library("cudart")] + glob.glob(
        os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "*", "lib", "libcudart.so*"))
    for c in cands:
        if not c:
            continue
        try:
            lib = ctypes.CDLL(c)
            fn = lib.cudaMemsetAsync
            fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p]
            return fn
        except OSError:
            continue
    return None


def tiny_lm(device):
    try:
        from transformers import LlamaConfig, LlamaForCausalLM
        cfg = LlamaConfig(vocab_size=1024, hidden_size=256, intermediate_size=688, num_hidden_layers=4,
                          num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512)
        model = LlamaForCausalLM(cfg)
        kind = "transformers.LlamaForCausalLM (random weights)"
    except Exception:  # transformers missing or incompatible: a plain torch decoder stands in
        log("transformers unavailable, using a torch TransformerDecoder:", sys.exc_info()[1])
        layer = torch.nn.TransformerEncoderLayer(256, 4, 688, batch_first=True)
        body = torch.nn.TransformerEncoder(layer, 4)
        emb = torch.nn.Embedding(1024, 256)
        head = torch.nn.Linear(256, 1024)

        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.emb, self.body, self.head = emb, body, head

            def forward(self, input_ids, **_):
                return type("O", (), {"logits": self.head(self.body(self.emb(input_ids))),
                                      "past_key_values": None})

        model = M()
        kind = "torch.nn.TransformerEncoder (random weights)"
    return model.to(device=device, dtype=torch.bfloat16).eval(), kind


def decode_fixture(out_dir, steps):
    torch.manual_seed(0)
    dev = torch.device("cuda:0")
    model, kind = tiny_lm(dev)
    log("decode model:", kind)
    memset = cudart_memset()
    scratch = torch.empty(1 << 20, dtype=torch.uint8, device=dev)
    prompt = torch.randint(0, 1024, (1, 16))

    def run(n, prof_steps):
        ids = prompt.to(dev)
        past = None
        with torch.no_grad():
            out = model(input_ids=ids, use_cache=True)
            past = getattr(out, "past_key_values", None)
            for i in range(n):
                with record_function("decode_step"):
                    nxt = out.logits[:, -1:].argmax(-1)
                    tok = nxt.cpu()  # DtoH copy + sync, as a sampler does
                    ids_in = tok.to(dev, non_blocking=True)  # HtoD copy
                    if memset is not None:
                        memset(ctypes.c_void_p(scratch.data_ptr()), 0, scratch.numel(),
                               ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
                    if past is not None:
                        out = model(input_ids=ids_in, past_key_values=past, use_cache=True)
                        past = out.past_key_values
                    else:
                        ids = torch.cat([ids, ids_in], dim=1)
                        out = model(input_ids=ids)
                    torch.cuda.synchronize()
                if prof_steps is not None:
                    prof_steps.step()

    run(3, None)  # warm-up: allocator, cuBLAS handles, lazy modules
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        run(steps, None)
    export(prof, out_dir, "decode")


def graph_fixture(out_dir, steps):
    torch.manual_seed(1)
    dev = torch.device("cuda:0")
    mlp = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.GELU(), torch.nn.Linear(2048, 512)).to(
        dev, torch.bfloat16)
    x = torch.randn(8, 512, device=dev, dtype=torch.bfloat16)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        for _ in range(3):
            mlp(x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g), torch.no_grad():
        y = mlp(x)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(steps):
            with record_function("decode_step"):
                x.copy_(torch.randn(8, 512, device=dev, dtype=torch.bfloat16))
                g.replay()
                _ = y.sum().item()
    export(prof, out_dir, "graph")


def nccl_worker(rank, world, out_dir, steps, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    dev = torch.device("cuda", rank)
    torch.manual_seed(rank)
    w = torch.randn(1024, 1024, device=dev, dtype=torch.bfloat16)
    x = torch.randn(16, 1024, device=dev, dtype=torch.bfloat16)
    for _ in range(3):  # warm-up: NCCL channels, cuBLAS
        y = x @ w
        dist.all_reduce(y)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(steps):
            with record_function("decode_step"):
                y = torch.relu(x @ w)
                if rank == 1:
                    torch.cuda._sleep(200000)  # rank 1 arrives late: the other waits in the collective
                dist.all_reduce(y)
                x = (y[:, :1024] * 0.001).contiguous()
                torch.cuda.synchronize()
    export(prof, out_dir, f"rank{rank}")
    dist.barrier()
    dist.destroy_process_group()


def nccl_fixture(out_dir, steps):
    import torch.multiprocessing as mp
    world = 2
    if torch.cuda.device_count() < world:
        log(f"nccl: {torch.cuda.device_count()} GPU(s), need {world}; skipped")
        return
    mp.spawn(nccl_worker, args=(world, out_dir, steps, 29533), nprocs=world, join=True)


CROSSRANK_LAYERS = 16
CROSSRANK_SKEW_S = 1.0
CROSSRANK_SLEEP_CYCLES = 4_000_000  # ~2 ms at the H200's ~1.98 GHz


def crossrank_worker(rank, world, out_dir, steps, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    second = dist.new_group(list(range(world)))  # a second communicator
    dev = torch.device("cuda", rank)
    torch.manual_seed(rank)
    w = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16) * 0.01
    small = torch.ones(64, device=dev, dtype=torch.float32)
    x0 = torch.randn(1, 4096, device=dev, dtype=torch.bfloat16)

    def step(i, straggle, extra):
        x = x0
        with record_function("decode_step"):
            for layer in range(CROSSRANK_LAYERS):
                y = x @ w
                if straggle and layer == 0:
                    torch.cuda._sleep(CROSSRANK_SLEEP_CYCLES)
                dist.all_reduce(y)
                if layer % 4 == 3:
                    dist.all_reduce(small, group=second)
                x = torch.nn.functional.layer_norm(y, (4096,))
            if extra:
                torch.zeros(1, device=dev).add_(1)  # one extra kernel on this rank
            nxt = x.argmax(-1)  # stays on the GPU: no sync, the host runs ahead
        return nxt

    for i in range(5):  # warm-up: NCCL channels of both communicators, cuBLAS
        step(i, False, False)
    torch.cuda.synchronize()
    dist.barrier()
    if rank != 0:
        time.sleep(CROSSRANK_SKEW_S)  # the profile request reaches the other ranks later
    mid = steps // 2
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(steps):
            step(i, rank == world - 1 and i == mid, rank == 0 and i == 1)
        torch.cuda.synchronize()
    export(prof, out_dir, f"crossrank-TP-{rank}.trace")
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        with open(os.path.join(out_dir, "crossrank.truth.json"), "w") as f:
            json.dump({"world": world, "steps": steps, "layers": CROSSRANK_LAYERS, "skew_s": CROSSRANK_SKEW_S,
                       "early_rank": 0, "straggler_rank": world - 1, "straggler_step": mid,
                       "straggler_sleep_cycles": CROSSRANK_SLEEP_CYCLES, "extra_kernel": {"rank": 0, "step": 1},
                       "collectives_per_step": CROSSRANK_LAYERS + CROSSRANK_LAYERS // 4,
                       "torch": torch.__version__}, f, indent=1)


def crossrank_fixture(out_dir, steps):
    import torch.multiprocessing as mp
    gpus = torch.cuda.device_count()
    world = int(os.environ.get("GAPSCOPE_CROSSRANK_WORLD", min(gpus, 8)))
    if world < 2 or gpus < world:
        log(f"crossrank: {gpus} GPU(s), need {max(world, 2)}; skipped")
        return
    mp.spawn(crossrank_worker, args=(world, out_dir, steps, 29534), nprocs=world, join=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    fixtures = {"decode": decode_fixture, "graph": graph_fixture, "nccl": nccl_fixture,
                "crossrank": crossrank_fixture}
    if a.only:  # one fixture, in this process
        t0 = time.time()
        fixtures[a.only](a.out, a.steps)
        log(f"{a.only}: done in {time.time() - t0:.1f} s")
        return 0
    # Each fixture in its own process, so a crash in one (ctypes, NCCL) leaves the others.
    log("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count())
    ok = True
    for name in fixtures:
        rc = subprocess.call([sys.executable, os.path.abspath(__file__), "--out", a.out, "--steps", str(a.steps),
                              "--only", name])
        if rc != 0:
            ok = False
            log(f"{name}: FAILED (exit {rc})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
