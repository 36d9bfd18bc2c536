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

Also writes the shapes real exports have that the two-rank report lacks (each with an .expected.json
of the figures computed here from the rows written):
- idle_processes: one process with GPU work among 100 idle ones (real reports list every process
  of the host in PROCESSES), one more process with only CUDA API rows (no rank), one with only NVTX ranges;
  META_DATA_EXPORT (nsys 2025.5.2.266, schema 3.24.0); clockRate in Hz (1,590,000,000); a kernel
  whose demangledName string is missing (its shortName names it); graphId on kernels; an NVTX
  domain row with a negative start and a thread-name row.
- per_rank0 / per_rank1: one report per rank (devices 0 and 1), each with idle processes too.
- old_export: EXPORT_META_DATA (2022.1.3.3), no PROCESSES table, GPU details only in
  TARGET_INFO_CUDA_GPU (coreClockRate in kHz, globalMemoryBandwidth in kB/s), NVTX text by textId.
- nvprof.nvvp: an nvprof file (StringTable, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL with mangled
  names, _MEMCPY, _MEMSET, _RUNTIME / _DRIVER by callback id, _DEVICE, epoch times).
- empty: an nsys export whose CUDA tables are empty or missing.
- sampled: one rank with CPU sampling (COMPOSITE_EVENTS, SAMPLING_CALLCHAINS: main > forward >
  slow_python_fn every 100 us, an unresolved libcuda frame under it for a while) and an OS runtime
  call (OSRT_API ioctl) in the 2.1 ms GPU gap of each of its 3 NVTX steps; the expected host
  attribution of the gaps is worked out below by hand: recorded events first (ioctl, the launch
  call), the sampled leaf for the rest, the time after the launch returned queued.
- graph_nodes: an export made with --cuda-graph-trace=node (CUDA_GRAPH_NODE_EVENTS): a decode graph
  captured under NVTX ranges, cloned, instantiated and replayed 3 times (graph_nodes() says how).
Usage: make_nsys_fixture.py OUT_DIR
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
        self.c.execute("PRAGMA page_size = 512")  # small files in the repository
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


