#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Gap analysis of a 12M-kernel-event synth trace (8 ranks x 1000 steps x 1500 kernels): the analysis
# alone (median of 5 rounds, against a plain pass over the events measured in the same run), then
# `gapscope-cli analyze` end to end (read + analysis + output), median of 3 runs.
# Usage: tests/bench/bench_analysis.sh BUILD_DIR [RANKS STEPS KERNELS]
set -euo pipefail
BUILD=${1:?usage: bench_analysis.sh BUILD_DIR [ranks steps kernels]}
RANKS=${2:-8} STEPS=${3:-1000} KERNELS=${4:-1500}
CLI="$BUILD/app/gapscope-cli"
BIN="$BUILD/tests/bench/bench_analysis"
[ -x "$BIN" ] && [ -x "$CLI" ] || cmake --build "$BUILD" --target bench_analysis gapscope-cli
DATA="$BUILD/bench_data"
TRACE="$DATA/analysis_${RANKS}x${STEPS}x${KERNELS}.gapscope"
mkdir -p "$DATA"
if [ ! -s "$TRACE" ]; then
  echo "making $TRACE"
  "$CLI" synth --ranks "$RANKS" --steps "$STEPS" --kernels-per-step "$KERNELS" --seed 1 -o "$TRACE"
fi
"$BIN" "$TRACE" 5 "$(dirname "$0")/../analysis/kernelnames.tsv"
# Wall and CPU (user + sys) time, end to end, and of the read alone (`info --read full`: every event
# decoded, as analyze reads it), median of 3 each.
timed() {
  local walls=() cpus=() out
  for i in 1 2 3; do
    out=$( { TIMEFORMAT='%R %U %S'; time "$@" > /dev/null 2>&1; } 2>&1 | tail -1)
    walls+=("$(echo "$out" | awk '{print $1}')")
    cpus+=("$(echo "$out" | awk '{printf "%.2f", $2 + $3}')")
  done
  echo "wall $(printf '%s\n' "${walls[@]}" | sort -n | sed -n 2p) s (runs ${walls[*]}), CPU $(printf '%s\n' "${cpus[@]}" | sort -n | sed -n 2p) s"
}
echo "gapscope-cli analyze --json --no-steps (read included), median of 3: $(timed "$CLI" analyze "$TRACE" --json --no-steps)"
echo "gapscope-cli info --read full (the read alone), median of 3: $(timed "$CLI" info --read full "$TRACE")"
