#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole capture path on the GPU box: tests/gpu/e2e.sh BUILD_DIR OUTDIR
#
# gapscope-agent runs; gapscope-decode-sim (one process per GPU, NCCL) is started through
# `gapscope-agent launch`, so libgapscope-inject.so rides in every rank; `gapscope-cli capture`
# records 20 steps through the agent once the sim's measured steps have begun; `gapscope-cli
# analyze` decomposes them and tests/gpu/analysis_check.py compares each bar with the sim's ground
# truth (clean run subtracted). Then one long capture (>= 10,000 steps) while the agent's and the
# ranks' resident memory is sampled. Rows `check | measured | target | PASS/FAIL` go to
# OUTDIR/table.txt; logs, traces and JSON under OUTDIR/e2e.
set -uo pipefail
BUILD=${1:?usage: e2e.sh BUILD_DIR OUTDIR}
OUTDIR=${2:?usage: e2e.sh BUILD_DIR OUTDIR}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
LOG=$OUTDIR/e2e
mkdir -p "$LOG"
TABLE=$OUTDIR/table.txt
touch "$TABLE"
BIN=${E2E_BIN:-$BUILD}
AGENT=$BIN/capture/agent/gapscope-agent
CLI=$BIN/app/gapscope-cli
SIM=$BIN/kernels/gapscope-decode-sim
LIB=$BIN/capture/inject/libgapscope-inject.so
for f in "$AGENT" "$CLI" "$SIM" "$LIB"; do
  [ -e "$f" ] || { echo "e2e: $f | missing | built | FAIL" >>"$TABLE"; exit 1; }
done
GPUS=$(nvidia-smi -L 2>/dev/null | wc -l)
MODEL=${E2E_MODEL:-qwen3-30b-a3b}
CTX=${E2E_CONTEXT:-4096}
HW=${E2E_HW:-h200-sxm}
[ -s "${E2E_PROFILE:-}" ] && HW=$E2E_PROFILE
row() { echo "$1 | $2 | $3 | $4" >>"$TABLE"; }
# E2E_CASES: a comma list of the cases to run (clean, clean_eager, host_delay, clean_nvtx, sync,
# sync_eager, step_gap, straggler, slow, host_eager, long); default all.
want() { [[ -z ${E2E_CASES:-} || ",$E2E_CASES," == *",$1,"* ]]; }

SOCK=/tmp/gapscope-e2e/agent.sock
rm -rf /tmp/gapscope-e2e && mkdir -p /tmp/gapscope-e2e && chmod 700 /tmp/gapscope-e2e
"$AGENT" --listen 127.0.0.1:0 --port-file "$LOG/port" --socket "$SOCK" --output-dir "$LOG/agent-files" \
  >"$LOG/agent.log" 2>&1 &
AGENT_PID=$!
stop_agent() { kill $AGENT_PID 2>/dev/null; wait $AGENT_PID 2>/dev/null; }
for _ in $(seq 100); do [ -s "$LOG/port" ] && break; sleep 0.1; done
PORT=$(cat "$LOG/port" 2>/dev/null)
[ -n "$PORT" ] || { row "e2e: agent starts" "no port (see e2e/agent.log)" "listening" FAIL; exit 1; }

rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# sim_capture NAME STEPS_TO_CAPTURE SIM_STEPS [sim args...]: sim under the agent, capture, analyze.
# The step rule is $RULE (default graph: one graph launch per step). Runs where a step is not one
# graph launch (eager, a graph per layer segment under --sync-every-layer) pass --nvtx to the sim and
# use RULE=nvtx:^decode_step.
sim_capture() {
  local name=$1 want=$2 simsteps=$3
  shift 3
  rm -f "$LOG/$name.ready"
  GAPSCOPE_AGENT_SOCKET=$SOCK timeout 300 "$AGENT" launch --socket "$SOCK" --inject "$LIB" --no-agent -- \
    "$SIM" --model "$MODEL" --tp "$GPUS" --context "$CTX" --steps "$simsteps" --warmup 10 --no-profile-ops \
    --truth "$LOG/$name.truth.json" --ready-file "$LOG/$name.ready" "$@" >"$LOG/$name.sim.log" 2>&1 &
  local simpid=$!
  for _ in $(seq 1200); do [ -e "$LOG/$name.ready" ] && break; kill -0 $simpid 2>/dev/null || break; sleep 0.1; done
  local t0=$(date +%s.%N)
  timeout 240 "$CLI" capture --agent "127.0.0.1:$PORT" --steps "$want" --step-rule "${RULE:-graph}" --wait-ranks "$GPUS" \
    --arm-timeout 60 --quiet -o "$LOG/$name.gapscope" >"$LOG/$name.capture.log" 2>&1
  local rc=$?
  local secs=$(awk "BEGIN {printf \"%.1f\", $(date +%s.%N) - $t0}")
  wait $simpid
  local simrc=$?
  echo "$name: capture rc $rc in ${secs}s, sim rc $simrc" >>"$LOG/runs.txt"
  [ $rc -eq 0 ] && [ -s "$LOG/$name.gapscope" ] || { row "e2e: capture $name" "rc $rc (see e2e/$name.capture.log)" "a trace" FAIL; return 1; }
  "$CLI" info --json "$LOG/$name.gapscope" >"$LOG/$name.info.json" 2>"$LOG/$name.info.err"
  "$CLI" summary --top 40 "$LOG/$name.gapscope" >"$LOG/$name.summary.txt" 2>&1 # per-kernel-name times
  "$CLI" analyze "$LOG/$name.gapscope" --model "$MODEL" --hw "$HW" --tp "$GPUS" --context "$CTX" --json \
    >"$LOG/$name.analysis.json" 2>"$LOG/$name.analysis.err"
}