def two_ranks(base):
    db = Db(base + ".sqlite")
    db.c.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, '2026-10-01T00:00:00Z', '')",
                 (SESSION_START,))
    for dev in (0, 1):
        db.c.execute("INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, totalMemory, memoryBandwidth, "
                     "clockRate, smCount, uuid, cuDevice, computeMajor, computeMinor) VALUES "
                     "(0, ?, 'NVIDIA H200', ?, 150109880320, 4800000000000, 1980000000, 132, ?, ?, 9, 0)",
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


def write_expected(base, exp):
    with open(base + ".expected.json", "w") as f:
        json.dump(exp, f, indent=1, sort_keys=True)
        f.write("\n")


META = """CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);"""


def gpu_report(base, gpu_pid, device, idle, api_only=True, version="2025.5.2.266", schema="3.24.0"):
    """A report with one GPU process among `idle` idle ones, an NVTX-only process and (`api_only`) a
    process with only CUDA API rows."""
    db = Db(base + ".sqlite")
    db.c.executescript(META)
    db.c.execute("ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN graphId INTEGER")
    for k, v in (("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"), ("EXPORT_PRODUCT_VERSION", version),
                 ("EXPORT_SCHEMA_VERSION", schema)):
        db.c.execute("INSERT INTO META_DATA_EXPORT VALUES (?, ?)", (k, v))
    db.c.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, '', '')", (SESSION_START,))
    db.c.execute("INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, totalMemory, memoryBandwidth, clockRate, "
                 "smCount, uuid, cuDevice, computeMajor, computeMinor) VALUES (0, ?, 'Tesla T4', '0000:00:04.0', "
                 "15642329088, 320064000000, 1590000000, 40, 'd8ee7d6a-55aa-f67e-e078-03083ce324a8', ?, 7, 5)",
                 (device, device))
    for i in range(idle):  # the host's other processes: names and threads, nothing else
        pid = 100 + i
        db.c.execute("INSERT INTO PROCESSES VALUES (?, ?, ?)", (pid << 24, pid, "daemon%d" % i))
        db.c.execute("INSERT INTO ThreadNames VALUES (?, 1, ?)", (db.sid("daemon%d" % i), pid << 24 | pid))
    exp = {"ranks": 1, "gpu_pid": gpu_pid, "api_pid": gpu_pid + 1 if api_only else None, "api_dropped": 0,
           "kernels": 0, "kernel_ns": 0, "memcpy": 0, "api": 0, "short_named": 1, "nvtx": 0, "nvtx_skipped": 2, "sm_clock_mhz": 1590, "device": device,
           "tool": "Nsight Systems %s, schema %s" % (version, schema)}
    for pid in (gpu_pid, gpu_pid + 1, gpu_pid + 2):
        db.c.execute("INSERT INTO PROCESSES VALUES (?, ?, 'python3')", (pid << 24, pid))
    gtid = gpu_pid << 24 | gpu_pid
    t = 1000
    for k, (name, dur) in enumerate(KERNELS[:3]):
        corr = 10 + k
        db.c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,0,?,?,?,0,0)",
                     (t, t + 500, gtid, corr, db.sid("cudaLaunchKernel_v7000")))
        demangled = db.sid(name) if k else 9999  # 9999: no such string, the short name stands in
        db.c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
                     "correlationId, globalPid, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, "
                     "blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, "
                     "localMemoryTotal, gridId, graphId) VALUES (?,?,?,1,7,?,?,?,?,32,1,1,1,128,1,1,0,0,0,0,0,?)",
                     (t + 600, t + 600 + dur, device, corr, gpu_pid << 24, demangled, db.sid("short_kernel_%d" % k),
                      5 + k))
        exp["kernels"] += 1
        exp["kernel_ns"] += dur
        exp["api"] += 1
        t += 600 + dur
    db.c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                 "globalPid, bytes, copyKind) VALUES (?,?,?,1,7,20,?,4096,1)", (t, t + 700, device, gpu_pid << 24))
    exp["memcpy"] += 1
    exp["memcpy_ns"] = 700
    # Only CUDA API calls (a process that initialised CUDA): no GPU work, so no rank; its call is dropped,
    # counted and named in a warning.
    if api_only:
        api_tid = (gpu_pid + 1) << 24 | (gpu_pid + 1)
        db.c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,0,?,30,?,0,0)",
                     (200, 900, api_tid, db.sid("cudaGetDeviceCount_v3020")))
        exp["api_dropped"] += 1
    # NVTX: a range of the GPU process (kept), two of an NVTX-only process (skipped, counted), a domain
    # row with a negative start and a thread-name row (metadata, skipped).
    db.c.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (900, ?, 59, 'step', ?)",
                 (t + 800, gtid))
    exp["nvtx"] += 1
    nvtx_only = (gpu_pid + 2) << 24 | (gpu_pid + 2)
    for i in range(2):
        db.c.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid) VALUES (?, ?, 59, ?, ?)",
                     (100 + i * 100, 150 + i * 100, db.sid("loader"), nvtx_only))
    db.c.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                 "VALUES (-1, NULL, 75, 'my domain', ?, 1)", (gtid,))
    db.c.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (5, NULL, 39, 'worker', ?)",
                 (gtid,))
    db.c.commit()
    db.c.execute("VACUUM")
    db.c.close()
    write_expected(base, exp)


OLD_GPU = """
DROP TABLE PROCESSES;
DROP TABLE TARGET_INFO_GPU;
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, deviceId INTEGER, name TEXT, busLocation TEXT, isDiscrete INTEGER);
CREATE TABLE TARGET_INFO_CUDA_GPU (vmId INTEGER, name TEXT, pciBusId TEXT, globalMemoryBandwidth INTEGER,
  globalMemorySize INTEGER, coreClockRate INTEGER, numMultiprocessors INTEGER, computeCapabilityMajor INTEGER,
  computeCapabilityMinor INTEGER, deviceId INTEGER, pid INTEGER);
CREATE TABLE EXPORT_META_DATA (name TEXT, value TEXT);
"""


