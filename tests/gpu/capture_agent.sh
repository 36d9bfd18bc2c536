#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gapscope-agent end to end on two GPUs: tests/gpu/capture_agent.sh BUILD_DIR OUTDIR
#
# A 2-process torch.distributed decode loop (tests/gpu/workloads/tp_decode.py, graph mode, a small
# Llama-style model) is started through `gapscope-agent launch` (CUDA_INJECTION64_PATH,
# NCCL_PROFILER_PLUGIN, GAPSCOPE_AGENT_SOCKET set) against an agent started first; `gapscope-cli
# capture` then records 20 steps (both ranks, same steps; kernel end -> visible latency and arm latency
# as the CLI reports them) and 5,000 steps while the agent's RSS is sampled every second (bounded and
# flat). Rows `check | measured | target | PASS/FAIL` go to OUTDIR/table.txt; logs under OUTDIR/agent.
set -uo pipefail
BUILD=${1:-build/gpu}
OUTDIR=${2:?usage: capture_agent.sh BUILD_DIR OUTDIR}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$ROOT/tests/gpu/workloads
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
LOG=$OUTDIR/agent
mkdir -p "$LOG"
TABLE=$OUTDIR/table.txt
touch "$TABLE"
row() { echo "agent: $1 | $2 | $3 | $4" >>"$TABLE"; }
verdict() { if [ "${1:-0}" = 1 ]; then echo PASS; else echo FAIL; fi; }

if [ ! -x "$BUILD/capture/agent/gapscope-agent" ] || [ ! -x "$BUILD/app/gapscope-cli" ] \
   || [ ! -f "$BUILD/capture/inject/libgapscope-inject.so" ]; then
  (cd "$ROOT" && { [ -f "$BUILD/build.ninja" ] || cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
       -DGAPSCOPE_GUI=OFF -DGAPSCOPE_CUDA=ON -DGAPSCOPE_FUZZ=OFF; } \
     && cmake --build "$BUILD" --target gapscope-agent gapscope-cli gapscope-inject -j16) >>"$LOG/build.log" 2>&1
fi
AGENT=$BUILD/capture/agent/gapscope-agent
CLI=$BUILD/app/gapscope-cli
LIB=$(readlink -f "$BUILD/capture/inject/libgapscope-inject.so" 2>/dev/null)
if [ ! -x "$AGENT" ] || [ ! -x "$CLI" ] || [ ! -f "$LIB" ]; then
  row "build" "failed (see agent/build.log)" "builds" FAIL
  tail -30 "$LOG/build.log"
  exit 1
fi

SOCKDIR=/tmp/gapscope-agent-gpu
rm -rf "$SOCKDIR"; mkdir -m 700 "$SOCKDIR"
SOCK=$SOCKDIR/agent.sock
"$AGENT" --socket "$SOCK" --listen 127.0.0.1:0 --port-file "$LOG/port" --output-dir "$LOG/captures" >"$LOG/agent.log" 2>&1 &
AGENT_PID=$!
for _ in $(seq 100); do [ -s "$LOG/port" ] && break; sleep 0.1; done
ADDR=127.0.0.1:$(cat "$LOG/port" 2>/dev/null)

SMALL=(--layers 4 --hidden 2048 --ffn 8192 --heads 16 --context 1024)
setsid "$AGENT" launch --no-agent --socket "$SOCK" --inject "$LIB" -- timeout 900 \
  python3 -m torch.distributed.run --nproc_per_node 2 --master_port 29731 "$W/tp_decode.py" --mode graph \
  --phases warm:50,idle:1000000 --out "$LOG/run" "${SMALL[@]}" >"$LOG/workload.log" 2>&1 &
WL_PID=$!
cleanup() {
  kill -- -"$WL_PID" 2>/dev/null
  kill "$AGENT_PID" 2>/dev/null
  wait "$AGENT_PID" 2>/dev/null
}
trap cleanup EXIT

