#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The trace format on synth --ranks 8 --steps 1000 --kernels-per-step 1500 (12M kernels): file size,
# Chrome JSON size, write and validate speed, memory after open, window queries. Prints a table.
# Usage: tests/bench/bench_format.sh BUILD_DIR [bench_format options, e.g. --steps 100 for a quick run]
set -euo pipefail
BUILD=${1:?usage: bench_format.sh BUILD_DIR [options]}
shift
BIN="$BUILD/tests/bench/bench_format"
[ -x "$BIN" ] || cmake --build "$BUILD" --target bench_format
"$BIN" "$@"