def old_export(base):
    db = Db(base + ".sqlite")
    db.c.executescript(OLD_GPU)
    for k, v in (("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"), ("EXPORT_PRODUCT_VERSION", "2022.1.3.3"),
                 ("EXPORT_SCHEMA_VERSION", "2.9.1")):
        db.c.execute("INSERT INTO EXPORT_META_DATA VALUES (?, ?)", (k, v))
    db.c.execute("INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA GeForce RTX 3080', '0000:02:00.0', 1)")
    db.c.execute("INSERT INTO TARGET_INFO_CUDA_GPU VALUES (0, 'NVIDIA GeForce RTX 3080', '0000:02:00.0', 760080000, "
                 "10495524864, 1740000, 68, 8, 6, 0, 4242)")
    pid = 4242
    gtid = pid << 24 | pid
    for k in range(2):
        db.c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,0,?,?,?,0,0)",
                     (100 + k * 2000, 400 + k * 2000, gtid, 1 + k, db.sid("cudaLaunchKernel_v7000")))
        db.c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, "
                     "globalPid, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, "
                     "blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, "
                     "gridId) VALUES (?,?,0,1,7,?,?,?,?,16,1,1,1,64,1,1,0,0,0,0,0)",
                     (500 + k * 2000, 1500 + k * 2000, 1 + k, pid << 24, db.sid("acc_kernel(int)"),
                      db.sid("acc_kernel")))
    db.c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (4000, 4100, 0, 1, 7, 3, ?, 3, 0)",
                 (pid << 24,))
    db.c.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid) VALUES (50, 4200, 59, ?, ?)",
                 (db.sid("acc_region"), gtid))
    db.c.commit()
    db.c.close()
    write_expected(base, {"ranks": 1, "pid": pid, "kernels": 2, "kernel_ns": 2000, "sync": 1, "nvtx": 1,
                          "sm_clock_mhz": 1740, "bandwidth_gbs": 760.08, "sm_count": 68, "cc": [8, 6],
                          "tool": "Nsight Systems 2022.1.3.3, schema 2.9.1"})


NVPROF = """
CREATE TABLE StringTable( _id_ INTEGER PRIMARY KEY AUTOINCREMENT, value TEXT NOT NULL UNIQUE );
CREATE TABLE Version( version INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_DEVICE(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, flags INT NOT NULL,
  globalMemoryBandwidth INT NOT NULL, globalMemorySize INT NOT NULL, coreClockRate INT NOT NULL,
  numMultiprocessors INT NOT NULL, computeCapabilityMajor INT NOT NULL, computeCapabilityMinor INT NOT NULL,
  id INT NOT NULL, uuid BLOB NOT NULL, name INT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, cbid INT NOT NULL, start INT NOT NULL,
  end INT NOT NULL, processId INT NOT NULL, threadId INT NOT NULL, correlationId INT NOT NULL,
  returnValue INT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_DRIVER(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, cbid INT NOT NULL, start INT NOT NULL,
  end INT NOT NULL, processId INT NOT NULL, threadId INT NOT NULL, correlationId INT NOT NULL,
  returnValue INT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL(_id_ INTEGER PRIMARY KEY AUTOINCREMENT,
  registersPerThread INT NOT NULL, start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL, contextId INT NOT NULL,
  streamId INT NOT NULL, gridX INT NOT NULL, gridY INT NOT NULL, gridZ INT NOT NULL, blockX INT NOT NULL,
  blockY INT NOT NULL, blockZ INT NOT NULL, staticSharedMemory INT NOT NULL, dynamicSharedMemory INT NOT NULL,
  correlationId INT NOT NULL, name INT NOT NULL, graphNodeId INT NOT NULL, graphId INT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, copyKind INT NOT NULL,
  bytes INT NOT NULL, start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL, contextId INT NOT NULL,
  streamId INT NOT NULL, correlationId INT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, value INT NOT NULL, bytes INT NOT NULL,
  start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL, contextId INT NOT NULL, streamId INT NOT NULL,
  correlationId INT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, type INT NOT NULL,
  start INT NOT NULL, end INT NOT NULL, correlationId INT NOT NULL, contextId INT NOT NULL, streamId INT NOT NULL,
  cudaEventId INT NOT NULL);
"""


