#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Steps of unmodified Hugging Face generate() processes: tests/gpu/steps.sh BUILD_DIR OUTDIR
#  1. workloads/hf_generate.py, eager and static cache + torch.compile (CUDA graphs), under torch.profiler
#     (no schedule; and with prof.step() after each generate() call): gapscope-cli must find one step per
#     forward with no rule named, the first of each call prefill, the rest decode.
#  2. the eager and graph loops under gapscope-agent launch (libgapscope-inject.so), captured for a few
#     seconds with no step rule; the capture opened with --step-rule auto: the same. Then
#     `capture --steps 40` with no rule: at least 40 steps stored in the file, prefill and decode.
#  3. small fixtures (4 layers, 2 calls of 6 tokens) for tests/steps/fixtures/real_*.json.gz.
# Rows `check | measured | target | PASS/FAIL` go to OUTDIR/table.txt.
set -uo pipefail
BUILD=${1:?usage: steps.sh BUILD_DIR OUTDIR}
OUTDIR=${2:?usage: steps.sh BUILD_DIR OUTDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
W=$HERE/workloads
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
LOG=$OUTDIR/steps
mkdir -p "$LOG"
TABLE=$OUTDIR/table.txt
touch "$TABLE"
CLI=$BUILD/app/gapscope-cli
row() { echo "$1 | $2 | $3 | $4" >>"$TABLE"; }
CALLS=${STEPS_CALLS:-2}
PARTS=${STEPS_PARTS:-profiler,capture} # which halves run: torch.profiler traces, captures through the agent
TOKENS=${STEPS_TOKENS:-16}

# verdict FILE CALLS TOKENS [RULE]: "steps N (P prefill, D decode) | PASS|FAIL"
judge() {
  local f=$1 calls=$2 tokens=$3 rule=${4:-}
  local args=(info --json "$f")
  [ -n "$rule" ] && args+=(--step-rule "$rule")
  "$CLI" "${args[@]}" >"$f.info.json" 2>"$f.info.err" || { echo "info failed: $(head -c 200 "$f.info.err") | FAIL"; return; }
  python3 - "$f.info.json" "$calls" "$tokens" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); calls, tokens = int(sys.argv[2]), int(sys.argv[3])
k = d.get("step_kinds", {})
ok = d["step_count"] == calls * tokens and k.get("prefill") == calls and k.get("decode") == calls * (tokens - 1)
print("%d steps (%s, rule %s): %d prefill, %d decode, %d unknown | %s" % (d["step_count"], d.get("step_source"),
      d.get("step_rule"), k.get("prefill", 0), k.get("decode", 0), k.get("unknown", 0), "PASS" if ok else "FAIL"))
PY
}

for mode in eager graph; do
  [[ ",$PARTS," == *",profiler,"* ]] || break
  for ps in plain profilerstep; do
    f=$LOG/hf_${mode}_${ps}.json.gz
    extra=(); [ $ps = profilerstep ] && extra=(--profiler-steps)
    timeout 300 python3 "$W/hf_generate.py" --mode $mode --layers 8 --calls "$CALLS" --new-tokens "$TOKENS" \
      --profile "$f" "${extra[@]}" >"$LOG/hf_${mode}_${ps}.log" 2>&1
    if [ -s "$f" ]; then
      v=$(judge "$f" "$CALLS" "$TOKENS")
      row "steps: HF generate() $mode, torch.profiler ($ps), no rule" "${v% | *}" \
        "$((CALLS * TOKENS)) steps: $CALLS prefill, $((CALLS * (TOKENS - 1))) decode" "${v##* | }"
    else
      row "steps: HF generate() $mode, torch.profiler ($ps)" "no trace (see steps/hf_${mode}_${ps}.log)" "a trace" FAIL
      tail -5 "$LOG/hf_${mode}_${ps}.log"
    fi
  done
  # Small fixtures for the unit tests.
  timeout 300 python3 "$W/hf_generate.py" --mode $mode --layers 4 --hidden 512 --ffn 1408 --heads 8 --kv-heads 2 \
    --calls 2 --new-tokens 6 --prompt 16 --profile "$LOG/real_hf_${mode}.json.gz" >"$LOG/real_hf_${mode}.log" 2>&1
done

