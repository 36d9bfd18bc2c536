#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `gapscope-cli diff A B` of two 12M-kernel-event synth traces (8 ranks x 1000 steps x 1500 kernels,
# B with a host gap injected) against `gapscope-cli analyze A` of one, both end to end (read +
# analysis + output, --json), median of 3 runs each, runs alternated; prints the ratio (target <= 2).
# Usage: tests/bench/bench_diff.sh BUILD_DIR [RANKS STEPS KERNELS]
set -euo pipefail
BUILD=${1:?usage: bench_diff.sh BUILD_DIR [ranks steps kernels]}
RANKS=${2:-8} STEPS=${3:-1000} KERNELS=${4:-1500}
CLI="$BUILD/app/gapscope-cli"
[ -x "$CLI" ] || cmake --build "$BUILD" --target gapscope-cli
DATA="$BUILD/bench_data"
A="$DATA/analysis_${RANKS}x${STEPS}x${KERNELS}.gapscope" # the same file as bench_analysis.sh
B="$DATA/diff_b_${RANKS}x${STEPS}x${KERNELS}.gapscope"
mkdir -p "$DATA"
[ -s "$A" ] || "$CLI" synth --ranks "$RANKS" --steps "$STEPS" --kernels-per-step "$KERNELS" --seed 1 -o "$A"
[ -s "$B" ] || "$CLI" synth --ranks "$RANKS" --steps "$STEPS" --kernels-per-step "$KERNELS" --seed 1 \
  --inject-host-gap-us 100 -o "$B"
# One run: "WALL CPU" in seconds (CPU = user + sys, less sensitive to a loaded machine).
timed() {
  local out
  out=$( { TIMEFORMAT='%R %U %S'; time "$@" > /dev/null 2>&1; } 2>&1 | tail -1)
  echo "$out" | awk '{ printf "%s %.2f\n", $1, $2 + $3 }'
}
aw=() ac=() dw=() dc=()
for i in 1 2 3; do
  read -r w c < <(timed "$CLI" analyze --json --no-steps "$A"); aw+=("$w"); ac+=("$c")
  read -r w c < <(timed "$CLI" diff --json "$A" "$B"); dw+=("$w"); dc+=("$c")
done
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
ratio() { awk -v d="$1" -v a="$2" 'BEGIN { printf "%.2f", d / a }'; }
echo "gapscope-cli analyze --json --no-steps A, median of 3: wall $(median "${aw[@]}") s (runs ${aw[*]}), CPU $(median "${ac[@]}") s"
echo "gapscope-cli diff --json A B, median of 3: wall $(median "${dw[@]}") s (runs ${dw[*]}), CPU $(median "${dc[@]}") s"
echo "ratio diff / analyze: wall $(ratio "$(median "${dw[@]}")" "$(median "${aw[@]}")"), CPU $(ratio "$(median "${dc[@]}")" "$(median "${ac[@]}")") (target <= 2)"