def nvprof(base):
    path = base + ".nvvp"
    if os.path.exists(path):
        os.remove(path)
    c = sqlite3.connect(path)
    c.execute("PRAGMA page_size = 512")
    c.executescript(NVPROF)
    c.execute("INSERT INTO Version VALUES (18)")
    for i, v in enumerate(("-- null --", "vectorAdd", "Tesla T4", "_Z6vecAddPdS_S_i")):
        c.execute("INSERT INTO StringTable VALUES (?, ?)", (i, v))
    c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_DEVICE VALUES (1, 1, 320064000, 15642329088, 1590000, 40, 7, 5, 0, ?, 2)",
              (bytes(range(16)),))
    pid, tid, t0 = 33059, 1729413120, 1736031725994858362
    exp = {"ranks": 1, "pid": pid, "kernels": 0, "kernel_ns": 0, "memcpy": 0, "memcpy_ns": 0, "memset": 0, "api": 0,
           "sync": 0, "sm_clock_mhz": 1590, "bandwidth_gbs": 320.064, "start_ns": t0, "tool": "nvprof, schema 18",
           "kernel_name": "vecAdd(double*, double*, double*, int)", "uuid": "00010203-0405-0607-0809-0a0b0c0d0e0f"}
    c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_DRIVER VALUES (1, 9, ?, ?, ?, ?, 1, 0)", (t0, t0 + 50, pid, tid))
    exp["api"] += 1
    corr, t = 100, t0 + 1000
    for i in range(5):
        corr += 1  # cudaMemcpyAsync (41) then cudaLaunchKernel (211), on streams 13 and 14
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (NULL, 41, ?, ?, ?, ?, ?, 0)",
                  (t, t + 300, pid, tid, corr))
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (NULL, 1, 8000, ?, ?, 0, 1, ?, ?)",
                  (t + 400, t + 2400, 13 + i % 2, corr))
        corr += 1
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (NULL, 211, ?, ?, ?, ?, ?, 0)",
                  (t + 500, t + 900, pid, tid, corr))
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL VALUES (NULL, 16, ?, ?, 0, 1, ?, 4, 1, 1, 256, 1, 1, "
                  "0, 0, ?, 3, 0, 0)", (t + 2500, t + 2500 + 5000 + i, 13 + i % 2, corr))
        exp["api"] += 2
        exp["memcpy"] += 1
        exp["memcpy_ns"] += 2000
        exp["kernels"] += 1
        exp["kernel_ns"] += 5000 + i
        t += 10000
    corr += 1
    c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (NULL, 51, ?, ?, ?, ?, ?, 0)",
              (t, t + 100, pid, tid, corr))  # cudaMemsetAsync
    c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (NULL, 0, 4096, ?, ?, 0, 1, 13, ?)", (t + 200, t + 500, corr))
    corr += 1
    c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (NULL, 131, ?, ?, ?, ?, ?, 0)",
              (t + 600, t + 900, pid, tid, corr))  # cudaStreamSynchronize
    c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (NULL, 3, ?, ?, ?, 1, 13, -1)",
              (t + 650, t + 850, corr))
    exp["api"] += 2
    exp["memset"] += 1
    exp["memset_ns"] = 300
    exp["sync"] += 1
    c.commit()
    c.close()
    write_expected(base, exp)


def empty(base):
    db = Db(base + ".sqlite")
    db.c.executescript(META)
    db.c.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2023.3.1.92')")
    db.c.execute("DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME")
    for pid in range(10, 15):
        db.c.execute("INSERT INTO PROCESSES VALUES (?, ?, 'bash')", (pid << 24, pid))
    db.c.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (5, NULL, 39, 'thread', ?)",
                 (10 << 24 | 10,))
    db.c.commit()
    db.c.close()


