#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Crafts hostile trace files from a good synth capture, and says what a reader must keep of each.

    make_hostile.py --cli gapscope-cli --out DIR

writes DIR/good.gapscope (gapscope-cli synth), one crafted file per case and DIR/manifest.json:
for each case the file, the event count a reader must keep (the events of the surviving chunks,
added up from the good file's frame headers by this script, not by gapscope), whether validate
must fail, and the counters and messages expected. run_hostile.py runs every CLI command on each.

Only the standard library and the zstd command-line tool are used (no protobuf module): the few
protobuf fields touched are read and written by the small codec below.
"""
import argparse
import gzip
import json
import os
import sqlite3
import struct
import subprocess
import sys
import zlib

FILE_HEADER = 16
FRAME_HEADER = 32
FOOTER = 32
FRAME_MAGIC = 0x52465347  # "GSFR"
FOOTER_MAGIC = 0x46455347  # "GSEF"
CHUNK, INDEX = 2, 7


def _crc_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 & -(c & 1))
        t.append(c)
    return t


_T = _crc_table()


def crc(data):  # CRC-32C (Castagnoli), table-driven
    c = 0xFFFFFFFF
    for b in data:
        c = _T[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc(b"123456789") == 0xE3069283


# --- frames -----------------------------------------------------------------------------------

def frames(b):
    """Frame headers of a file read in order: dicts with offset, type, codec, stored, raw, events."""
    out, off = [], FILE_HEADER
    while off + FRAME_HEADER <= len(b):
        magic, typ, codec, flags, stored, raw, events = struct.unpack_from("<IBBHIII", b, off)
        if magic != FRAME_MAGIC:
            break
        out.append(dict(offset=off, type=typ, codec=codec, stored=stored, raw=raw, events=events))
        off += FRAME_HEADER + stored
    return out


def frame_header(typ, codec, stored, raw, events, payload_crc):
    h = struct.pack("<IBBHIIIII", FRAME_MAGIC, typ, codec, 0, stored, raw, events, 0, payload_crc)
    return h + struct.pack("<I", crc(h))


def frame(typ, payload, codec=0, raw=None, events=0):
    return frame_header(typ, codec, len(payload), len(payload) if raw is None else raw, events, crc(payload)) + payload


def footer(index_offset, index_bytes, total_events):
    f = struct.pack("<QIIQ", index_offset, index_bytes, 0, total_events)
    return f + struct.pack("<II", crc(f), FOOTER_MAGIC)


def payload(b, f):
    start = f["offset"] + FRAME_HEADER
    return b[start:start + f["stored"]]


def zstd(data, decompress=False, level=3):
    args = ["zstd", "-q", "-c"] + (["-d"] if decompress else ["-%d" % level])
    return subprocess.run(args, input=data, stdout=subprocess.PIPE, check=True).stdout


# --- a minimal protobuf codec (varint and length-delimited fields only) -------------------------

def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def read_varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def fields(b):
    """[(field, wire, value)]: value is an int (varint) or bytes (length-delimited)."""
    out, i = [], 0
    while i < len(b):
        key, i = read_varint(b, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = read_varint(b, i)
        elif w == 2:
            n, i = read_varint(b, i)
            v, i = b[i:i + n], i + n
        elif w == 1:
            v, i = b[i:i + 8], i + 8
        elif w == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % w)
        out.append((f, w, v))
    return out


def encode(fs):
    out = bytearray()
    for f, w, v in fs:
        out += varint(f << 3 | w)
        if w == 0:
            out += varint(v)
        elif w == 2:
            out += varint(len(v)) + v
        else:
            out += v
    return bytes(out)


def set_field(fs, field, value):
    """Sets varint `field` (replacing or appending)."""
    rest = [x for x in fs if x[0] != field]
    return rest + [(field, 0, value)]


# --- the cases --------------------------------------------------------------------------------

class Crafter:
    def __init__(self, good, out):
        self.good = good
        self.out = out
        self.fr = frames(good)
        self.chunks = [f for f in self.fr if f["type"] == CHUNK]
        self.index = [f for f in self.fr if f["type"] == INDEX][0]
        self.total = sum(f["events"] for f in self.chunks)
        self.cases = []

    def write(self, name, data, kept, validate_fails=True, expect=(), note="", warning=None):
        path = os.path.join(self.out, name)
        with open(path, "wb") as fh:
            fh.write(data)
        case = dict(name=name, file=name, kept=kept, validate_fails=validate_fails, expect=list(expect), note=note)
        if warning:
            case["warning"] = warning  # a text one of the trace's warnings must hold (the place named)
        self.cases.append(case)

    def without_index(self):
        return bytearray(self.good[:self.index["offset"]])

    def with_index(self, index_payload, codec=0, raw=None):
        """The good frames, then `index_payload` as the INDEX frame, then a valid footer."""
        body = bytearray(self.good[:self.index["offset"]])
        off = len(body)
        body += frame(INDEX, index_payload, codec=codec, raw=raw)
        return bytes(body + footer(off, len(body) - off, self.total))

    def as_format_1_0(self):
        """The good file without its index, as format 1.0 wrote it: every chunk without the definitions an
        earlier chunk made (repeated lanes and launch configs, reused strings), header minor version 0."""
        out = bytearray(self.good[:FILE_HEADER])
        struct.pack_into("<H", out, 10, 0)
        lanes, configs = set(), set()
        for f in self.fr:
            if f["type"] == INDEX:
                break
            if f["type"] != CHUNK:
                out += self.good[f["offset"]:f["offset"] + FRAME_HEADER + f["stored"]]
                continue
            raw = payload(self.good, f) if f["codec"] == 0 else zstd(payload(self.good, f), decompress=True)
            kept = []
            for fld, w, v in fields(raw):
                if fld in (16, 17):
                    continue
                if fld in (5, 6):
                    ident = next((x for k, _, x in fields(v) if k == 1), 0)
                    seen = lanes if fld == 5 else configs
                    if ident in seen:
                        continue
                    seen.add(ident)
                kept.append((fld, w, v))
            msg = encode(kept)
            out += frame(CHUNK, zstd(msg), codec=1, raw=len(msg), events=f["events"])
        return out

    def index_message(self):
        return zstd(payload(self.good, self.index), decompress=True)

    def tamper_chunk_entry(self, chunk, field, value):
        """Sets varint `field` of the index entry of chunk number `chunk`."""
        offset = self.chunks[chunk]["offset"]
        msg = fields(self.index_message())
        for k, (f, w, v) in enumerate(msg):
            if f == 1:  # IndexEntry; its field 1 is the frame offset
                entry = fields(v)
                if any(ef == 1 and ev == offset for ef, _, ev in entry):
                    msg[k] = (f, w, encode(set_field(entry, field, value)))
                    return encode(msg)
        raise ValueError("no index entry for chunk %d" % chunk)

    def drop_chunk_entry(self, chunk):
        """The index without the entry of chunk number `chunk`."""
        offset = self.chunks[chunk]["offset"]
        msg = fields(self.index_message())
        kept = [(f, w, v) for f, w, v in msg
                if not (f == 1 and any(ef == 1 and ev == offset for ef, _, ev in fields(v)))]
        assert len(kept) == len(msg) - 1, "no index entry for chunk %d" % chunk
        return encode(kept)

    def make(self):
        t = self.total
        self.write("good.gapscope", self.good, t, validate_fails=False)
        # 1. index counts the frames cannot back: read in order, keep every chunk.
        self.write("index-memops-2e40.gapscope", self.with_index(self.tamper_chunk_entry(0, 11, 1 << 40)), t,
                   expect=["read_index_damaged"], note="memop_count 2^40")
        self.write("index-syncs-2e40.gapscope", self.with_index(self.tamper_chunk_entry(1, 12, 1 << 40)), t,
                   expect=["read_index_damaged"], note="sync_count 2^40")
        self.write("index-collectives-150M.gapscope", self.with_index(self.tamper_chunk_entry(0, 13, 150_000_000)), t,
                   expect=["read_index_damaged"], note="collective_count 150M")
        self.write("index-events-150M.gapscope", self.with_index(self.tamper_chunk_entry(2, 6, 150_000_000)), t,
                   expect=["read_index_damaged"], note="event_count 150M")
        # An index that leaves a chunk out, or lists no frame at all: read in order, keep every chunk.
        self.write("index-drops-chunk.gapscope", self.with_index(self.drop_chunk_entry(1)), t,
                   expect=["read_index_damaged"], note="entry of chunk 1 missing")
        self.write("index-no-frames.gapscope", self.with_index(encode([(1, 0, 16)])), t,
                   expect=["read_index_damaged"], note="frames field of the wrong wire type")
        # 2. decompression bombs. The index: 64 MiB of tiny repeated strings, zstd-compressed.
        bomb = (b"\x12\x01a") * ((64 << 20) // 3)
        packed = zstd(bomb, level=19)
        self.write("index-bomb.gapscope", self.with_index(packed, codec=1, raw=len(bomb)), t,
                   expect=["read_index_damaged"], note="64 MiB index from %d bytes" % len(packed))
        # Chunk frames that claim 512 MiB raw (header checksums recomputed): those two are lost.
        b = bytearray(self.good)
        lost = 0
        for f in self.chunks[:2]:
            o = f["offset"]
            struct.pack_into("<I", b, o + 12, 512 << 20)
            struct.pack_into("<I", b, o + 28, crc(bytes(b[o:o + 28])))
            lost += f["events"]
        self.write("chunks-claim-512M.gapscope", bytes(b), t - lost, expect=["read_frames_skipped"],
                   note="two chunk frames claim 512 MiB raw")
        # 3. no index (a killed agent) and one flipped bit in the first chunk: only it is lost.
        self.write("noindex.gapscope", bytes(self.without_index()), t, expect=["read_index_missing"])
        b = self.without_index()
        first = self.chunks[0]
        b[first["offset"] + FRAME_HEADER + first["stored"] // 2] ^= 0x10
        self.write("noindex-flip-first-chunk.gapscope", bytes(b), t - first["events"],
                   expect=["read_index_missing", "read_frames_skipped"])
        # The same in a file of format 1.0, whose chunks define each lane, name and launch config once
        # (no repeats): the later chunks' events are kept, on placeholder definitions, and counted.
        b = self.as_format_1_0()
        first = frames(b)[1]
        assert first["type"] == CHUNK
        b[first["offset"] + FRAME_HEADER + first["stored"] // 2] ^= 0x10
        self.write("noindex-flip-first-chunk-v1.0.gapscope", bytes(b), t - first["events"],
                   expect=["read_index_missing", "read_frames_skipped"])
        # 4. files validate must fail.
        self.write("header-only.gapscope", self.good[:FILE_HEADER], 0, expect=["read_index_missing"])
        b = bytearray(self.good)
        b[12] = 1
        self.write("header-flags.gapscope", bytes(b), t, expect=["read_header_damaged"])


def kineto(name_of, n, extra=""):
    ev = []
    for i in range(n):
        ev.append('{"ph":"X","cat":"kernel","name":"%s","pid":0,"tid":7,"ts":%s,"dur":%s,'
                  '"args":{"device":0,"stream":7,"correlation":%d}}' % name_of(i))
    return '{"traceEvents":[' + ",".join(ev) + '],"displayTimeUnit":"ms"}' + extra


def kineto_cases(c):
    n = 100
    # 6. a lone surrogate (as json.dumps writes it) in one name; negative ts/dur; trailing bytes.
    surrogate = kineto(lambda i: ("gemm_\\ud800_%d" % i if i == 3 else "gemm_%d" % (i % 7), 1000 + i, 0.5, i + 1), n)
    c.write("kineto-surrogate.json", surrogate.encode(), n, validate_fails=None, expect=["import_lone_surrogates"])
    negative = kineto(lambda i: ("gemm_%d" % (i % 7), -5 if i == 1 else 1000 + i, -2 if i == 2 else 0.5, i + 1), n)
    c.write("kineto-negative.json", negative.encode(), n, validate_fails=None,
            expect=["import_negative_times", "import_negative_durations"])
    trailing = kineto(lambda i: ("gemm_%d" % (i % 7), 1000 + i, 0.5, i + 1), n, extra="\n}garbage{")
    c.write("kineto-trailing.json", trailing.encode(), n, validate_fails=None, expect=["import_trailing_data"])
    # 7. a gzip bomb of events: about 6 M kernel events (600 MB of JSON) in a few MB of gzip.
    path = os.path.join(c.out, "kineto-bomb.json.gz")
    one = ('{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":1000.5,"dur":0.5,'
           '"args":{"device":0,"stream":7,"correlation":1}},')
    block = (one * 1000).encode()
    repeats = 6000
    z = zlib.compressobj(6, zlib.DEFLATED, 31)
    with open(path, "wb") as fh:
        fh.write(z.compress(b'{"traceEvents":['))
        for _ in range(repeats):
            fh.write(z.compress(block))
        fh.write(z.compress(one[:-1].encode() + b"]}"))
        fh.write(z.flush())
    c.cases.append(dict(name="kineto-bomb.json.gz", file="kineto-bomb.json.gz", kept=None, validate_fails=None,
                        expect=[], args=["--max-memory", "200M"], error="memory budget",
                        note="%d events" % (repeats * 1000 + 1)))


def rocprofv3(dispatches):
    """A rocprofv3 results.json (rocprofiler-sdk's JSON output) of one process, one MI300X agent, two
    kernel symbols and the given kernel_dispatch records, one per line."""
    head = ('{"rocprofiler-sdk-tool":[{"metadata":{"pid":77,"node":{"hostname":"box"},"command":["python"]},'
            '"agents":[{"id":{"handle":5},"type":2,"gpu_index":0,"name":"gfx942",'
            '"product_name":"AMD Instinct MI300X"}],'
            '"kernel_symbols":[{"kernel_id":1,"kernel_name":"_Z4gemmPfi.kd"},'
            '{"kernel_id":2,"kernel_name":"__amd_rocclr_copyBuffer.kd"}],"buffer_records":{"kernel_dispatch":[\n')
    return head + ",\n".join(dispatches) + '\n],"hip_api":[]}}]}'


def rocprofv3_dispatch(i, start=None):
    start = '%d' % (1000 + 100 * i) if start is None else start
    return ('{"thread_id":77,"correlation_id":{"internal":%d,"external":0},"start_timestamp":%s,"end_timestamp":%d,'
            '"dispatch_info":{"agent_id":{"handle":5},"queue_id":{"handle":3},"kernel_id":%d,'
            '"workgroup_size":{"x":256,"y":1,"z":1},"grid_size":{"x":4096,"y":1,"z":1}},"stream_id":{"handle":7}}'
            % (i + 1, start, 1050 + 100 * i, 1 + i % 2))


ROCPROF1_HEADER = ('"Index","KernelName","gpu-id","queue-id","queue-index","pid","tid","grd","wgr","lds","scr",'
                   '"arch_vgpr","accum_vgpr","sgpr","wave_size","sig","obj","DispatchNs","BeginNs","EndNs",'
                   '"CompleteNs","DurationNs"\n')


def rocprof1_row(i, begin=None):
    begin = '%d' % (1000 + 100 * i) if begin is None else begin
    return ('%d,"void k<double>(double*, int) [clone .kd]",2,0,%d,900,900,4096,256,0,0,16,0,32,64,"0x0","0x7f",'
            '100,%s,%d,200,50\n' % (i, i, begin, 1050 + 100 * i))


def rocprof_cases(c):
    """9. AMD's profilers: a rocprofv3 JSON cut inside a record and one with fields of the wrong type; a
    rocprofv3 CSV set with bad rows (and its HIP API file) and a kernel trace cut inside a row; a rocprof v1
    CSV with bad lines and one cut inside a quoted field; an SQLite KERN table with text where numbers
    belong. The events kept are counted here from what was written (kernels, and API calls of the set)."""
    n = 100
    whole = rocprofv3([rocprofv3_dispatch(i) for i in range(n)])
    cut = whole[:whole.index(rocprofv3_dispatch(61)) + 40]  # inside the 62nd dispatch
    c.write("rocprofv3-cut.json", cut.encode(), 61, validate_fails=None, expect=["import_truncated"],
            note="cut inside dispatch 61",
            warning="the file ends inside the value that starts there; kept the 61 kernel dispatches")
    wrong = [rocprofv3_dispatch(i) for i in range(n)]
    wrong[10] = rocprofv3_dispatch(10, start='"1000"')
    wrong[20] = wrong[20].replace('"dispatch_info":{', '"dispatch_info":[{').replace('"z":1}},', '"z":1}}],', 1)
    c.write("rocprofv3-wrong-types.json", rocprofv3(wrong).encode(), n - 2, validate_fails=None,
            expect=["import_bad_events"], warning="a record of buffer_records.kernel_dispatch: start_timestamp: "
            "not an integer; skipped")
    rows = [rocprof1_row(i) for i in range(n)]
    rows[40] = rows[40].replace(',2,0,', ',2",0,', 1)  # a quote inside an unquoted field
    rows[50] = rocprof1_row(50, begin="12x4")
    c.write("rocprof1-bad-lines.csv", (ROCPROF1_HEADER + "".join(rows)).encode(), n - 2, validate_fails=None,
            expect=["import_bad_events"], warning="line 52, column 103 (BeginNs): not an integer")
    text = ROCPROF1_HEADER + "".join(rocprof1_row(i) for i in range(n))
    cut = text[:text.index(rocprof1_row(80)) + 12]  # inside row 80's quoted KernelName
    c.write("rocprof1-cut.csv", cut.encode(), 80, validate_fails=None, expect=["import_truncated"],
            warning="line 82: the file ends inside this row")
    # rocprofv3 CSV: a kernel trace with a malformed row and a row of the wrong field count, beside its HIP
    # API file (read with it: the set); and a kernel trace cut inside a row.
    v3 = ('"Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id","Kernel_Name",'
          '"Correlation_Id","Start_Timestamp","End_Timestamp"\n')
    v3rows = ['"KERNEL_DISPATCH","Agent 2",1,1,77,%d,1,"gemm_kernel",%d,%d,%d\n' % (i, i, 1000 + 100 * i, 1050 + 100 * i)
              for i in range(n)]
    v3rows[30] = v3rows[30].replace(",1,1,77,", ",1,1x,77,", 1)  # Stream_Id not a number
    v3rows[60] = v3rows[60].replace('"gemm_kernel",', "", 1)  # a field short
    c.write("77_kernel_trace.csv", (v3 + "".join(v3rows)).encode(), n - 2 + 1, validate_fails=None,
            expect=["import_bad_events"], warning="77_kernel_trace.csv: line 32, column %d: Stream_Id: not a number"
            % (v3rows[30].index(",1x,") + 2))
    c.write("77_hip_api_trace.csv", ('"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp",'
                                     '"End_Timestamp"\n"HIP_RUNTIME_API","hipLaunchKernel",77,77,1,1090,1095\n').encode(),
            n - 2 + 1, validate_fails=None, expect=["import_bad_events"], note="read with 77_kernel_trace.csv")
    whole = v3 + "".join('"KERNEL_DISPATCH","Agent 2",1,1,78,%d,1,"gemm_kernel",%d,%d,%d\n'
                         % (i, i, 1000 + 100 * i, 1050 + 100 * i) for i in range(n))
    c.write("78_kernel_trace.csv", whole[:whole.index('"KERNEL_DISPATCH","Agent 2",1,1,78,70,') + 50].encode(), 70,
            validate_fails=None, expect=["import_truncated"], warning="line 72: the file ends inside this row")
    path = os.path.join(c.out, "rocprof1-wrong-types.db")
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.execute('CREATE TABLE KERN ("Index" INTEGER, "KernelName" TEXT, "gpu-id" INTEGER, "queue-id" INTEGER, '
               '"pid" INTEGER, "tid" INTEGER, "grd" INTEGER, "wgr" INTEGER, "BeginNs" INTEGER, "EndNs" INTEGER)')
    for i in range(n):
        begin = "soon" if i == 30 else 1000 + 100 * i
        db.execute("INSERT INTO KERN VALUES (?, ?, 2, 0, 900, 900, 4096, 256, ?, ?)",
                   (i, '"void k<double>(double*, int) [clone .kd]"', begin, 1050 + 100 * i))
    db.commit()
    db.close()
    c.cases.append(dict(name="rocprof1-wrong-types.db", file="rocprof1-wrong-types.db", kept=n - 1,
                        validate_fails=None, expect=["import_bad_events"], note="",
                        warning='table KERN, row 31, column BeginNs: not an integer: "soon"'))


def perfetto_cases(c, cli):
    """10. Perfetto protobuf traces (gapscope's own export, plain packets): one cut inside a packet, one with a
    packet in the middle made unparseable (its body replaced by a field of wire type 7, same length), and a
    valid trace whose only tracks are CPU threads. The events kept are counted by tests/corpus/
    perfetto_check.py's own reading of the written files (it skips a packet that does not decode, as the
    reader must)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"))
    import perfetto_check as pc
    src = os.path.join(c.out, "perfetto-src.gapscope")
    plain = os.path.join(c.out, "perfetto-good.pftrace")
    subprocess.run([cli, "synth", "--ranks", "2", "--steps", "6", "--kernels-per-step", "40", "--seed", "9", "-o", src],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([cli, "convert", "--no-compress", src, plain], check=True, stdout=subprocess.DEVNULL)
    os.remove(src)
    with open(plain, "rb") as fh:
        good = fh.read()
    records, i = [], 0  # (offset, header length, body length)
    while i < len(good):
        n, j = read_varint(good, i + 1)
        records.append((i, j - i, n))
        i = j + n

    def kept(name):
        x = pc.expected(os.path.join(c.out, name))
        return sum(x[k] for k in ("kernels",) + pc.KINDS[1:])

    c.write("perfetto-good.pftrace", good, None, validate_fails=None)
    c.cases[-1]["kept"] = kept("perfetto-good.pftrace")
    at, head, n = records[len(records) // 2]
    c.write("perfetto-cut.pftrace", good[:at + head + n // 2], None, validate_fails=None, expect=["import_truncated"],
            warning="the trace ends inside the packet at byte %d (file cut short)" % at)
    c.cases[-1]["kept"] = kept("perfetto-cut.pftrace")
    events = [r for r in records[len(records) // 2:]
              if any(f == 11 for f, _, _ in fields(good[r[0] + r[1]:r[0] + r[1] + r[2]])) and r[2] >= 2]
    at, head, n = events[len(events) // 3]
    bad = good[:at + head] + b"\x0f" + b"\x00" * (n - 1) + good[at + head + n:]  # field 1, wire type 7
    c.write("perfetto-bad-packet.pftrace", bad, None, validate_fails=None, expect=["import_bad_events"],
            warning="byte %d: a packet of %d bytes that is no TracePacket" % (at, n))
    c.cases[-1]["kept"] = kept("perfetto-bad-packet.pftrace")
    assert 0 < c.cases[-1]["kept"] < c.cases[-3]["kept"], "the damaged packet should cost events"

    # No GPU track: a process with one thread, nested slices on it (what an SDK app without a GPU writes).
    def packet(*fs):
        return encode([(1, 2, encode(list(fs)))])
    out = packet((60, 2, encode([(1, 0, 1), (3, 2, encode([(1, 0, 42), (6, 2, b"python")]))])))
    out += packet((60, 2, encode([(1, 0, 2), (5, 0, 1), (4, 2, encode([(1, 0, 42), (2, 0, 43), (5, 2, b"main")]))])))
    for k in range(20):
        ev = lambda t, typ, name=None: packet(
            (8, 0, 1_000_000 + t), (10, 0, 7),
            (11, 2, encode([(9, 0, typ), (11, 0, 2)] + ([(23, 2, name)] if name else []))))
        out += ev(1000 * k, 1, b"forward") + ev(1000 * k + 100, 3, b"tick") + ev(1000 * k + 700, 2)
    c.write("perfetto-no-gpu.pftrace", out, None, validate_fails=None)
    c.cases[-1].update(kept=None, error="no GPU tracks/slices: nothing to import")


def index_seeds(cli, out):
    """Seeds of tests/fuzz/fuzz_index: the index of the synth capture that fuzz target builds."""
    os.makedirs(out, exist_ok=True)
    src = os.path.join(out, "synth.tmp")
    subprocess.run([cli, "synth", "--ranks", "2", "--steps", "4", "--kernels-per-step", "60", "--seed", "7", "-o", src],
                   check=True, stdout=subprocess.DEVNULL)
    with open(src, "rb") as fh:
        c = Crafter(fh.read(), out)
    os.remove(src)
    stored = payload(c.good, c.index)
    raw = c.index_message()
    bomb = (b"\x12\x01a") * ((64 << 20) // 3)
    seeds = {
        "index-raw.bin": b"\x00" + raw,
        "index-zstd.bin": b"\x01" + struct.pack("<I", len(raw)) + stored,
        "index-zstd-lying-length.bin": b"\x01" + struct.pack("<I", 512 << 20) + stored,
        "index-memops-2e40.bin": b"\x00" + c.tamper_chunk_entry(0, 11, 1 << 40),
        "index-events-150M.bin": b"\x00" + c.tamper_chunk_entry(0, 6, 150_000_000),
        "index-bomb.bin": b"\x01" + struct.pack("<I", len(bomb)) + zstd(bomb, level=19),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as fh:
            fh.write(data)
    print("wrote %d index seeds to %s" % (len(seeds), out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--index-seeds", action="store_true", help="write tests/fuzz/seeds/index instead")
    a = ap.parse_args()
    if a.index_seeds:
        return index_seeds(a.cli, a.out)
    os.makedirs(a.out, exist_ok=True)
    src = os.path.join(a.out, "synth.gapscope")
    subprocess.run([a.cli, "synth", "--ranks", "2", "--steps", "250", "--kernels-per-step", "400", "--seed", "3",
                    "-o", src], check=True, stdout=subprocess.DEVNULL)
    with open(src, "rb") as fh:
        good = fh.read()
    c = Crafter(good, a.out)
    if len(c.chunks) < 4:
        sys.exit("the synth capture should have at least 4 chunks, has %d" % len(c.chunks))
    c.make()
    kineto_cases(c)
    rocprof_cases(c)
    perfetto_cases(c, a.cli)
    # 5/8. paths that are no regular readable file (and, for other users than root, one without read
    # permission).
    fifo = os.path.join(a.out, "fifo.gapscope")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    c.cases.append(dict(name="fifo", file="fifo.gapscope", kept=None, validate_fails=None, expect=[],
                        error="is a FIFO"))
    os.makedirs(os.path.join(a.out, "folder.gapscope"), exist_ok=True)
    c.cases.append(dict(name="directory", file="folder.gapscope", kept=None, validate_fails=None, expect=[],
                        error="is a directory"))
    if os.geteuid() != 0:  # root reads any file: the case only means something for other users
        unreadable = os.path.join(a.out, "unreadable.gapscope")
        if os.path.exists(unreadable):
            os.remove(unreadable)
        with open(unreadable, "wb") as fh:
            fh.write(good)
        os.chmod(unreadable, 0)
        c.cases.append(dict(name="unreadable", file="unreadable.gapscope", kept=None, validate_fails=None, expect=[],
                            error="Permission denied"))
    with open(os.path.join(a.out, "manifest.json"), "w") as fh:
        json.dump(dict(total=c.total, chunks=[f["events"] for f in c.chunks], cases=c.cases), fh, indent=1)
    print("wrote %d cases to %s (%d events in %d chunks)" % (len(c.cases), a.out, c.total, len(c.chunks)))


if __name__ == "__main__":
    main()
