#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a capture costs the injection library's own thread per record (convert, place, encode,
# serialize), graph and eager loops, against converting only; prints a table.
# Usage: tests/bench/bench_capture.sh BUILD_DIR
set -euo pipefail
BUILD=${1:?usage: bench_capture.sh BUILD_DIR}
BIN="$BUILD/tests/bench/bench_capture"
[ -x "$BIN" ] || cmake --build "$BUILD" --target bench_capture
"$BIN"
