#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Re-makes the README screenshots with the viewer's headless export (no display needed).
# Usage: docs/screenshots/make.sh [BUILD_DIR] [TRACE] [STEP] [RANGE]
#   BUILD_DIR  a build folder with the gapscope target (default: build/dev; built if missing)
#   TRACE      default: the bundled sample (the first resources/samples/*.gapscope)
#   STEP       the decode step of step.png (default: 3)
#   RANGE      the time window of range.png, from the trace start (default 160ms:162ms: 2 ms
#              inside step 3 of the bundled GLM-5 capture; pick another one for another trace)
# Writes docs/screenshots/step.png (one decode step on every rank, that step's waterfall of the
# critical rank) at 1920x1080 and step-1366x768.png (the same on a 1366x768 screen), and
# docs/screenshots/range.png (the range, its waterfall) at 1920x1080, and docs/screenshots/host.png
# (step 1 of a synth trace with CPU operators, Python frames and an injected 40 us host op, eager
# launches; rank 0's CPU thread flame and CUDA API row open) at 1920x1080.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build/dev}
TRACE=${2:-$(ls resources/samples/*.gapscope | head -n 1)}
STEP=${3:-3}
RANGE=${4:-160ms:162ms}
[ -x "$BUILD/app/gapscope" ] || cmake --build "$BUILD" --target gapscope
[ -x "$BUILD/app/gapscope-cli" ] || cmake --build "$BUILD" --target gapscope-cli
OUT=docs/screenshots
"$BUILD/app/gapscope" "$TRACE" --export-png "$OUT/step.png" --step "$STEP" --size 1920x1080
"$BUILD/app/gapscope" "$TRACE" --export-png "$OUT/step-1366x768.png" --step "$STEP" --size 1366x768
"$BUILD/app/gapscope" "$TRACE" --export-png "$OUT/range.png" --range "$RANGE" --size 1920x1080
HOST_DIR=$(mktemp -d)
trap 'rm -rf "$HOST_DIR"' EXIT
"$BUILD/app/gapscope-cli" synth -o "$HOST_DIR/host.gapscope" --mode eager --kernels-per-step 60 --steps 4 \
    --host-ops --inject-host-op-us 40
"$BUILD/app/gapscope" "$HOST_DIR/host.gapscope" --export-png "$OUT/host.png" --step 1 --size 1920x1080
ls -l "$OUT"/*.png
