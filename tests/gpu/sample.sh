#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The bundled sample trace, captured for real: tests/gpu/sample.sh BUILD_DIR OUTDIR
#
# gapscope-decode-sim runs GLM-5's decode step (all 78 layers, MLA + DSA indexer, MoE, bf16 weights;
# only the experts one step touches are stored, so the bytes read per step are the model's) with
# tensor parallelism over every GPU of the box, one CUDA graph per step and an NVTX range per step,
# with two known pathologies so the waterfall has something to show: rank 1 arrives 30 us late at
# every 8th AllReduce, and the host waits 400 us between steps. gapscope-agent records 20 steps;
# `gapscope-cli analyze --save` stores the GLM-5 budget settings (h200-sxm, the run's TP and
# context) in the file, so the viewer opens it with that budget chosen. Output:
# OUTDIR/sample/glm5-tp<N>-decode.gapscope and the sim's truth JSON; a row in OUTDIR/table.txt.
set -uo pipefail
BUILD=${1:?usage: sample.sh BUILD_DIR OUTDIR}
OUTDIR=${2:?usage: sample.sh BUILD_DIR OUTDIR}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
LOG=$OUTDIR/sample
mkdir -p "$LOG"
TABLE=$OUTDIR/table.txt
AGENT=$BUILD/capture/agent/gapscope-agent
CLI=$BUILD/app/gapscope-cli
SIM=$BUILD/kernels/gapscope-decode-sim
LIB=$BUILD/capture/inject/libgapscope-inject.so
GPUS=$(nvidia-smi -L 2>/dev/null | wc -l)
CTX=${SAMPLE_CONTEXT:-4096}
NAME=glm5-tp$GPUS-decode
row() { echo "$1 | $2 | $3 | $4" >>"$TABLE"; }

SOCK=/tmp/gapscope-sample/agent.sock
rm -rf /tmp/gapscope-sample && mkdir -p /tmp/gapscope-sample && chmod 700 /tmp/gapscope-sample
"$AGENT" --listen 127.0.0.1:0 --port-file "$LOG/port" --socket "$SOCK" --output-dir "$LOG/agent-files" \
  >"$LOG/agent.log" 2>&1 &
AGENT_PID=$!
for _ in $(seq 100); do [ -s "$LOG/port" ] && break; sleep 0.1; done
PORT=$(cat "$LOG/port" 2>/dev/null)
[ -n "$PORT" ] || { row "sample: agent starts" "no port" "listening" FAIL; exit 1; }

GAPSCOPE_AGENT_SOCKET=$SOCK timeout 300 "$AGENT" launch --socket "$SOCK" --inject "$LIB" --no-agent -- \
  "$SIM" --model glm-5 --tp "$GPUS" --context "$CTX" --expert-pool touched --mode graph --nvtx \
  --steps 400 --warmup 10 --no-profile-ops --straggler-rank 1 --straggler-us 30 --straggler-every 8 \
  --step-gap-us 400 --truth "$LOG/$NAME.truth.json" --ready-file "$LOG/ready" >"$LOG/sim.log" 2>&1 &
SIMPID=$!
for _ in $(seq 1800); do [ -e "$LOG/ready" ] && break; kill -0 $SIMPID 2>/dev/null || break; sleep 0.1; done
timeout 200 "$CLI" capture --agent "127.0.0.1:$PORT" --steps 20 --step-rule 'nvtx:^decode_step' \
  --wait-ranks "$GPUS" --arm-timeout 60 --quiet -o "$LOG/$NAME.gapscope" >"$LOG/capture.log" 2>&1
rc=$?
wait $SIMPID
simrc=$?
kill $AGENT_PID 2>/dev/null
wait $AGENT_PID 2>/dev/null
if [ $rc -ne 0 ] || [ ! -s "$LOG/$NAME.gapscope" ]; then
  row "sample: GLM-5 TP$GPUS capture" "capture rc $rc, sim rc $simrc (see sample/capture.log, sim.log)" "a trace" FAIL
  exit 1
fi
"$CLI" analyze "$LOG/$NAME.gapscope" --model glm-5 --hw h200-sxm --tp "$GPUS" --context "$CTX" --save \
  >"$LOG/analyze.txt" 2>&1
"$CLI" info --json "$LOG/$NAME.gapscope" >"$LOG/info.json" 2>&1
size=$(stat -c %s "$LOG/$NAME.gapscope")
steps=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d.get('step_count', 0))" "$LOG/info.json" 2>/dev/null)
row "sample: GLM-5 TP$GPUS capture, 20 steps" "$steps steps, $((size / 1024)) KiB, sim rc $simrc" "20 steps, a few MB" \
  "$([ "${steps:-0}" -ge 20 ] && echo PASS || echo FAIL)"
exit 0
