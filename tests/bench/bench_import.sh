#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Importer benchmark: tests/bench/bench_import.sh BUILD_DIR
# Generates synthetic Kineto traces under BUILD_DIR/benchdata (not committed): a large one (12M trace
# events, about 6 GB), a small one (600k events) plus its gzip, and a kernels-only one (2M kernel
# events of about 790 bytes, for the kernel rate); imports each REPEAT times with
# bench_import (one process per run: wall time, CPU time, peak RSS; the load average before each run) and
# runs Python's json.load baseline (bench_import_baseline.py) on the small and the kernels-only files in the
# same run (json.load of the 6 GB file needs about 25 GB: it does not fit in this machine's 24 GiB).
# Prints medians as BENCHMARKS.md rows. Delete BUILD_DIR/benchdata afterwards (about 8 GB).
# Environment: BENCH_IMPORT_EVENTS (12000000), BENCH_IMPORT_SMALL_EVENTS (600000), BENCH_REPEAT (3),
# BENCH_PY_LARGE_REPEAT (runs of json.load on the kernels-only file; BENCH_REPEAT).
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

runs() { # runs LABEL REPEAT CMD... -> one JSON line per run in $DATA/LABEL.runs, with the load average
  local label=$1 n=$2; shift 2
  : >"$DATA/$label.runs"
  for _ in $(seq "$n"); do
    sync
    local load; load=$(cut -d' ' -f1 /proc/loadavg)
    "$@" 2>/dev/null | sed "s/}\$/, \"load\": $load}/" >>"$DATA/$label.runs"
  done
}
echo "start: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores" >&2
runs ours_floor 1 "$BIN" "$HERE/../import/fixtures/kineto/rank0.json.gz" # the process alone (binary, libraries)
runs python_small "$REPEAT" python3 "$HERE/bench_import_baseline.py" "$DATA/kineto_small.json"
runs ours_small "$REPEAT" "$BIN" "$DATA/kineto_small.json"
runs ours_small_gz "$REPEAT" "$BIN" "$DATA/kineto_small.json.gz"
runs ours_kernels "$REPEAT" "$BIN" "$DATA/kineto_kernels.json"
runs ours_big "$REPEAT" "$BIN" "$DATA/kineto_big.json"
# json.load needs about 4x the file in memory: the kernels-only file (1.6 GB) is the largest here that fits.
runs python_kernels "${BENCH_PY_LARGE_REPEAT:-$REPEAT}" python3 "$HERE/bench_import_baseline.py" "$DATA/kineto_kernels.json"
echo "end: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2

python3 - "$DATA" <<'PY'
import json, statistics, sys, os
d = sys.argv[1]
def load(label):
    return [json.loads(l) for l in open(os.path.join(d, label + ".runs")) if l.strip()]
def med(rows, k):
    return statistics.median(r[k] for r in rows)
meta = {n: json.load(open(os.path.join(d, "kineto_%s.json.meta" % n))) for n in ("big", "small", "kernels")}
floor = load("ours_floor")[0]["peak_rss_bytes"]
print("| run | file | trace events | wall (median) | CPU time | load avg | throughput (wall) | trace events/s | kernel events/s | kernel events/CPU-s | peak RSS | bytes / trace event | bytes / imported event (above the %.0f MB process floor) |" % (floor / 1e6))
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
rows = (("python_small", "Python json.load + walk", "small .json", meta["small"]),
        ("python_kernels", "Python json.load + walk", "kernels-only .json", meta["kernels"]),
        ("ours_small", "gapscope importTraces", "small .json", meta["small"]),
        ("ours_small_gz", "gapscope importTraces", "small .json.gz", meta["small"]),
        ("ours_kernels", "gapscope importTraces", "kernels-only .json", meta["kernels"]),
        ("ours_big", "gapscope importTraces", "big .json", meta["big"]))
for label, who, name, m in rows:
    r = load(label)
    s, c = med(r, "seconds"), med(r, "cpu_seconds")
    size = os.path.getsize(os.path.join(d, "kineto_small.json.gz")) if label.endswith("gz") else m["bytes"]
    peak = med(r, "peak_rss_bytes")
    per_imported = "%.1f" % ((peak - floor) / r[0]["events"]) if label.startswith("ours") else "-"
    print("| %s | %s (%.2f GB) | %d | %.2f s (%s) | %.2f s | %s | %.0f MB/s | %.2fM | %.2fM | %.2fM | %.0f MB | %.1f | %s |" % (
        who, name, size / 1e9, m["events"], s, ", ".join("%.2f" % x["seconds"] for x in r), c,
        "/".join("%.1f" % x["load"] for x in r), size / s / 1e6, m["events"] / s / 1e6, m["kernels"] / s / 1e6,
        m["kernels"] / c / 1e6, peak / 1e6, peak / m["events"], per_imported))
print()
for f, py, ours in (("small", "python_small", "ours_small"), ("kernels", "python_kernels", "ours_kernels")):
    p, o = load(py), load(ours)
    print("same file (%s, %.0f MB): gapscope %.1fx faster in wall time (%.2f s vs %.2f s), %.1fx less CPU time "
          "(%.2f s vs %.2f s), %.0fx less peak memory" % (
              f, meta[f]["bytes"] / 1e6, med(p, "seconds") / med(o, "seconds"), med(o, "seconds"), med(p, "seconds"),
              med(p, "cpu_seconds") / med(o, "cpu_seconds"), med(o, "cpu_seconds"), med(p, "cpu_seconds"),
              med(p, "peak_rss_bytes") / med(o, "peak_rss_bytes")))
b = load("ours_big")[0]
print("big file: %.2f GB, %d trace events (%d kernels), imported events %d (%d kernels, %d API calls)" % (
    meta["big"]["bytes"] / 1e9, meta["big"]["events"], meta["big"]["kernels"], b["events"], b["kernels"], b["api"]))
PY
