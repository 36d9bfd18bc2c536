#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write small Kineto (torch.profiler) JSON traces in the shapes serving engines and plain HF/torch
processes really write, for the step rules. Deterministic: run it again and the files are the same.

Shapes (tests/steps/fixtures/*.json.gz):
  sglang_graph.json.gz        SGLang under torch.profiler: step[EXTEND bs=2 toks=96] (eager prefill), then
                              step[DECODE bs=2] ranges each around one cudaGraphLaunch replaying every layer,
                              sampling kernels after the range, scheduler ranges around everything, a
                              step[MIXED ...] and a step[IDLE bs=0] without GPU work.
  vllm_piecewise_rocm.json.gz vLLM on ROCm: execute_context_N(T)_generation_M(U) ranges, each a cycle of
                              hipGraphLaunch pieces with eager attention between them (one step, many
                              launches); a verify step (more generation tokens than requests).
  vllm_fullgraph_rocm.json.gz vLLM full graphs on ROCm without annotations: one hipGraphLaunch per decode
                              step, eager sampling after it, an eager prefill between replays.
  hf_eager.json.gz            HF generate() eager, no annotations: 2 calls x (1 prefill + 7 decodes), the
                              prefill's GEMMs are other kernels, a host sync between forwards.
  hf_eager_profilerstep.json.gz  the same loop with ProfilerStep#N around each generate() call.
  hf_graph.json.gz            HF static cache + torch.compile: eager prefill, then one cudaGraphLaunch per
                              decode step with eager argmax kernels after it; 2 calls.
  lone_profilerstep.json.gz   one ProfilerStep#12 holding one training iteration (forward, backward,
                              optimizer): one step, kind unknown.
  training_ranges.json.gz     a training loop with ProfilerStep#N, and Optimizer.step#SGD.step,
                              flash_attn::_flash_attn_forward, FSDP::pre_forward ranges that are not steps.
Every forward of the HF shapes starts with the embedding kernel (indexSelectSmallIndex): expect_steps.py
finds forwards by it, independently of gapscope's rules.

Usage: make_step_fixtures.py OUT_DIR          write them
       make_step_fixtures.py --check DIR       exit 1 unless DIR holds exactly what this script writes
"""
import gzip
import json
import os
import sys

PID = 4242
TID = 4242
STREAM = 7


class Trace:
    def __init__(self, name):
        self.name = name
        self.events = []
        self.t = 1_000_000.0  # host clock, us
        self.gpu = 1_000_000.0  # GPU busy until, us
        self.corr = 100

    def host(self, cat, name, ts, dur, **args):
        e = {"ph": "X", "cat": cat, "name": name, "pid": PID, "tid": TID, "ts": round(ts, 3), "dur": round(dur, 3)}
        if args:
            e["args"] = args
        self.events.append(e)
        return e

    def range(self, cat, name, start, end):
        return self.host(cat, name, start, end - start)

    def kernels(self, names, api="cudaLaunchKernel", dur=4.0):
        """One launch per kernel (api), or one graph launch (api ending in GraphLaunch) for all of them."""
        graph = api.endswith("GraphLaunch")
        if graph:
            self.corr += 1
            self.host("cuda_runtime", api, self.t, 8.0, correlation=self.corr)
            self.t += 9.0
            start = max(self.gpu, self.t + 2.0)
            for n in names:
                self.kernel(n, start, dur, self.corr)
                start += dur + 0.5
            self.gpu = start
            return
        for n in names:
            self.corr += 1
            self.host("cuda_runtime", api, self.t, 3.0, correlation=self.corr)
            start = max(self.gpu, self.t + 4.0)
            self.kernel(n, start, dur, self.corr)
            self.gpu = start + dur + 0.3
            self.t += 3.5

    def kernel(self, name, ts, dur, corr):
        self.events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": STREAM, "ts": round(ts, 3),
                            "dur": round(dur, 3), "args": {"device": 0, "stream": STREAM, "correlation": corr,
                                                           "grid": [1, 1, 1], "block": [128, 1, 1]}})

    def sync(self, gap=60.0):
        """The host waits for the GPU (a .item()), then does host work before the next launch."""
        self.corr += 1
        start = self.t
        self.t = max(self.t, self.gpu) + 2.0
        self.host("cuda_runtime", "cudaStreamSynchronize", start, self.t - start, correlation=self.corr)
        self.t += gap

    def write(self, out):
        doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132,
                                                         "totalGlobalMem": 85045231616}],
               "displayTimeUnit": "ms", "traceEvents": self.events,
               "traceName": "gapscope step fixture " + self.name}
        with open(os.path.join(out, self.name + ".json.gz"), "wb") as f:
            f.write(gzip.compress(json.dumps(doc).encode(), mtime=0))


def layer(prefill=False):
    gemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64" if prefill else \
        "gemv2T_kernel_val<int, int, __nv_bfloat16, __nv_bfloat16, float, 128, 16, 4, 4>"
    attn = "pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>, true>" if prefill else \
        "pytorch_flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4>, true>"
    mul = "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::BFloat16, MulFunctor>>"
    return ["void at::native::vectorized_elementwise_kernel<4, at::native::pow_tensor_scalar_kernel>",
            "void at::native::reduce_kernel<512, 1, at::native::MeanOps<float, float>>",
            "void at::native::vectorized_elementwise_kernel<4, at::native::rsqrt_kernel_cuda>",
            mul, gemm, gemm, gemm,
            "void at::native::vectorized_elementwise_kernel<4, at::native::neg_kernel_cuda>",
            "void at::native::CatArrayBatchedCopy<at::native::OpaqueType<2u>, unsigned int, 4, 64, 64>",
            attn, gemm, "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>",
            mul, gemm, "void at::native::vectorized_elementwise_kernel<4, at::native::silu_kernel>", mul, gemm]


EMBED = "void at::native::indexSelectSmallIndex<c10::BFloat16, long, unsigned int, 2, 2, -2>"
HEAD = ["void at::native::vectorized_elementwise_kernel<4, at::native::pow_tensor_scalar_kernel>",
        "void at::native::reduce_kernel<512, 1, at::native::MeanOps<float, float>>",
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_lmhead"]
SAMPLE = ["void at::native::reduce_kernel<512, 1, at::native::ArgMaxOps<float>>",
          "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda>",
          "void at::native::vectorized_elementwise_kernel<4, at::native::BitwiseAndFunctor<bool>>"]
LAYERS = 4


def forward(prefill=False):
    ks = [EMBED, "void at::native::elementwise_kernel<128, 2, at::native::arange_kernel>"]
    for _ in range(LAYERS):
        ks += layer(prefill)
    return ks + HEAD


def hf_eager(name, profiler_steps):
    t = Trace(name)
    for call in range(2):
        call_start = t.t
        if profiler_steps:
            ps_start = t.t
        gen = t.host("python_function", "transformers/generation/utils.py(2215): generate", t.t, 0)
        for tok in range(8):
            t.kernels(forward(prefill=tok == 0))
            t.kernels(SAMPLE)
            t.sync()
        gen["dur"] = round(t.t - call_start, 3)
        if profiler_steps:
            t.range("user_annotation", "ProfilerStep#%d" % call, ps_start, t.t)
        t.t += 500.0
    return t


def hf_graph():
    t = Trace("hf_graph")
    for call in range(2):
        call_start = t.t
        gen = t.host("python_function", "transformers/generation/utils.py(2215): generate", t.t, 0)
        t.kernels(forward(prefill=True))
        t.kernels(SAMPLE)
        t.sync()
        for tok in range(6):
            t.kernels(forward(), api="cudaGraphLaunch")  # the compiled forward, replayed
            t.kernels(SAMPLE)
            t.sync()
        gen["dur"] = round(t.t - call_start, 3)
        t.t += 500.0
    return t


def sglang_graph():
    t = Trace("sglang_graph")
    loop_start = t.t
    s = t.t
    t.kernels(forward(prefill=True)[:-3] + HEAD)
    t.range("user_annotation", "step[EXTEND bs=2 toks=96]", s, t.t)
    t.kernels(SAMPLE)
    t.sync()
    for i in range(6):
        s = t.t
        t.kernels(forward(), api="cudaGraphLaunch")
        t.range("user_annotation", "step[DECODE bs=2]", s, t.t)
        t.kernels(SAMPLE)
        t.sync(30.0)
    s = t.t
    t.kernels(forward(prefill=True))
    t.range("user_annotation", "step[MIXED bs=3 c=1 g=2 c_sq=40 c_sk=40 c_sqsq=1600 c_sqsk=1600 g_sq=2 g_sk=200 "
                               "g_sqsq=2 g_sqsk=200]", s, t.t)
    t.kernels(SAMPLE)
    t.sync()
    s = t.t
    t.t += 20.0
    t.range("user_annotation", "step[IDLE bs=0]", s, t.t)
    t.range("user_annotation", "scheduler.event_loop_overlap", loop_start - 5.0, t.t + 5.0)
    return t


def vllm_piecewise():
    t = Trace("vllm_piecewise_rocm")
    lay = layer()
    pre, post = lay[:9], lay[10:]
    attn = "paged_attention_ll4mi_QKV_mfma16_kernel<__hip_bfloat16, __hip_bfloat16, 256, 128>"
    for step in range(5):
        verify = step == 4
        name = "execute_context_0(0)_generation_4(%d)" % (16 if verify else 4)
        if step == 2:
            name = "execute_context_1(32)_generation_3(3)"
        s = t.t
        t.kernels([EMBED] + pre, api="hipGraphLaunch")
        for k in range(LAYERS):
            t.kernels([attn], api="hipLaunchKernel")
            t.kernels(post + (pre if k + 1 < LAYERS else HEAD), api="hipGraphLaunch")
        t.range("user_annotation", name, s, t.t)
        t.kernels(SAMPLE, api="hipLaunchKernel")
        t.sync(40.0)
    return t


def vllm_fullgraph():
    t = Trace("vllm_fullgraph_rocm")
    for call in range(2):
        t.kernels(forward(prefill=True), api="hipLaunchKernel")
        t.kernels(SAMPLE, api="hipLaunchKernel")
        t.sync(200.0)
        for i in range(5):
            t.kernels(forward(), api="hipGraphLaunch")
            t.kernels(SAMPLE, api="hipLaunchKernel")
            t.sync(30.0)
    return t


TRAIN_FWD = ["void cudnn::bn_fw_tr_1C11_kernel_NCHW", "sm80_xmma_fprop_implicit_gemm_indexed_f32f32", "relu_kernel",
             "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>"]
TRAIN_BWD = ["sm80_xmma_dgrad_implicit_gemm_f32f32", "sm80_xmma_wgrad_implicit_gemm_f32f32",
             "void cudnn::bn_bw_1C11_kernel_new", "threshold_backward_kernel"]
OPT = ["void at::native::multi_tensor_apply_kernel<SGD>", "void at::native::vectorized_elementwise_kernel<4, zero_>"]


def training_iteration(t, ranges):
    s = t.t
    for stage in (2, 3, 5, 2):  # stages of different depth: a forward's blocks are not steps
        for _ in range(stage):
            if ranges:
                fs = t.t
            t.kernels(TRAIN_FWD)
            if ranges:
                t.range("user_annotation", "FSDP::pre_forward", fs, t.t)
    if ranges:
        fs = t.t
        t.kernels(["pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 64, 4>, false>"])
        t.range("user_annotation", "flash_attn::_flash_attn_forward", fs, t.t)
    for stage in (2, 5, 3, 2):
        for _ in range(stage):
            t.kernels(TRAIN_BWD)
    os_ = t.t
    t.kernels(OPT)
    if ranges:
        t.range("user_annotation", "Optimizer.step#SGD.step", os_, t.t)
    t.sync(80.0)
    return s


def lone_profilerstep():
    t = Trace("lone_profilerstep")
    s = t.t
    training_iteration(t, False)
    t.range("user_annotation", "ProfilerStep#12", s, t.t)
    return t


def training_ranges():
    t = Trace("training_ranges")
    for i in range(3):
        s = t.t
        training_iteration(t, True)
        t.range("user_annotation", "ProfilerStep#%d" % (i + 4), s, t.t)
    return t


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            names = write_all(d)
            stale = [n for n in names if open(os.path.join(d, n), "rb").read()
                     != open(os.path.join(sys.argv[2], n), "rb").read()]
        for n in stale:
            print("%s differs from what make_step_fixtures.py writes: run it again" % n)
        return 1 if stale else 0
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "fixtures")
    write_all(out)
    return 0


def write_all(out):
    os.makedirs(out, exist_ok=True)
    names = []
    for t in (sglang_graph(), vllm_piecewise(), vllm_fullgraph(), hf_eager("hf_eager", False),
              hf_eager("hf_eager_profilerstep", True), hf_graph(), lone_profilerstep(), training_ranges()):
        t.events.sort(key=lambda e: (e["ts"], -e["dur"]))
        t.write(out)
        names.append(t.name + ".json.gz")
    return names


if __name__ == "__main__":
    sys.exit(main())
