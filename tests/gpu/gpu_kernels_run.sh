#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Device driver for the kernels area: builds (or takes prebuilt binaries from $KERNELS_BIN),
# self-checks every kernel, calibrates the box twice, runs the decode sim clean and with each
# pathology, and leaves everything under $OUT/kernels.tar.gz with a short table last.
#   tests/gpu/gpu_kernels_run.sh [learn|measure]
set -uo pipefail
phase=${1:-measure}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-$(mktemp -d)}
work=$(mktemp -d)
mkdir -p "$work/res"
cd "$(dirname "$0")/../.."
root=$(pwd)
export LD_LIBRARY_PATH=${KERNELS_BIN:+$root/$KERNELS_BIN/lib:}/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}

bin=""
if [ -n "${KERNELS_BIN:-}" ] && "$root/$KERNELS_BIN/gapscope-decode-sim" --help >/dev/null 2>"$work/res/prebuilt.err"; then
  bin=$root/$KERNELS_BIN
  echo "using prebuilt binaries in $KERNELS_BIN"
else
  [ -n "${KERNELS_BIN:-}" ] && { echo "prebuilt binaries do not run here:"; cat "$work/res/prebuilt.err"; }
  t0=$(date +%s)
  cmake --preset gpu -DGAPSCOPE_BUILD_TESTS=OFF -DGAPSCOPE_BUILD_BENCH=OFF >"$work/res/configure.log" 2>&1 \
    && cmake --build build/gpu --target gapscope-decode-sim gapscope-calibrate -j16 >"$work/res/build.log" 2>&1 \
    || { tail -40 "$work/res/configure.log" "$work/res/build.log"; exit 1; }
  echo "built in $(( $(date +%s) - t0 )) s"
  bin=$root/build/gpu/kernels
fi
KERNELS_SIM=$bin/gapscope-decode-sim KERNELS_CAL=$bin/gapscope-calibrate KERNELS_CLI=${KERNELS_CLI:-$([ -x "$bin/gapscope-cli" ] && echo "$bin/gapscope-cli" || echo "$root/build/gpu/app/gapscope-cli")} \
  tests/gpu/kernels.sh "$bin" "$work/res" "$phase"
rc=$?
tar -C "$work" -czf "$OUT/kernels.tar.gz" res
cat "$work/res/table.txt" 2>/dev/null
exit $rc
