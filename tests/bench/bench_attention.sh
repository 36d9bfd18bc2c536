#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Decode attention alone on the GPU box: tensor-core and CUDA-core kernels at several split counts
# against a plain read of the KV bytes, for the default shape (qwen3-30b-a3b, TP2, 4096 rows) and
# its FP8 cache. Prints tables; exits 77 without a GPU.
# Usage: tests/bench/bench_attention.sh BUILD_DIR [bench_attention args...]
set -euo pipefail
BUILD=${1:?usage: bench_attention.sh BUILD_DIR [args...]}
shift
BIN="$BUILD/tests/bench/bench_attention"
[ -x "$BIN" ] || cmake --build "$BUILD" --target bench_attention
if [ $# -gt 0 ]; then exec "$BIN" "$@"; fi
"$BIN"
echo
"$BIN" --fp8
echo
"$BIN" --context 32768
