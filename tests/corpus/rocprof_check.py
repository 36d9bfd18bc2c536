#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks gapscope-cli's import of AMD profiler files against an independent reading of the raw files.

Formats: rocprofv3 JSON (rocprofiler-sdk's `--output-format json`, .json or .json.gz), rocprofv3 CSV (a set
of PREFIX_{agent_info,kernel_trace,hip_api_trace,memory_copy_trace,marker_api_trace}.csv; checked once per
set, through its kernel trace), rocprof v1 kernel trace CSV and rocprof v1 SQLite (table KERN). Each file is read here with Python's json, csv and sqlite3
modules, and kernel names are demangled by c++filt (binutils), not by gapscope's code:
  - kernels: count and total time (end - start, ns), first start and last end (of kernels and API calls);
  - HIP API calls (rocprofv3 hip_api records) and the dispatches and memory copies whose correlation id
    one of them carries (gapscope draws a launch flow for each);
  - ranks: one per process (rocprofv3: each element of rocprofiler-sdk-tool; v1: each pid), kernels each;
  - lanes: kernels per (device, stream) when the dispatches record a HIP stream, else per (device, queue);
    the device is the agent's gpu_index (rocprofv3) or the gpu-id column (v1);
  - names: distinct kernel names and the count of each (symbols without their ".kd" / " [clone .kd]"
    suffix, demangled);
  - memory copies (rocprofv3) with a GPU end: count and total time; ROCTx markers (ranges and marks):
    count; a process with neither kernels nor copies is no rank, and its API calls are not counted;
  - GPUs (rocprofv3 agents of type 2): device, product name, compute units, max clock, memory size;
  - the source and clock domain (import:rocprofv3, import:rocprof);
  - a file without any kernel dispatch or HIP API call: gapscope-cli must refuse it, saying there is
    nothing to import.
gapscope-cli's `info --json`, `summary --json` and `convert` (its Chrome-trace export: lanes, launch
flows) must report the same figures exactly.

