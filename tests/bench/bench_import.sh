#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Importer benchmark: tests/bench/bench_import.sh BUILD_DIR
# Generates synthetic Kineto traces under BUILD_DIR/benchdata (not committed): a large one (12M trace
# events, about 6 GB), a small one (600k events) plus its gzip, and a kernels-only one (2M kernel
# events of about 550 bytes, for the kernel rate); imports each REPEAT times with
# bench_import (one process per run: wall time, CPU time, peak RSS) and runs Python's json.load baseline
# (bench_import_baseline.py) on the small file in the same run (json.load of 6 GB does not fit in this
# machine's memory). Prints medians as BENCHMARKS.md rows.
# Environment: BENCH_IMPORT_EVENTS (12000000), BENCH_IMPORT_SMALL_EVENTS (600000), BENCH_REPEAT (3).
set -euo pipefail
BUILD=$(cd "${1:?usage: bench_import.sh BUILD_DIR}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
BIN="$BUILD/tests/bench/bench_import"
[ -x "$BIN" ] || { echo "bench_import not built: cmake --build $BUILD --target bench_import" >&2; exit 1; }
DATA="$BUILD/benchdata"
BIG=${BENCH_IMPORT_EVENTS:-12000000}
SMALL=${BENCH_IMPORT_SMALL_EVENTS:-600000}
REPEAT=${BENCH_REPEAT:-3}
mkdir -p "$DATA"

gen() { # gen FILE EVENTS [generator options]
  [ -s "$1" ] && [ -s "$1.meta" ] && return 0
  echo "generating $1 ($2 events)" >&2
  local f=$1 n=$2; shift 2
  python3 "$HERE/gen_kineto.py" "$f" --events "$n" "$@" >"$f.meta"
}
gen "$DATA/kineto_big.json" "$BIG" --name-pad 800
gen "$DATA/kineto_small.json" "$SMALL" --name-pad 800
gen "$DATA/kineto_kernels.json" "${BENCH_IMPORT_KERNEL_EVENTS:-2000000}" --kernels-only
[ -s "$DATA/kineto_small.json.gz" ] || gzip -6 -c "$DATA/kineto_small.json" >"$DATA/kineto_small.json.gz"

runs() { # runs LABEL CMD... -> one JSON line per run in $DATA/LABEL.runs
  local label=$1; shift
  : >"$DATA/$label.runs"
  for _ in $(seq "$REPEAT"); do
    sync; "$@" >>"$DATA/$label.runs" 2>/dev/null
  done
}
runs python_small python3 "$HERE/bench_import_baseline.py" "$DATA/kineto_small.json"
runs ours_small "$BIN" "$DATA/kineto_small.json"
runs ours_small_gz "$BIN" "$DATA/kineto_small.json.gz"
runs ours_kernels "$BIN" "$DATA/kineto_kernels.json"
runs ours_big "$BIN" "$DATA/kineto_big.json"

python3 - "$DATA" <<'PY'
import json, statistics, sys, os
d = sys.argv[1]
def load(label):
    return [json.loads(l) for l in open(os.path.join(d, label + ".runs")) if l.strip()]
def med(rows, k):
    return statistics.median(r[k] for r in rows)
meta = {n: json.load(open(os.path.join(d, "kineto_%s.json.meta" % n))) for n in ("big", "small", "kernels")}
py = load("python_small")
print("| run | file | trace events | time (median) | CPU time | throughput | trace events/s | kernel events/s | peak RSS | peak bytes / trace event |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
ps = med(py, "seconds")
print("| Python json.load + walk | small .json | %d | %.2f s | - | %.0f MB/s | %.2fM | %.2fM | %.0f MB | %.0f |" % (
    meta["small"]["events"], ps, meta["small"]["bytes"] / ps / 1e6, meta["small"]["events"] / ps / 1e6,
    meta["small"]["kernels"] / ps / 1e6, med(py, "peak_rss_bytes") / 1e6, med(py, "peak_rss_bytes") / meta["small"]["events"]))
for label, name, m in (("ours_small", "small .json", meta["small"]), ("ours_small_gz", "small .json.gz", meta["small"]),
                       ("ours_kernels", "kernels-only .json", meta["kernels"]), ("ours_big", "big .json", meta["big"])):
    r = load(label)
    s = med(r, "seconds")
    size = os.path.getsize(os.path.join(d, "kineto_small.json.gz")) if label.endswith("gz") else m["bytes"]
    print("| gapscope importTraces | %s | %d | %.2f s | %.2f s | %.0f MB/s | %.2fM | %.2fM | %.0f MB | %.1f |" % (
        name, m["events"], s, med(r, "cpu_seconds"), m["bytes"] / s / 1e6, m["events"] / s / 1e6,
        m["kernels"] / s / 1e6, med(r, "peak_rss_bytes") / 1e6, med(r, "peak_rss_bytes") / m["events"]))
small = load("ours_small")
print()
print("speed-up over json.load on the same %d MB file: %.1fx (ours %.2f s, Python %.2f s); memory %.0fx less" % (
    meta["small"]["bytes"] / 1e6, ps / med(small, "seconds"), med(small, "seconds"), ps,
    med(py, "peak_rss_bytes") / med(small, "peak_rss_bytes")))
print("big file: %.2f GB, %d trace events (%d kernels), imported events %d" % (
    meta["big"]["bytes"] / 1e9, meta["big"]["events"], meta["big"]["kernels"], load("ours_big")[0]["events"]))
PY