# Clean runs (graph and eager) and each pathology, graph mode.
if want clean && sim_capture clean 20 1500 --mode graph; then
  python3 - "$LOG/clean.info.json" "$GPUS" >>"$TABLE" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2])
ranks = d.get("ranks", [])
counts = sorted({r.get("kernel_count", 0) // max(r.get("step_count", 1), 1) for r in ranks})
ok = len(ranks) == n and all(r.get("step_count") == 20 for r in ranks) and len(counts) == 1
print(f"e2e: sim capture through the agent, graph | {len(ranks)} ranks, steps {[r.get('step_count') for r in ranks]}, "
      f"kernels/step {counts} | {n} ranks x 20 steps, equal counts | {'PASS' if ok else 'FAIL'}")
EOF
fi
if want clean_eager && RULE=nvtx:^decode_step sim_capture clean_eager 20 1500 --mode eager --nvtx; then
  python3 "$ROOT/tests/gpu/analysis_check.py" --truth "$LOG/clean_eager.truth.json" \
    --analysis "$LOG/clean_eager.analysis.json" --label "eager clean" >>"$TABLE" 2>>"$LOG/check.err"
fi
check() { # name label sim args...  (graph mode, or $MODE; against the clean graph run, or $CLEAN)
  local name=$1 label=$2
  shift 2
  want "$name" || return
  sim_capture "$name" 20 1500 --mode "${MODE:-graph}" "$@" || return
  python3 "$ROOT/tests/gpu/analysis_check.py" --truth "$LOG/$name.truth.json" --analysis "$LOG/$name.analysis.json" \
    --clean-analysis "$LOG/${CLEAN:-clean}.analysis.json" --label "$label" >>"$TABLE" 2>>"$LOG/check.err"
}
check host_delay "host delay 100 us/layer" --host-delay-us 100
want clean_nvtx && RULE=nvtx:^decode_step sim_capture clean_nvtx 20 1500 --mode graph --nvtx
# Syncs: the sim times each sync's idle between two clock-stamp kernels (--sync-stamps), in the
# clock of the capture's kernel timestamps, so the truth holds what capturing adds at each boundary
# (CUPTI's per-graph-launch cost in graph mode, its per-launch cost in eager mode) as the trace does.
RULE=nvtx:^decode_step CLEAN=clean_nvtx check sync "sync after every layer" --sync-every-layer --sync-stamps --nvtx
MODE=eager RULE=nvtx:^decode_step CLEAN=clean_eager check sync_eager "sync after every layer, eager" \
  --sync-every-layer --sync-stamps --nvtx
# Step gap: the host spins 2 ms after each step's sync. What the GPU idles between steps is that
# spin plus the sync's wake-up and the next launch, which differ between processes and GPUs (read
# as 1.68 ms on an H100, 2.27 ms on an H200 against the spin with the clean run subtracted), so the
# sim times that idle itself with clock stamps (--step-stamps: after the step's last copy, and as the
# next step's first kernel), in the clock of the capture's kernel timestamps, and the bar is
# compared with it as it is.
check step_gap "step gap 2 ms" --step-gap-us 2000 --step-stamps
[ "$GPUS" -ge 2 ] && check straggler "straggler rank 1 +50 us" --straggler-rank 1 --straggler-us 50
check slow "slow routed experts x2" --slow routed_experts:2
# What the host was doing: eager, the launching thread spins 200 us before each layer inside an NVTX
# range `host_delay`; the launch/host gap time attributed to that range must be the GPU idle across
# the delays (tests/gpu/host_check.py).
if want host_eager && RULE=nvtx:^decode_step sim_capture host_eager 20 1500 --mode eager --nvtx \
    --host-delay-us 200 --host-delay-mode thread; then
  clean=()
  [ -s "$LOG/clean_eager.analysis.json" ] && clean=(--clean-analysis "$LOG/clean_eager.analysis.json")
  python3 "$ROOT/tests/gpu/host_check.py" --truth "$LOG/host_eager.truth.json" \
    --analysis "$LOG/host_eager.analysis.json" "${clean[@]}" --label "host attribution, eager" \
    >>"$TABLE" 2>>"$LOG/check.err"
fi
want long || { stop_agent; exit 0; }

# A long capture: agent and rank memory stay flat.
rm -f "$LOG/long.ready"
GAPSCOPE_AGENT_SOCKET=$SOCK timeout 400 "$AGENT" launch --socket "$SOCK" --inject "$LIB" --no-agent -- \
  "$SIM" --model "$MODEL" --tp "$GPUS" --context 1024 --layers 8 --steps 13000 --warmup 10 --no-profile-ops \
  --ready-file "$LOG/long.ready" --mode graph >"$LOG/long.sim.log" 2>&1 &
SIMPID=$!
for _ in $(seq 1200); do [ -e "$LOG/long.ready" ] && break; kill -0 $SIMPID 2>/dev/null || break; sleep 0.1; done
timeout 300 "$CLI" capture --agent "127.0.0.1:$PORT" --steps 10000 --step-rule graph --wait-ranks "$GPUS" \
  --arm-timeout 60 --quiet -o "$LOG/long.gapscope" >"$LOG/long.capture.log" 2>&1 &
CAPPID=$!
: >"$LOG/long.rss.txt"
while kill -0 $CAPPID 2>/dev/null; do
  ranks=$(pgrep -f "gapscope-decode-sim" | tr '\n' ' ')
  r=0; for p in $ranks; do v=$(rss_kb "$p"); [ "$v" -gt "$r" ] && r=$v; done
  echo "$(date +%s.%N) agent_kb $(rss_kb $AGENT_PID) rank_max_kb $r" >>"$LOG/long.rss.txt"
  sleep 0.5
done
wait $CAPPID
caprc=$?
wait $SIMPID
"$CLI" info --json "$LOG/long.gapscope" >"$LOG/long.info.json" 2>"$LOG/long.info.err"
"$CLI" summary --json "$LOG/long.gapscope" >"$LOG/long.summary.json" 2>"$LOG/long.summary.err"
python3 - "$LOG/long.rss.txt" "$LOG/long.info.json" "$caprc" "$LOG/long.gapscope" "$LOG/long.summary.json" >>"$TABLE" <<'EOF'
import json, os, statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
agent = [int(r[2]) for r in rows]; rank = [int(r[4]) for r in rows]
try:
    info = json.load(open(sys.argv[2]))
except Exception:
    info = {}
steps = info.get("step_count", 0)
n = len(agent)
def flat(v):  # growth between the second fifth and the end of the capture, MB
    if len(v) < 5: return float("nan")
    return (max(v[len(v)//5:]) - v[len(v)//5]) / 1024
ok = sys.argv[3] == "0" and steps >= 10000
print(f"e2e: long capture | {steps} steps, {os.path.getsize(sys.argv[4])/1e6 if os.path.exists(sys.argv[4]) else 0:.1f} MB, rc {sys.argv[3]} | >= 10,000 steps | {'PASS' if ok else 'FAIL'}")
# Every step of the long capture holds its kernels (the graph replays the same kernels each step).
try:
    per = json.load(open(sys.argv[5])).get("steps", [])
except Exception:
    per = []
for rk in sorted({p["rank"] for p in per}):
    ks = [p["kernels"] for p in per if p["rank"] == rk]
    med = statistics.median(ks)
    empty = sum(1 for k in ks if k == 0)
    ok = len(ks) >= 10000 and empty == 0 and sum(ks) >= 0.99 * med * len(ks)
    print(f"e2e: long capture rank {rk}: kernels in every step | {len(ks)} steps, {empty} without kernels, "
          f"kernels per step min {min(ks)} median {med:.0f} max {max(ks)}, total {sum(ks)} | every step, "
          f"total >= 99% of median x steps | {'PASS' if ok else 'FAIL'}")
if not per:
    print("e2e: long capture: kernels in every step | no per-step summary | every step | FAIL")
am = max(agent) / 1024 if agent else 0
print(f"e2e: agent memory during the long capture | peak {am:.0f} MB, growth after warm-up {flat(agent):.1f} MB ({n} samples) | <= 256 MB, flat | {'PASS' if agent and am <= 256 and flat(agent) < 32 else 'FAIL'}")
print(f"e2e: rank memory during the long capture | peak {max(rank)/1024 if rank else 0:.0f} MB, growth after warm-up {flat(rank):.1f} MB | flat | {'PASS' if rank and flat(rank) < 64 else 'FAIL'}")
EOF

stop_agent
exit 0
