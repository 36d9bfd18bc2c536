#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Kernels area checks on the GPU box: tests/gpu/kernels.sh BUILD OUTDIR [learn|measure]
# BUILD is the build folder (binaries in BUILD/kernels, or given by $KERNELS_SIM / $KERNELS_CAL).
# Appends `check | measured | target | PASS/FAIL` rows to OUTDIR/table.txt; logs and JSON in OUTDIR.
set -uo pipefail
build=$1
res=$2
phase=${3:-measure}
mkdir -p "$res"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
here=$(cd "$(dirname "$0")" && pwd)
sim=${KERNELS_SIM:-$build/kernels/gapscope-decode-sim}
cal=${KERNELS_CAL:-$build/kernels/gapscope-calibrate}
cli=${KERNELS_CLI:-$build/app/gapscope-cli}
table=$res/table.txt
eval_py() { python3 "$here/kernels_eval.py" "$@" >>"$table" 2>>"$res/eval.err"; }
step_ms() { python3 "$here/kernels_eval.py" step_ms "$res/$1.json" 2>>"$res/eval.err"; } # rank 0's median step
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$gpus" -ge 1 ] || { echo "kernels: no GPU | 0 | >= 1 | FAIL" >>"$table"; exit 1; }
nvidia-smi >"$res/nvidia-smi.txt" 2>&1
nvidia-smi topo -m >>"$res/nvidia-smi.txt" 2>&1
fail=0

# 1. Every kernel against its CPU reference, NCCL across all GPUs.
if timeout 300 "$sim" --check --tp "$gpus" >"$res/selfcheck.log" 2>&1; then ok=PASS; else ok=FAIL; fail=1; fi
echo "kernels: self-check vs CPU reference ($gpus GPUs) | $(tail -1 "$res/selfcheck.log") | all pass | $ok" >>"$table"

# 1b. Decode attention alone: tensor-core and CUDA-core kernels against a plain read of the KV bytes
# (tests/bench/bench_attention.sh; the default shape, its FP8 cache, 32k rows).
if [ -x "$build/tests/bench/bench_attention" ]; then
  timeout 120 "$here/../bench/bench_attention.sh" "$build" >"$res/bench_attention.txt" 2>&1
  python3 "$here/kernels_eval.py" attention "$res/bench_attention.txt" >>"$table" 2>>"$res/eval.err"
fi

# 2. Calibration, twice (each run measures every figure 3 times).
for i in 1 2; do
  /usr/bin/time -f "%e s" -o "$res/calib$i.time" timeout 300 "$cal" --repeats 3 --output "$res/calib$i.json" \
    >"$res/calib$i.log" 2>&1 || fail=1
done
if [ -s "$res/calib1.json" ] && [ -s "$res/calib2.json" ]; then
  eval_py calib "$res/calib1.json" "$res/calib2.json"
else
  echo "calibrate: profile written | missing | two profiles | FAIL" >>"$table"
fi

# 3. Decode sim: clean steps (graph and eager), then one pathology at a time against the clean run.
model=${KERNELS_MODEL:-qwen3-30b-a3b}
ctx=${KERNELS_CONTEXT:-4096}
steps=$([ "$phase" = learn ] && echo 15 || echo 40)
base=(--model "$model" --tp "$gpus" --batch 1 --context "$ctx" --steps "$steps" --warmup 5)
[ -s "$res/calib1.json" ] && base+=(--profile "$res/calib1.json")
run_sim() { # name, extra args...
  local name=$1
  shift
  timeout 300 "$sim" "${base[@]}" --truth "$res/$name.json" "$@" >"$res/$name.log" 2>&1 || {
    fail=1
    echo "sim: $name | $(tail -1 "$res/$name.log") | runs | FAIL" >>"$table"
    return 1
  }
}
budget=""
if [ -x "$cli" ] && [ -s "$res/calib1.json" ]; then
  "$cli" budget --model "$model" --hw "$res/calib1.json" --tp "$gpus" --batch 1 --context "$ctx" --json \
    >"$res/budget.json" 2>"$res/budget.err" && budget=$(python3 "$here/kernels_eval.py" budget "$res/budget.json")
