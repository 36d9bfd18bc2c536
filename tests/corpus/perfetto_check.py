#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks gapscope-cli's import of Perfetto protobuf traces against an independent reading of the raw files.

The protobuf wire format is decoded here, by hand (no protobuf module, no gapscope code): varints,
fixed and length-delimited fields, with Perfetto's own field numbers (perfetto/protos/perfetto/trace/
trace_packet.proto and track_event/*.proto). What is read:
  - Trace.packet (1) records, one after the other; a record cut by the end of the file ends the reading;
  - TracePacket: timestamp (8), timestamp_clock_id (58), trusted_packet_sequence_id (10),
    sequence_flags (13: 1 INCREMENTAL_STATE_CLEARED, 2 NEEDS_INCREMENTAL_STATE), incremental_state_cleared
    (41), interned_data (12: event_categories 1, event_names 2), trace_packet_defaults (59:
    timestamp_clock_id 58, track_event_defaults 11 -> track_uuid 11), clock_snapshot (6: clocks 1 {clock_id
    1, timestamp 2, is_incremental 3, unit_multiplier_ns 4}, primary_trace_clock 2), track_descriptor (60:
    uuid 1, name 2 / static_name 10, process 3 {pid 1, process_name 6}, thread 4 {pid 1, tid 2,
    thread_name 5}, parent_uuid 5, counter 8), track_event (11: type 9, track_uuid 11, name_iid 10 / name
    23, category_iids 3 / categories 22), compressed_packets (50, zlib, by Python's zlib) and
    zstd_compressed_packets (133, by the `zstandard` module or the zstd command-line tool; without either
    a file that has them is skipped, exit 77);
  - times: sequence-scoped clocks (ids 64..127) defined by a ClockSnapshot on their sequence, incremental
    or not, with their unit, taken to the snapshot's primary clock (BOOTTIME unless primary_trace_clock
    names another), other builtin clocks by their offset in the snapshot;
  - slices: BEGIN/END nested per track, INSTANT zero-length; a BEGIN never ended is dropped.
What the figures mean (the rules model/import/README.md states for gapscope's reader):
  - a slice's kind is its category when that names a gapscope event kind (kernel, memcpy, memset, api, sync,
    nvtx, collective, host); otherwise a slice on a GPU track (its name, or its parent's, starts with
    "GPU" or holds "stream"/"queue") is a kernel (memcpy/memset when its name starts so), any other a host
    range; slices of counter tracks, "annotations" and "budget waterfall" tracks are not events, those of
    a "steps" track under a process are steps;
  - a track's process: its nearest ancestor with a process descriptor, else the process of its thread's pid;
  - ranks: the processes with GPU slices (kernels, copies, memsets); the slices of other processes are
    not imported;
  - kernels: count, total time (ns), per rank; first start and last end of all imported events; distinct
    kernel names with their counts; API, sync, NVTX, collective and host range counts.
gapscope-cli's `info --json` and `summary --json --top 1000000000` must report the same figures exactly.

Usage: perfetto_check.py [--cli PATH] FILE_OR_DIR... (.pftrace, .perfetto-trace; exit 1 on any
mismatch, 77 when there is no file to check or every file needs a zstd decoder this machine lacks).
"""
import argparse
import collections
import gzip
import json
import os
import shutil
import subprocess
import sys
import zlib

SKIP = 77
CLI = None
SUFFIXES = (".pftrace", ".perfetto-trace")
KINDS = ("kernel", "memcpy", "memset", "api", "sync", "nvtx", "collective", "host")
GPU_KINDS = ("kernel", "memcpy", "memset")
BOOTTIME, FIRST_SEQUENCE_CLOCK = 6, 64


class NeedsZstd(Exception):
    pass


def cli():
    return CLI or os.environ.get("GAPSCOPE_CLI") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "dev", "app", "gapscope-cli")


# ---- the wire format ----

def read_varint(b, i):
    v = shift = 0
    while True:
        if i >= len(b) or shift > 63:
            raise ValueError("varint cut or too long at %d" % i)
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def fields(b):
    """{field: [values]} of one message: ints for varint and fixed fields, bytes for length-delimited ones."""
    out, i = collections.defaultdict(list), 0
    while i < len(b):
        key, i = read_varint(b, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = read_varint(b, i)
        elif w == 1:
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif w == 5:
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        elif w == 2:
            n, i = read_varint(b, i)
            if i + n > len(b):
                raise ValueError("field %d runs past its message" % f)
            v, i = bytes(b[i:i + n]), i + n
        else:
            raise ValueError("wire type %d" % w)
        if i > len(b):
            raise ValueError("field %d cut" % f)
        out[f].append(v)
    return out


def one(m, f, default=None):
    return m[f][-1] if f in m else default


def text(m, f, default=""):
    return m[f][-1].decode("utf-8", "replace") if f in m else default


def signed(v, bits=64):
    return v - (1 << bits) if v >> (bits - 1) else v


def trace_records(b):
    """The bodies of the Trace.packet records of b; stops at a record cut by the end."""
    i = 0
    while i < len(b):
        if b[i] != 0x0A:
            raise ValueError("byte %d: not a Trace.packet record" % i)
        try:
            n, j = read_varint(b, i + 1)
        except ValueError:
            return
        if j + n > len(b):
            return
        yield b[j:j + n]
        i = j + n


def unzstd(data):
    try:
        import zstandard
        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    except ImportError:
        pass
    tool = shutil.which("zstd")
    if not tool:
        raise NeedsZstd()
    return subprocess.run([tool, "-q", "-d", "-c"], input=data, stdout=subprocess.PIPE, check=True).stdout


# ---- the trace ----

class Sequence:
    def __init__(self):
        self.valid = False
        self.names, self.categories = {}, {}
        self.default_clock = 0
        self.default_track = None
        self.clocks = {}  # id -> [incremental, unit, base, reference clock, reference base, last]


class Reader:
    def __init__(self):
        self.sequences = collections.defaultdict(Sequence)
        self.tracks = {}  # uuid -> dict
        self.primary = BOOTTIME
        self.offsets = {}  # builtin clock -> primary - clock
        self.open = collections.defaultdict(list)  # track uuid -> [(start, name, categories)]
        self.slices = []  # (track uuid, start, end, name, categories)

    def packet(self, body):
        p = fields(body)
        if 50 in p:
            for inner in trace_records(zlib.decompress(p[50][-1])):
                self.packet(inner)
            return
        if 133 in p:
            for inner in trace_records(unzstd(p[133][-1])):
                self.packet(inner)
            return
        seq = self.sequences[one(p, 10, 0)]
        flags = one(p, 13, 0)
        if flags & 1 or one(p, 41, 0):
            self.sequences[one(p, 10, 0)] = seq = Sequence()
            seq.valid = True
        if flags & 2 and not seq.valid:
            return
        if 59 in p:
            d = fields(p[59][-1])
            seq.default_clock = one(d, 58, 0)
            seq.default_track = one(fields(d[11][-1]), 11) if 11 in d else None
        if 12 in p:
            interned = fields(p[12][-1])
            for f, table in ((1, seq.categories), (2, seq.names)):
                for e in interned.get(f, []):
                    e = fields(e)
                    table[one(e, 1, 0)] = text(e, 2)
        if 6 in p:
            self.clock_snapshot(fields(p[6][-1]), seq)
        if 60 in p:
            self.track(fields(p[60][-1]))
        if 11 in p:
            self.event(p, fields(p[11][-1]), seq)

    def clock_snapshot(self, s, seq):
        if 2 in s:
            self.primary = one(s, 2)
        clocks = [fields(c) for c in s.get(1, [])]
        values = [(one(c, 1, 0), one(c, 2, 0), one(c, 3, 0), one(c, 4, 1) or 1) for c in clocks]
        prim = next((v for v in values if v[0] == self.primary), None)
        builtin = next((v for v in values if v[0] < FIRST_SEQUENCE_CLOCK), None)
        if prim:
            for v in values:
                if v[0] < FIRST_SEQUENCE_CLOCK and v[0] != self.primary:
                    self.offsets[v[0]] = prim[1] - v[1]
        ref = prim or builtin
        if ref:
            for cid, ts, inc, unit in values:
                if FIRST_SEQUENCE_CLOCK <= cid < 128:
                    seq.clocks[cid] = [bool(inc), unit, ts, ref[0], ref[1], ts]

    def time(self, p, seq):
        clock = one(p, 58, 0) or seq.default_clock
        v = one(p, 8, 0)
        if clock >= FIRST_SEQUENCE_CLOCK:
            c = seq.clocks.get(clock)
            if c is None:
                return None
            if c[0]:
                c[5] += v
                v = c[5]
            v = c[4] + (v - c[2]) * c[1]
            clock = c[3]
        if clock and clock != self.primary:
            if clock not in self.offsets:
                return None
            v += self.offsets[clock]
        return v

    def track(self, d):
        t = {"uuid": one(d, 1, 0), "parent": one(d, 5, 0), "name": text(d, 2) or text(d, 10),
             "process": None, "thread": None, "counter": 8 in d}
        if 3 in d:
            pr = fields(d[3][-1])
            t["process"] = (signed(one(pr, 1, 0), 32), text(pr, 6))
        if 4 in d:
            th = fields(d[4][-1])
            t["thread"] = (signed(one(th, 1, 0), 32), signed(one(th, 2, 0)), text(th, 5))
        if not t["name"]:
            t["name"] = t["process"][1] if t["process"] else t["thread"][2] if t["thread"] else ""
        self.tracks[t["uuid"]] = t

    def event(self, p, e, seq):
        t = self.time(p, seq)
        if t is None:
            return
        uuid = one(e, 11)
        if uuid is None:
            uuid = seq.default_track if seq.default_track is not None else (1 << 63) | one(p, 10, 0)
        kind = one(e, 9, 0)
        if kind in (1, 3):
            if 10 in e:
                name = seq.names.get(one(e, 10), "<name iid %d>" % one(e, 10))
            else:
                name = text(e, 23) or "(unnamed)"
            cats = [c.decode("utf-8", "replace") for c in e.get(22, [])]
            cats += [seq.categories[i] for i in e.get(3, []) if i in seq.categories]
            if kind == 3:
                self.slices.append((uuid, t, t, name, cats))
            else:
                self.open[uuid].append((t, name, cats))
        elif kind == 2 and self.open[uuid]:
            start, name, cats = self.open[uuid].pop()
            self.slices.append((uuid, start, max(start, t), name, cats))


def is_gpu_name(name):
    low = name.lower()
    return name.startswith("GPU") or "stream" in low or "queue" in low


def without_overlap(name):
    at = name.rfind(" (overlapping ")
    return name[:at] if at >= 0 and name.endswith(")") else name


def process_of(tracks, uuid):
    thread_pid, at = None, tracks.get(uuid)
    for _ in range(64):
        if at is None:
            break
        if at["process"]:
            return at["uuid"]
        if at["thread"] and thread_pid is None:
            thread_pid = at["thread"][0]
        at = tracks.get(at["parent"]) if at["parent"] else None
    if thread_pid:
        for t in tracks.values():
            if t["process"] and t["process"][0] == thread_pid:
                return t["uuid"]
    return None


def expected(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    r = Reader()
    damaged = 0
    for body in trace_records(data):
        try:
            r.packet(body)
        except (ValueError, zlib.error):
            damaged += 1  # a packet that does not decode: skipped, the others kept (as gapscope does)
    tracks = r.tracks

    def kind_of(uuid, name, cats):
        for c in cats:
            if c in KINDS:
                return c
        t = tracks.get(uuid)
        if not t or t["process"] or t["thread"]:
            return "host"
        parent = tracks.get(t["parent"]) if t["parent"] else None
        if not (is_gpu_name(without_overlap(t["name"]))
                or (parent and not parent["process"] and is_gpu_name(parent["name"]))):
            return "host"
        head = name[:6].lower()
        return "memcpy" if head == "memcpy" else "memset" if head == "memset" else "kernel"

    def special(uuid):
        t = tracks.get(uuid)
        if not t:
            return None
        parent = tracks.get(t["parent"]) if t["parent"] else None
        if t["counter"] or t["name"] in ("annotations", "budget waterfall"):
            return "skip"
        if t["name"] == "steps" and parent and parent["process"]:
            return "steps"
        return None

    events = []  # (process, kind, start, end, name)
    for uuid, start, end, name, cats in r.slices:
        if special(uuid):
            continue
        events.append((process_of(tracks, uuid), kind_of(uuid, name, cats), start, end, name))
    ranks = {e[0] for e in events if e[1] in GPU_KINDS}
    events = [e for e in events if e[0] in ranks]
    kernels = [e for e in events if e[1] == "kernel"]
    x = {"source": "perfetto", "kernels": len(kernels), "kernel_ns": sum(e[3] - e[2] for e in kernels)}
    for k in KINDS[1:]:
        x[k] = sum(1 for e in events if e[1] == k)
    x["start_ns"] = min((e[2] for e in events), default=None)
    x["end_ns"] = max((e[3] for e in events), default=None)
    x["ranks"] = len(ranks)
    x["rank_kernels"] = sorted(collections.Counter(e[0] for e in kernels).values())
    x["names"] = dict(collections.Counter(e[4] for e in kernels))
    x["damaged_packets"] = damaged  # not compared: shown
    return x


# ---- what gapscope reads ----

def actual(path):
    def run(*args):
        p = subprocess.run([cli()] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise RuntimeError("gapscope-cli %s: exit %d: %s" % (args[0], p.returncode, p.stderr.strip()))
        return p.stdout
    info = json.loads(run("info", "--json", path))
    ev = info["events"]
    a = {"source": info["source"], "kernels": ev.get("kernel", 0), "kernel_ns": info["kernel_time_ns"]}
    for k in KINDS[1:]:
        a[k] = ev.get(k, 0)
    a["start_ns"], a["end_ns"] = info["start_ns"], info["end_ns"]
    a["ranks"] = len(info["ranks"])
    a["rank_kernels"] = sorted(r["kernel_count"] for r in info["ranks"])
    kernels = json.loads(run("summary", "--json", "--top", "1000000000", path))["kernels"]
    a["names"] = {k["name"]: k["count"] for k in kernels}
    return a


def _short(v):
    s = repr(v)
    return s if len(s) < 300 else s[:300] + "..."


def check(path, e):
    """(what, expected, got) mismatches."""
    importable = e["kernels"] + e["memcpy"] + e["memset"] > 0
    try:
        a = actual(path)
    except RuntimeError as err:
        if not importable and "nothing to import" in str(err):
            return []  # refused, saying why, as it must
        return [("import", "success", str(err))]
    if not importable:
        return [("import", "a refusal: nothing to import", "%d kernels" % a["kernels"])]
    bad = []
    for key, want in e.items():
        if key == "damaged_packets":
            continue
        got = a.get(key)
        if got == want:
            continue
        if isinstance(want, dict):
            diff = {k: (want.get(k), got.get(k)) for k in set(want) | set(got) if want.get(k) != got.get(k)}
            bad.append((key, "the same", "%d differ, e.g. %s" % (len(diff), _short(dict(list(diff.items())[:3])))))
        else:
            bad.append((key, _short(want), _short(got)))
    return bad


def files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in sorted(os.walk(p)):
                for name in sorted(names):
                    if name.endswith(SUFFIXES):
                        yield os.path.join(root, name)
        elif os.path.isfile(p):
            yield p


def main():
    global CLI
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli")
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()
    CLI = args.cli
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from check import report
    failures = checked = skipped = 0
    for path in files(args.paths):
        try:
            e = expected(path)
        except ValueError as err:
            failures += report("%s" % path, [("raw file", "a Perfetto trace", str(err))])
            checked += 1
            continue
        except NeedsZstd:
            print("skip %s (zstd_compressed_packets: no zstandard module or zstd tool here)" % path)
            skipped += 1
            continue
        checked += 1
        failures += report("%s (%d kernels, %d ns, %d ranks, %d API, %d host, %d damaged packets)" % (
            path, e["kernels"], e["kernel_ns"], e["ranks"], e["api"], e["host"], e["damaged_packets"]), check(path, e))
    print("%d files, %d mismatched, %d skipped" % (checked, failures, skipped))
    if failures:
        return 1
    return 0 if checked else SKIP


if __name__ == "__main__":
    sys.exit(main())
