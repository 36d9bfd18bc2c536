#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Times computeBudget (what the viewer calls on every edit) for the presets; prints a table.
# Usage: tests/bench/bench_budget.sh BUILD_DIR
set -euo pipefail
BUILD=${1:?usage: bench_budget.sh BUILD_DIR}
BIN="$BUILD/tests/bench/bench_budget"
[ -x "$BIN" ] || cmake --build "$BUILD" --target bench_budget
"$BIN"