check(path) returns a list of (what, expected, got) mismatches. Usage: rocprof_check.py [--cli PATH]
FILE_OR_DIR... (exit 1 on any mismatch).
"""
import argparse
import collections
import csv
import gzip
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

CLI = None
V1_COLUMNS = ("KernelName", "gpu-id", "queue-id", "pid", "BeginNs", "EndNs")


def cli():
    return CLI or os.environ.get("GAPSCOPE_CLI") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "dev", "app", "gapscope-cli")


# ---- which files ----

def _is_gzip(path):
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def _head(path, n=4096):
    with (gzip.open if _is_gzip(path) else open)(path, "rb") as f:
        return f.read(n)


def kind_of(path):
    """'rocprofv3', 'csv', 'db' or None."""
    head = _head(path)
    if head.startswith(b"SQLite format 3\0"):
        db = sqlite3.connect("file:%s?mode=ro&immutable=1" % os.path.abspath(path), uri=True)
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        return "db" if "KERN" in tables and "StringIds" not in tables else None
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if re.match(rb'\{\s*"rocprofiler-sdk-tool"', text):
        return "rocprofv3"
    first = head.split(b"\n", 1)[0].decode(errors="replace")
    names = next(csv.reader([first]), [])
    if "KernelName" in names and "gpu-id" in names:
        return "csv"
    if V3_SUFFIX.search(os.path.basename(path)) and set(names) & {"Kernel_Name", "Direction", "Function", "Node_Id"}:
        return "v3csv"
    return None


V3_SUFFIX = re.compile(r"_(agent_info|kernel_trace|hip_api_trace|memory_copy_trace|marker_api_trace)\.csv$")


def v3_set(path):
    """The files of the rocprofv3 CSV set of `path`: {kind: path} of those that exist."""
    prefix = V3_SUFFIX.sub("", path)
    kinds = ("agent_info", "kernel_trace", "hip_api_trace", "memory_copy_trace", "marker_api_trace")
    return {k: prefix + "_" + k + ".csv" for k in kinds if os.path.isfile(prefix + "_" + k + ".csv")}


# ---- names ----

def strip_kd(symbol):
    if symbol.endswith(" [clone .kd]"):
        return symbol[:-len(" [clone .kd]")]
    if symbol.endswith(".kd") and len(symbol) > 3:
        return symbol[:-3]
    return symbol


def demangled(symbols):
    """{symbol: name}: without the .kd suffix, demangled by c++filt; None when there is no c++filt."""
    tool = shutil.which("c++filt")
    if not tool:
        return None
    stripped = sorted({strip_kd(s) for s in symbols})
    mangled = [s for s in stripped if s.startswith("_Z")]
    out = subprocess.run([tool], input="\n".join(mangled) + "\n", stdout=subprocess.PIPE, text=True,
                         check=True).stdout.split("\n")
    names = dict(zip(mangled, out))
    return {s: names.get(strip_kd(s), strip_kd(s)) for s in symbols}


# ---- the raw files ----

class Expect:
    def __init__(self, source):
        self.source = source
        self.kernels = []  # (pid, device, lane key, symbol, start, end, correlation)
        self.api = []  # (pid, tid, start, end, correlation)
        self.gpus = []  # (device, name, cu, clock MHz, memory bytes)
        self.pids = []
        self.copies = []  # (pid, device, start, end, correlation)
        self.markers = []  # (pid, tid, start, end)


def read_rocprofv3(path):
    with (gzip.open if _is_gzip(path) else open)(path, "rt") as f:
        doc = json.load(f)
    e = Expect("rocprofv3")
    for proc in doc["rocprofiler-sdk-tool"]:
        pid = proc.get("metadata", {}).get("pid", 0)
        e.pids.append(pid)
        agents = {}
        for a in proc.get("agents", []):
            if a.get("type") == 2:
                index = a.get("gpu_index", a.get("logical_node_type_id"))
                agents[a["id"]["handle"]] = index
                bank = (a.get("mem_banks") or [{}])[0]
                e.gpus.append((index, a.get("product_name") or a.get("name"), a.get("cu_count", 0),
                               a.get("max_engine_clk_fcompute", 0), bank.get("size_in_bytes", 0)))
        symbols = {k["kernel_id"]: k["kernel_name"] for k in proc.get("kernel_symbols", [])}
        records = proc.get("buffer_records", {})
        for r in records.get("kernel_dispatch", []):
            info = r["dispatch_info"]
            stream = r.get("stream_id", {}).get("handle")
            lane = ("stream", stream) if stream is not None else ("queue", info["queue_id"]["handle"])
            e.kernels.append((pid, agents.get(info["agent_id"]["handle"], info["agent_id"]["handle"]), lane,
                              symbols.get(info["kernel_id"], "<kernel %d>" % info["kernel_id"]),
                              r["start_timestamp"], r["end_timestamp"], r["correlation_id"]["internal"]))
        for r in records.get("hip_api", []):
            e.api.append((pid, r["thread_id"], r["start_timestamp"], r["end_timestamp"],
                          r["correlation_id"]["internal"]))
        for r in records.get("memory_copy", []):
            try:
                ends = [a for a in (r["dst_agent_id"]["handle"], r["src_agent_id"]["handle"]) if a in agents]
                if ends:
                    e.copies.append((pid, agents[ends[0]], r["start_timestamp"], r["end_timestamp"],
                                     r["correlation_id"]["internal"]))
            except (KeyError, TypeError):
                pass  # a record without its fields: skipped (and counted) by gapscope too
        for r in records.get("marker_api", []):
            try:
                e.markers.append((pid, r["thread_id"], r["start_timestamp"], r["end_timestamp"]))
            except (KeyError, TypeError):
                pass
    return e


def read_v3csv(path):
    files = v3_set(path)
    e = Expect("rocprofv3")

    def rows(kind):
        if kind not in files:
            return []
        with open(files[kind], newline="") as f:
            return list(csv.DictReader(f))

    def agent(text):
        return int(text[len("Agent "):] if text.startswith("Agent ") else text)
    name = os.path.basename(files[next(iter(files))])
    prefix = V3_SUFFIX.sub("", name)
    api_rows = rows("hip_api_trace")
    marker_rows = rows("marker_api_trace")
    pid = int(prefix) if prefix.isdigit() else int((api_rows + marker_rows)[0]["Process_Id"]) if api_rows + marker_rows else 0
    agents = {}
    gpus = sorted((int(a["Node_Id"]), a) for a in rows("agent_info") if a["Agent_Type"] in ("GPU", "2"))
    for ordinal, (node, a) in enumerate(gpus):
        index = int(a["Logical_Node_Type_Id"]) if a.get("Logical_Node_Type_Id") else ordinal
        agents[node] = index
        e.gpus.append((index, a.get("Product_Name") or a.get("Name"), int(a.get("Cu_Count") or 0),
                       int(a.get("Max_Engine_Clk_Fcompute") or 0), 0))
    for r in rows("kernel_trace"):
        node = agent(r["Agent_Id"])
        lane = ("stream", int(r["Stream_Id"])) if r.get("Stream_Id") else ("queue", int(r["Queue_Id"]))
        e.kernels.append((pid, agents.get(node, node), lane, r["Kernel_Name"], int(r["Start_Timestamp"]),
                          int(r["End_Timestamp"]), int(r["Correlation_Id"])))
    for r in api_rows:
        if not r["Domain"].startswith("MARKER"):
            e.api.append((int(r["Process_Id"]), int(r["Thread_Id"]), int(r["Start_Timestamp"]),
                          int(r["End_Timestamp"]), int(r["Correlation_Id"])))
    for r in marker_rows + [r for r in api_rows if r["Domain"].startswith("MARKER")]:
        e.markers.append((int(r["Process_Id"]), int(r["Thread_Id"]), int(r["Start_Timestamp"]),
                          int(r["End_Timestamp"])))
    for r in rows("memory_copy_trace"):
        d = r["Direction"]
        if "HOST_TO_HOST" in d:
            continue
        src, dst = agent(r["Source_Agent_Id"]), agent(r["Destination_Agent_Id"])
        ends = [a for a in (dst, src) if a in agents]
        node = ends[0] if ends else (src if "TO_HOST" in d else dst)
        e.copies.append((pid, agents.get(node, node), int(r["Start_Timestamp"]), int(r["End_Timestamp"]),
                         int(r.get("Correlation_Id") or 0)))
    e.pids = [pid]
    return e


def _v1_row(e, row):
    e.kernels.append((int(row["pid"]), int(row["gpu-id"]), ("queue", int(row["queue-id"])),
                      row["KernelName"].strip('"'), int(row["BeginNs"]), int(row["EndNs"]), 0))


def read_csv(path):
    e = Expect("rocprof")
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            _v1_row(e, row)
    e.pids = sorted({k[0] for k in e.kernels})
    return e


def read_db(path):
    e = Expect("rocprof")
    db = sqlite3.connect("file:%s?mode=ro&immutable=1" % os.path.abspath(path), uri=True)
    cols = ", ".join('"%s"' % c for c in V1_COLUMNS)
    for values in db.execute("SELECT %s FROM KERN" % cols):
        _v1_row(e, dict(zip(V1_COLUMNS, [str(v) for v in values])))
    e.pids = sorted({k[0] for k in e.kernels})
    return e


READERS = {"rocprofv3": read_rocprofv3, "v3csv": read_v3csv, "csv": read_csv, "db": read_db}


def expected(path):
    e = READERS[kind_of(path)](path)
    kernels = [k for k in e.kernels if k[5] >= k[4] >= 0]
    copies = [c for c in e.copies if c[3] >= c[2] >= 0]
    ranks = {k[0] for k in kernels} | {c[0] for c in copies}  # a process without GPU work is no rank
    api = [a for a in e.api if a[3] >= a[2] >= 0 and a[0] in ranks]
    markers = [m for m in e.markers if m[3] >= m[2] >= 0 and m[0] in ranks]
    x = {"source": e.source, "clock_domain": "import:" + e.source, "kernels": len(kernels),
         "kernel_ns": sum(k[5] - k[4] for k in kernels), "api": len(api), "memcpy": len(copies),
         "memcpy_ns": sum(c[3] - c[2] for c in copies), "markers": len(markers)}
    times = [k[4] for k in kernels] + [a[2] for a in api] + [c[2] for c in copies] + [m[2] for m in markers]
    ends = [k[5] for k in kernels] + [a[3] for a in api] + [c[3] for c in copies] + [m[3] for m in markers]
    x["start_ns"], x["end_ns"] = (min(times), max(ends)) if times else (None, None)
    x["ranks"] = len(ranks)
    x["rank_kernels"] = sorted(collections.Counter(k[0] for k in kernels).values())
    x["lanes"] = dict(collections.Counter((k[1],) + k[2] for k in kernels))
    launched = {(a[0], a[4]) for a in api if a[4]}
    x["launch_flows"] = sum(1 for k in kernels if k[6] and (k[0], k[6]) in launched) + sum(
        1 for c in copies if c[4] and (c[0], c[4]) in launched)
    names = demangled({k[3] for k in kernels})
    if names is not None:
        x["names"] = dict(collections.Counter(names[k[3]] for k in kernels))
    x["distinct_names"] = len({strip_kd(k[3]) for k in kernels})
    x["gpus"] = sorted(set(e.gpus))  # every process lists every agent
    return x


# ---- what gapscope reads ----

def actual(path, tmp):
    def run(*args):
        p = subprocess.run([cli()] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise RuntimeError("gapscope-cli %s: exit %d: %s" % (args[0], p.returncode, p.stderr.strip()))
        return p.stdout
    info = json.loads(run("info", "--json", path))
    a = {"source": info["source"], "clock_domain": info["clock_domain"], "kernels": info["events"]["kernel"],
         "kernel_ns": info["kernel_time_ns"], "api": info["events"]["api"], "memcpy": info["events"]["memcpy"],
         "markers": info["events"]["nvtx"], "start_ns": info["start_ns"],
         "end_ns": info["end_ns"], "ranks": len(info["ranks"]),
         "rank_kernels": sorted(r["kernel_count"] for r in info["ranks"])}
    a["gpus"] = sorted((g["device"], g["name"], g["sm_count"], g["sm_clock_mhz"], g["memory_bytes"])
                       for g in info["gpus"])
    kernels = json.loads(run("summary", "--json", "--top", "1000000000", path))["kernels"]
    a["names"] = {k["name"]: k["count"] for k in kernels}
    a["distinct_names"] = len(kernels)
    out = os.path.join(tmp, "chrome.json")
    run("convert", path, out)
    with open(out) as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    devices, lanes = {}, {}
    for ev in events:
        if ev.get("ph") == "M" and ev.get("name") == "process_name":
            m = re.search(r"GPU (\d+)$", ev["args"]["name"])
            devices[ev["pid"]] = int(m.group(1)) if m else None
        elif ev.get("ph") == "M" and ev.get("name") == "thread_name":
            m = re.match(r"GPU (stream|queue) (\d+)", ev["args"]["name"])
            if m:
                lanes[(ev["pid"], ev["tid"])] = (m.group(1), int(m.group(2)))
    counts = collections.Counter()
    for ev in events:
        if ev.get("ph") == "X" and ev.get("cat") == "kernel":
            counts[(devices.get(ev["pid"]),) + lanes.get((ev["pid"], ev["tid"]), ("?", ev["tid"]))] += 1
    a["lanes"] = dict(counts)
    a["launch_flows"] = sum(1 for ev in events if ev.get("ph") == "s" and ev.get("cat") == "launch")
    a["memcpy_ns"] = sum(round(float(ev["dur"]) * 1000) for ev in events if ev.get("ph") == "X"
                         and ev.get("cat") == "memcpy")
    return a


def _short(v):
    s = repr(v)
    return s if len(s) < 300 else s[:300] + "..."


def check(path):
    e = expected(path)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            a = actual(path, tmp)
        except RuntimeError as err:
            if not e["kernels"] and not e["memcpy"] and "nothing to import" in str(err):
                return []  # refused, saying why, as it must
            return [("import", "success", str(err))]
    if not e["kernels"] and not e["memcpy"]:
        return [("import", "a refusal: nothing to import", "%d events" % (a["kernels"] + a["api"]))]
    bad = []
    for key, want in e.items():
        if a.get(key) != want:
            if isinstance(want, dict):
                keys = set(want) | set(a[key])
                diff = {k: (want.get(k), a[key].get(k)) for k in keys if want.get(k) != a[key].get(k)}
                bad.append((key, "the same", "%d differ, e.g. %s" % (len(diff), _short(dict(list(diff.items())[:3])))))
            else:
                bad.append((key, _short(want), _short(a.get(key))))
    return bad


def files(args):
    for p in args:
        if os.path.isdir(p):
            sets = set()
            for root, _, names in sorted(os.walk(p)):
                for name in sorted(names):
                    f = os.path.join(root, name)
                    kind = os.path.isfile(f) and kind_of(f)
                    if kind == "v3csv":  # one check per set
                        key = V3_SUFFIX.sub("", f)
                        if key in sets:
                            continue
                        sets.add(key)
                    if kind:
                        yield f
        else:
            yield p


def main():
    global CLI
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli")
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()
    CLI = args.cli
    failures = checked = 0
    from check import report
    for path in files(args.paths):
        e = expected(path)
        checked += 1
        failures += report("%s (%s: %d kernels, %d ns, %d API calls, %d launch flows, %d copies, %d markers)" % (
            path, e["source"], e["kernels"], e["kernel_ns"], e["api"], e["launch_flows"], e["memcpy"], e["markers"]),
            check(path))
    print("%d files, %d mismatched" % (checked, failures))
    return 1 if failures or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
