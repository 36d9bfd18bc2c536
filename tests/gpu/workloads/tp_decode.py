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
  capture:N:S[:RULE[:PATTERN[:KEYS]]]  ask inject_probe (files in --control) for an S-step capture
                      (rule graph in graph mode, nvtx in eager mode; pattern decode_step), wait
                      until it records, time N steps inside it, step on until it is done; KEYS
                      adds request keys joined by '+', e.g. api=0+sync=0 (record kinds left off)
  profile:N           N timed steps under torch.profiler (CPU + CUDA); per-step kernel count and
                      kernel time from its trace are written next to the results
  profile:N:noexport  the same without exporting the trace (timing only)
  profcap:0           torch.profiler active while a capture is asked for (must be refused, profiler
                      still records)
  rss:N:EVERY         N untimed steps, sampling this process's RSS every EVERY steps
  meet:0              wait for the other side-by-side processes (files in --control: meet.want
                      names how many; each writes meet-<tag>.ready)
  blocks:R:N:KINDS[:S]  interleaved blocks in this process, so that drift between processes cancels:
                      idle:N, then R times (for each KIND of KINDS, joined by '+': the KIND block of N
                      timed steps, idle:N), e.g. blocks:3:100:capture is idle, capture, idle,
                      capture, idle, capture, idle. KIND capture is capture:N:S (S defaults to N + 50;
                      each block is its own capture), profile is profile:N:noexport. Every block
                      follows --settle untimed steps; its phase records block_set (the index of this
                      spec), block (position), block_kinds and settle.
