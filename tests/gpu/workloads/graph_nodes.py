#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One-token decode steps of a Llama-shaped model with NVTX ranges inside the forward, eager or as a CUDA graph.

The model is built from a config with random weights (nothing downloaded), bf16 on the GPU, with a
transformers StaticCache (--cache-len slots). A --prompt-token prompt is prefilled once, eagerly; then
each step decodes one token at a fixed shape from static buffers (input ids, cache position and position
ids, the last a view of the cache position), updated in place before each step: the next token is the
argmax of the last logits, the position cycles through --prompt .. --prompt + 255 so the cache never fills.
Those two small kernels (argmax, fill) run outside the graph in graph mode, between replays, in no range.

  --mode graph   one decode forward is captured into a torch.cuda.CUDAGraph (torch.cuda.graph, after
                 warm-up steps on a side stream) and replayed; each g.replay() is one step (gapscope's
                 graph rule: one step per graph launch). The replay loop pushes no NVTX range.
  --mode eager   the same forward called directly; each step is wrapped in the NVTX range
                 "decode step N" (outermost), for the nvtx step rule (pattern "^decode step").
  --ranges on    module hooks push NVTX ranges during the forward: "decode" around the whole model call,
                 "layer I" around decoder layer I, "attention" around its self_attn, "mlp" around its mlp.
                 In graph mode they are pushed while the graph is being captured (a capture agent records
                 the NVTX stack at node creation) and the hooks are removed right after, so replays are bare.

The loop prints "ready" (and touches --ready-file) when it starts, stops after --steps, --seconds or when
--stop-file exists; --log appends one JSON line per block of 20 steps {"steps", "t_ns", "ms"} (ms per
step, timed with perf_counter between torch.cuda.synchronize calls). --profile-json FILE instead runs
--profile-steps steps under torch.profiler (CPU and CUDA) and exports a Chrome trace (Kineto) to FILE.
Prints one JSON line at the end: mode, ranges, steps, median ms per step.
"""
import argparse
import gc
import inspect
import json
import os
import statistics
import sys
import time

import torch

BLOCK = 20
CYCLE = 256


def build(a):
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(vocab_size=a.vocab, hidden_size=a.hidden, intermediate_size=a.ffn,
                      num_hidden_layers=a.layers, num_attention_heads=a.heads,
                      num_key_value_heads=a.kv_heads, max_position_embeddings=4096)
    torch.manual_seed(0)
    return LlamaForCausalLM(cfg).to(device="cuda", dtype=torch.bfloat16).eval()


def static_cache(model, cache_len):
    """A StaticCache across transformers versions: pass only the keywords this version's __init__ names."""
    from transformers import StaticCache
    params = inspect.signature(StaticCache.__init__).parameters
    extra = {"max_batch_size": 1, "batch_size": 1, "device": "cuda", "dtype": torch.bfloat16}
    kw = {k: v for k, v in extra.items() if k in params}
    if "max_batch_size" in kw:
        kw.pop("batch_size", None)
    return StaticCache(config=model.config, max_cache_len=cache_len, **kw)


