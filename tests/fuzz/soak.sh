#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs every libFuzzer target of a build for longer than ctest does, each from its seeds and a fresh
# corpus, with the limits ctest uses, and prints one line per target. A crash input is kept under
# OUT/<target>/ and is worth adding to the target's seed folder once fixed.
#   tests/fuzz/soak.sh [BUILD_DIR] [SECONDS_PER_TARGET] [OUT]
set -euo pipefail
build=${1:-build/dev}
seconds=${2:-300}
out=${3:-/tmp/gapscope-fuzz-soak}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
failed=0
# ctest's own command line for each fuzzer names its seed folder and limits.
while IFS= read -r line; do
  name=${line%% *}
  cmd=${line#* }
  bin=$(sed -n "s/.*exec '\([^']*\)'.*/\1/p" <<<"$cmd")
  seeds=$(sed -n "s/.*' '\([^']*\)'\"\?$/\1/p" <<<"$cmd")
  rss=$(sed -n 's/.*-rss_limit_mb=\([0-9]*\).*/\1/p' <<<"$cmd")
  [[ -x $bin && -d $seeds ]] || { echo "$name: not a libFuzzer build, skipped"; continue; }
  dir=$out/$name
  rm -rf "$dir" && mkdir -p "$dir/corpus"
  if (cd "$dir" && ASAN_OPTIONS=detect_leaks=1 "$bin" -max_total_time="$seconds" -rss_limit_mb="${rss:-2048}" \
        -timeout=10 -print_final_stats=1 corpus "$seeds" >log 2>&1); then
    echo "$name: ok, $(grep -o 'stat::number_of_executed_units: [0-9]*' "$dir/log" | grep -o '[0-9]*$' || echo '?') runs"
  else
    failed=1
    echo "$name: FAILED, $(ls "$dir" | grep -E '^(crash|leak|timeout|oom)-' | head -1) (log: $dir/log)"
  fi
done < <(ctest --test-dir "$build" -L fuzz -N -V 2>/dev/null \
  | sed -n 's/^[0-9]*: Test command: //p; s/^ *Test *#[0-9]*: \(fuzz_[a-z_]*\)$/NAME \1/p' \
  | paste -d' ' - - | sed -n 's/^\(.*\) NAME \(fuzz_[a-z_]*\)$/\2 \1/p')
exit $failed
