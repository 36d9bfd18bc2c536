#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# libgapscope-inject.so on two GPUs: tests/gpu/capture_inject.sh BUILD_DIR OUTDIR
#
# Without gapscope-agent: inject_probe (tests/capture/inject) plays the agent, and the workload
# (tests/gpu/workloads/tp_decode.py, a 2-process torch.distributed NCCL decode loop) asks it for
# captures between its own timed phases. Checks: the library loads through CUDA_INJECTION64_PATH
# in torch processes, both ranks register and record the same steps, per-step kernel counts are
# equal across steps and match torch.profiler's on the same loop, GPU times sit after their host
# launches (one clock), the NVTX rule, the NCCL plugin, another CUPTI client is refused and
# reported while torch.profiler keeps working, a 10,000-step capture keeps rank memory flat, and
# step-time overhead (not injected / injected idle / capturing / torch.profiler), eager and graph
# (the design is described above the runs below).
#
# Binaries: $INJECT_CARRY/{libgapscope-inject.so,inject_probe} when given and loadable, else built
# in BUILD_DIR (cmake --preset gpu). Rows `check | measured | target | PASS/FAIL` go to
# OUTDIR/table.txt; logs and JSON under OUTDIR/inject.
set -uo pipefail
BUILD=${1:-build/gpu}
OUTDIR=${2:?usage: capture_inject.sh BUILD_DIR OUTDIR}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$ROOT/tests/gpu/workloads
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
LOG=$OUTDIR/inject
mkdir -p "$LOG/runs"
TABLE=$OUTDIR/table.txt
touch "$TABLE"

LIB="" PROBE=""
if [ -n "${INJECT_CARRY:-}" ] && [ -f "$INJECT_CARRY/libgapscope-inject.so" ] && [ -x "$INJECT_CARRY/inject_probe" ]; then
  if python3 -c "import torch, ctypes, sys; ctypes.CDLL(sys.argv[1])" "$INJECT_CARRY/libgapscope-inject.so" 2>>"$LOG/build.log" \
     && { "$INJECT_CARRY/inject_probe" >/dev/null 2>&1; [ $? -eq 2 ]; }; then
    LIB=$(readlink -f "$INJECT_CARRY/libgapscope-inject.so"); PROBE=$(readlink -f "$INJECT_CARRY/inject_probe")
    echo "using carried binaries" >>"$LOG/build.log"
  fi
fi
if [ -z "$LIB" ]; then
  start=$(date +%s)
  # The gpu preset's settings (no Qt, CUDA on, Release), in BUILD_DIR.
  (cd "$ROOT" && { [ -f "$BUILD/build.ninja" ] || cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
       -DGAPSCOPE_GUI=OFF -DGAPSCOPE_CUDA=ON -DGAPSCOPE_FUZZ=OFF -DGAPSCOPE_BUILD_TESTS=ON; } \
     && cmake --build "$BUILD" --target gapscope-inject inject_probe -j16) >>"$LOG/build.log" 2>&1
  echo "build: $(( $(date +%s) - start )) s" >>"$LOG/build.log"
  LIB=$(readlink -f "$BUILD/capture/inject/libgapscope-inject.so" 2>/dev/null || true)
  PROBE=$(readlink -f "$BUILD/tests/capture/inject/inject_probe" 2>/dev/null || true)
fi
if [ ! -f "$LIB" ] || [ ! -x "$PROBE" ]; then
  echo "inject: build | failed (see inject/build.log) | builds | FAIL" >>"$TABLE"
  tail -30 "$LOG/build.log"
  exit 1
fi

{
  nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'nccl', torch.cuda.nccl.version())"
  TL=$(python3 -c "import torch,os; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))")
  echo "protobuf symbols exported by torch libs: $(nm -D --defined-only "$TL"/libtorch_cpu.so 2>/dev/null | grep -c _ZN6google8protobuf)"
  echo "libcupti used by torch: $(ldd "$TL"/libtorch_cuda.so 2>/dev/null | grep cupti)"
  echo "inject: $LIB"; ldd "$LIB"
  echo "cpu0 siblings $(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2>/dev/null), cpu8 siblings $(cat /sys/devices/system/cpu/cpu8/topology/thread_siblings_list 2>/dev/null)"; lscpu | head -20
  echo "perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null), PMUs: $(ls /sys/bus/event_source/devices 2>/dev/null | tr '\n' ' ')"
} >"$LOG/env.txt" 2>&1

