#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Independent totals of a Kineto trace (.json or .json.gz), computed with Python's json module, for the
importer tests to compare against. Writes <file>.totals.json next to each file given (or prints with -).

Counts per "ph:cat", the kernel / memop / API / range counts the importer should produce, and the summed
kernel time in ns.  Usage: fixture_totals.py [-] FILE...
"""
import gzip
import json
import sys


def totals(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    counts = {}
    kernel_ns = 0.0
    for e in doc.get("traceEvents", []):
        key = "%s:%s" % (e.get("ph", ""), e.get("cat", ""))
        counts[key] = counts.get(key, 0) + 1
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            kernel_ns += float(e.get("dur", 0)) * 1000.0
    x = lambda c: counts.get("X:" + c, 0)
    dist = doc.get("distributedInfo") or {}
    return {
        "counts": dict(sorted(counts.items())),
        "kernel_count": x("kernel"),
        "kernel_total_ns": round(kernel_ns),
        "memcpy_count": x("gpu_memcpy"),
        "memset_count": x("gpu_memset"),
        "api_count": x("cuda_runtime") + x("cuda_driver"),
        "range_count": x("user_annotation") + x("gpu_user_annotation"),  # cpu_op / python_function: skipped
        "collective_count": sum(1 for e in doc.get("traceEvents", [])
                                if e.get("cat") == "kernel" and "Collective name" in e.get("args", {})),
        "rank": dist.get("rank"),
        "world_size": dist.get("world_size"),
        "base_time_ns": doc.get("baseTimeNanoseconds"),
        "devices": len(doc.get("deviceProperties", [])),
    }


def main():
    to_stdout = "-" in sys.argv[1:]
    for path in (a for a in sys.argv[1:] if a != "-"):
        t = totals(path)
        if to_stdout:
            print(json.dumps(t, sort_keys=True))
            continue
        out = path[:-3] if path.endswith(".gz") else path
        out = (out[:-5] if out.endswith(".json") else out) + ".totals.json"
        with open(out, "w") as f:
            json.dump(t, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
