#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two builds on the same synth trace, runs interleaved (base, new, base, new, ...) so that both see
# the same machine load: gapscope-cli info (the read), summary (tables with own time) and analyze
# (read + gap analysis), median wall and CPU (user + sys) of RUNS runs each, and new/base.
# Usage: tests/bench/compare_builds.sh BASE_BUILD NEW_BUILD [RANKS STEPS KERNELS [RUNS]]
set -euo pipefail
BASE=${1:?usage: compare_builds.sh BASE_BUILD NEW_BUILD [ranks steps kernels [runs]]}
NEW=${2:?usage: compare_builds.sh BASE_BUILD NEW_BUILD [ranks steps kernels [runs]]}
RANKS=${3:-8} STEPS=${4:-200} KERNELS=${5:-1500} RUNS=${6:-5}
DATA="$NEW/bench_data"
TRACE="$DATA/compare_${RANKS}x${STEPS}x${KERNELS}.gapscope"
mkdir -p "$DATA"
[ -s "$TRACE" ] || "$BASE/app/gapscope-cli" synth --ranks "$RANKS" --steps "$STEPS" --kernels-per-step "$KERNELS" \
  --seed 1 -o "$TRACE"
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
one() { # prints "wall cpu" of one run
  { TIMEFORMAT='%R %U %S'; time "$@" > /dev/null 2>&1; } 2>&1 | tail -1 | awk '{ printf "%s %.3f\n", $1, $2 + $3 }'
}
echo "trace: $TRACE ($RANKS ranks x $STEPS steps x $KERNELS kernels), $RUNS runs each, interleaved"
printf '%-28s %12s %12s %12s %12s %8s\n' command "base wall s" "new wall s" "base cpu s" "new cpu s" new/base
for cmd in "info" "summary" "analyze --json --no-steps"; do
  bw=() nw=() bc=() nc=()
  for ((i = 0; i < RUNS; i++)); do
    read -r w c < <(one "$BASE/app/gapscope-cli" $cmd "$TRACE"); bw+=("$w"); bc+=("$c")
    read -r w c < <(one "$NEW/app/gapscope-cli" $cmd "$TRACE"); nw+=("$w"); nc+=("$c")
  done
  mbw=$(printf '%s\n' "${bw[@]}" | median) mnw=$(printf '%s\n' "${nw[@]}" | median)
  mbc=$(printf '%s\n' "${bc[@]}" | median) mnc=$(printf '%s\n' "${nc[@]}" | median)
  printf '%-28s %12s %12s %12s %12s %8.3f\n' "$cmd" "$mbw" "$mnw" "$mbc" "$mnc" "$(echo "$mnc / $mbc" | bc -l)"
done
