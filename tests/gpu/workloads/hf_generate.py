#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An unmodified Hugging Face generate() loop: a Llama-shaped model built from a config with random
weights (nothing downloaded), bf16 on the GPU, greedy decoding of exactly --new-tokens tokens per call.

  --mode eager   the plain loop (a dynamic cache, every kernel launched from Python)
  --mode graph   static cache: generate() compiles the decode forward itself (torch.compile,
                 mode="reduce-overhead") and replays it as a CUDA graph; the prefill runs eager

It writes nothing of its own into the process (no NVTX, no record_function): what a step is must be
found from the kernels. With --profile OUT.json.gz the timed calls run under torch.profiler (CPU and
CUDA activities, no schedule: no ProfilerStep ranges; --profiler-steps adds prof.step() after each call,
so each generate() call is one ProfilerStep#N). --ready-file is touched after the warm-up calls, and
--idle-calls keeps calling generate() untraced (for a capture from outside) until the file named by
--stop-file exists or the count is reached. With --timeline FILE each untraced call appends a line
{"t0_ns", "t1_ns", "ms", "state"} (CLOCK_REALTIME, as capture files use), so that a driver can tell the
calls before, while and after a capture; while the file named by --torch-trigger exists, the next
--torch-calls calls run under torch.profiler (state "torch"), and the trigger file is removed after.
Prints one JSON line: mode, calls, per-call ms.
"""
import argparse
import gzip
import json
import os
import shutil
import sys
import time

import torch


def build(args):
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(vocab_size=args.vocab, hidden_size=args.hidden, intermediate_size=args.ffn,
                      num_hidden_layers=args.layers, num_attention_heads=args.heads,
                      num_key_value_heads=args.kv_heads, max_position_embeddings=4096)
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg).to(device="cuda", dtype=torch.bfloat16).eval()
    gc = model.generation_config
    gc.do_sample = False
    gc.eos_token_id = None
    gc.pad_token_id = 0
    if args.mode == "graph":
        gc.cache_implementation = "static"
        try:  # generate() compiles on its own with a static cache; say how, where this version can
            from transformers import CompileConfig
            gc.compile_config = CompileConfig(fullgraph=True, mode="reduce-overhead")
        except ImportError:
            pass
    return model


def call(model, ids, args):
    with torch.inference_mode():
        out = model.generate(ids, max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens)
    torch.cuda.synchronize()
    assert out.shape[1] == ids.shape[1] + args.new_tokens, out.shape
    return out


def profiled_block(model, ids, args, timeline):
    """--torch-calls calls under torch.profiler (CPU and CUDA activities, as a user would), each timed."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
        for _ in range(args.torch_calls):
            w0 = time.time_ns()
            t0 = time.perf_counter()
            call(model, ids, args)
            ms = (time.perf_counter() - t0) * 1e3
            if timeline:
                timeline.write(json.dumps({"t0_ns": w0, "t1_ns": time.time_ns(), "ms": round(ms, 3),
                                           "state": "torch"}) + "\n")
                timeline.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=["eager", "graph"], default="eager")
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--ffn", type=int, default=2816)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--prompt", type=int, default=32)
    ap.add_argument("--new-tokens", type=int, default=16)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--calls", type=int, default=2)
    ap.add_argument("--profile", help="write the timed calls' torch.profiler trace here (.json.gz)")
    ap.add_argument("--profiler-steps", action="store_true", help="prof.step() after each call")
    ap.add_argument("--ready-file")
    ap.add_argument("--stop-file")
    ap.add_argument("--idle-calls", type=int, default=0)
    ap.add_argument("--timeline", help="append one JSON line per untraced call here")
    ap.add_argument("--torch-trigger", help="while this file exists, profile the next --torch-calls calls")
    ap.add_argument("--torch-calls", type=int, default=10)
    args = ap.parse_args()
    model = build(args)
    ids = torch.randint(1, args.vocab, (1, args.prompt), device="cuda")
    for _ in range(args.warmup):
        call(model, ids, args)
    if args.ready_file:
        open(args.ready_file, "w").close()
    times = []
    if args.profile:
        from torch.profiler import ProfilerActivity, profile
        acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
        raw = args.profile[:-3] if args.profile.endswith(".gz") else args.profile
        kw = {}
        if args.profiler_steps:  # one cycle of `calls` steps, exported when it ends (each call a ProfilerStep#N)
            kw["schedule"] = torch.profiler.schedule(wait=0, warmup=0, active=args.calls, repeat=1)
            kw["on_trace_ready"] = lambda p: p.export_chrome_trace(raw)
        with profile(activities=acts, **kw) as prof:
            for _ in range(args.calls):
                t0 = time.perf_counter()
                call(model, ids, args)
                times.append((time.perf_counter() - t0) * 1e3)
                if args.profiler_steps:
                    prof.step()
        if not args.profiler_steps:
            prof.export_chrome_trace(raw)
        if raw != args.profile:
            with open(raw, "rb") as f, gzip.open(args.profile, "wb", compresslevel=9) as g:
                shutil.copyfileobj(f, g)
            os.remove(raw)
    else:
        timeline = open(args.timeline, "a") if args.timeline else None
        for i in range(max(args.calls, args.idle_calls)):
            if args.stop_file and os.path.exists(args.stop_file):
                break
            if args.torch_trigger and os.path.exists(args.torch_trigger):
                profiled_block(model, ids, args, timeline)
                os.remove(args.torch_trigger)
                continue
            w0 = time.time_ns()
            t0 = time.perf_counter()
            call(model, ids, args)
            times.append((time.perf_counter() - t0) * 1e3)
            if timeline:
                timeline.write(json.dumps({"t0_ns": w0, "t1_ns": time.time_ns(), "ms": round(times[-1], 3),
                                           "state": "idle"}) + "\n")
                timeline.flush()
    print(json.dumps({"mode": args.mode, "layers": args.layers, "calls": len(times), "new_tokens": args.new_tokens,
                      "ms_per_call": [round(t, 2) for t in times]}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