SOCK=/tmp/gapscope-inject-test/agent.sock
CTRL=$LOG/control
rm -rf "$CTRL" /tmp/gapscope-inject-test; mkdir -p "$CTRL" /tmp/gapscope-inject-test; chmod 700 /tmp/gapscope-inject-test
"$PROBE" --socket "$SOCK" --control "$CTRL" --timeout 900 >"$LOG/probe.log" 2>&1 &
PROBE_PID=$!

# Two ranks where the box has two GPUs; one where it has one (every series but graph, eager and
# eagergpu runs in one process then; those need the second rank).
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
NPROC_DEFAULT=$([ "$GPUS" -ge 2 ] && echo 2 || echo 1)
echo "GPUs: $GPUS, ranks per run: $NPROC_DEFAULT" >>"$LOG/runs.txt"
port=29611
run() { # tag mode injected phases [extra args...]
  local tag=$1 mode=$2 inj=$3 phases=$4; shift 4
  local envs=()
  if [ "$inj" = 1 ]; then
    envs=(CUDA_INJECTION64_PATH="$LIB" NVTX_INJECTION64_PATH="$LIB" NCCL_PROFILER_PLUGIN="$LIB"
          GAPSCOPE_AGENT_SOCKET="$SOCK" GAPSCOPE_INJECT_LOG=1 ${RUN_ENV:-})
  fi
  port=$((port + 1))
  local t0=$(date +%s)
  env "${envs[@]}" timeout 240 python3 -m torch.distributed.run --nproc_per_node "${NPROC:-$NPROC_DEFAULT}" --master_port $port \
    "$W/tp_decode.py" --mode "$mode" --phases "$phases" --control "$CTRL" --out "$LOG/runs" --tag "$tag" "$@" \
    >"$LOG/$tag.log" 2>&1
  echo "$tag: rc $? in $(( $(date +%s) - t0 )) s" | tee -a "$LOG/runs.txt"
}

# Overhead design (capture_report.py): injected idle vs not injected needs separate processes, so
# they alternate (base, inj, base, inj, ...; GAPSCOPE_INJECT_{GRAPH,EAGER}_PAIRS pairs) and compare
# the median of the per-process medians of each one's first idle phase against the spread between
# processes of one configuration. Capturing and torch.profiler are measured in ONE process in blocks
# interleaved with idle blocks (blocks:R:N:KIND), each against the idle blocks around it. Kineto keeps
# its CUPTI subscriber once torch.profiler has run, so every capture block comes before the first
# profile. Each rank pins itself to its GPU's cores and times with the garbage collector off.
# Graph mode: steps by CUDA graph launch. Eager mode: steps by the NVTX range around each step (all
# eager runs carry the range, so the comparison stays fair); after torch.profiler the eager run
# captures by anchor kernel (the step's one argmax).
GPAIRS=${GAPSCOPE_INJECT_GRAPH_PAIRS:-1}
EPAIRS=${GAPSCOPE_INJECT_EAGER_PAIRS:-2}
BASE="warm:30,idle:300"
BLOCKS="blocks:3:100:capture,profile:20,blocks:3:100:profile"
GRAPH_INJ="warm:30,idle:300,capture:20:20,$BLOCKS,capture:20:20,profcap:0"
EAGER_INJ="warm:30,idle:300,capture:20:20,$BLOCKS,capture:20:20:anchor:ArgMax,profcap:0"
# With GAPSCOPE_INJECT_KINDS=1 the second injected eager process, after its idle phase, measures
# what each record kind costs (captures with some kinds left off, each followed by an idle phase;
# capture_report.py record_kinds). On the 2x H200 box the host-bound loop's noise (25-36 %) hid it.
K="capture:100:150:nvtx:decode_step"
KINDS=""
[ "${GAPSCOPE_INJECT_KINDS:-0}" = 1 ] && KINDS=",$K,idle:100,$K:api=0,idle:100,$K:sync=0,idle:100,$K:nvtx=0+nccl=0,idle:100,$K:api=0+sync=0+nvtx=0+nccl=0+memops=0,idle:100"
# Series (GAPSCOPE_INJECT_SERIES, default all): graph; eager (the host-bound loop: ~518 launches
# from Python per step, host time > GPU time); eagergpu (eager, GPU-bound: 16 layers with a 4x
# wider FFN over a 16k-token cache, so the GPU's share of each step exceeds the host's and host
# noise stops setting the step time); eager1 (host-bound eager in ONE process: no second rank
# whose host jitter every all_reduce adds to the step; a model sized for one GPU with the same 518
# launches); long (the small model's 10,000-step capture, GAPSCOPE_INJECT_LONG_REPEAT times;
# GAPSCOPE_INJECT_LONG_KEYS adds captures with record kinds left off).
# side (asked for by name, not in the default list): the host-bound one-process loop, not injected
# and injected idle run AT THE SAME TIME, side by side on disjoint cores (and GPUs where there are
# two), meeting before their timed phase, so that CPU-speed swings common to both cancel in their
# ratio. Pairs (cores X|Y): base|base, inj|base, base|inj, so the cores' own bias cancels, then
# capturing|base and torch.profiler|base, each set against base|base (capture_report.py
# side_by_side); GAPSCOPE_INJECT_SIDE_REPEAT sets of them. On the H200 VM the two processes'
# speeds did not move together (README, "host-bound timing"), so it resolves nothing there.
SERIES=${GAPSCOPE_INJECT_SERIES:-graph,eager,eagergpu,eager1,long}
want() { [[ ",$SERIES," == *",$1,"* ]]; }
EAGERGPU=(--layers 16 --ffn 57344 --context 16384 --nvtx)
T_START=$(date +%s)
if want graph; then
  for i in $(seq 1 "$GPAIRS"); do
    sfx=$([ "$i" = 1 ] || echo "$i")
    run "graph-base$sfx" graph 0 "$BASE"
    if [ "$i" = 1 ]; then run graph-inj graph 1 "$GRAPH_INJ"; else run "graph-inj$sfx" graph 1 "$BASE"; fi
  done
