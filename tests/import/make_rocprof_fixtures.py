#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cut the rocprof fixtures of tests/import/fixtures/rocprof from the real files of the corpus.

The corpus (../shared/corpus/other, read-only) holds what AMD's tools wrote; the tests need small
files that are always there, so this keeps a slice of each, as the tool wrote it:
- rocprofv3.json.gz: the rocprofv3 JSON of AMD-AGI/TraceLens (tests/rocprof/908_results.json.gz, an
  MI350X training run): its metadata, strings and agents (the agents' `caches` and `io_links` lists
  emptied, 80 KB each), the first 12 kernel dispatches of each (thread, queue) and of the three
  busiest streams, and the kernel symbols they name. That file has no HIP API records, so HIP API records are
  ADDED here, in the shape rocprofiler-sdk's schema gives them (kind HIP_RUNTIME_API, the operation's
  index in strings.buffer_records, thread_id, correlation_id, start/end_timestamp): a hipLaunchKernel
  on the dispatching thread 6 us before each dispatch of thread 908, with the dispatch's correlation
  id, and two hipStreamSynchronize calls without dispatches.
- rocprofv3_nostream.json: the same, not compressed, without stream_id (rocprofiler-sdk before streams
  were recorded: lanes per queue).
- rocprof1.csv: the first 60 dispatches of amd/HPCTrainingExamples' rocprof v1 results.csv, as written.
- rocprof1.db: the first 60 rows of its results.db (KERN), copied row for row.
- nothing.json, nothing.csv: files of each format with nothing to import (a rocprofv3 process whose
  record arrays are empty but for two memory_copy records; a rocprof v1 CSV with its header only), which
  gapscope-cli must refuse.
The figures the tests expect are computed from these files by tests/corpus/rocprof_check.py, not here.

Usage: make_rocprof_fixtures.py CORPUS_OTHER_DIR OUT_DIR
"""
import collections
import gzip
import json
import os
import sqlite3
import sys

PER_GROUP = 12
ROWS_V1 = 60


def cut_rocprofv3(src, out_dir):
    with gzip.open(src, "rt") as f:
        doc = json.load(f)
    tool = doc["rocprofiler-sdk-tool"][0]
    for a in tool["agents"]:
        a["caches"] = []
        a["io_links"] = []
    dispatches = tool["buffer_records"]["kernel_dispatch"]
    by_group = collections.defaultdict(list)
    by_stream = collections.defaultdict(list)
    for r in dispatches:
        by_group[(r["thread_id"], r["dispatch_info"]["queue_id"]["handle"])].append(r)
        by_stream[r["stream_id"]["handle"]].append(r)
    keep = {id(r) for g in by_group.values() for r in g[:PER_GROUP]}
    for s in sorted(by_stream, key=lambda s: -len(by_stream[s]))[:3]:
        keep |= {id(r) for r in by_stream[s][:PER_GROUP]}
    kept = [r for r in dispatches if id(r) in keep]
    used = {r["dispatch_info"]["kernel_id"] for r in kept}
    tool["kernel_symbols"] = [k for k in tool["kernel_symbols"] if k["kernel_id"] in used or k["kernel_id"] == 0]
    tool["code_objects"] = tool["code_objects"][:2]
    tool["buffer_records"]["kernel_dispatch"] = kept
    # Added HIP API records (the real file has none): see the docstring.
    kinds = [k["kind"] for k in tool["strings"]["buffer_records"]]
    hip = kinds.index("HIP_RUNTIME_API")
    ops = tool["strings"]["buffer_records"][hip]["operations"]

    def api(name, tid, corr, start, dur):
        return {"size": 72, "kind": hip, "operation": ops.index(name), "thread_id": tid,
                "correlation_id": {"internal": corr, "external": 0}, "start_timestamp": start,
                "end_timestamp": start + dur}
    calls = [api("hipLaunchKernel", r["thread_id"], r["correlation_id"]["internal"], r["start_timestamp"] - 6000, 4000)
             for r in kept if r["thread_id"] == 908]
    last = max(r["end_timestamp"] for r in kept)
    calls += [api("hipStreamSynchronize", 908, 10_000_000 + i, last + 1000 * i, 500) for i in range(2)]
    tool["buffer_records"]["hip_api"] = calls
    with open(os.path.join(out_dir, "rocprofv3.json.gz"), "wb") as raw:  # mtime 0: the same bytes every run
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as f:
            f.write(json.dumps(doc, separators=(",", ":")).encode())
    for r in kept:
        del r["stream_id"]
    with open(os.path.join(out_dir, "rocprofv3_nostream.json"), "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    empty = {"metadata": tool["metadata"], "agents": tool["agents"][:3], "kernel_symbols": [],
             "buffer_records": {"kernel_dispatch": [], "hip_api": [], "memory_copy": [{}, {}]}}
    with open(os.path.join(out_dir, "nothing.json"), "w") as f:
        json.dump({"rocprofiler-sdk-tool": [empty]}, f, separators=(",", ":"))
    return len(kept), len(calls)


def cut_rocprof1(csv_src, db_src, out_dir):
    with open(csv_src, "rb") as f:
        lines = f.read().split(b"\n")
    with open(os.path.join(out_dir, "rocprof1.csv"), "wb") as f:
        f.write(b"\n".join(lines[:ROWS_V1 + 1]) + b"\n")
    with open(os.path.join(out_dir, "nothing.csv"), "wb") as f:
        f.write(lines[0] + b"\n")
    out = os.path.join(out_dir, "rocprof1.db")
    if os.path.exists(out):
        os.remove(out)
    src = sqlite3.connect("file:%s?mode=ro" % db_src, uri=True)
    (schema,) = src.execute("SELECT sql FROM sqlite_master WHERE name = 'KERN'").fetchone()
    rows = src.execute('SELECT * FROM KERN ORDER BY "Index" LIMIT %d' % ROWS_V1).fetchall()
    dst = sqlite3.connect(out)
    dst.execute(schema)
    dst.executemany("INSERT INTO KERN VALUES (%s)" % ",".join("?" * len(rows[0])), rows)
    dst.commit()
    dst.close()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    corpus, out = sys.argv[1:]
    os.makedirs(out, exist_ok=True)
    n, calls = cut_rocprofv3(os.path.join(corpus, "tracelens_rocprofv3_908_results.json.gz"), out)
    cut_rocprof1(os.path.join(corpus, "hpctraining_rocprof1_results.csv"),
                 os.path.join(corpus, "hpctraining_rocprof1_results.db"), out)
    print("wrote %s: rocprofv3 (%d dispatches, %d HIP API calls), rocprof v1 (%d rows)" % (out, n, calls, ROWS_V1))


if __name__ == "__main__":
    main()
