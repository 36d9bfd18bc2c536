#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Viewer benchmark on the 12M-event 8-rank synth trace (generated once with gapscope-cli synth).
# Usage: tests/bench/bench_timeline.sh BUILD_DIR [TRACE]
set -euo pipefail
BUILD=${1:?usage: bench_timeline.sh BUILD_DIR [TRACE]}
TRACE=${2:-$BUILD/bench-data/synth-8x1000x1500.gapscope}
for t in bench_timeline gapscope-cli; do
  [ -x "$BUILD/tests/bench/$t" ] || [ -x "$BUILD/app/$t" ] || cmake --build "$BUILD" --target "$t"
done
if [ ! -f "$TRACE" ]; then
  mkdir -p "$(dirname "$TRACE")"
  "$BUILD/app/gapscope-cli" synth --ranks 8 --steps 1000 --kernels-per-step 1500 --seed 1 -o "$TRACE"
fi
QT_QPA_PLATFORM=offscreen "$BUILD/tests/bench/bench_timeline" "$TRACE"