SAMPLING = """
CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,
  nestingLevel INTEGER, callchainId INTEGER);
CREATE TABLE COMPOSITE_EVENTS (id INTEGER NOT NULL PRIMARY KEY, start INTEGER NOT NULL, cpu INTEGER,
  threadState INTEGER, globalTid INTEGER, cpuCycles INTEGER NOT NULL);
CREATE TABLE SAMPLING_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL, module INTEGER NOT NULL,
  kernelMode INTEGER, thumbCode INTEGER, unresolved INTEGER, specialEntry INTEGER, originalIP INTEGER,
  unwindMethod INTEGER, stackDepth INTEGER NOT NULL, PRIMARY KEY (id, stackDepth));
"""


def sampled(base):
    db = Db(base + ".sqlite")
    db.c.executescript(SAMPLING)
    db.c.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, '2026-10-01T00:00:00Z', '')",
                 (SESSION_START,))
    pid = 3003
    gpid, gtid = pid << 24, (pid << 24) | pid
    db.c.execute("INSERT INTO PROCESSES VALUES (?, ?, 'python3')", (gpid, pid))
    ms = 1000000
    corr, sample = 0, 0
    python = db.sid("/usr/bin/python3.12")
    for step in range(3):
        s = ms + step * 10 * ms
        db.c.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (?,?,59,?,?)",
                     (s, s + 9 * ms, "decode_step", gtid))
        for (launch, gpu, name) in ((s + ms // 10, s + ms // 5, "gemv"), (s + 3200000, s + 3300000, "attention")):
            corr += 1
            db.c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,0,?,?,?,0,0)",
                         (launch, launch + 10000, gtid, corr, db.sid("cudaLaunchKernel_v7000")))
            db.c.execute(
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,0,1,0,7,?,?,?,?,0,0,0,32,1,1,1,128,1,1,0,0,0,0,0,0,0,0)",
                (gpu, gpu + ms, corr, gpid, db.sid(name + "_kernel(float*)"), db.sid(name)))
        db.c.execute("INSERT INTO OSRT_API VALUES (?,?,27,?,0,?,0,0,0)", (s + 2 * ms, s + 2500000, gtid, db.sid("ioctl")))
        for j in range(22):  # every 100 us from s + 1 ms to s + 3.1 ms
            sample += 1
            t = s + ms + j * 100000
            db.c.execute("INSERT INTO COMPOSITE_EVENTS VALUES (?,?,3,1,?,1)", (sample, t, gtid))
            frames = ["slow_python_fn", "forward", "main"]
            if 12 <= j <= 14:  # stopped in the driver for a while, below slow_python_fn
                frames = [None] + frames
            for depth, f in enumerate(frames):
                if f is None:
                    db.c.execute("INSERT INTO SAMPLING_CALLCHAINS VALUES (?,?,?,0,0,1,0,?,7,?)",
                                 (sample, db.sid("0x7f00deadbeef"), db.sid("/usr/lib/x86_64-linux-gnu/libcuda.so.1"),
                                  0x7f00deadbeef, depth))
                else:
                    db.c.execute("INSERT INTO SAMPLING_CALLCHAINS VALUES (?,?,?,0,0,0,0,?,7,?)",
                                 (sample, db.sid(f), python, 0x400000 + depth, depth))
    db.c.commit()
    db.c.execute("VACUUM")
    db.c.close()
    # Per step: the gap [1.2, 3.3) ms after s: slow_python_fn (sampled leaf) [1.2, 2.0) and [2.5, 3.2),
    # ioctl [2.0, 2.5), cudaLaunchKernel [3.2, 3.21), queued [3.21, 3.3). Ranges per step: main, forward,
    # slow_python_fn over [1.0, 3.2) and [libcuda.so.1] over [2.2, 2.5).
    write_expected(base, {
        "steps": 3, "gap_ns": 3 * 2100000, "explained_ns": 3 * 2010000, "queued_ns": 3 * 90000,
        "sampled_ranges": 3 * 4, "sampling_interval_ns": 100000,
        "rows": [{"name": "slow_python_fn", "kind": "sampled", "ns": 3 * 1500000, "count": 3},
                 {"name": "ioctl", "kind": "os_runtime", "ns": 3 * 500000, "count": 3},
                 {"name": "cudaLaunchKernel", "kind": "cuda_runtime", "ns": 3 * 10000, "count": 3}]})