Timed steps record their wall time (times_ms) and the launching thread's CPU time (cpu_ms): on a
host-bound loop the second leaves out what the machine takes from the thread (steal, run-queue
waits; each phase records those under "sched"), and keeps what a tool adds on the thread. With
--canary-iters each timed step is followed by a fixed pure-Python loop, timed apart (canary_ms):
a host-bound step divided by it no longer follows how fast the CPU runs at the moment.
Phases that time steps run with the garbage collector off (collected before). Each rank pins itself to its own
cores first (the CPUs local to its GPU, split if the GPUs share them; else disjoint parts of the
allowed set) and records them under "affinity".
Writes DIR/<tag>-rank<R>.json.
"""
import argparse
import contextlib
import gc
import json
import os
import statistics
import subprocess
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
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    p.add_argument("--no-pin", action="store_true", help="leave the CPU affinity as inherited")
    p.add_argument("--pin-main-core", action="store_true",
                   help="also keep the main (launching) thread on the first of the rank's cores, so that "
                        "processes of a host-bound loop compare on the same core")
    p.add_argument("--canary-iters", type=int, default=0,
                   help="after each timed step, time this many iterations of a pure-Python loop (canary_ms): "
                        "the thread's CPU speed at that moment, outside the step's time")
    p.add_argument("--cpus", default="",
                   help="pin to these CPUs (e.g. 0-7) instead of the GPU-local split (side-by-side processes)")
    p.add_argument("--count-instructions", action="store_true",
                   help="count the launching thread's user-space instructions per step (instr, perf_event_open): "
                        "the host work of a step, whatever speed the CPU runs at")
    p.add_argument("--settle", type=int, default=5, help="untimed steps before each interleaved block")
    p.add_argument("--capture-settle-s", type=float, default=0.6,
                   help="start timing a capture this long after the probe took the request even when "
                        "it has not announced recording (the report keeps only steps inside the window)")
    return p.parse_args()


def parse_cpulist(text):
    """'0-3,8,10-11' -> {0, 1, 2, 3, 8, 10, 11}"""
    cpus = set()
    for part in text.strip().split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def cpulist(cpus):
    """{0, 1, 2, 3, 8} -> '0-3,8'"""
    out, run = [], []
    for c in sorted(cpus):
        if run and c != run[-1] + 1:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
            run = []
        run.append(c)
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)


def split_cores(local, local_world, allowed, gpu_cpus):
    """The cores of local rank `local`: its GPU's local CPUs (gpu_cpus[j], already intersected with
    `allowed`), split evenly among the ranks whose GPUs share the same set; disjoint parts of
    `allowed` when a GPU's set is unknown or the sets overlap partly. Returns (cores, source)."""
    allowed = sorted(allowed)
    sets = [frozenset(c) for c in gpu_cpus]
    if len(sets) == local_world and all(sets):
        chosen = []
        for j in range(local_world):
            sharing = [k for k in range(local_world) if sets[k] == sets[j]]
            cores = sorted(sets[j])
            p, n = sharing.index(j), len(sharing)
            chosen.append(set(cores[p * len(cores) // n:(p + 1) * len(cores) // n]))
        disjoint = all(not (chosen[i] & chosen[k]) for i in range(local_world) for k in range(i))
        if disjoint and all(chosen):
            shared = sum(1 for k in range(local_world) if sets[k] == sets[local]) > 1
            return chosen[local], "gpu-local cpus" + (" (split: the GPUs share them)" if shared else "")
    n = len(allowed)
    return set(allowed[local * n // local_world:(local + 1) * n // local_world]), "disjoint part of the allowed cpus"


def gpu_pci_address(index):
    """The sysfs name (dddd:bb:dd.0) of CUDA device `index`: from torch's properties, else from
    nvidia-smi matched by UUID (CUDA's device order need not be PCI order)."""
    prop = torch.cuda.get_device_properties(index)
    if hasattr(prop, "pci_bus_id"):
        return f"{prop.pci_domain_id:04x}:{prop.pci_bus_id:02x}:{prop.pci_device_id:02x}.0"
    uuid = str(getattr(prop, "uuid", "")).lower()
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=uuid,pci.bus_id", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    for line in out.splitlines():
        u, _, bus = (x.strip() for x in line.partition(","))
        if uuid and uuid in u.lower() and ":" in bus:
            dom, rest = bus.split(":", 1)
            return f"{int(dom, 16):04x}:{rest.lower()}"
    return ""


def read_sys(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def pin_threads(cores):
    """Applies the affinity to every thread of this process (threads started later inherit it)."""
    n = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), cores)
            n += 1
        except OSError:
            pass
    return n


def pin_rank(local, local_world):
    allowed = os.sched_getaffinity(0)
    addrs, gpu_cpus = [], []
    for j in range(local_world):
        addr = gpu_pci_address(j) if j < torch.cuda.device_count() else ""
        local_cpus = parse_cpulist(read_sys(f"/sys/bus/pci/devices/{addr}/local_cpulist")) if addr else set()
        addrs.append(addr)
        gpu_cpus.append(local_cpus & allowed)
    cores, source = split_cores(local, local_world, allowed, gpu_cpus)
    threads = pin_threads(cores)
    return dict(cpus=cpulist(cores), ncpus=len(cores), source=source, allowed=cpulist(allowed),
                pci=addrs[local] if local < len(addrs) else "",
                numa_node=read_sys(f"/sys/bus/pci/devices/{addrs[local]}/numa_node") if local < len(addrs) and addrs[local] else "",
                gpu_local_cpus=[cpulist(c) for c in gpu_cpus], threads_pinned=threads)


@contextlib.contextmanager
def quiet():
    """No garbage collection inside a timed phase (collected before, so none is due)."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def gpu_used_mb():
    """Memory in use on this process's GPU (all of it, CUPTI's device buffers included), MB."""
    free, total = torch.cuda.mem_get_info()
    return (total - free) / 1048576.0


def malloc_mb():
    """Bytes in use by this process's malloc (glibc mallinfo2: small blocks + mmapped ones), MB;
    -1 when unavailable. Set against RSS it tells a heap that grows from memory mapped otherwise."""
    try:
        import ctypes

        class MallInfo2(ctypes.Structure):
            _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                        "fsmblks", "uordblks", "fordblks", "keepcost")]
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = MallInfo2
        m = libc.mallinfo2()
        return (m.uordblks + m.hblkhd) / 1048576.0
    except (OSError, AttributeError):
        return -1.0


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


class InstructionCounter:
    """The calling thread's retired user-space instructions (perf_event_open, PERF_COUNT_HW_INSTRUCTIONS,
    exclude_kernel and exclude_hv; needs perf_event_paranoid <= 2 and a PMU the kernel exposes).
    error says why not when unavailable; read() returns the count so far."""

    def __init__(self):
        import ctypes
        import platform
        self.fd = -1
        self.error = ""
        nr = {"x86_64": 298, "aarch64": 241}.get(platform.machine())
        if nr is None:
            self.error = f"no perf_event_open syscall number for {platform.machine()}"
            return
        attr = (ctypes.c_uint8 * 128)()
        ctypes.memmove(attr, (ctypes.c_uint32 * 2)(0, 128), 8)  # type PERF_TYPE_HARDWARE, size
        ctypes.memmove(ctypes.byref(attr, 8), (ctypes.c_uint64 * 1)(1), 8)  # config PERF_COUNT_HW_INSTRUCTIONS
        ctypes.memmove(ctypes.byref(attr, 40), (ctypes.c_uint64 * 1)((1 << 5) | (1 << 6)), 8)  # exclude_kernel, _hv
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        fd = libc.syscall(ctypes.c_long(nr), ctypes.byref(attr), ctypes.c_int(0), ctypes.c_int(-1),
                          ctypes.c_int(-1), ctypes.c_ulong(8))  # this thread, any CPU, no group, CLOEXEC
        if fd < 0:
            self.error = f"perf_event_open: {os.strerror(ctypes.get_errno())}"
            return
        self.fd = fd
        if self.read() == 0:  # a PMU that never counts (some VMs)
            sum(range(10000))
            if self.read() == 0:
                self.error = "perf_event_open: the counter does not count (no PMU in this machine)"
                os.close(fd)
                self.fd = -1

    def read(self):
        return int.from_bytes(os.read(self.fd, 8), "little") if self.fd >= 0 else 0


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
        self.instr = InstructionCounter() if a.count_instructions else None
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

    def canary(self):
        """--canary-iters: a fixed piece of pure-Python work (no CUDA), timed in ms, run between
        steps: how fast this thread's CPU runs just now, to set a host-bound step against."""
        t = time.perf_counter()
        acc = 0
        for i in range(self.a.canary_iters):
            acc = (acc + i * i) & 0xFFFF
        return (time.perf_counter() - t) * 1e3

    def timed(self, n, mark=None, wrap=None):
        """n steps: wall time per step (ms), the launching thread's CPU time per step (ms), host
        start of each step (CLOCK_REALTIME ns), and the canary's time after each step (ms; empty
        without --canary-iters). wrap(i) gives a context for step i (torch.profiler's ranges).
        With --count-instructions, self.last_instr holds each step's user-space instructions
        (millions; empty when the counter is unavailable)."""
        times, cpu, starts, canary, instr = [], [], [], [], []
        counter = self.instr if self.instr is not None and self.instr.fd >= 0 else None
        t_prev, c_prev = time.perf_counter(), time.thread_time_ns()
        i_prev = counter.read() if counter else 0
        for i in range(n):
            starts.append(time.time_ns())
            with wrap(i) if wrap else contextlib.nullcontext():
                self.step()
            t, c = time.perf_counter(), time.thread_time_ns()
            if counter:
                k = counter.read()
                instr.append((k - i_prev) / 1e6)
            times.append((t - t_prev) * 1e3)
            cpu.append((c - c_prev) / 1e6)
            if self.a.canary_iters:
                canary.append(self.canary())
            if mark:
                mark(i)
            t_prev, c_prev = time.perf_counter(), time.thread_time_ns()
            i_prev = counter.read() if counter else 0
        self.last_instr = instr
        return times, cpu, starts, canary


def sched_snapshot():
    """What the host took from this thread: the machine's steal time (/proc/stat, all CPUs), this
    thread's run-queue wait (/proc/thread-self/schedstat) and involuntary context switches."""
    snap = dict(t=time.perf_counter())
    fields = read_sys("/proc/stat").split("\n", 1)[0].split()
    if len(fields) > 8 and fields[0] == "cpu":
        snap["steal_ticks"] = int(fields[8])
    st = read_sys("/proc/thread-self/schedstat").split()
    if len(st) >= 2:
        snap["runq_wait_ns"] = int(st[1])
    for line in read_sys("/proc/thread-self/status").splitlines():
        if line.startswith("nonvoluntary_ctxt_switches:"):
            snap["nonvoluntary"] = int(line.split()[1])
    return snap


def sched_delta(a, b, cpus):
    """The figures between two snapshots: steal per CPU as a share of the wall time (%), this
    thread's run-queue wait (ms) and involuntary switches."""
    out = {}
    wall = b["t"] - a["t"]
    if "steal_ticks" in a and "steal_ticks" in b and wall > 0 and cpus:
        hz = os.sysconf("SC_CLK_TCK")
        out["steal_pct_per_cpu"] = 100.0 * (b["steal_ticks"] - a["steal_ticks"]) / hz / cpus / wall
    if "runq_wait_ns" in a and "runq_wait_ns" in b:
        out["runq_wait_ms"] = (b["runq_wait_ns"] - a["runq_wait_ns"]) / 1e6
    if "nonvoluntary" in a and "nonvoluntary" in b:
        out["nonvoluntary_switches"] = b["nonvoluntary"] - a["nonvoluntary"]
    return out


def control_flag(group, value):
    """Rank 0's decision, shared over the CPU (gloo) group: no GPU work, no extra kernels. `value`
    may be a reason code (int); 0 or False means go on."""
    t = torch.tensor([int(value or 0)], dtype=torch.int32)
    dist.broadcast(t, src=0, group=group)
    return int(t.item())


def summary(times):
    if not times:
        return {}
    s = sorted(times)
    return dict(steps=len(times), median_ms=statistics.median(times), mean_ms=statistics.fmean(times),
                p10_ms=s[len(s) // 10], p90_ms=s[(len(s) * 9) // 10], min_ms=s[0], max_ms=s[-1])


def capture_phase(loop, a, cpu, name, timed_steps, steps, rule, pattern, extra=""):
    ctrl = a.control
    base = os.path.join(ctrl, name)
    if loop.rank == 0:
        with open(base + ".req.tmp", "w") as f:
            f.write(f"ranks={dist.get_world_size()} steps={steps} rule={rule} pattern={pattern} "
                    f"timeout_s={a.timeout} lead_ms=150 {extra.replace('+', ' ')}\n")
        os.rename(base + ".req.tmp", base + ".req")
    t0 = time.time()
    waited = 0
    rss = [dict(step=0, rss_mb=rss_mb(), malloc_mb=malloc_mb())]
    taken = []

    def why_start():
        """1: it records; 2: the probe is done without recording (arm refused); 3: the probe took the
        request --capture-settle-s ago without announcing recording; 4: timeout."""
        if os.path.exists(base + ".recording"):
            return 1
        if os.path.exists(base + ".done"):
            return 2
        if a.capture_settle_s > 0:
            if not taken and os.path.exists(base + ".taken"):
                taken.append(time.time())
            if taken and time.time() - taken[0] >= a.capture_settle_s:
                return 3
        return 4 if time.time() - t0 > a.timeout else 0

    while not (reason := control_flag(cpu, why_start() if loop.rank == 0 else 0)):
        loop.step()
        waited += 1
    times, cpu_ms, starts, canary = loop.timed(timed_steps)
    instr = loop.last_instr
    after = 0
    while not control_flag(cpu, loop.rank == 0 and (os.path.exists(base + ".done")
                                                    or time.time() - t0 > a.timeout)):
        loop.step()
        after += 1
        if after % 500 == 0:
            rss.append(dict(step=after, t=time.time() - t0, rss_mb=rss_mb(), malloc_mb=malloc_mb(), gpu_used_mb=gpu_used_mb()))
    rss.append(dict(step=after, t=time.time() - t0, rss_mb=rss_mb(), malloc_mb=malloc_mb(), gpu_used_mb=gpu_used_mb()))
    return dict(kind="capture", name=name, request=extra, waited_steps=waited, steps_after=after, capture_steps=steps,
                recording_seen=os.path.exists(base + ".recording"),
                started_by={1: "recording", 2: "done", 3: "settle", 4: "timeout"}.get(reason, str(reason)),
                step_starts_ns=starts,
                times_ms=times, cpu_ms=cpu_ms, canary_ms=canary, instr_m=instr, rss=rss, **summary(times))


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
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        times, cpu, starts, canary = loop.timed(n, wrap=lambda i: record_function(f"gapscope_step_{i}"))
    instr = loop.last_instr
    per_step = []
    if export:
        trace = os.path.join(a.out, f"{name}-rank{loop.rank}.trace.json")
        prof.export_chrome_trace(trace)
        per_step = kernels_per_step(trace)
        try:
            os.remove(trace)
        except OSError:
            pass
    return dict(kind="profile", name=name, times_ms=times, cpu_ms=cpu, canary_ms=canary, step_starts_ns=starts,
                instr_m=instr, per_step=per_step, **summary(times))


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


def expand_phases(spec):
    """The phase list with blocks:R:N:KINDS[:S] written out: [(parts, block info or None)]."""
    out = []
    for index, item in enumerate(spec.split(",")):
        parts = item.split(":")
        if parts[0] != "blocks":
            out.append((parts, None))
            continue
        reps, n, kinds = int(parts[1]), int(parts[2]), parts[3].split("+")
        length = int(parts[4]) if len(parts) > 4 else n + 50
        body = dict(capture=["capture", str(n), str(length)], profile=["profile", str(n), "noexport"])
        unknown = [k for k in kinds if k not in body]
        if unknown:
            raise SystemExit(f"tp_decode: phase {item!r}: block kind {unknown[0]!r} is not capture or profile")
        seq = [["idle", str(n)]]
        for _ in range(reps):
            for k in kinds:
                seq += [body[k], ["idle", str(n)]]
        for pos, p in enumerate(seq):
            out.append((p, dict(block_set=index, block=pos, block_kinds="+".join(kinds))))
    return out


def meet_phase(a, name, timeout_s=300.0):
    """meet:0 with --control DIR: processes started side by side (separate jobs, no group between
    them) wait for each other here, so that their next timed phases run at the same time. Each writes
    DIR/meet-<tag>.ready and waits for DIR/meet.want (the number of processes) such files."""
    mine = os.path.join(a.control, f"meet-{a.tag}.ready")
    with open(mine, "w") as f:
        f.write(str(os.getpid()))
    t0 = time.time()
    while True:
        try:
            want = int(open(os.path.join(a.control, "meet.want")).read().strip() or 0)
        except (OSError, ValueError):
            want = 0
        ready = [x for x in os.listdir(a.control) if x.startswith("meet-") and x.endswith(".ready")]
        if want and len(ready) >= want:
            return dict(kind="meet", name=name, waited_s=time.time() - t0, met=len(ready), t_ns=time.time_ns())
        if time.time() - t0 > timeout_s:
            return dict(kind="meet", name=name, waited_s=time.time() - t0, met=len(ready), timed_out=True)
        time.sleep(0.0005)


def run_phase(loop, a, cpu, parts, name):
    kind, n = parts[0], int(parts[1])
    if kind == "idle":
        times, cpu, starts, canary = loop.timed(n)
        return dict(kind="idle", name=name, times_ms=times, cpu_ms=cpu, canary_ms=canary, step_starts_ns=starts,
                    instr_m=loop.last_instr, **summary(times))
    if kind == "meet":
        return meet_phase(a, name)
    if kind == "capture":
        steps = int(parts[2]) if len(parts) > 2 else n
        rule = parts[3] if len(parts) > 3 else ("graph" if a.mode == "graph" else "nvtx")
        pattern = parts[4] if len(parts) > 4 else "decode_step"
        return capture_phase(loop, a, cpu, name, n, steps, rule, pattern, parts[5] if len(parts) > 5 else "")
    if kind == "profcap":
        return profcap_phase(loop, a, cpu, name)
    if kind == "profile":
        return profile_phase(loop, a, n, name, export=len(parts) < 3 or parts[2] != "noexport")
    if kind == "rss":
        every = int(parts[2]) if len(parts) > 2 else 500
        samples = []
        t0 = time.time()
        for i in range(n):
            loop.step()
            if i % every == 0:
                samples.append(dict(step=i, t=time.time() - t0, rss_mb=rss_mb()))
        samples.append(dict(step=n, t=time.time() - t0, rss_mb=rss_mb()))
        return dict(kind="rss", name=name, samples=samples)
    raise SystemExit(f"tp_decode: unknown phase {':'.join(parts)!r}")


def main():
    a = parse_args()
    plan = expand_phases(a.phases)
    local = int(os.environ.get("LOCAL_RANK", 0))
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", 1))
    affinity = dict(source="not pinned (--no-pin)", cpus=cpulist(os.sched_getaffinity(0)))
    if a.cpus:
        cores = parse_cpulist(a.cpus) & os.sched_getaffinity(0)
        affinity = dict(source="--cpus", cpus=cpulist(cores), ncpus=len(cores), threads_pinned=pin_threads(cores))
    elif not a.no_pin:
        affinity = pin_rank(local, local_world)
    torch.set_num_threads(a.threads)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    cpu = dist.new_group(backend="gloo")
    os.makedirs(a.out, exist_ok=True)
    t_init = time.time()
    model = TPDecoder(a, rank, world, dev)
    loop = Loop(a, model, rank)
    torch.cuda.synchronize()
    dist.barrier()
    if not a.no_pin:  # threads started by NCCL, gloo and CUDA meanwhile
        affinity["threads_pinned"] = pin_threads(parse_cpulist(affinity["cpus"]))
        if a.pin_main_core:  # this thread only (Linux: pid 0 is the calling thread)
            main_core = min(parse_cpulist(affinity["cpus"]))
            os.sched_setaffinity(0, {main_core})
            affinity["main_core"] = main_core
    print(f"[rank {rank}] cores {affinity['cpus']} ({affinity['source']})", flush=True)
    instr_error = loop.instr.error if loop.instr is not None else None
    result = dict(instr_error=instr_error, rank=rank, world=world, mode=a.mode, tag=a.tag, layers=a.layers, hidden=a.hidden,
                  batch=a.batch, context=a.context, injected=bool(os.environ.get("CUDA_INJECTION64_PATH")),
                  init_s=time.time() - t_init, phases=[], rss_mb_start=rss_mb(), phase_spec=a.phases,
                  affinity=affinity, torch_threads=torch.get_num_threads())
    for parts, block in plan:
        kind, n = parts[0], int(parts[1])
        if kind == "warm":
            for _ in range(n):
                loop.step()
            torch.cuda.synchronize()
            continue
        if block:
            for _ in range(a.settle):
                loop.step()
        name = f"{a.tag or a.mode}-{len(result['phases'])}-{kind}"
        # The collector stays on where no step is timed (the long capture's memory check).
        timed = kind in ("idle", "profile") or (kind == "capture" and n > 0)
        s0 = sched_snapshot()
        with quiet() if timed else contextlib.nullcontext():
            phase = run_phase(loop, a, cpu, parts, name)
        phase["sched"] = sched_delta(s0, sched_snapshot(), os.cpu_count())
        phase["gc_off"] = timed
        if block:
            phase.update(block, settle=a.settle)
        result["phases"].append(phase)
        print(f"[rank {rank}] {name}: {json.dumps({k: v for k, v in phase.items() if not isinstance(v, list)})}",
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
