#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The two exports side by side on synth --ranks 8 --steps 1000 --kernels-per-step 1500 (12M kernels):
# gapscope-cli convert to a Perfetto trace (.pftrace) and to Chrome trace JSON (.json). Per export,
# the median of RUNS runs of: bytes per kernel, events per second (wall, as convert reports the
# export alone, reading excluded) and CPU seconds. The outputs are deleted after each run.
# Usage: tests/bench/bench_export.sh BUILD_DIR [RUNS (default 3)] [JSON_RUNS (default RUNS)]
#   env: STEPS (default 1000) for a quicker run, WORK (default a temporary directory).
set -euo pipefail
BUILD=${1:?usage: bench_export.sh BUILD_DIR [RUNS] [JSON_RUNS]}
RUNS=${2:-3}
JSON_RUNS=${3:-$RUNS}
STEPS=${STEPS:-1000}
CLI="$BUILD/app/gapscope-cli"
[ -x "$CLI" ] || cmake --build "$BUILD" --target gapscope-cli
WORK=${WORK:-$(mktemp -d)}
trap 'rm -f "$WORK"/bench_export.pftrace "$WORK"/bench_export.json' EXIT
TRACE="$WORK/bench_export_${STEPS}.gapscope"
[ -f "$TRACE" ] || "$CLI" synth --ranks 8 --steps "$STEPS" --kernels-per-step 1500 -o "$TRACE" >/dev/null 2>&1

# One run: prints "bytes_per_kernel events_per_s cpu_s wall_s" from convert's "wrote" line.
run() {
    local out=$1
    shift
    "$CLI" convert "$@" "$TRACE" "$out" 2>&1 >/dev/null | awk '/^wrote/ {
        for (i = 1; i <= NF; i++) {
            if ($i == "per" && $(i+1) == "kernel)") { b = $(i-1); sub(/\(/, "", b) }
            if ($i == "in" && $(i+2) == "s") w = $(i+1)
            if ($i == "CPU") c = $(i+1)
            if ($(i+1) == "events") n = $i
        }
        printf "%s %.0f %s %s\n", b, (w > 0 ? n / w : 0), c, w }'
    rm -f "$out"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

report() {
    local name=$1 file=$2
    printf "%-24s bytes/kernel %8s   events/s %10s   CPU s %7s   wall s %7s   (median of %d)\n" "$name" \
        "$(cut -d' ' -f1 "$file" | median)" "$(cut -d' ' -f2 "$file" | median)" \
        "$(cut -d' ' -f3 "$file" | median)" "$(cut -d' ' -f4 "$file" | median)" "$(wc -l <"$file")"
}

PF="$WORK/pf.runs" JS="$WORK/json.runs"
: >"$PF"
: >"$JS"
for _ in $(seq "$RUNS"); do run "$WORK/bench_export.pftrace" --no-waterfall >>"$PF"; done
for _ in $(seq "$JSON_RUNS"); do run "$WORK/bench_export.json" >>"$JS"; done
echo "export of $TRACE ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
report "Perfetto (.pftrace)" "$PF"
[ "$JSON_RUNS" -gt 0 ] && report "Chrome JSON (.json)" "$JS"
