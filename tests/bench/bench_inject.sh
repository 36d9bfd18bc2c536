#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What the injection library costs the application's threads while idle (NVTX handlers per step);
# prints a table. Usage: tests/bench/bench_inject.sh BUILD_DIR
set -euo pipefail
BUILD=${1:?usage: bench_inject.sh BUILD_DIR}
BIN="$BUILD/tests/bench/bench_inject"
[ -x "$BIN" ] || cmake --build "$BUILD" --target bench_inject
"$BIN"
