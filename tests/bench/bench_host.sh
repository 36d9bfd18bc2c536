#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Host events: memory per event with CPU operators imported, and import speed on a file without any
# (kernels only) against a baseline build.
# Usage: tests/bench/bench_host.sh BUILD_DIR [BASELINE_BUILD_DIR]
#   Generates under BUILD_DIR/benchdata a Kineto file with cpu_op ranges around every launch
#   (gen_kineto.py, BENCH_HOST_EVENTS trace events, default 600000) and a kernels-only one
#   (BENCH_HOST_KERNELS kernels, default 1000000). Prints Trace::memoryBytes() per event of the first
#   (host events included) and, per file, the median wall and CPU time of BENCH_REPEAT (5) imports
#   with bench_import; with a baseline build (its tests/bench/bench_import), runs alternate between the
#   two and the ratio of the medians is printed.
set -euo pipefail
BUILD=$(cd "${1:?usage: bench_host.sh BUILD_DIR [BASELINE_BUILD_DIR]}" && pwd)
BASE=${2:-}
HERE=$(cd "$(dirname "$0")" && pwd)
BIN="$BUILD/tests/bench/bench_import"
[ -x "$BIN" ] || { echo "bench_import not built: cmake --build $BUILD --target bench_import" >&2; exit 1; }
[ -z "$BASE" ] || [ -x "$BASE/tests/bench/bench_import" ] || { echo "no $BASE/tests/bench/bench_import" >&2; exit 1; }
DATA="$BUILD/benchdata"
REPEAT=${BENCH_REPEAT:-5}
mkdir -p "$DATA"
HOSTF="$DATA/host_ops.json"
KERNF="$DATA/host_kernels_only.json"
[ -s "$HOSTF" ] || python3 "$HERE/gen_kineto.py" "$HOSTF" --events "${BENCH_HOST_EVENTS:-600000}" >/dev/null
[ -s "$KERNF" ] || python3 "$HERE/gen_kineto.py" "$KERNF" --events "${BENCH_HOST_KERNELS:-1000000}" --kernels-only >/dev/null
OUT="$DATA/host_runs.jsonl"
: >"$OUT"
for _ in $(seq "$REPEAT"); do
  for f in "$HOSTF" "$KERNF"; do
    "$BIN" "$f" 2>/dev/null | sed "s|^{|{\"who\": \"this\", \"file\": \"$(basename "$f")\", |" >>"$OUT"
    if [ -n "$BASE" ] && [ "$f" = "$KERNF" ]; then
      "$BASE/tests/bench/bench_import" "$f" 2>/dev/null | sed "s|^{|{\"who\": \"base\", \"file\": \"$(basename "$f")\", |" >>"$OUT"
    fi
  done
done
python3 - "$OUT" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def pick(who, f):
    return [r for r in rows if r["who"] == who and r["file"] == f]
h = pick("this", "host_ops.json")
r = h[0]
print("host_ops.json: %d events (%d kernels, %d API, %d ranges, %d host), Trace::memoryBytes() %d = %.2f B/event" % (
    r["events"], r["kernels"], r["api"], r["ranges"], r["events"] - r["kernels"] - r["memops"] - r["api"] - r["ranges"],
    r["trace_bytes"], r["trace_bytes"] / r["events"]))
for who in ("this", "base"):
    for f in ("host_ops.json", "host_kernels_only.json"):
        x = pick(who, f)
        if x:
            print("%s %s: wall median %.3f s (%s), CPU median %.3f s" % (who, f, statistics.median(a["seconds"] for a in x),
                  ", ".join("%.3f" % a["seconds"] for a in x), statistics.median(a["cpu_seconds"] for a in x)))
t, b = pick("this", "host_kernels_only.json"), pick("base", "host_kernels_only.json")
if b:
    mt, mb = statistics.median(a["seconds"] for a in t), statistics.median(a["seconds"] for a in b)
    ct, cb = statistics.median(a["cpu_seconds"] for a in t), statistics.median(a["cpu_seconds"] for a in b)
    print("kernels-only import, this / baseline: wall %.3f (%.3f s / %.3f s), CPU %.3f" % (mt / mb, mt, mb, ct / cb))
PY