GRAPH_NODES = """
CREATE TABLE CUDA_GRAPH_NODE_EVENTS (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, nameId INTEGER NOT NULL, graphNodeId INTEGER NOT NULL, originalGraphNodeId INTEGER);
"""


def graph_node_layout(cap):
    """The nodes stream capture makes, in creation order: (kernel name, creation time, NVTX path). The
    main thread's ranges around them: decode > layer L > attention | mlp (layer 1's mlp a start/end
    range, the others push/pop); embed and final_norm in decode only, the layer norms in the layer, lm_head
    after decode ended (no range open)."""
    nodes = [("embed", cap + 1000, ["decode"])]
    ranges = [("decode", cap, cap + 100000, 59)]
    for layer in range(2):
        base = cap + 10000 + 40000 * layer
        lname = "layer %d" % layer
        ranges += [(lname, base, base + 39000, 59), ("attention", base + 2000, base + 20000, 59),
                   ("mlp", base + 21000, base + 38000, 60 if layer else 59)]
        nodes += [("l%d_input_norm" % layer, base + 1000, ["decode", lname]),
                  ("l%d_qkv_proj" % layer, base + 3000, ["decode", lname, "attention"]),
                  ("l%d_flash_attn" % layer, base + 6000, ["decode", lname, "attention"]),
                  ("l%d_gate_up" % layer, base + 22000, ["decode", lname, "mlp"]),
                  ("l%d_down_proj" % layer, base + 25000, ["decode", lname, "mlp"])]
    nodes += [("final_norm", cap + 95000, ["decode"]), ("lm_head", cap + 105000, [])]
    return nodes, ranges