fi
if run_sim clean_graph --mode graph; then eval_py step "$res/clean_graph.json" "clean step, graph" "$budget"; fi
if run_sim clean_eager --mode eager; then eval_py step "$res/clean_eager.json" "clean step, eager"; fi
# Decode attention's KV splits (the default takes about two blocks per SM): the clean graph step at
# a few fixed counts, for tuning the attention kernel.
splits_row=""
for n in 16 32 128; do
  run_sim "attn_splits_$n" --mode graph --attention-splits "$n" && splits_row+="$n: $(step_ms attn_splits_$n) ms, "
done
[ -n "$splits_row" ] && echo "sim: clean graph step by attention KV splits (default: $(step_ms clean_graph) ms) | ${splits_row%, } | report | PASS" >>"$table"
if run_sim host_delay_graph --mode graph --host-delay-us 100; then
  eval_py delta "$res/clean_graph.json" "$res/host_delay_graph.json" "host delay 100 us per layer (graph, host node)"
fi
if run_sim host_delay_eager --mode eager --host-delay-us 200 --host-delay-mode thread; then
  eval_py delta "$res/clean_eager.json" "$res/host_delay_eager.json" "host delay 200 us per layer (eager, thread)" bounds
fi
if run_sim sync_graph --mode graph --sync-every-layer; then
  eval_py delta "$res/clean_graph.json" "$res/sync_graph.json" "sync after every layer (graph segments)"
fi
if run_sim sync_eager --mode eager --sync-every-layer; then
  eval_py delta "$res/clean_eager.json" "$res/sync_eager.json" "sync after every layer (eager)" lower
fi
if [ "$gpus" -ge 2 ]; then
  if run_sim straggler_graph --mode graph --straggler-rank 1 --straggler-us 50; then
    eval_py delta "$res/clean_graph.json" "$res/straggler_graph.json" "straggler rank 1 +50 us per collective"
  fi
fi
if run_sim slow_graph --mode graph --slow routed_experts:2; then
  eval_py delta "$res/clean_graph.json" "$res/slow_graph.json" "slow routed experts x2"
fi
if run_sim stepgap_graph --mode graph --step-gap-us 2000; then
  eval_py delta "$res/clean_graph.json" "$res/stepgap_graph.json" "host gap 2 ms between steps"
fi
if run_sim nvtx_graph --mode graph --nvtx; then
  echo "sim: --nvtx graph run | $(step_ms nvtx_graph) ms | runs | PASS" >>"$table"
fi
# The same tokens from every run of a mode (clean and with each pathology): no race between kernels.
runs=()
for f in "$res"/clean_*.json "$res"/host_delay_*.json "$res"/sync_*.json "$res"/straggler_*.json \
  "$res"/slow_*.json "$res"/stepgap_*.json "$res"/nvtx_*.json; do [ -s "$f" ] && runs+=("$f"); done
[ ${#runs[@]} -gt 0 ] && eval_py tokens "${runs[@]}"
# MLA + DSA path (GLM-5 shapes), a few layers.
if timeout 300 "$sim" --model glm-5 --tp "$gpus" --layers 6 --context 2048 --steps 10 --warmup 3 \
  --precision routed_experts=nvfp4 --truth "$res/glm5_smoke.json" >"$res/glm5_smoke.log" 2>&1; then
  echo "sim: glm-5 (MLA, DSA, nvfp4 experts), 6 layers tp$gpus | $(tail -1 "$res/glm5_smoke.log" | tr -s ' ') | runs | PASS" >>"$table"
else
  fail=1
  echo "sim: glm-5 6 layers | $(tail -1 "$res/glm5_smoke.log") | runs | FAIL" >>"$table"
fi
exit $fail
