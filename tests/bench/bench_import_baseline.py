#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Baseline for the importer benchmark: what a Python / pandas-based trace tool does first - json.load the
whole Kineto file (gzip-aware) and walk traceEvents once (kernel count, total kernel time).
Prints one JSON line: seconds (load + walk), CPU seconds of the process, events, kernels, peak RSS.
Usage: bench_import_baseline.py FILE
"""
import gzip
import json
import resource
import sys
import time


def main():
    path = sys.argv[1]
    t0 = time.perf_counter()
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    with (gzip.open(path, "rb") if gz else open(path, "rb")) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    kernels = 0
    kernel_us = 0.0
    for e in events:
        if e.get("cat") == "kernel":
            kernels += 1
            kernel_us += e.get("dur", 0)
    s = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"seconds": round(s, 3), "cpu_seconds": round(ru.ru_utime + ru.ru_stime, 3),
                      "events": len(events), "kernels": kernels, "kernel_us": round(kernel_us, 3),
                      "peak_rss_bytes": ru.ru_maxrss * 1024}))


if __name__ == "__main__":
    main()