# 1. 20 steps, graph rule: both ranks, the same 20 steps; latency and arm latency as the CLI reports them.
"$CLI" capture --agent "$ADDR" --wait-ranks 2 --arm-timeout 180 --steps 20 --step-rule graph --quiet \
  -o "$LOG/c20.gapscope" >"$LOG/c20.txt" 2>&1
rc=$?
"$CLI" info "$LOG/c20.gapscope" >"$LOG/c20.info" 2>&1
n=$(grep -cE '^rank [0-9]+: .*, 20 steps' "$LOG/c20.info")
row "20-step capture through launch (exit, ranks with 20 steps)" "exit $rc, $n of 2 ranks" "exit 0, 2 ranks" \
  "$(verdict $([ "$rc" = 0 ] && [ "$n" = 2 ] && echo 1))"
p50=$(sed -nE 's/.*kernel end -> visible here: p50 ([0-9.]+) ms, p99 ([0-9.]+) ms.*/\1/p' "$LOG/c20.txt")
p99=$(sed -nE 's/.*kernel end -> visible here: p50 ([0-9.]+) ms, p99 ([0-9.]+) ms.*/\2/p' "$LOG/c20.txt")
row "kernel end -> visible at the CLI, p99 (p50)" "${p99:-?} ms (${p50:-?} ms)" "<= 250 ms" \
  "$(verdict $([ -n "$p99" ] && awk "BEGIN{exit !($p99 <= 250)}" && echo 1))"
arm=$(sed -nE 's/.*capture [0-9]+, arm latency ([0-9.]+) ms.*/\1/p' "$LOG/c20.txt" | head -1)
row "arm latency, StartCapture -> every rank recording" "${arm:-?} ms" "shown to the user" \
  "$(verdict $([ -n "$arm" ] && echo 1))"
grep -E '^(warning|data_loss|error):' "$LOG/c20.txt" >>"$LOG/losses.txt"

# 2. 5,000 steps while the agent's RSS is sampled: bounded and flat.
: >"$LOG/rss.txt"
( while kill -0 "$AGENT_PID" 2>/dev/null; do ps -o rss= -p "$AGENT_PID" >>"$LOG/rss.txt"; sleep 0.2; done ) &
SAMPLER=$!
"$CLI" capture --agent "$ADDR" --steps 5000 --step-rule graph --quiet -o "$LOG/c5000.gapscope" >"$LOG/c5000.txt" 2>&1
rc=$?
kill "$SAMPLER" 2>/dev/null
peak=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$AGENT_PID/status" 2>/dev/null)
"$CLI" info "$LOG/c5000.gapscope" >"$LOG/c5000.info" 2>&1
n=$(grep -cE '^rank [0-9]+: .*, 5000 steps' "$LOG/c5000.info")
row "5000-step capture (exit, ranks with 5000 steps)" "exit $rc, $n of 2 ranks" "exit 0, 2 ranks" \
  "$(verdict $([ "$rc" = 0 ] && [ "$n" = 2 ] && echo 1))"
row "agent peak RSS (both captures)" "${peak:-?} MB" "<= 256 MB" \
  "$(verdict $([ -n "$peak" ] && [ "$peak" -le 256 ] && echo 1))"
samples=$(grep -c . "$LOG/rss.txt")
if [ "$samples" -ge 4 ]; then
  first=$(head -2 "$LOG/rss.txt" | awk '{s += $1} END {print int(s / NR / 1024)}')
  last=$(tail -2 "$LOG/rss.txt" | awk '{s += $1} END {print int(s / NR / 1024)}')
  row "agent RSS during the 5000-step capture, first vs last 0.4 s" "$first MB -> $last MB ($samples samples)" \
    "flat (+20 MB at most)" "$(verdict $([ $((last - first)) -le 20 ] && echo 1))"
else
  row "agent RSS during the 5000-step capture" "$samples samples" ">= 4 samples" FAIL
fi
grep -E '^(warning|data_loss|error):' "$LOG/c5000.txt" >>"$LOG/losses.txt"
echo
grep '^agent:' "$TABLE"
