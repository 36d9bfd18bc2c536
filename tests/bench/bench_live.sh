#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Live streaming: loopback throughput agent -> client decoder and -> the viewer's model (LiveFeed +
# Trace::appendFrom, Qt-free), kernel end -> visible latency
# through the replay mode, and the agent's peak memory. Prints a table (BENCHMARKS.md, Live streaming).
# Usage: tests/bench/bench_live.sh BUILD_DIR
set -euo pipefail
BUILD=${1:?usage: bench_live.sh BUILD_DIR}
BIN="$BUILD/tests/bench/bench_live"
[ -x "$BIN" ] || cmake --build "$BUILD" --target bench_live gapscope-agent
"$BIN"