def add_ranges(model):
    """NVTX ranges pushed by forward pre-hooks and popped by forward hooks; returns the hook handles."""
    nvtx, handles = torch.cuda.nvtx, []

    def wrap(module, name):
        def push(mod, args):  # returns None: the inputs stay as they are
            nvtx.range_push(name)

        def pop(mod, args, out):  # returns None: the output stays as it is
            nvtx.range_pop()
        handles.append(module.register_forward_pre_hook(push))
        handles.append(module.register_forward_hook(pop))

    wrap(model, "decode")
    for i, layer in enumerate(model.model.layers):
        wrap(layer, "layer %d" % i)
        wrap(layer.self_attn, "attention")
        wrap(layer.mlp, "mlp")
    return handles


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=["graph", "eager"], default="graph")
    ap.add_argument("--ranges", choices=["on", "off"], default="on")
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--ffn", type=int, default=2816)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--prompt", type=int, default=64)
    ap.add_argument("--cache-len", type=int, default=512)
    ap.add_argument("--warmup", type=int, default=3, help="steps before the capture / the loop")
    ap.add_argument("--steps", type=int, default=100000)
    ap.add_argument("--seconds", type=float, default=0, help="stop the loop after this long (0: no limit)")
    ap.add_argument("--log", help="append one JSON line per block of %d steps here" % BLOCK)
    ap.add_argument("--ready-file")
    ap.add_argument("--stop-file")
    ap.add_argument("--profile-json", help="run --profile-steps steps under torch.profiler, Chrome trace here")
    ap.add_argument("--profile-steps", type=int, default=30)
    a = ap.parse_args()
    assert a.prompt + CYCLE <= a.cache_len, "the position cycle must fit the cache"
    torch.set_grad_enabled(False)
    model = build(a)
    cache = static_cache(model, a.cache_len)
    # Pass cache_position unless this version's forward clearly takes none: without it, versions that
    # derive it from the cache's fill level read that back to the host, which a graph capture refuses.
    params = inspect.signature(model.forward).parameters
    with_cp = "cache_position" in params or any(p.kind == p.VAR_KEYWORD for p in params.values())

    def forward(ids, pos):
        kw = {"cache_position": pos.view(-1)} if with_cp else {}
        return model(input_ids=ids, position_ids=pos, past_key_values=cache, use_cache=True, **kw).logits

    prompt = torch.randint(1, a.vocab, (1, a.prompt), device="cuda")
    logits = forward(prompt, torch.arange(a.prompt, device="cuda").view(1, -1))  # prefill, eager, no ranges
    ids = torch.zeros(1, 1, dtype=torch.long, device="cuda")
    cp = torch.full((1,), a.prompt, dtype=torch.long, device="cuda")
    pos = cp.view(1, 1)  # position ids: the same storage as the cache position

    def update(n, last):  # the static inputs of step n, in place
        torch.argmax(last[:, -1], dim=-1, keepdim=True, out=ids)
        cp.fill_(a.prompt + n % CYCLE)

    handles = add_ranges(model) if a.ranges == "on" else []
    if a.mode == "graph":
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for n in range(a.warmup):
                update(n, logits)
                logits = forward(ids, pos)
        torch.cuda.current_stream().wait_stream(side)
        update(0, logits)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):  # the ranges are pushed now, while the graph's nodes are created
            static_logits = forward(ids, pos)
        for h in handles:
            h.remove()
        torch.cuda.synchronize()

        def step(n):
            update(n, static_logits)
            g.replay()
    else:
        def step(n):
            nonlocal logits
            torch.cuda.nvtx.range_push("decode step %d" % n)
            update(n, logits)
            logits = forward(ids, pos)
            torch.cuda.nvtx.range_pop()
        for n in range(a.warmup):
            step(n)
    torch.cuda.synchronize()

    if a.profile_json:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for n in range(a.profile_steps):
                step(n)
            torch.cuda.synchronize()
        prof.export_chrome_trace(a.profile_json)
        print(json.dumps({"mode": a.mode, "ranges": a.ranges, "profiled_steps": a.profile_steps,
                          "trace": a.profile_json}))
        return

    print("ready", flush=True)
    if a.ready_file:
        open(a.ready_file, "w").close()
    log = open(a.log, "a") if a.log else None
    gc.collect()
    gc.disable()
    per_step, n = [], 0
    t_end = time.perf_counter() + a.seconds if a.seconds > 0 else float("inf")
    while n < a.steps:
        if (a.stop_file and os.path.exists(a.stop_file)) or time.perf_counter() > t_end:
            break
        k = min(BLOCK, a.steps - n)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for i in range(n, n + k):
            step(i)
        torch.cuda.synchronize()
        ms = (time.perf_counter() - t0) * 1e3 / k
        n += k
        per_step.append(ms)
        if log:
            log.write(json.dumps({"steps": n, "t_ns": time.time_ns(), "ms": round(ms, 4)}) + "\n")
            log.flush()
    gc.enable()
    print(json.dumps({"mode": a.mode, "ranges": a.ranges, "steps": n,
                      "median_ms": round(statistics.median(per_step), 4) if per_step else None}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
