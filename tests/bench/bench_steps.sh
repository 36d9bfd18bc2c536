#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What finding steps adds to opening a trace, on the 12M-kernel synth trace of the other benchmarks
# (8 ranks x 1000 steps x 1500 kernels) and on the real HF generate() captures of tests/steps/fixtures.
# Usage: tests/bench/bench_steps.sh BUILD_DIR [RUNS]
set -euo pipefail
BUILD=${1:?usage: bench_steps.sh BUILD_DIR [RUNS]}
RUNS=${2:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
BIN="$BUILD/tests/bench/bench_steps"
[ -x "$BIN" ] || cmake --build "$BUILD" --target bench_steps gapscope-cli
DATA="$BUILD/bench_data"
TRACE="$DATA/compare_8x1000x1500.gapscope"
mkdir -p "$DATA"
[ -s "$TRACE" ] || "$BUILD/app/gapscope-cli" synth --ranks 8 --steps 1000 --kernels-per-step 1500 --seed 1 -o "$TRACE"
"$BIN" "$TRACE" "$RUNS"
for f in "$HERE"/../steps/fixtures/real_hf_*.json.gz; do
  "$BIN" "$f" "$RUNS"
done
