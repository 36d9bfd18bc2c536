#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A short kernels loop on the GPU box, for tuning between full runs (repo root):
#   tests/gpu/kernels_quick.sh [CLEAN_RUNS]
# Builds only the sim, the calibrator, the CLI and the attention benchmark (gpu preset), then: the
# sim's self-check, tests/bench/bench_attention.sh, two calibrations (do they agree), the budget
# from the first, and CLEAN_RUNS (default 3) clean graph runs judged against the budget. Rows as run_all.sh prints them; logs in
# $OUT/quick (or /tmp/gapscope-quick).
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 GAPSCOPE_RESOURCES=$PWD/resources
R=${OUT:-/tmp/gapscope-quick}/quick
mkdir -p "$R"
T=$R/table.txt
: >"$T"
here=tests/gpu
t0=$(date +%s)
if ! { cmake --preset gpu -DGAPSCOPE_BUILD_BENCH=ON && cmake --build build/gpu -j"$(nproc)" --target gapscope-decode-sim \
  gapscope-calibrate gapscope-cli bench_attention; } >"$R/build.log" 2>&1; then
  tail -30 "$R/build.log"
  exit 1
fi
echo "build | $(( $(date +%s) - t0 )) s | builds | PASS" >>"$T"
gpus=$(nvidia-smi -L | wc -l)
sim=build/gpu/kernels/gapscope-decode-sim
timeout 300 "$sim" --check --tp "$gpus" >"$R/selfcheck.log" 2>&1
rc=$?
echo "self-check ($gpus GPUs) | $(tail -1 "$R/selfcheck.log") | all pass | $([ $rc = 0 ] && echo PASS || echo FAIL)" >>"$T"
grep FAIL "$R/selfcheck.log" | head -20 >>"$R/failures.txt"
timeout 120 tests/bench/bench_attention.sh build/gpu >"$R/bench_attention.txt" 2>&1
python3 $here/kernels_eval.py attention "$R/bench_attention.txt" >>"$T"
for i in 1 2; do
  timeout 120 build/gpu/kernels/gapscope-calibrate --repeats 3 --output "$R/calib$i.json" >"$R/calib$i.log" 2>&1
done
python3 $here/kernels_eval.py calib "$R/calib1.json" "$R/calib2.json" | grep "two runs agree" >>"$T"
cp "$R/calib1.json" "$R/calib.json"
build/gpu/app/gapscope-cli budget --model qwen3-30b-a3b --hw "$R/calib.json" --tp "$gpus" --batch 1 --context 4096 \
  --json >"$R/budget.json" 2>"$R/budget.err"
budget=$(python3 $here/kernels_eval.py budget "$R/budget.json")
for i in $(seq "${1:-3}"); do
  timeout 120 "$sim" --model qwen3-30b-a3b --tp "$gpus" --batch 1 --context 4096 --steps 40 --warmup 5 \
    --profile "$R/calib.json" --mode graph --truth "$R/clean$i.json" >"$R/clean$i.log" 2>&1
  python3 $here/kernels_eval.py step "$R/clean$i.json" "clean step, graph, run $i" "$budget" >>"$T"
done
echo "total | $(( $(date +%s) - t0 )) s | | PASS" >>"$T"
cat "$R/failures.txt" 2>/dev/null
cat "$R/bench_attention.txt"
cut -c1-400 "$T"
