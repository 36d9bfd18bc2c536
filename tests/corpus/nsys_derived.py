#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Shapes of Nsight Systems exports that the corpus's files lack, made from a real one (NVIDIA/Fuser's
report, nsys 2024.6.2.25, one H200) with Python's sqlite3, into WORKDIR (the corpus is only read):

  - api_only: one more process that made a few CUDA calls (three runtime rows and a synchronization record
    copied from the real process, and an NVTX range) and no GPU work, as a launcher or a data loader that
    only asked for the device count does. It must not be a rank: one rank, its calls dropped and counted,
    a warning naming it ("process P made N CUDA calls and no GPU work: not a rank").
  - no_gpu_table / empty_gpu_table: the kernels from correlation id 1591 on moved to a second process on
    device 1 (two processes on devices 0 and 1, as a multi-process FSDP run has), and TARGET_INFO_GPU
    dropped or emptied (an export of nsys 2026.2 had none). The GPUs must be devices 0 and 1 by id, name
    unknown, with a warning that the export has no GPU table.
  - partial_gpu_table: the same two processes with the real TARGET_INFO_GPU, which lists device 0 only:
    device 0 as the table says, device 1 by id, with a warning naming it.

The expected figures are read from the derived databases here: ranks are the processes with kernel,
memcpy or memset rows; GPUs the devices of those rows. gapscope-cli's `info --json` must match.
Usage: nsys_derived.py --cli PATH FUSER_SQLITE WORKDIR (exit 77 without the corpus file).
"""
import os
import shutil
import sqlite3
import sys

from derivedcheck import SKIP, Checks, arguments, run_json

GPU_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")
PID_MASK = 0xFFFFFF << 24
SPLIT_CORRELATION = 1591  # kernels from here on run on device 1, in the second process


def pid_of(global_id):
    return (global_id >> 24) & 0xFFFFFF


def with_pid(global_id, pid):
    return (global_id & ~PID_MASK) | (pid << 24)


def add_process(db, pid, name):
    """A PROCESSES and a ThreadNames row for `pid`, like the real process's; returns (globalPid, globalTid)."""
    gpid, = db.execute("SELECT globalPid FROM PROCESSES WHERE pid = 30156").fetchone()
    new_gpid = with_pid(gpid, pid)
    db.execute("INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?, ?, ?)", (new_gpid, pid, name))
    return new_gpid, new_gpid | pid


def derive_api_only(db):
    gpid, gtid = add_process(db, 30170, "python3")
    rows = db.execute("SELECT rowid FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start LIMIT 3").fetchall()
    for (rowid,) in rows:
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, "
                   "returnValue) SELECT start, end, eventClass, ?, 900000 + correlationId, nameId, returnValue "
                   "FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE rowid = ?", (gtid, rowid))
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId, "
               "correlationId, globalPid, syncType, eventId) SELECT start, end, deviceId, contextId, streamId, "
               "900000 + correlationId, ?, syncType, eventId FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION LIMIT 1", (gpid,))
    db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) SELECT start, end, eventType, "
               "'loader', ? FROM NVTX_EVENTS WHERE eventType = 59 AND end IS NOT NULL LIMIT 1", (gtid,))
    return {"api_pid": 30170, "api_calls": len(rows), "dropped_events": len(rows) + 1, "nvtx_skipped": 1}


def derive_two_devices(db):
    gpid, gtid = add_process(db, 30171, "python3")
    db.execute("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = ? WHERE correlationId IN (SELECT correlationId "
               "FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId >= ?)", (gtid, SPLIT_CORRELATION))
    db.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 1, globalPid = ? WHERE correlationId >= ?",
               (gpid, SPLIT_CORRELATION))


def derive(src, workdir):
    shapes = {}
    for name in ("api_only", "no_gpu_table", "empty_gpu_table", "partial_gpu_table"):
        path = os.path.join(workdir, name + ".sqlite")
        shutil.copyfile(src, path)
        os.chmod(path, 0o644)
        db = sqlite3.connect(path)
        extra = {}
        if name == "api_only":
            extra = derive_api_only(db)
        else:
            derive_two_devices(db)
        if name == "no_gpu_table":
            db.execute("DROP TABLE TARGET_INFO_GPU")
        elif name == "empty_gpu_table":
            db.execute("DELETE FROM TARGET_INFO_GPU")
        db.commit()
        shapes[name] = (path, expected(db, extra))
        db.close()
    return shapes


def expected(db, extra):
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    pids, devices = set(), set()
    for t in GPU_TABLES:
        pids |= {pid_of(g) for (g,) in db.execute("SELECT DISTINCT globalPid FROM %s" % t)}
        devices |= {d for (d,) in db.execute("SELECT DISTINCT deviceId FROM %s" % t)}
    named = {}
    if "TARGET_INFO_GPU" in tables:
        named = dict(db.execute("SELECT cuDevice, name FROM TARGET_INFO_GPU"))
    api = sum(1 for (g,) in db.execute("SELECT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME") if pid_of(g) in pids)
    e = {"ranks": len(pids), "rank_pids": sorted(pids), "api": api,
         "gpus": [(d, named.get(d, "")) for d in sorted(devices | set(named))],
         "undescribed": sorted(devices - set(named)), "table": bool(named)}
    e.update(extra)
    return e


def counter(info, name, detail):
    return sum(c["value"] for c in info["counters"] if c["name"] == name and detail in c.get("detail", ""))


def main():
    a = arguments("Shapes of nsys exports made from a real one, against what gapscope-cli reads.")
    if not a:
        return SKIP
    checks = Checks()
    expect = checks.expect
    for name, (path, e) in derive(a.file, a.workdir).items():
        info = run_json(a.cli, "info", "--json", path)
        expect(name + " ranks", e["ranks"], len(info["ranks"]))
        expect(name + " rank pids", e["rank_pids"], sorted(r["pid"] for r in info["ranks"]))
        expect(name + " api calls", e["api"], info["events"].get("api", 0))
        expect(name + " gpus", e["gpus"], [(g["device"], g["name"]) for g in info["gpus"]])
        warnings = info["warnings"]
        if name == "api_only":
            text = "process %d (python3) made %d CUDA calls and no GPU work: not a rank" % (
                e["api_pid"], e["api_calls"])
            expect(name + " warning", True, any(w.endswith(text) for w in warnings))
            expect(name + " dropped calls", e["dropped_events"],
                   counter(info, "import_skipped_events", "CUDA API calls and synchronization records of processes "
                           "without GPU work"))
            expect(name + " NVTX skipped", e["nvtx_skipped"],
                   counter(info, "import_skipped_events", "NVTX ranges of processes without GPU work"))
        undescribed = ", ".join(str(d) for d in e["undescribed"])
        devices = ("device " if len(e["undescribed"]) == 1 else "devices ") + undescribed
        if e["undescribed"] and not e["table"]:
            expect(name + " warning", True, any("the export has no GPU table (TARGET_INFO_GPU missing or empty): "
                                                + devices + " listed by device id only, name unknown" in w
                                                for w in warnings))
        elif e["undescribed"]:
            expect(name + " warning", True, any(devices + " ran GPU work but the export's GPU table (TARGET_INFO_GPU) "
                                                "does not list it" in w for w in warnings))
        expect(name + " undescribed GPUs counted", len(e["undescribed"]),
               counter(info, "import_bad_metadata", "GPUs the export does not describe"))
    return checks.status()


if __name__ == "__main__":
    sys.exit(main())