# Captures of the unmodified loops through the injection library, no step rule.
AGENT=$BUILD/capture/agent/gapscope-agent
LIB=$(readlink -f "$BUILD/capture/inject/libgapscope-inject.so" 2>/dev/null)
if [ -x "$AGENT" ] && [ -f "$LIB" ] && [[ ",$PARTS," == *",capture,"* ]]; then
  SOCKDIR=/tmp/gapscope-steps; rm -rf "$SOCKDIR"; mkdir -m 700 "$SOCKDIR"
  SOCK=$SOCKDIR/agent.sock
  "$AGENT" --socket "$SOCK" --listen 127.0.0.1:0 --port-file "$LOG/port" --output-dir "$LOG/captures" \
    >"$LOG/agent.log" 2>&1 &
  AGENT_PID=$!
  for _ in $(seq 100); do [ -s "$LOG/port" ] && break; sleep 0.1; done
  ADDR=127.0.0.1:$(cat "$LOG/port" 2>/dev/null)
  for mode in eager graph; do
    rm -f "$LOG/ready" "$LOG/stop"
    setsid "$AGENT" launch --no-agent --socket "$SOCK" --inject "$LIB" -- timeout 300 \
      python3 "$W/hf_generate.py" --mode $mode --layers 8 --new-tokens "$TOKENS" --calls 0 --idle-calls 100000 \
      --ready-file "$LOG/ready" --stop-file "$LOG/stop" >"$LOG/cap_$mode.workload.log" 2>&1 &
    WL=$!
    for _ in $(seq 1800); do [ -e "$LOG/ready" ] && break; kill -0 $WL 2>/dev/null || break; sleep 0.1; done
    timeout 120 "$CLI" capture --agent "$ADDR" --wait-ranks 1 --arm-timeout 60 --duration 3 --quiet \
      -o "$LOG/cap_$mode.gapscope" >"$LOG/cap_$mode.capture.log" 2>&1
    rc=$?
    # --steps N with no rule: a window long enough for N forwards, the forwards found and stored.
    timeout 180 "$CLI" capture --agent "$ADDR" --wait-ranks 1 --arm-timeout 60 --steps 40 --quiet \
      -o "$LOG/capn_$mode.gapscope" >"$LOG/capn_$mode.capture.log" 2>&1
    nrc=$?
    touch "$LOG/stop"; wait $WL 2>/dev/null
    if [ -s "$LOG/capn_$mode.gapscope" ]; then
      "$CLI" info --json "$LOG/capn_$mode.gapscope" >"$LOG/capn_$mode.info.json" 2>&1
      python3 - "$LOG/capn_$mode.info.json" "$nrc" >>"$TABLE" <<PY
import json, sys
d = json.load(open(sys.argv[1])); k = d.get("step_kinds", {})
ok = sys.argv[2] == "0" and d["step_count"] >= 40 and d.get("step_rule") == "file" and k.get("decode", 0) >= 30 \
    and k.get("prefill", 0) >= 2
print("steps: capture --steps 40 of HF generate() $mode, no rule | exit %s, %d steps stored (%s), %d prefill, %d decode, "
      "%d unknown | >= 40 steps, prefill and decode | %s" % (sys.argv[2], d["step_count"], d.get("step_source"),
      k.get("prefill", 0), k.get("decode", 0), k.get("unknown", 0), "PASS" if ok else "FAIL"))
PY
    else
      row "steps: capture --steps 40 of HF generate() $mode" "rc $nrc, no file (see steps/capn_$mode.capture.log)" "a trace" FAIL
    fi
    if [ -s "$LOG/cap_$mode.gapscope" ]; then
      "$CLI" summary --json --top 0 --step-rule auto "$LOG/cap_$mode.gapscope" >"$LOG/cap_$mode.summary.json" 2>&1
      python3 - "$LOG/cap_$mode.summary.json" "$TOKENS" >>"$TABLE" <<PY
import json, sys
d = json.load(open(sys.argv[1])); tokens = int(sys.argv[2])
st = [s for s in d["steps"] if s["rank"] == 0]
kinds = [s["kind"] for s in st]
# Whole calls inside the window: each prefill followed by tokens-1 decodes.
calls = sum(1 for i, k in enumerate(kinds) if k == "prefill" and kinds[i + 1:i + tokens] == ["decode"] * (tokens - 1))
other = sum(1 for k in kinds if k not in ("prefill", "decode"))
# The first and last steps are cut by the recording's window; the others' kernels within 10% of the median.
ks = sorted(s["kernels"] for s in st[1:-1] if s["kind"] == "decode")
med = ks[len(ks) // 2] if ks else 0
alike = sum(1 for k in ks if abs(k - med) * 10 <= med)
ok = calls >= 2 and other <= 2 and ks and alike == len(ks)
print("steps: capture of HF generate() $mode, no rule, opened with auto | %d steps, %d whole calls (1 prefill + %d decode), "
      "%d other, decode kernels %s (median %d) | >= 2 whole calls, decode steps within 10%% of the median | %s"
      % (len(st), calls, tokens - 1, other, "%d-%d" % (ks[0], ks[-1]) if ks else "-", med, "PASS" if ok else "FAIL"))
PY
    else
      row "steps: capture of HF generate() $mode" "rc $rc, no file (see steps/cap_$mode.capture.log)" "a trace" FAIL
      tail -5 "$LOG/cap_$mode.capture.log"
    fi
  done
  kill $AGENT_PID 2>/dev/null; wait $AGENT_PID 2>/dev/null
fi
cat "$TABLE"
