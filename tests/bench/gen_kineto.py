#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write a synthetic Kineto (torch.profiler) trace of a chosen size for the importer benchmarks.

The event mix follows a real decode trace (tests/import/fixtures/kineto/decode.json.gz): per launched
kernel a cuda_runtime launch, the kernel itself (long templated names, full args: grid, block,
registers, shared memory, correlation) and the two ac2g flow events; per decode step a user_annotation
range plus cpu_op ranges, a DtoH/HtoD memcpy pair and a memset. Text layout is Kineto's (one field
group per line), so the file is what torch.profiler would write for a long capture.

--jitter draws durations, gaps and launch configs at random (nanosecond digits), so the text compresses
about as well as a real trace does (10-14x with gzip -6) rather than 28x.

Usage: gen_kineto.py OUT.json --events N [--name-pad CHARS] [--kernels-only] [--jitter] [--rank R --world W] [--gzip] [--seed S]
Prints one JSON line: events, kernels, bytes.
"""
import argparse
import gzip
import json
import random
import sys

KERNELS = [
    "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8::Params)",
    "void flashinfer::BatchDecodeWithPagedKVCacheKernel<(flashinfer::PosEncodingMode)0, 2u, 4u, 8u, 16u, 1u, 8u, (flashinfer::PageStorage)0, flashinfer::DefaultAttention<false, false, false, false>, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int>(__nv_bfloat16*, flashinfer::paged_kv_t<(flashinfer::PageStorage)0, __nv_bfloat16, int>, flashinfer::kv_partition_info_t<int>, __nv_bfloat16*, float*, bool*, flashinfer::BatchDecodeParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int> const)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, at::native::AUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul>)",
    "void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, float, int, int)",
    "nvjet_sm90_tst_64x8_64x16_4x2_h_bz_NNT",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
    "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<176>, cute::C<128> >, 128, cutlass::bfloat16_t, float, cutlass::arch::Sm90, false, false, false, true, true, false, false, true, true, false, false, false>, flash::CollectiveEpilogueFwd<cute::tuple<cute::C<128>, cute::C<128>, cute::C<176> >, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cutlass::bfloat16_t, cutlass::arch::Sm90, 256, true, true, false, false>, flash::VarlenDynamicPersistentTileScheduler<128, 256, 128, false, true, true> > > >(flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<176>, cute::C<128> >, 128, cutlass::bfloat16_t, float, cutlass::arch::Sm90, false, false, false, true, true, false, false, true, true, false, false, false>, flash::CollectiveEpilogueFwd<cute::tuple<cute::C<128>, cute::C<128>, cute::C<176> >, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cutlass::bfloat16_t, cutlass::arch::Sm90, 256, true, true, false, false>, flash::VarlenDynamicPersistentTileScheduler<128, 256, 128, false, true, true> > >::Params)",
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
]
OPS = ["aten::mm", "aten::linear", "aten::add", "aten::mul", "aten::silu", "aten::_fused_rms_norm", "aten::copy_"]


def header(rank, world):
    return (
        '{\n  "schemaVersion": 1,\n  "deviceProperties": [\n    {\n      "id": %d, "name": "NVIDIA H200", '
        '"totalGlobalMem": 150109880320,\n      "computeMajor": 9, "computeMinor": 0,\n      "maxThreadsPerBlock": 1024, '
        '"maxThreadsPerMultiprocessor": 2048,\n      "regsPerBlock": 65536, "warpSize": 32,\n      "sharedMemPerBlock": 49152, '
        '"numSms": 132\n    }\n  ],\n  "distributedInfo": {"backend": "nccl", "rank": %d, "world_size": %d},\n'
        '  "cuda_driver_version": 13000,\n  "cuda_runtime_version": 13000,\n  "cupti_version": 130001,\n'
        '  "displayTimeUnit": "ms",\n  "baseTimeNanoseconds": 1790857026000000000,\n  "traceEvents": [\n'
        % (rank, rank, world))


def kernel(name, ts, dur, dev, corr, ext, grid, block, regs, smem, occupancy=(0.242424, 2.909091, 3)):
    return (
        '  {\n    "ph": "X", "cat": "kernel", "name": %s, "pid": %d, "tid": 7,\n    "ts": %.3f, "dur": %.3f,\n'
        '    "args": {\n      "External id": %d,      "queued": 0, "device": %d, "context": 1,      "stream": 7, '
        '"correlation": %d,      "registers per thread": %d,      "shared memory": %d,      "blocks per SM": %.6f,'
        '      "warps per SM": %.6f,      "grid": [%d, %d, 1],      "block": [%d, 1, 1],      '
        '"est. achieved occupancy %%": %d\n    }\n  },\n'
        % (name, dev, ts, dur, ext, dev, corr, regs, smem, occupancy[0], occupancy[1], grid[0], grid[1], block,
           occupancy[2]))


def runtime(ts, dur, pid, corr, ext):
    return (
        '  {\n    "ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": %d, "tid": %d,\n'
        '    "ts": %.3f, "dur": %.3f,\n    "args": {\n      "External id": %d,      "cbid": 211, "correlation": %d\n'
        '    }\n  },\n' % (pid, pid, ts, dur, ext, corr))


def flow(ph, corr, pid, tid, ts):
    bp = ', "bp": "e"' if ph == "f" else ""
    return ('  {\n    "ph": "%s", "id": %d, "pid": %d, "tid": %d, "ts": %.3f,\n    "cat": "ac2g", "name": "ac2g"%s\n  },\n'
            % (ph, corr, pid, tid, ts, bp))


def cpu(cat, name, ts, dur, pid, ext):
    return ('  {\n    "ph": "X", "cat": "%s", "name": "%s", "pid": %d, "tid": %d,\n    "ts": %.3f, "dur": %.3f,\n'
            '    "args": {\n      "External id": %d,"Record function id": 0, "Ev Idx": %d\n    }\n  },\n'
            % (cat, name, pid, pid, ts, dur, ext, ext))


def memop(cat, name, ts, dur, dev, corr, nbytes):
    return ('  {\n    "ph": "X", "cat": "%s", "name": "%s", "pid": %d, "tid": 7,\n    "ts": %.3f, "dur": %.3f,\n'
            '    "args": {\n      "device": %d, "context": 1,      "stream": 7, "correlation": %d,      "bytes": %d, '
            '"memory bandwidth (GB/s)": 1.5\n    }\n  },\n' % (cat, name, dev, ts, dur, dev, corr, nbytes))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--events", type=int, required=True)
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--world", type=int, default=1)
    ap.add_argument("--kernels-per-step", type=int, default=200)
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kernels-only", action="store_true", help="only kernel events (the kernel-rate benchmark)")
    ap.add_argument("--jitter", action="store_true", help="random durations, gaps and launch configs")
    ap.add_argument("--name-pad", type=int, default=0,
                    help="template arguments appended to kernel names (CUTLASS names run to 1-2 KB)")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    pad = (", cute::tuple<cute::C<128>, cute::C<176>, cute::C<1> >" * (a.name_pad // 48 + 1))[:a.name_pad]
    names = [json.dumps(k.replace(">(", pad + ">(", 1) if ">(" in k else k + pad) for k in KERNELS]
    pid, dev = 4000 + a.rank, a.rank
    out = gzip.open(a.out, "wt", compresslevel=1) if a.gzip else open(a.out, "w", buffering=1 << 22)
    out.write(header(a.rank, a.world))
    events = kernels = 0
    t = 5154603958091.0
    corr = 100
    step = 0
    chunk = []
    while events < a.events:
        step_start = t
        chunk.append(cpu("user_annotation", "decode_step", t, 0.0, pid, corr))
        step_idx = len(chunk) - 1
        events += 1
        chunk.append(memop("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", t + 3, 1.2, dev, corr, 4096))
        chunk.append(memop("gpu_memset", "Memset (Device)", t + 5, 0.9, dev, corr + 1, 1 << 20))
        events += 2
        for k in range(a.kernels_per_step):
            corr += 1
            if a.kernels_only:
                if a.jitter:
                    d = round(rnd.uniform(1.0, 40.0), 3)
                    chunk.append(kernel(names[rnd.randrange(len(names))], t + 6, d, dev, corr,
                                        corr + rnd.randrange(0, 1000), (rnd.randrange(1, 1025), rnd.randrange(1, 9)),
                                        32 * rnd.randrange(1, 33), rnd.randrange(16, 256), 16 * rnd.randrange(0, 14337),
                                        (rnd.uniform(0, 16), rnd.uniform(0, 64), rnd.randrange(0, 101))))
                    t += d + round(rnd.uniform(0.5, 4.0), 3)
                else:
                    d = rnd.choice((2.1, 3.4, 5.5, 8.25, 13.0))
                    chunk.append(kernel(names[k % len(names)], t + 6, d, dev, corr, corr, (132, 1 + k % 4),
                                        128 * (1 + k % 3), 32 + k % 96, 1024 * (k % 64)))
                    t += d + 1.5
                events += 1
                kernels += 1
                if events >= a.events:
                    break
                continue
            if k % 8 == 0:
                chunk.append(cpu("cpu_op", OPS[k % len(OPS)], t, 9.0, pid, corr))
                events += 1
            d = rnd.choice((2.1, 3.4, 5.5, 8.25, 13.0))
            chunk.append(runtime(t + 1, 4.5, pid, corr, corr))
            chunk.append(flow("s", corr, pid, pid, t + 1))
            chunk.append(kernel(names[k % len(names)], t + 6, d, dev, corr, corr, (132, 1 + k % 4), 128 * (1 + k % 3),
                                32 + k % 96, 1024 * (k % 64)))
            chunk.append(flow("f", corr, dev, 7, t + 6))
            events += 4
            kernels += 1
            t += d + 1.5
            if events >= a.events:
                break
        chunk.append(memop("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", t, 2.4, dev, corr, 8))
        events += 1
        chunk[step_idx] = cpu("user_annotation", "decode_step", step_start, t - step_start, pid, step_idx)
        t += 30.0
        step += 1
        out.write("".join(chunk))
        chunk = []
    out.write('  {\n    "name": "process_name", "ph": "M", "ts": 0, "pid": %d, "tid": 0,\n    "args": {\n      "name": "python3"\n    }\n  }\n'
              % pid)
    events += 1
    out.write('  ],\n  "traceName": "synthetic"\n}\n')
    out.close()
    import os
    print(json.dumps({"events": events, "kernels": kernels, "bytes": os.path.getsize(a.out), "steps": step}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