fi
for series in eager eagergpu; do
  want $series || continue
  # GAPSCOPE_INJECT_EAGER_ARGS adds workload options to the host-bound eager loop, e.g. --canary-iters 5000.
  extra=(--nvtx ${GAPSCOPE_INJECT_EAGER_ARGS:-})
  [ $series = eagergpu ] && extra=("${EAGERGPU[@]}")
  for i in $(seq 1 "$EPAIRS"); do
    sfx=$([ "$i" = 1 ] || echo "$i")
    run "$series-base$sfx" eager 0 "$BASE" "${extra[@]}"
    if [ "$i" = 1 ]; then run "$series-inj" eager 1 "$EAGER_INJ" "${extra[@]}"
    elif [ "$i" = 2 ]; then run "$series-inj$sfx" eager 1 "$BASE$KINDS" "${extra[@]}"
    else run "$series-inj$sfx" eager 1 "$BASE" "${extra[@]}"; fi
  done
done
if want eager1; then
  # GAPSCOPE_INJECT_EAGER1_ARGS adds workload options, e.g. --pin-main-core or --canary-iters 5000.
  EAGER1=(--hidden 4096 --ffn 14336 --heads 32 --nvtx --count-instructions ${GAPSCOPE_INJECT_EAGER1_ARGS:-})
  for i in $(seq 1 "$EPAIRS"); do
    sfx=$([ "$i" = 1 ] || echo "$i")
    NPROC=1 run "eager1-base$sfx" eager 0 "$BASE" "${EAGER1[@]}"
    if [ "$i" = 1 ]; then NPROC=1 run eager1-inj eager 1 "warm:30,idle:300,$BLOCKS" "${EAGER1[@]}"
    else NPROC=1 run "eager1-inj$sfx" eager 1 "$BASE" "${EAGER1[@]}"; fi
  done
