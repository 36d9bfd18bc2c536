#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check gapscope's importers on a corpus of real traces against an independent reading of the files.

For every file of each format's folder (CORPUS/nsys, ...), a reader of that format written here from
the raw file alone (Python sqlite3, not gapscope's code) computes the expected figures: kernel,
memcpy and memset counts and total times, the processes with GPU work (kernels, copies, memsets: the ranks; a
process with CUDA API calls alone is none), the GPU
clocks and the recording tool (Kineto files: kineto_check.py's reading, with the steps and their kinds
that the files' annotations say; AMD's rocprofv3 JSON and rocprof v1 CSV / SQLite in CORPUS/other:
rocprof_check.py's reading, with lanes, kernel names and launch flows). Then gapscope-cli reads the same
file (`info --json`, `summary --json`, `convert` to Chrome JSON for the memcpy/memset times) and every
figure must match exactly. A file that holds nothing importable must make gapscope-cli fail with a
message saying so.

Usage: check.py CORPUS_DIR [--cli PATH_TO_gapscope-cli]
Exit: 0 all match; 1 a mismatch (each printed); 77 (CTest's skip code) when CORPUS_DIR does not exist.
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

SKIP = 77


# ---- nsys (Nsight Systems SQLite exports, and nvprof files, which are SQLite too) ----

def _tables(db):
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _count_time(db, tables, table):
    if table not in tables:
        return 0, 0
    n, t = db.execute('SELECT count(*), coalesce(sum("end" - start), 0) FROM "%s"' % table).fetchone()
    return n, t


def _gpu_pids(db, tables, columns):
    """Distinct pids (globalPid/globalTid >> 24) of the rows of `columns` = [(table, column)]."""
    pids = set()
    for table, col in columns:
        if table in tables:
            pids |= {r[0] for r in db.execute('SELECT DISTINCT ("%s" >> 24) & 16777215 FROM "%s"' % (col, table))}
    return pids


def is_sqlite(path):
    with open(path, "rb") as f:
        return f.read(16) == b"SQLite format 3\0"


def expect_nsys(path):
    # Read-only and immutable; the URI's path is percent-escaped (file names may hold % # ?).
    db = sqlite3.connect("file:%s?mode=ro&immutable=1" % _uri_path(path), uri=True)
    tables = _tables(db)
    if "StringTable" in tables and "StringIds" not in tables:
        return _expect_nvprof(db, tables)
    e = {}
    e["kernels"], e["kernel_ns"] = _count_time(db, tables, "CUPTI_ACTIVITY_KIND_KERNEL")
    e["memcpy"], e["memcpy_ns"] = _count_time(db, tables, "CUPTI_ACTIVITY_KIND_MEMCPY")
    e["memset"], e["memset_ns"] = _count_time(db, tables, "CUPTI_ACTIVITY_KIND_MEMSET")
    # Ranks: processes with GPU work (kernels, memory operations); one that only made CUDA API calls or
    # synchronisation rows is no rank.
    gpu = [("CUPTI_ACTIVITY_KIND_" + t, "globalPid") for t in ("KERNEL", "MEMCPY", "MEMSET")]
    pids = _gpu_pids(db, tables, gpu)
    e["ranks"] = len(pids)
    per_pid = {}
    if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
        per_pid = dict(db.execute("SELECT (globalPid >> 24) & 16777215, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL "
                                  "GROUP BY 1"))
    e["rank_kernels"] = sorted(per_pid.get(p, 0) for p in pids)
    # Host side: the CUDA API rows and the OS runtime calls (OSRT_API) of the ranks' processes (the other
    # processes' are skipped).
    e["api"] = 0
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        e["api"] = sum(1 for (pid,) in db.execute(
            "SELECT (globalTid >> 24) & 16777215 FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE end >= start") if pid in pids)
    e["os_runtime"] = 0
    if "OSRT_API" in tables:
        e["os_runtime"] = sum(1 for (pid,) in db.execute(
            "SELECT (globalTid >> 24) & 16777215 FROM OSRT_API WHERE end >= start") if pid in pids)
    e["sampled"], e["sampled_ns"] = _sampled_ranges(db, tables, pids)
    # GPU clocks in MHz: TARGET_INFO_GPU.clockRate is in Hz; older exports: TARGET_INFO_CUDA_GPU, kHz.
    clocks = {}
    if "TARGET_INFO_CUDA_GPU" in tables:
        for dev, khz in db.execute("SELECT deviceId, coreClockRate FROM TARGET_INFO_CUDA_GPU"):
            clocks[dev] = khz // 1000
    if "TARGET_INFO_GPU" in tables:
        cols = {r[1] for r in db.execute("PRAGMA table_info(TARGET_INFO_GPU)")}
        if "clockRate" in cols:
            dev = "cuDevice" if "cuDevice" in cols else "id"
            for d, hz in db.execute("SELECT %s, clockRate FROM TARGET_INFO_GPU" % dev):
                clocks.setdefault(d, (hz or 0) // 1000000)
    # A device that ran GPU work and has no row in those tables is listed by its id alone (clock 0).
    for t in ("KERNEL", "MEMCPY", "MEMSET"):
        if "CUPTI_ACTIVITY_KIND_" + t in tables:
            for d, pid in db.execute("SELECT DISTINCT deviceId, (globalPid >> 24) & 16777215 FROM "
                                     "CUPTI_ACTIVITY_KIND_" + t):
                if pid in pids:
                    clocks.setdefault(d, 0)
    e["gpu_clock_mhz"] = [clocks[d] for d in sorted(clocks)]
    version = None
    for t in ("META_DATA_EXPORT", "EXPORT_META_DATA"):
        if t in tables:
            for (v,) in db.execute("SELECT value FROM %s WHERE name = 'EXPORT_PRODUCT_VERSION'" % t):
                version = v
    e["tool"] = version
    e["importable"] = e["ranks"] > 0
    return e


def _sampled_ranges(db, tables, pids):
    """CPU samples of the ranks' processes as ranges: (count, total ns). A function at the same depth
    under the same callers in consecutive samples t_i..t_j of a thread is one range, to the next sample
    when that comes within twice the thread's median interval, else to t_j + that interval; frames
    root first, an unresolved one named [module file name], repeats in a row one frame."""
    if "COMPOSITE_EVENTS" not in tables or "SAMPLING_CALLCHAINS" not in tables:
        return 0, 0
    names = dict(db.execute("SELECT id, value FROM StringIds"))
    samples = {}  # tid -> [(t, frames root first)]
    rows = db.execute("SELECT e.id, e.start, e.globalTid, c.stackDepth, c.symbol, c.module, c.unresolved "
                      "FROM COMPOSITE_EVENTS e JOIN SAMPLING_CALLCHAINS c ON c.id = e.id")
    by_id = {}
    for (sid, start, gtid, depth, symbol, module, unresolved) in rows:
        if ((gtid >> 24) & 16777215) not in pids:
            continue
        if unresolved:
            name = "[%s]" % (names.get(module, "").rsplit("/", 1)[-1] or "unknown")
        else:
            name = names.get(symbol, "<string %d>" % symbol)
        by_id.setdefault((gtid, start, sid), []).append((depth, name))
    for (gtid, start, sid), frames in sorted(by_id.items()):
        stack = []
        for (_, name) in sorted(frames, reverse=True):  # root (deepest index) first
            if not stack or stack[-1] != name:
                stack.append(name)
        samples.setdefault(gtid, []).append((start, stack))

    def median_interval(ts):
        d = sorted(b - a for a, b in zip(ts, ts[1:]) if b > a)
        return d[len(d) // 2] if d else 0

    medians = sorted(m for m in (median_interval([t for t, _ in v]) for v in samples.values()) if m > 0)
    fallback = medians[len(medians) // 2] if medians else 1000000
    count, total = 0, 0
    for v in samples.values():
        interval = median_interval([t for t, _ in v]) or fallback
        open_ = []  # (name, start)
        prev = None

        def close(depth, end):
            nonlocal count, total
            while len(open_) > depth:
                _, s0 = open_.pop()
                count += 1
                total += max(end, s0 + 1) - s0
        for (t, stack) in v:
            if prev is not None and t - prev > 2 * interval:
                close(0, prev + interval)
            same = 0
            while same < len(open_) and same < len(stack) and open_[same][0] == stack[same]:
                same += 1
            close(same, t)
            open_ += [(n, t) for n in stack[same:]]
            prev = t
        close(0, prev + interval)
    return count, total


def _expect_nvprof(db, tables):
    e = {}
    e["kernels"], e["kernel_ns"] = [a + b for a, b in zip(
        _count_time(db, tables, "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL"),
        _count_time(db, tables, "CUPTI_ACTIVITY_KIND_KERNEL"))]
    e["memcpy"], e["memcpy_ns"] = _count_time(db, tables, "CUPTI_ACTIVITY_KIND_MEMCPY")
    e["memset"], e["memset_ns"] = _count_time(db, tables, "CUPTI_ACTIVITY_KIND_MEMSET")
    # Ranks: the processes with GPU work. A GPU row has no process of its own: it is the one of the
    # first API row with its correlation id, else of the first API row of the file.
    corr_pid, first = {}, None
    for t in ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"):
        if t in tables:
            for pid, corr in db.execute("SELECT processId, correlationId FROM %s" % t):
                first = pid if first is None else first
                corr_pid.setdefault(corr, pid)
    pids = set()
    for t in ("CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
              "CUPTI_ACTIVITY_KIND_MEMSET"):
        if t in tables:
            pids |= {corr_pid.get(c, first or 0) for (c,) in db.execute("SELECT correlationId FROM %s" % t)}
    e["ranks"] = len(pids)
    e["rank_kernels"] = [e["kernels"]] if len(pids) == 1 else None
    clocks = {}
    if "CUPTI_ACTIVITY_KIND_DEVICE" in tables:
        clocks = {d: khz // 1000 for (d, khz) in db.execute("SELECT id, coreClockRate FROM CUPTI_ACTIVITY_KIND_DEVICE")}
    for t in ("CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
              "CUPTI_ACTIVITY_KIND_MEMSET"):
        if t in tables:  # a device without a row: listed by its id alone (clock 0)
            for (d,) in db.execute("SELECT DISTINCT deviceId FROM %s" % t):
                clocks.setdefault(d, 0)
    e["gpu_clock_mhz"] = [clocks[d] for d in sorted(clocks)]
    e["tool"] = "nvprof"
    e["importable"] = e["ranks"] > 0
    return e


_URI_SAFE = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-~")


def _uri_path(path):
    return "".join(chr(b) if chr(b) in _URI_SAFE else "%%%02X" % b for b in os.fsencode(os.path.abspath(path)))


# ---- what gapscope reads ----

def _cli(cli, *args):
    p = subprocess.run([cli] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


def actual(cli, path, tmp):
    rc, out, err = _cli(cli, "info", "--json", path)
    if rc != 0:
        return {"importable": False, "error": err.strip()}
    info = json.loads(out)
    a = {"importable": True, "kernels": info["events"]["kernel"], "kernel_ns": info["kernel_time_ns"],
         "memcpy": info["events"]["memcpy"], "memset": info["events"]["memset"], "api": info["events"]["api"],
         "os_runtime": info.get("host_events", {}).get("os_runtime", 0),
         "sampled": info.get("host_events", {}).get("sampled", 0)}
    a["ranks"] = len(info["ranks"])
    a["rank_numbers"] = [r["rank"] for r in info["ranks"]]
    a["rank_kernels"] = sorted(r["kernel_count"] for r in info["ranks"])
    a["gpu_clock_mhz"] = [g["sm_clock_mhz"] for g in sorted(info["gpus"], key=lambda g: g["device"])]
    a["tool_version"] = info["tool_version"]
    rc, out, err = _cli(cli, "summary", "--json", "--top", "1000000000", path)
    if rc != 0:
        return {"importable": False, "error": "summary: " + err.strip()}
    kernels = json.loads(out)["kernels"]
    a["summary_kernels"] = sum(k["count"] for k in kernels)
    a["summary_kernel_ns"] = sum(k["total_ns"] for k in kernels)
    a["unnamed_kernels"] = sum(k["count"] for k in kernels if k["name"].startswith("<string "))
    chrome = os.path.join(tmp, "out.json")
    rc, out, err = _cli(cli, "convert", "--no-flows", path, chrome)
    if rc != 0:
        return {"importable": False, "error": "convert: " + err.strip()}
    with open(chrome) as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    for kind in ("memcpy", "memset"):
        a[kind + "_ns"] = sum(_ns(e["dur"]) for e in events if e.get("ph") == "X" and e.get("cat") == kind)
    sampled = {(e.get("pid"), e.get("tid")) for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"
               and e.get("args", {}).get("name", "").endswith("CPU samples")}
    a["sampled_ns"] = sum(_ns(e["dur"]) for e in events
                          if e.get("ph") == "X" and (e.get("pid"), e.get("tid")) in sampled)
    return a


def _ns(micros):
    """Chrome JSON microseconds with three decimals, back to integer ns without float rounding."""
    s = repr(micros) if isinstance(micros, float) else str(micros)
    whole, _, frac = s.partition(".")
    return int(whole) * 1000 + int((frac + "000")[:3])


# ---- shared compare and report ----

def _short(v):
    """A figure for a report line: long lists cut to their first and last elements."""
    if isinstance(v, list) and len(v) > 8:
        return "[%s, ... %d more ..., %s]" % (", ".join(map(str, v[:3])), len(v) - 5, ", ".join(map(str, v[-2:])))
    return v


def compare(e, a):
    """Mismatches between expected figures `e` and gapscope's `a`, as strings."""
    if not e["importable"]:
        if a["importable"]:
            return ["holds nothing importable, but gapscope-cli imported it"]
        return [] if "nothing to import" in a["error"] else ["error does not say nothing to import: " + a["error"]]
    if not a["importable"]:
        return ["gapscope-cli failed: " + a["error"]]
    bad = []
    for key in ("kernels", "kernel_ns", "memcpy", "memset_ns", "memcpy_ns", "memset", "ranks", "gpu_clock_mhz", "api",
                "os_runtime", "sampled", "sampled_ns"):
        if e.get(key) is not None and e[key] != a.get(key):
            bad.append("%s: expected %s, gapscope %s" % (key, _short(e[key]), _short(a.get(key))))
    if e.get("rank_kernels") is not None and e["rank_kernels"] != a["rank_kernels"]:
        bad.append("kernels per rank: expected %s, gapscope %s" % (_short(e["rank_kernels"]), _short(a["rank_kernels"])))
    if a.get("rank_numbers") is not None and a["rank_numbers"] != list(range(a["ranks"])):
        bad.append("ranks not numbered 0..n-1: %s" % _short(a["rank_numbers"]))
    if "summary_kernels" in a and (a["summary_kernels"], a["summary_kernel_ns"]) != (e["kernels"], e["kernel_ns"]):
        bad.append("summary kernels: %s, %s ns" % (a["summary_kernels"], a["summary_kernel_ns"]))
    if a.get("unnamed_kernels"):
        bad.append("%d kernels without a name" % a["unnamed_kernels"])
    if e.get("tool") and e["tool"] not in a["tool_version"]:
        bad.append("tool: expected %r in %r" % (e["tool"], a["tool_version"]))
    return bad


def report(label, bad):
    """Prints a file's line and its (what, expected, got) mismatches; 1 when there are any."""
    print("%s %s" % ("FAIL" if bad else "ok  ", label))
    for what, want, got in bad:
        print("     %s: expected %s, got %s" % (what, want, got))
    return 1 if bad else 0


# Folder of the corpus -> (which of its files are traces, the expected figures of one of them).
# An expect function returns a dict: importable (bool: False means gapscope-cli must fail saying
# "nothing to import"), kernels, kernel_ns, memcpy, memcpy_ns, memset, memset_ns, ranks (processes
# with GPU work), rank_kernels (sorted kernel counts per rank), gpu_clock_mhz (per device,
# in device order), tool (a text tool_version must contain). A key absent or None is not compared.
FORMATS = {
    "nsys": (is_sqlite, expect_nsys),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("--cli", default=os.environ.get("GAPSCOPE_CLI", "gapscope-cli"))
    args = ap.parse_args()
    if not os.path.isdir(args.corpus):
        print("skipped: no corpus at %s" % args.corpus)
        return SKIP
    failures = checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        for folder, (accepts, expect) in FORMATS.items():
            d = os.path.join(args.corpus, folder)
            if not os.path.isdir(d):
                continue
            for name in sorted(os.listdir(d)):
                path = os.path.join(d, name)
                if not os.path.isfile(path) or not accepts(path):
                    continue
                e = expect(path)
                bad = compare(e, actual(args.cli, path, tmp))
                checked += 1
                what = ("%d kernels, %d ranks" % (e["kernels"], e["ranks"])) if e["importable"] else "nothing importable"
                print("%s %s/%s (%s)" % ("FAIL" if bad else "ok  ", folder, name, what))
                for b in bad:
                    print("     " + b)
                failures += bool(bad)
    kineto = os.path.join(args.corpus, "kineto")
    if os.path.isdir(kineto):  # Kineto files: kineto_check.py's own reading (events, ranks, steps and kinds)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import kineto_check
        kineto_check.CLI = args.cli
        files = sorted(os.path.join(kineto, f) for f in os.listdir(kineto) if kineto_check.is_json_trace(f))
        for path in files:
            if kineto_check.skipped(path):
                continue
            checked += 1
            failures += report("kineto/" + os.path.basename(path), kineto_check.check_kineto(path))
        for group in kineto_check.job_groups(files):
            bad = kineto_check.check_kineto_ranks(group)
            checked += 1
            failures += bool(bad)
            print("%s kineto/ %d files together" % ("FAIL" if bad else "ok  ", len(group)))
    other = os.path.join(args.corpus, "other")
    if os.path.isdir(other):  # AMD's profilers: rocprof_check.py's own reading (rocprofv3 JSON, rocprof v1)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import rocprof_check
        rocprof_check.CLI = args.cli
        for path in rocprof_check.files([other]):
            checked += 1
            failures += report("other/" + os.path.basename(path), rocprof_check.check(path))
    print("%d files, %d mismatched" % (checked, failures))
    return 1 if failures or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
