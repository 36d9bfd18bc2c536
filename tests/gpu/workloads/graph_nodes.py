#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One-token decode steps of a Llama-shaped model with NVTX ranges inside the forward, eager or as a CUDA graph.

The model (--impl torch, the default: Llama-shaped in plain torch; --impl hf: transformers'
LlamaForCausalLM from a config) has random weights (nothing downloaded), bf16 on the GPU. Each step is
the forward of one token at a fixed shape from static buffers (input ids, position ids) without a KV
cache, updated in place before each step: the next token is the argmax of the last logits, the position
cycles through --prompt .. --prompt + 255.
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
import json
import os
import statistics
import sys
import time

import torch

BLOCK = 20
CYCLE = 256
SLOW = [False]  # --slow-file: the MLP runs its gate projection twice (one more GEMV per layer)


class RMSNorm(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(n))

    def forward(self, x):
        v = x.float()
        return (v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * self.weight


def rotate(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class Attention(torch.nn.Module):
    def __init__(self, a):
        super().__init__()
        self.h, self.kv, self.d = a.heads, a.kv_heads, a.hidden // a.heads
        self.q_proj = torch.nn.Linear(a.hidden, self.h * self.d, bias=False)
        self.k_proj = torch.nn.Linear(a.hidden, self.kv * self.d, bias=False)
        self.v_proj = torch.nn.Linear(a.hidden, self.kv * self.d, bias=False)
        self.o_proj = torch.nn.Linear(self.h * self.d, a.hidden, bias=False)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.h, self.d).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kv, self.d).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv, self.d).transpose(1, 2)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        k = k.repeat_interleave(self.h // self.kv, dim=1)
        v = v.repeat_interleave(self.h // self.kv, dim=1)
        o = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        return self.o_proj(o.transpose(1, 2).reshape(b, t, self.h * self.d))


class MLP(torch.nn.Module):
    def __init__(self, a):
        super().__init__()
        self.gate_proj = torch.nn.Linear(a.hidden, a.ffn, bias=False)
        self.up_proj = torch.nn.Linear(a.hidden, a.ffn, bias=False)
        self.down_proj = torch.nn.Linear(a.ffn, a.hidden, bias=False)

    def forward(self, x):
        if SLOW[0]:
            self.gate_proj(x)  # the injected slowdown: its result is dropped, its kernel runs
        return self.down_proj(torch.nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(torch.nn.Module):
    def __init__(self, a):
        super().__init__()
        self.input_layernorm, self.post_attention_layernorm = RMSNorm(a.hidden), RMSNorm(a.hidden)
        self.self_attn, self.mlp = Attention(a), MLP(a)

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class Decoder(torch.nn.Module):
    """Llama-shaped (RMSNorm, rotary, grouped-query attention, SwiGLU), plain torch: the same kernels
    eagerly and under graph capture (transformers' model picks other attention and mask kernels while
    a stream is capturing, so an eager run of it is no reference for its graph)."""

    def __init__(self, a):
        super().__init__()
        self.embed_tokens = torch.nn.Embedding(a.vocab, a.hidden)
        self.layers = torch.nn.ModuleList(Layer(a) for _ in range(a.layers))
        self.norm = RMSNorm(a.hidden)
        self.lm_head = torch.nn.Linear(a.hidden, a.vocab, bias=False)
        d = a.hidden // a.heads
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d)), persistent=False)

    @property
    def model(self):  # model.model.layers, as in transformers
        return self

    def forward(self, input_ids, position_ids, use_cache=False):
        x = self.embed_tokens(input_ids)
        f = position_ids[..., None].float() * self.inv_freq
        e = torch.cat((f, f), dim=-1)[:, None]
        cos, sin = e.cos().to(x.dtype), e.sin().to(x.dtype)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return type("Out", (), {"logits": self.lm_head(self.norm(x))})


def build(a):
    torch.manual_seed(0)
    if a.impl == "torch":
        return Decoder(a).to(device="cuda", dtype=torch.bfloat16).eval()
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(vocab_size=a.vocab, hidden_size=a.hidden, intermediate_size=a.ffn,
                      num_hidden_layers=a.layers, num_attention_heads=a.heads,
                      num_key_value_heads=a.kv_heads, max_position_embeddings=4096)
    return LlamaForCausalLM(cfg).to(device="cuda", dtype=torch.bfloat16).eval()


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
    ap.add_argument("--impl", choices=["torch", "hf"], default="torch",
                    help="the model: plain torch (default) or transformers' LlamaForCausalLM")
    ap.add_argument("--prompt", type=int, default=64)
    ap.add_argument("--warmup", type=int, default=3, help="steps before the capture / the loop")
    ap.add_argument("--steps", type=int, default=100000)
    ap.add_argument("--seconds", type=float, default=0, help="stop the loop after this long (0: no limit)")
    ap.add_argument("--log", help="append one JSON line per block of %d steps here" % BLOCK)
    ap.add_argument("--ready-file")
    ap.add_argument("--stop-file")
    ap.add_argument("--slow-file", help="while this file exists, each step runs one more GEMV per layer (a "
                    "slowdown of one budget component, for the diff gate)")
    ap.add_argument("--profile-json", help="run --profile-steps steps under torch.profiler, Chrome trace here")
    ap.add_argument("--profile-steps", type=int, default=30)
    a = ap.parse_args()
    torch.set_grad_enabled(False)
    model = build(a)
    # No KV cache: each step is the forward of one token at a fixed position (a decode-shaped step whose
    # shapes never change). transformers' StaticCache keeps its own fill counter in some versions (5.x),
    # which a replayed graph advances until its index_copy_ runs past the cache.

    def forward(ids, pos):
        return model(input_ids=ids, position_ids=pos, use_cache=False).logits

    ids = torch.randint(1, a.vocab, (1, 1), device="cuda")
    pos = torch.full((1, 1), a.prompt, dtype=torch.long, device="cuda")
    logits = forward(ids, pos)

    def update(n, last):  # the static inputs of step n, in place
        torch.argmax(last[:, -1], dim=-1, keepdim=True, out=ids)
        pos.fill_(a.prompt + n % CYCLE)

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
        graphs = {False: (g, static_logits)}
        if a.slow_file:  # the same step with the slowdown, its own graph, replayed while the file exists
            SLOW[0] = True
            g_slow = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g_slow):
                slow_logits = forward(ids, pos)
            SLOW[0] = False
            graphs[True] = (g_slow, slow_logits)
        for h in handles:
            h.remove()
        torch.cuda.synchronize()

        def step(n):
            graph, out = graphs[SLOW[0]]
            update(n, out)
            graph.replay()
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
        if a.slow_file:
            SLOW[0] = os.path.exists(a.slow_file)
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