fi
if want side; then
  # Cores X and Y: the two halves of the allowed CPUs; GPU 0 and GPU 1 where there are two.
  read -r CX CY < <(python3 -c "import os; c=sorted(os.sched_getaffinity(0)); h=len(c)//2; print(','.join(map(str,c[:h])), ','.join(map(str,c[h:])))")
  GX=0; GY=$([ "$GPUS" -ge 2 ] && echo 1 || echo 0)
  SIDE=(--hidden 4096 --ffn 14336 --heads 32 --nvtx --count-instructions --pin-main-core ${GAPSCOPE_INJECT_SIDE_ARGS:-})
  SIDE_STEPS=${GAPSCOPE_INJECT_SIDE_STEPS:-2000}
  side_one() { # tag injected gpu cpus port phases
    local envs=()
    [ "$2" = 1 ] && envs=(CUDA_INJECTION64_PATH="$LIB" NVTX_INJECTION64_PATH="$LIB" NCCL_PROFILER_PLUGIN="$LIB"
                          GAPSCOPE_AGENT_SOCKET="$SOCK" GAPSCOPE_INJECT_LOG=1)
    env "${envs[@]}" CUDA_VISIBLE_DEVICES=$3 timeout 240 python3 -m torch.distributed.run --nproc_per_node 1 \
      --master_port "$5" "$W/tp_decode.py" --mode eager --phases "warm:30,meet:0,$6" --cpus "$4" --timeout 150 \
      --control "$CTRL" --out "$LOG/runs" --tag "$1" "${SIDE[@]}" >"$LOG/$1.log" 2>&1
    echo "$1: rc $?" >>"$LOG/runs.txt"
  }
  side_pair() { # tag X-role Y-role: base (not injected, idle), inj (injected, idle), cap (capturing), prof (torch.profiler)
    rm -f "$CTRL"/meet-*.ready; echo 2 >"$CTRL/meet.want"
    local t0=$(date +%s) pids=() side role inj phases
    port=$((port + 2))
    for side in x y; do
      role=$([ $side = x ] && echo "$2" || echo "$3")
      inj=$([ "$role" = base ] || [ "$role" = prof ] && echo 0 || echo 1)
      case $role in
        cap) phases="capture:$SIDE_STEPS:$((SIDE_STEPS + 100)):nvtx:decode_step" ;;
        prof) phases="profile:$((SIDE_STEPS / 2)):noexport" ;;
        *) phases="idle:$SIDE_STEPS" ;;
      esac
      if [ $side = x ]; then side_one "$1-x$role" "$inj" "$GX" "$CX" $((port - 1)) "$phases" &
      else side_one "$1-y$role" "$inj" "$GY" "$CY" "$port" "$phases" &
      fi
      pids+=($!)
    done
    wait "${pids[@]}"  # not the probe, which runs on
    echo "$1: side by side in $(( $(date +%s) - t0 )) s (X cpus $CX gpu $GX, Y cpus $CY gpu $GY)" | tee -a "$LOG/runs.txt"
  }
  for i in $(seq 1 "${GAPSCOPE_INJECT_SIDE_REPEAT:-1}"); do
    # GAPSCOPE_INJECT_SIDE_PAIRS picks pairs (default all: a b c d e).
    for p in ${GAPSCOPE_INJECT_SIDE_PAIRS:-a b c d e}; do
      case $p in
        a) side_pair "side$i-a" base base ;; b) side_pair "side$i-b" inj base ;; c) side_pair "side$i-c" base inj ;;
        d) side_pair "side$i-d" cap base ;; e) side_pair "side$i-e" prof base ;;
      esac
    done
  done
fi
if want long; then
  SMALL=(--layers 4 --hidden 2048 --ffn 8192 --heads 16 --context 1024 --nvtx)
  # GAPSCOPE_INJECT_LONG_REPEAT=N: N such processes one after the other (small-long, small-long2,
  # ...): the rank growth seen before was intermittent, so flat memory needs many captures.
  for i in $(seq 1 "${GAPSCOPE_INJECT_LONG_REPEAT:-1}"); do
    run "small-long$([ "$i" = 1 ] || echo "$i")" graph 1 "warm:50,capture:20:20:nvtx,rss:10000:500,capture:0:10000" "${SMALL[@]}"
  done
  # GAPSCOPE_INJECT_LONG_KEYS="api=0 sync=0+memops=0 ...": one more 10,000-step capture per entry,
  # each in its own process with those record kinds left off (what makes the rank grow).
  i=0
  for keys in ${GAPSCOPE_INJECT_LONG_KEYS:-}; do
    i=$((i + 1))
    echo "$keys" >"$LOG/small-long-k$i.keys"
    run "small-long-k$i" graph 1 "warm:50,capture:0:10000:graph:decode_step:$keys" "${SMALL[@]}"
  done
  # GAPSCOPE_INJECT_LONG_ENVS="NAME=VALUE[,NAME=VALUE] ...": the small-long run again (a 20-step
  # capture, 10,000 steps without one, then the 10,000-step capture) with the library's environment changed (e.g.
  # GAPSCOPE_CUPTI_DEVICE_BUFFER_BYTES), one process each.
  for envset in ${GAPSCOPE_INJECT_LONG_ENVS:-}; do
    i=$((i + 1))
    echo "with $envset" >"$LOG/small-long-k$i.keys"
    RUN_ENV=${envset//,/ } run "small-long-k$i" graph 1 "warm:50,capture:20:20:nvtx,rss:10000:500,capture:0:10000" "${SMALL[@]}"
  done
fi
echo "workload runs: $(( $(date +%s) - T_START )) s" | tee -a "$LOG/runs.txt"

touch "$CTRL/quit"
sleep 1
kill "$PROBE_PID" 2>/dev/null
wait "$PROBE_PID" 2>/dev/null
cp "$CTRL"/*.json "$LOG/" 2>/dev/null

python3 "$W/capture_report.py" --log "$LOG" --table "$TABLE" --bench "$LOG/bench.json" 2>&1 | tee "$LOG/report.txt"
echo
cat "$TABLE"
