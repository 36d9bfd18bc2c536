#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the Perfetto fixtures of tests/import/fixtures/perfetto.

A small two-rank Kineto pair is made here (JSON written by this script: 3 ProfilerStep ranges per rank,
kernels on two streams of each GPU, some overlapping across the streams and, on rank 1, two kernels that
overlap on the same stream, as Kineto's rounded timestamps sometimes have them; a cudaLaunchKernel per
kernel with its correlation id), then `gapscope-cli convert` turns it into:
- two_ranks.pftrace: plain packets (--no-compress);
- two_ranks_zstd.pftrace: the exporter's default, zstd_compressed_packets;
- two_ranks_deflate.pftrace: written HERE from two_ranks.pftrace: the same packets, wrapped 40 at a time in
  TracePacket.compressed_packets (field 50, zlib), the form Perfetto's own tracing service writes;
- synth_2ranks.pftrace: `gapscope-cli synth --ranks 2 --steps 3 --kernels-per-step 24 --seed 5` converted
  (zstd): one stream per rank, CUDA graph launches, syncs, NVTX step ranges and NCCL collectives.
The figures the tests expect come from tests/corpus/perfetto_check.py (its own protobuf reading), not
from this script.

Usage: make_perfetto_fixtures.py --cli gapscope-cli OUT_DIR
"""
import argparse
import importlib.util
import json
import os
import subprocess
import tempfile
import zlib

T0_US = 1_700_000_000_000_000.0  # Kineto timestamps are microseconds


def kineto_rank(rank):
    events, corr = [], 1
    t = T0_US + rank * 3.5
    for step in range(3):
        step_start = t
        for k in range(8):
            stream = 7 if k % 3 else 13
            start = t + 4.0 * k + (1.5 if stream == 13 else 0)
            dur = 5.25 if stream == 13 else 3.0 + 0.125 * k  # stream 13 overlaps stream 7's next kernel
            if rank == 1 and step == 1 and k == 2:
                dur = 9.0  # runs into kernel 4 on stream 7: overlap on one stream
            name = ["gemm_bf16_128x128", "rmsnorm_fwd", "flash_attn_fwd", "silu_mul"][k % 4]
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100 + rank,
                           "tid": 100 + rank, "ts": start - 2.0, "dur": 1.5, "args": {"correlation": corr}})
            events.append({"ph": "X", "cat": "kernel", "name": name, "pid": rank, "tid": stream, "ts": start,
                           "dur": dur, "args": {"device": rank, "stream": stream, "correlation": corr,
                                                "grid": [64, 1, 1], "block": [256, 1, 1]}})
            corr += 1
        t += 60.0
        events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step, "pid": 100 + rank,
                       "tid": 100 + rank, "ts": step_start - 3.0, "dur": t - step_start - 2.0, "args": {}})
    return {"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2},
            "deviceProperties": [{"id": rank, "name": "NVIDIA H100 80GB HBM3", "numSms": 132,
                                  "totalGlobalMem": 85028126720}],
            "traceEvents": events, "displayTimeUnit": "ms"}


# The varint codec of the hostile-file generator (tests/hostile/make_hostile.py), not written twice.
_spec = importlib.util.spec_from_file_location(
    "make_hostile", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hostile", "make_hostile.py"))
_hostile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_hostile)
varint, read_varint = _hostile.varint, _hostile.read_varint


def packets(b):
    """The TracePacket records (tag, length, body) of a Trace, as bytes."""
    out, i = [], 0
    while i < len(b):
        assert b[i] == 0x0A, "not a Trace.packet record at byte %d" % i
        n, j = read_varint(b, i + 1)
        out.append(b[i:j + n])
        i = j + n
    return out


def deflated(plain, per_block=40):
    out = bytearray()
    records = packets(plain)
    for k in range(0, len(records), per_block):
        block = zlib.compress(b"".join(records[k:k + per_block]), 9)
        body = varint(50 << 3 | 2) + varint(len(block)) + block
        out += b"\x0a" + varint(len(body)) + body
    return bytes(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("out")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        inputs = []
        for rank in range(2):
            path = os.path.join(tmp, "rank%d.json" % rank)
            with open(path, "w") as f:
                json.dump(kineto_rank(rank), f)
            inputs.append(path)
        plain = os.path.join(a.out, "two_ranks.pftrace")
        subprocess.run([a.cli, "convert", "--no-compress"] + inputs + [plain], check=True)
        subprocess.run([a.cli, "convert"] + inputs + [os.path.join(a.out, "two_ranks_zstd.pftrace")], check=True)
        synth = os.path.join(tmp, "synth.gapscope")
        subprocess.run([a.cli, "synth", "--ranks", "2", "--steps", "3", "--kernels-per-step", "24", "--seed", "5",
                        "-o", synth], check=True)
        subprocess.run([a.cli, "convert", synth, os.path.join(a.out, "synth_2ranks.pftrace")], check=True)
    with open(plain, "rb") as f:
        data = f.read()
    with open(os.path.join(a.out, "two_ranks_deflate.pftrace"), "wb") as f:
        f.write(deflated(data))


if __name__ == "__main__":
    main()
