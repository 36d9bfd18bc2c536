#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Graph-node attribution: tests/gpu/graphnodes.sh BUILD_DIR OUTDIR
#
# workloads/graph_nodes.py: one-token decode steps of a Llama-shaped model (random weights, StaticCache)
# with NVTX ranges pushed by module hooks inside the forward ("decode", "layer I", "attention", "mlp").
# In graph mode the ranges are pushed while the CUDA graph is captured, once, at start-up; the replays
# push none. Each case is its own process; a failed case does not stop the others.
#  a. graph_ranges    graph, ranges on, under gapscope-agent launch; captured GRAPHNODES_WARM_S seconds
#                     after it is ready (long after the graph was built), --step-rule graph
#                     -> OUTDIR/graph_ranges.gapscope
#  b. graph_noranges  the same with ranges off -> OUTDIR/graph_noranges.gapscope
#  c. eager_ranges    eager, ranges on, each step in "decode step N", --step-rule 'nvtx:^decode step'
#                     -> OUTDIR/eager_ranges.gapscope
#  d. idle            graph (and eager), ranges on, no capture: GRAPHNODES_IDLE_REPS (3) rounds of a process
#                     with the library (launch), one with the library but no graph-node watch, one plain,
#                     GRAPHNODES_IDLE_S seconds each; per-process medians of the step time ->
#                     OUTDIR/idle_cost.txt; PASS when the medians with the library overlap those without.
#                     GRAPHNODES_IDLE_KINDS (default "lib held none"): "lib" is the library in its steady
#                     state, the watch released (GAPSCOPE_GRAPH_NODES_RELEASE_S=1 here, 60 s by default);
#                     "held" the watch kept (=0); "nowatch" (GAPSCOPE_GRAPH_NODES=0), "subscribe" (the
#                     watch's CUPTI subscriber alone) and "resources" (its node callbacks but no API ones)
#                     tell the parts apart, as INFO rows
#  e. kineto          graph, ranges on, plain process, 30 replays under torch.profiler
#                     -> OUTDIR/graph_ranges_kineto.json.gz
# Then, if tests/gpu/graph_nodes_check.py exists, it judges OUTDIR (`--cli CLI OUTDIR`) and the rows it
# prints are appended. GRAPHNODES_PARTS=graph_ranges,graph_noranges,eager_ranges,idle,kineto picks cases.
# Rows `check | measured | target | PASS/FAIL/INFO` go to OUTDIR/table.txt; logs under OUTDIR/graphnodes/.
set -uo pipefail
BUILD=${1:?usage: graphnodes.sh BUILD_DIR OUTDIR}
OUTDIR=${2:?usage: graphnodes.sh BUILD_DIR OUTDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
W=$HERE/workloads
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
LOG=$OUTDIR/graphnodes
mkdir -p "$LOG"
TABLE=$OUTDIR/table.txt
touch "$TABLE"
CLI=$BUILD/app/gapscope-cli
AGENT=$BUILD/capture/agent/gapscope-agent
LIB=$(readlink -f "$BUILD/capture/inject/libgapscope-inject.so" 2>/dev/null)
PARTS=${GRAPHNODES_PARTS:-graph_ranges,graph_noranges,eager_ranges,gate,idle,kineto}
WARM=${GRAPHNODES_WARM_S:-5}         # seconds of steps after "ready" before the capture is armed
DUR=${GRAPHNODES_DURATION:-2}        # capture window, seconds
IDLE_S=${GRAPHNODES_IDLE_S:-8}       # seconds of steps per idle-cost process
READY_S=${GRAPHNODES_READY_S:-300}   # the longest wait for a process to print "ready"
MODEL=(--layers 8 --hidden 1024 --ffn 2816 --heads 16 --kv-heads 4 --vocab 32000)
row() { echo "$1 | $2 | $3 | $4" >>"$TABLE"; }
want() { [[ ",$PARTS," == *",$1,"* ]]; }
# The workload on cores of its own, the agent and the CLI on others.
NCPU=$(nproc)
PIN_WL=""; PIN_TOOLS=""
if [ "$NCPU" -ge 8 ] && command -v taskset >/dev/null; then
  PIN_WL="taskset -c 2-5"; PIN_TOOLS="taskset -c 6-$((NCPU - 1))"
fi

HAVE_LIB=1
if [ ! -x "$AGENT" ] || [ ! -f "$LIB" ] || [ ! -x "$CLI" ]; then
  row "graphnodes" "no gapscope-agent / libgapscope-inject.so / gapscope-cli in $BUILD" "built" FAIL
  HAVE_LIB=0
fi
AGENT_PID=""
if [ $HAVE_LIB = 1 ]; then
  SOCKDIR=/tmp/gapscope-graphnodes; rm -rf "$SOCKDIR"; mkdir -m 700 "$SOCKDIR"
  SOCK=$SOCKDIR/agent.sock
  rm -f "$LOG/port"
  $PIN_TOOLS "$AGENT" --socket "$SOCK" --listen 127.0.0.1:0 --port-file "$LOG/port" --output-dir "$LOG/agent-out" \
    >"$LOG/agent.log" 2>&1 &
  AGENT_PID=$!
  trap 'kill $AGENT_PID 2>/dev/null' EXIT
  for _ in $(seq 100); do [ -s "$LOG/port" ] && break; sleep 0.1; done
  ADDR=127.0.0.1:$(cat "$LOG/port" 2>/dev/null)
  if [ ! -s "$LOG/port" ]; then
    row "graphnodes: agent" "did not come up (see graphnodes/agent.log)" "serves" FAIL
    HAVE_LIB=0
  fi
fi

# start_wl NAME INJECT ARGS...: one workload process in a session of its own (its pid is the group's).
start_wl() {
  local name=$1 inject=$2; shift 2
  rm -f "$LOG/$name.ready" "$LOG/$name.stop"
  if [ "$inject" = 1 ]; then
    env GAPSCOPE_INJECT_LOG=1 ${WL_ENV:-} setsid $PIN_WL "$AGENT" launch --no-agent --socket "$SOCK" --inject "$LIB" -- \
      timeout 900 python3 "$W/graph_nodes.py" "${MODEL[@]}" --ready-file "$LOG/$name.ready" \
      --stop-file "$LOG/$name.stop" "$@" >"$LOG/$name.workload.log" 2>&1 &
  else
    setsid $PIN_WL timeout 900 python3 "$W/graph_nodes.py" "${MODEL[@]}" --ready-file "$LOG/$name.ready" \
      --stop-file "$LOG/$name.stop" "$@" >"$LOG/$name.workload.log" 2>&1 &
  fi
  WL=$!
}
# wait_ready NAME PID: until the process is ready (0), gone or READY_S passed (1).
wait_ready() {
  for _ in $(seq $((READY_S * 10))); do
    [ -e "$LOG/$1.ready" ] && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
# stop_wl NAME PID: ask the loop to stop, wait up to 60 s, then end its process group. Sets WL_RC.
stop_wl() {
  touch "$LOG/$1.stop"
  for _ in $(seq 600); do kill -0 "$2" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$2" 2>/dev/null; then
    echo "graphnodes.sh: $1 did not stop; ending process group $2" >>"$LOG/$1.workload.log"
    kill -TERM -- "-$2" 2>/dev/null; sleep 2; kill -KILL -- "-$2" 2>/dev/null
  fi
  wait "$2" 2>/dev/null
  WL_RC=$?
}

# capture_case NAME RULE ARGS...: a workload under launch, captured once from outside long after start-up.
capture_case() {
  local name=$1 rule=$2; shift 2
  local f=$OUTDIR/$name.gapscope
  rm -f "$f" "$LOG/$name.steps.jsonl"
  start_wl "$name" 1 "$@" --log "$LOG/$name.steps.jsonl"
  local wl=$WL
  if ! wait_ready "$name" $wl; then
    row "graphnodes: $name" "not ready (see graphnodes/$name.workload.log)" "runs" FAIL
    tail -5 "$LOG/$name.workload.log"
    stop_wl "$name" $wl
    return
  fi
  # The graph was built before "ready": the capture is armed well after that.
  sleep "$WARM"
  if ! kill -0 $wl 2>/dev/null; then
    stop_wl "$name" $wl
    row "graphnodes: $name" "the workload exited before the capture (rc $WL_RC, see graphnodes/$name.workload.log)" \
      "runs" FAIL
    return
  fi
  echo "$CLI capture --agent $ADDR --wait-ranks 1 --arm-timeout 60 --duration $DUR --step-rule '$rule' -o $f" \
    >"$LOG/$name.capture.cmd"
  timeout 180 $PIN_TOOLS "$CLI" capture --agent "$ADDR" --wait-ranks 1 --arm-timeout 60 --duration "$DUR" \
    --step-rule "$rule" -o "$f" >"$LOG/$name.capture.log" 2>&1
  local rc=$?
  # Some steps after the capture: the process must go on replaying.
  sleep 2
  local alive=yes; kill -0 $wl 2>/dev/null || alive=no
  stop_wl "$name" $wl
  local steps=0 src="-"
  if [ -s "$f" ] && timeout 300 $PIN_TOOLS "$CLI" info --json "$f" >"$LOG/$name.info.json" 2>"$LOG/$name.info.err"; then
    read -r steps src < <(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); \
print(d.get('step_count', 0), d.get('step_source', '-'))" "$LOG/$name.info.json" 2>/dev/null || echo "0 -")
  fi
  local verdict=FAIL
  [ $rc = 0 ] && [ -s "$f" ] && [ "${steps:-0}" -gt 0 ] && [ $alive = yes ] && [ "$WL_RC" = 0 ] && verdict=PASS
  row "graphnodes: $name capture ($rule), armed ${WARM} s after ready" \
    "capture rc $rc, $( [ -s "$f" ] && stat -c %s "$f" || echo 0) bytes, $steps steps ($src); process alive after: $alive, exit $WL_RC" \
    "a file with steps; the process replays on and exits 0" $verdict
  [ $verdict = PASS ] || tail -3 "$LOG/$name.capture.log" "$LOG/$name.workload.log"
}

if [ $HAVE_LIB = 1 ]; then
  want graph_ranges && capture_case graph_ranges graph --mode graph --ranges on
  want graph_noranges && capture_case graph_noranges graph --mode graph --ranges off
  want eager_ranges && capture_case eager_ranges "nvtx:^decode step" --mode eager --ranges on
fi

# The diff gate on a steady process: one graph process (ranges on), GATE_PAIRS + 1 captures of GATE_DUR
# seconds, each but the last followed by one with the slowdown on (--slow-file: one more GEMV per layer).
# Capture k against k+1 (nothing changed): no regression may be reported (exit 0); capture k against its
# slowed twin: a regression (exit 1). A first capture is taken and left out (the first one in a process
# meets CUPTI never attached).
gate_case() {
  local name=gate n=${GATE_PAIRS:-20} dur=${GATE_DUR:-1}
  local slow=$LOG/gate.slow
  rm -f "$slow"; mkdir -p "$OUTDIR/gate"
  start_wl $name 1 --mode graph --ranges on --slow-file "$slow" --log "$LOG/gate.steps.jsonl"
  local wl=$WL
  if ! wait_ready $name $wl; then
    row "graphnodes: gate" "not ready (see graphnodes/gate.workload.log)" "runs" FAIL
    stop_wl $name $wl
    return
  fi
  sleep "$WARM"
  cap() { timeout 120 $PIN_TOOLS "$CLI" capture --agent "$ADDR" --wait-ranks 1 --arm-timeout 60 --duration "$dur" \
    --step-rule graph -o "$1" >>"$LOG/gate.capture.log" 2>&1; }
  cap "$OUTDIR/gate/first.gapscope"
  for k in $(seq 1 $((n + 1))); do
    cap "$OUTDIR/gate/n$k.gapscope"
    [ "$k" -le "$n" ] || break
    touch "$slow"; sleep 0.5
    cap "$OUTDIR/gate/s$k.gapscope"
    rm -f "$slow"; sleep 0.5
  done
  stop_wl $name $wl
  local fa=0 det=0 cmp=0 notcmp=0 jobs=$(( $(nproc) / 2 > 1 ? $(nproc) / 2 : 1 ))
  : >"$OUTDIR/gate/summary.txt"
  # The diffs side by side, `jobs` at a time (the agent runs in the background too: only these are
  # waited for), then read in pair order.
  local pids=()
  for k in $(seq 1 "$n"); do
    for pair in "n$k n$((k + 1))" "n$k s$k"; do
      set -- $pair
      if [ ${#pids[@]} -ge "$jobs" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
      ( base=$OUTDIR/gate/$1-$2
        timeout 300 $PIN_TOOLS "$CLI" diff --gate --json --junit "$base.xml" --markdown "$base.md" \
          "$OUTDIR/gate/$1.gapscope" "$OUTDIR/gate/$2.gapscope" >"$base.json" 2>"$base.err"
        echo $? >"$base.rc" ) &
      pids+=($!)
    done
  done
  [ ${#pids[@]} -eq 0 ] || wait "${pids[@]}"
  for k in $(seq 1 "$n"); do
    for pair in "n$k n$((k + 1)) same" "n$k s$k slow"; do
      set -- $pair
      local base=$OUTDIR/gate/$1-$2
      local rc
      rc=$(cat "$base.rc" 2>/dev/null || echo 124)
      echo "$1 $2 $3 exit $rc $(python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
m=[v for v in d['verdicts'] if v['name']=='measured step'][0]
r=[v['name'] for v in d['verdicts'] if v['verdict']=='regression']
print(f\"step {m['a_median_ms']:.4f} -> {m['b_median_ms']:.4f} ms; regressions: {r}\")" "$base.json" 2>/dev/null)" \
        >>"$OUTDIR/gate/summary.txt"
      if [ "$3" = same ]; then [ $rc = 0 ] || fa=$((fa + 1)); [ $rc = 2 ] && notcmp=$((notcmp + 1)); fi
      if [ "$3" = slow ]; then [ $rc = 1 ] && det=$((det + 1)); cmp=$((cmp + 1)); fi
    done
  done
  local inj
  inj=$(python3 -c "
import re,statistics,sys
a=[];b=[]
for l in open(sys.argv[1]):
    m=re.search(r'step ([0-9.]+) -> ([0-9.]+) ms', l)
    if m and ' slow ' in l: a.append(float(m.group(1))); b.append(float(m.group(2)))
print(f'{100*(statistics.median(b)/statistics.median(a)-1):+.2f} %' if a else '?')" "$OUTDIR/gate/summary.txt")
  row "gate, steady graph process: false regressions, capture k vs k+1" "$fa of $n ($notcmp not compared)" "<= 1" \
    "$([ $fa -le 1 ] && echo PASS || echo FAIL)"
  row "gate, steady graph process: one more GEMV per layer (median step $inj) flagged" "$det of $cmp" ">= 19 of 20" \
    "$([ $det -ge $((cmp - 1)) ] && [ $cmp -gt 0 ] && echo PASS || echo FAIL)"
}

if [ $HAVE_LIB = 1 ] && want gate; then
  gate_case
fi

if [ $HAVE_LIB = 1 ] && want idle; then
  # Alternating processes (drift between them shows as spread, not as a difference): lib, none, ...
  : >"$LOG/idle.list"
  for mode in ${GRAPHNODES_IDLE_MODES:-graph eager}; do
  for k in $(seq "${GRAPHNODES_IDLE_REPS:-3}"); do
    for kind in ${GRAPHNODES_IDLE_KINDS:-lib held none}; do
      name=idle_${mode}_${kind}$k
      rm -f "$LOG/$name.steps.jsonl"
      # lib: the watch let go 1 s after the last graph was built (cuptiFinalize), as it is 60 s after by
      # default; held: kept; nowatch: no watch; subscribe / resources: its CUPTI subscriber alone / with
      # its node callbacks only
      case $kind in
        lib) env=GAPSCOPE_GRAPH_NODES_RELEASE_S=1 ;;
        held) env=GAPSCOPE_GRAPH_NODES_RELEASE_S=0 ;;
        nowatch) env=GAPSCOPE_GRAPH_NODES=0 ;;
        subscribe | resources) env=GAPSCOPE_GRAPH_NODES=$kind ;;
        *) env= ;;
      esac
      WL_ENV=$env start_wl "$name" "$([ $kind = none ] && echo 0 || echo 1)" \
        --mode "$mode" --ranges on --seconds "$IDLE_S" --log "$LOG/$name.steps.jsonl"
      wl=$WL
      # The loop ends by itself after IDLE_S seconds; bound the whole process all the same.
      for _ in $(seq $(( (READY_S + IDLE_S + 60) * 10 ))); do kill -0 $wl 2>/dev/null || break; sleep 0.1; done
      stop_wl "$name" $wl
      echo "$mode $kind $name $WL_RC $LOG/$name.steps.jsonl" >>"$LOG/idle.list"
    done
  done
  done
  python3 - "$LOG/idle.list" "$OUTDIR/idle_cost.txt" >>"$TABLE" 2>"$LOG/idle.err" <<'PY' \
    || row "graphnodes: idle cost" "no figure (see graphnodes/idle.err)" "within noise" FAIL
import collections, json, statistics, sys
meds = collections.defaultdict(lambda: collections.defaultdict(list))
lines = []
for entry in open(sys.argv[1]):
    mode, kind, name, rc, path = entry.split()
    med = meds[mode]
    try:
        ms = [json.loads(l)["ms"] for l in open(path) if l.strip()]
    except OSError:
        ms = []
    ms = ms[len(ms) // 10:]  # the first tenth of the blocks left out (clocks, allocator)
    if ms:
        med[kind].append(statistics.median(ms))
    lines.append("%s %s rc %s blocks %d median_ms %s" % (kind, name, rc, len(ms),
                                                        "%.4f" % statistics.median(ms) if ms else "-"))
with open(sys.argv[2], "w") as f:
    f.write("\n".join(lines) + "\n")
    for mode, med in meds.items():
        f.write("%s lib medians: %s\n%s none medians: %s\n" % (mode, med["lib"], mode, med["none"]))
for mode, med in meds.items():
    check = ("graphnodes: %s step, library loaded, never captured (the watch lets CUPTI go 1 s after the last "
             "graph built) vs no library" % mode)
    if not med["lib"] or not med["none"]:
        print("%s | no step times (lib %d, none %d processes) | within noise | FAIL" % (check, len(med["lib"]),
                                                                                    len(med["none"])))
        continue
    lib, none = statistics.median(med["lib"]), statistics.median(med["none"])
    nowatch = "library without the watch %.4f ms (%.4f)" % (statistics.median(med["nowatch"]),
                                                          statistics.median(med["nowatch"]) / none) \
        if med["nowatch"] else "no run without the watch"
    # Within noise: the per-process medians with the library lie among those without it (the two ranges
    # overlap), i.e. the difference is no larger than what separates two processes without the library.
    overlap = min(med["lib"]) <= max(med["none"]) and min(med["none"]) <= max(med["lib"])
    print("%s | ratio %.4f (lib %.4f ms over %d processes, %.4f..%.4f; none %.4f ms over %d, %.4f..%.4f; %s) "
          "| within noise: the processes' medians overlap | %s"
          % (check, lib / none, lib, len(med["lib"]), min(med["lib"]), max(med["lib"]), none, len(med["none"]),
             min(med["none"]), max(med["none"]), nowatch, "PASS" if overlap else "FAIL"))
    for kind in ("held", "subscribe", "resources"):  # which part of the watch costs what
        if med[kind]:
            print("graphnodes: %s step, watch %s vs no library | ratio %.4f (%.4f ms over %d "
                  "processes, %.4f..%.4f) | - | INFO" % (mode, kind, statistics.median(med[kind]) / none,
                                                        statistics.median(med[kind]), len(med[kind]),
                                                        min(med[kind]), max(med[kind])))
PY
fi

if want kineto; then
  k=$OUTDIR/graph_ranges_kineto.json
  rm -f "$k" "$k.gz"
  timeout 600 $PIN_WL python3 "$W/graph_nodes.py" "${MODEL[@]}" --mode graph --ranges on --profile-json "$k" \
    >"$LOG/kineto.workload.log" 2>&1
  rc=$?
  [ -s "$k" ] && gzip -9f "$k"
  if [ -s "$k.gz" ]; then
    row "graphnodes: kineto fixture (graph replays, ranges at capture)" "rc $rc, $(stat -c %s "$k.gz") bytes gzipped" \
      "a trace" PASS
  else
    row "graphnodes: kineto fixture (graph replays, ranges at capture)" "rc $rc, no trace (see graphnodes/kineto.workload.log)" \
      "a trace" FAIL
    tail -5 "$LOG/kineto.workload.log"
  fi
fi

# The checks read the three captures (a-c): not run when only other parts were asked for.
if [ -f "$HERE/graph_nodes_check.py" ] && { want graph_ranges || want graph_noranges || want eager_ranges; }; then
  timeout 900 python3 "$HERE/graph_nodes_check.py" --cli "$BUILD/app/gapscope-cli" "$OUTDIR" >"$LOG/check.out" 2>"$LOG/check.err"
  rc=$?
  if grep ' | ' "$LOG/check.out" >>"$TABLE"; then
    [ $rc = 0 ] || row "graphnodes: graph_nodes_check.py" "rc $rc after its rows (see graphnodes/check.err)" "rc 0" INFO
  else
    row "graphnodes: graph_nodes_check.py" "rc $rc, no rows (see graphnodes/check.err)" "rows" FAIL
  fi
fi
cat "$TABLE"