def graph_nodes(base):
    """An export made with `nsys profile --cuda-graph-trace=node`: one process (pid 4004) whose main
    thread captures a decode graph under NVTX ranges (graph_node_layout), instantiates it inside an
    "instantiate" range (as torch.cuda.CUDAGraph does: no cudaGraphClone), then replays it 3 times, each
    replay under a "decode step N" range. CUDA_GRAPH_NODE_EVENTS (columns as NVIDIA's SQLite schema
    reference lists them) has a row per node, within the API call that made it: the 13 captured ones
    (ids 1..13, no original) and the copies cudaGraphInstantiate makes of them (14..26, original
    1..13). Kernel rows of the replays name the instantiated copies (graphNodeId 14..26, graphId 5) and
    carry the correlation id of their cudaGraphLaunch, as --cuda-graph-trace=node exports do (NVIDIA's
    TensorRT-LLM examples/layer_wise_benchmarks/parse.py joins kernel graphNodeId -> the clone's
    originalGraphNodeId -> the capture row). A second thread (tid 4010) has a range open over the whole
    capture: not the capturing thread's, so in no node's ranges. tst_nsysimport checks the import
    against this layout."""
    db = Db(base + ".sqlite")
    db.c.executescript(META + GRAPH_NODES)
    db.c.execute("ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN graphId INTEGER")
    for k, v in (("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"), ("EXPORT_PRODUCT_VERSION", "2025.5.2.266"),
                 ("EXPORT_SCHEMA_VERSION", "3.24.0")):
        db.c.execute("INSERT INTO META_DATA_EXPORT VALUES (?, ?)", (k, v))
    db.c.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, '', '')", (SESSION_START,))
    db.c.execute("INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, totalMemory, memoryBandwidth, clockRate, "
                 "smCount, uuid, cuDevice, computeMajor, computeMinor) VALUES (0, 0, 'NVIDIA H100 80GB HBM3', "
                 "'0000:19:00.0', 85520809984, 3352320000000, 1980000000, 132, 'GPU-graph-fixture', 0, 9, 0)")
    pid, sched = 4004, 4010
    gtid, sched_tid = pid << 24 | pid, pid << 24 | sched
    db.c.execute("INSERT INTO PROCESSES VALUES (?, ?, 'python3')", (pid << 24, pid))
    db.c.execute("INSERT INTO ThreadNames VALUES (?, 1, ?)", (db.sid("MainThread"), gtid))
    db.c.execute("INSERT INTO ThreadNames VALUES (?, 1, ?)", (db.sid("scheduler"), sched_tid))
    creation = db.sid("Graph Node Creation")
    cap = 1000000
    nodes, ranges = graph_node_layout(cap)

    def api(start, end, corr, name, tid=gtid):
        db.c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,0,?,?,?,0,0)",
                     (start, end, tid, corr, db.sid(name)))

    def node_row(t, node, original):
        db.c.execute("INSERT INTO CUDA_GRAPH_NODE_EVENTS VALUES (?,?,0,?,?,?,?)",
                     (t, t + 200, gtid, creation, node, original))

    def nvtx(name, start, end, event_type, tid=gtid):
        db.c.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (?,?,?,?,?)",
                     (start, end, event_type, name, tid))

    nvtx("schedule batch", cap - 20000, cap + 200000, 59, sched_tid)
    for name, start, end, event_type in ranges:
        nvtx(name, start, end, event_type)
    db.c.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (?,NULL,34,'a mark',?)",
                 (cap + 14000, gtid))
    api(cap - 5000, cap - 4000, 1, "cudaStreamBeginCapture_v10000")
    for i, (name, t, path) in enumerate(nodes):  # launches into the capturing stream: a node each, no kernel
        api(t - 500, t + 1500, 2 + i, "cudaLaunchKernel_v7000")
        node_row(t, 1 + i, None)
    n = len(nodes)
    api(cap + 110000, cap + 111000, 100, "cudaStreamEndCapture_v10000")
    nvtx("instantiate", cap + 150000, cap + 190000, 59)
    api(cap + 165000, cap + 185000, 101, "cudaGraphInstantiate_v12000")
    for i in range(n):
        node_row(cap + 166000 + 100 * i, n + 1 + i, 1 + i)
    for replay in range(3):
        r = 2 * cap + replay * 100000
        corr = 200 + replay
        nvtx("decode step %d" % replay, r, r + 60000, 59)
        api(r + 1000, r + 6000, corr, "cudaGraphLaunch_v10000")
        gpu = r + 10000
        for i, (name, t, path) in enumerate(nodes):
            dur = 2000 + 100 * i
            db.c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
                         "correlationId, globalPid, demangledName, shortName, registersPerThread, gridX, gridY, "
                         "gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
                         "localMemoryPerThread, localMemoryTotal, gridId, graphNodeId, graphId) "
                         "VALUES (?,?,0,1,7,?,?,?,?,32,132,1,1,128,1,1,0,0,0,0,?,?,5)",
                         (gpu, gpu + dur, corr, pid << 24, db.sid(name), db.sid(name), 1000 + replay * n + i,
                          n + 1 + i))
            gpu += dur + 500
    db.c.commit()
    db.c.execute("VACUUM")
    db.c.close()


def main():
    out = sys.argv[1]
    two_ranks(os.path.join(out, "two_ranks"))
    gpu_report(os.path.join(out, "idle_processes"), 5000, 0, 100)
    gpu_report(os.path.join(out, "per_rank0"), 7000, 0, 20, api_only=False)
    gpu_report(os.path.join(out, "per_rank1"), 6000, 1, 20, api_only=False)
    old_export(os.path.join(out, "old_export"))
    nvprof(os.path.join(out, "nvprof"))
    empty(os.path.join(out, "empty"))
    sampled(os.path.join(out, "sampled"))
    graph_nodes(os.path.join(out, "graph_nodes"))


if __name__ == "__main__":
    main()
