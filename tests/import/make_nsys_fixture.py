#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Build an Nsight Systems-shaped SQLite export (`nsys export --type sqlite`) for the importer tests.

nsys is not available where the tests run, so this writes the documented schema (NVIDIA's "SQLite
Export Schema Reference": StringIds, PROCESSES, ThreadNames, TARGET_INFO_GPU,
TARGET_INFO_SESSION_START_TIME, CUPTI_ACTIVITY_KIND_KERNEL / _MEMCPY / _MEMSET / _RUNTIME /
_SYNCHRONIZATION, NVTX_EVENTS; timestamps in ns from the session start; globalPid/globalTid =
pid << 24 | tid) with the data of two ranks decoding a few steps: per step an NVTX "decode_step"
push/pop range with nested "layer" ranges, kernels launched through cudaLaunchKernel_v7000 (one NCCL
all-reduce), an HtoD copy, a memset and a cudaStreamSynchronize with its synchronization record.
The process with the higher pid runs on device 0, so rank order must come from devices, not pids.

Writes OUT.sqlite and OUT.expected.json (the counts and total kernel time, computed here from the rows
written, for the tests to compare against).  Usage: make_nsys_fixture.py OUT_BASENAME
"""
import json
import os
import sqlite3
import sys

SCHEMA = """
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT,
  isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER,
  smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT, cuDevice INTEGER, ctxId INTEGER,
  computeMajor INTEGER, computeMinor INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
  launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
  gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
  blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
  sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER,
  srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER,
  dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,
  callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER NOT NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
"""

SESSION_START = 1790857026000000000
KERNELS = [
    ("void flashinfer::BatchDecodeWithPagedKVCacheKernel<2u, 4u, 8u>(flashinfer::BatchDecodeParams)", 9000),
    ("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_tn_align8>(Params)", 12000),
    ("void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, c10::BFloat16*, float, int, int)", 3000),
    ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 15000),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >(int, FillFunctor<float>)", 2000),
    ("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_128x64_64x3_nn_align8>(Params)", 11000),
]


class Db:
    def __init__(self, path):
        if os.path.exists(path):
            os.remove(path)
        self.c = sqlite3.connect(path)
        self.c.executescript(SCHEMA)
        self.strings = {}

    def sid(self, s):
        if s not in self.strings:
            self.strings[s] = len(self.strings) + 1
            self.c.execute("INSERT INTO StringIds VALUES (?, ?)", (self.strings[s], s))
        return self.strings[s]


def rank_rows(db, pid, device, offset, corr0, exp):
    gpid = pid << 24
    gtid = gpid | pid  # main thread: tid == pid
    db.c.execute("INSERT INTO PROCESSES VALUES (?, ?, ?)", (gpid, pid, "python3"))
    db.c.execute("INSERT INTO ThreadNames VALUES (?, 1, ?)", (db.sid("MainThread"), gtid))
    t = offset
    corr = corr0
    for step in range(4):
        step_start = t
        layer_start = t + 500
        corr += 1  # HtoD copy of the next token
        db.c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,0,0)",
                     (t + 100, t + 900, 0, gtid, corr, db.sid("cudaMemcpyAsync_v3020")))
        db.c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?,?,?,1,0,7,?,?,?,1,0,0,0,0,0,0,0,0,0,0)",
                     (t + 1000, t + 1800, device, corr, gpid, 4096))
        exp["memcpy"] += 1
        exp["api"] += 1
        gpu = t + 2000
        for k, (name, dur) in enumerate(KERNELS):
            corr += 1
            launch = t + 1000 + k * 1500
            db.c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,0,0)",
                         (launch, launch + 1200, 0, gtid, corr, db.sid("cudaLaunchKernel_v7000")))
            gpu = max(gpu, launch + 1500)
            short = name.split("(")[0].split("<")[0].split()[-1]
            db.c.execute(
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,1,0,7,?,?,?,?,0,0,0,?,?,?,1,?,1,1,?,?,0,0,0,0,?,0)",
                (gpu, gpu + dur, device, corr, gpid, db.sid(name), db.sid(short), 32 + 8 * k, 132, 1 + k % 3,
                 128 * (1 + k % 2), 1024 * k, 4096 * (k % 2), 100 + k))
            exp["kernels"] += 1
            exp["kernel_ns"] += dur
            exp["api"] += 1
            gpu += dur + 200
        corr += 1
        db.c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?,?,?,1,0,7,?,?,0,?,0,0)",
                     (gpu, gpu + 600, device, corr, gpid, 1 << 20))
        db.c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,0,0)",
                     (t + 1000 + 6 * 1500, t + 1000 + 6 * 1500 + 300, 0, gtid, corr, db.sid("cudaMemsetAsync_v3020")))
        exp["memset"] += 1
        exp["api"] += 1
        gpu += 600
        corr += 1
        sync_start = t + 1000 + 7 * 1500
        db.c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,0,0)",
                     (sync_start, gpu + 300, 0, gtid, corr, db.sid("cudaStreamSynchronize_v3020")))
        db.c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (?,?,?,1,7,?,?,3,0)",
                     (sync_start + 50, gpu + 250, device, corr, gpid))
        exp["api"] += 1
        exp["sync"] += 1
        for layer in range(2):
            db.c.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (?,?,59,?,?)",
                         (layer_start + layer * 4000, layer_start + layer * 4000 + 3500, "layer %d" % layer, gtid))
            exp["nvtx"] += 1
        t = gpu + 1000
        db.c.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid) VALUES (?,?,59,?,?)",
                     (step_start, t - 500, db.sid("decode_step"), gtid))
        exp["nvtx"] += 1
        exp["steps"] += 1
    db.c.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (?,NULL,34,?,?)",
                 (t, "a mark", gtid))
    db.c.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (?,NULL,60,?,?)",
                 (t + 10, "never ended", gtid))
    return corr


def main():
    base = sys.argv[1]
    db = Db(base + ".sqlite")
    db.c.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, '2026-10-01T00:00:00Z', '')",
                 (SESSION_START,))
    for dev in (0, 1):
        db.c.execute("INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, totalMemory, memoryBandwidth, "
                     "clockRate, smCount, uuid, cuDevice, computeMajor, computeMinor) VALUES "
                     "(0, ?, 'NVIDIA H200', ?, 150109880320, 4800000000000, 1980000, 132, ?, ?, 9, 0)",
                     (dev, "0000:%02x:00.0" % (0x19 + dev), "GPU-fixture-%d" % dev, dev))
    per_rank = []
    corr = 0
    for pid, device in ((2002, 0), (1001, 1)):  # rank 0 = device 0 = the higher pid
        exp = {"pid": pid, "device": device, "kernels": 0, "kernel_ns": 0, "memcpy": 0, "memset": 0, "api": 0,
               "sync": 0, "nvtx": 0, "steps": 0}
        corr = rank_rows(db, pid, device, 50000 + 700 * device, corr, exp)
        per_rank.append(exp)
    db.c.commit()
    db.c.execute("VACUUM")
    db.c.close()
    total = {k: sum(r[k] for r in per_rank) for k in ("kernels", "kernel_ns", "memcpy", "memset", "api", "sync",
                                                        "nvtx")}
    with open(base + ".expected.json", "w") as f:
        json.dump({"session_start_ns": SESSION_START, "ranks": per_rank, "total": total,
                   "marks": 2, "unterminated_ranges": 2}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps(total))


if __name__ == "__main__":
    main()
