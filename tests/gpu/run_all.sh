#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every GPU check in one command, on the GPU box (repo root):
#   tests/gpu/run_all.sh [PARTS]        PARTS: comma list of kernels,e2e,host,agent,inject,sample,bench,fixtures,steps,lasting,
#                                       graphexec,graphnodes (default all but host, bench and graphnodes)
# Builds with the gpu preset (no Qt, CUDA on) unless GAPSCOPE_GPU_BIN names a folder of prebuilt
# binaries laid out like a build folder (app/, capture/, kernels/, tests/capture/inject/). Each area
# script appends `check | measured | target | PASS/FAIL` rows to the table, which is printed last.
# Outputs: $OUT/table.txt and $OUT/results.tar.gz (logs, traces, JSON).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export GAPSCOPE_RESOURCES=$ROOT/resources
PARTS=${1:-kernels,e2e,agent,inject,sample,fixtures,steps,lasting,graphexec}
OUTROOT=${OUT:-/tmp/gapscope-gpu-out}
RES=${GAPSCOPE_GPU_RES:-$(mktemp -d)/results}
mkdir -p "$RES" "$OUTROOT"
TABLE=$RES/table.txt
: >"$TABLE"
has() { [[ ",$PARTS," == *",$1,"* ]]; }
t_start=$(date +%s)

BUILD=${GAPSCOPE_GPU_BIN:-build/gpu}
if [ -n "${GAPSCOPE_GPU_BIN:-}" ]; then
  export LD_LIBRARY_PATH=$ROOT/$BUILD/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
  # Prebuilt binaries must run here; otherwise build.
  if ! "$BUILD/app/gapscope-cli" --version >"$RES/prebuilt.txt" 2>&1 \
     || ! "$BUILD/kernels/gapscope-decode-sim" --help >>"$RES/prebuilt.txt" 2>&1; then
    echo "prebuilt binaries in $BUILD do not run here; building" | tee -a "$RES/prebuilt.txt"
    unset GAPSCOPE_GPU_BIN
    BUILD=build/gpu
  fi
fi
if [ -z "${GAPSCOPE_GPU_BIN:-}" ]; then
  t0=$(date +%s)
  # Benchmarks configured always: the kernels part runs bench_attention.
  bench=ON; extra=()
  has kernels && extra+=(bench_attention)
  has bench && extra+=(bench_format bench_live bench_analysis)
  targets=(gapscope-cli gapscope-agent gapscope-inject inject_probe gapscope-decode-sim gapscope-calibrate)
  [ "$PARTS" = bench ] && targets=(gapscope-cli gapscope-agent) # CPU benchmarks only: no CUDA programs
  { cmake --preset gpu -DGAPSCOPE_BUILD_BENCH=$bench \
      && cmake --build build/gpu -j"$(nproc)" --target "${targets[@]}" "${extra[@]}"; } >"$RES/build.log" 2>&1
  rc=$?
  echo "build (gpu preset) | rc $rc in $(( $(date +%s) - t0 )) s | builds | $([ $rc = 0 ] && echo PASS || echo FAIL)" >>"$TABLE"
  [ $rc = 0 ] || tail -40 "$RES/build.log"
fi
{ nvidia-smi; nvidia-smi topo -m; uname -a; } >"$RES/machine.txt" 2>&1

# GAPSCOPE_GPU_DEADLINE_S: skip the parts that would start after this many seconds, so that the
# table and the results still come back within the caller's time limit.
part() { # name script args...
  local name=$1; shift
  local t0=$(date +%s)
  if [ $(( t0 - t_start )) -gt "${GAPSCOPE_GPU_DEADLINE_S:-100000}" ]; then
    echo "$name | skipped: past the ${GAPSCOPE_GPU_DEADLINE_S} s deadline | runs | FAIL" >>"$TABLE"
    return
  fi
  "$@" >"$RES/$name.out" 2>&1
  echo "$name: rc $? in $(( $(date +%s) - t0 )) s" >>"$RES/parts.txt"
}
if has kernels; then
  part kernels tests/gpu/kernels.sh "$BUILD" "$RES/kernels" measure
  cat "$RES/kernels/table.txt" >>"$TABLE" 2>/dev/null
fi
if has e2e; then
  prof=$(ls "$RES"/kernels/calib1.json 2>/dev/null | head -1)
  E2E_PROFILE=$prof part e2e tests/gpu/e2e.sh "$BUILD" "$RES"
fi
if has host; then
  # Only the host-attribution cases of e2e.sh (and the clean eager run they are compared with).
  E2E_CASES=clean_eager,host_eager part host tests/gpu/e2e.sh "$BUILD" "$RES"
fi
if has agent; then
  part agent tests/gpu/capture_agent.sh "$BUILD" "$RES"
fi
if has sample; then
  part sample tests/gpu/sample.sh "$BUILD" "$RES"
  mkdir -p "$OUTROOT/sample" && cp "$RES"/sample/*.gapscope "$RES"/sample/*.truth.json "$OUTROOT/sample/" 2>/dev/null
fi
if has inject; then
  INJECT_CARRY=${GAPSCOPE_GPU_BIN:+$BUILD/inject} part inject timeout "${GAPSCOPE_INJECT_TIMEOUT_S:-900}" tests/gpu/capture_inject.sh "$BUILD" "$RES/inject-area"
  cat "$RES/inject-area/table.txt" >>"$TABLE" 2>/dev/null
fi
if has bench; then
  # CPU benchmarks on this machine's idle cores (the build box is shared): format, analysis, diff,
  # live streaming, large files.
  # The format targets are stated for a 2-core machine: pin to two of this box's idle cores.
  # GAPSCOPE_BENCH_PARTS (space list of format analysis diff live large; default all) picks some.
  B=" ${GAPSCOPE_BENCH_PARTS:-format analysis diff live large} "
  [[ $B == *" format "* ]] && part bench_format taskset -c 2,3 tests/bench/bench_format.sh "$BUILD" --repeats 5 --queries 3000
  [[ $B == *" analysis "* ]] && part bench_analysis taskset -c 2,3 tests/bench/bench_analysis.sh "$BUILD"
  [[ $B == *" diff "* ]] && part bench_diff taskset -c 2,3 tests/bench/bench_diff.sh "$BUILD"
  [[ $B == *" live "* ]] && GAPSCOPE_AGENT_BIN=$BUILD/capture/agent/gapscope-agent part bench_live tests/bench/bench_live.sh "$BUILD"
  # Large files (CLI figures; no Qt here): 36M and 120M events, overview against full decode.
  [[ $B == *" large "* ]] && part bench_large taskset -c 2,3 tests/bench/bench_large.sh "$BUILD"
  { echo "== nproc $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg)"
    for b in $B; do echo "== bench_$b"; cat "$RES/bench_$b.out"; done; } >"$OUTROOT/bench.txt" 2>&1
fi
if has fixtures; then
  part fixtures tests/gpu/fixtures.sh "$BUILD" "$RES/fixtures"
  cat "$RES/fixtures/table.txt" >>"$TABLE" 2>/dev/null
fi
if has steps; then
  part steps tests/gpu/steps.sh "$BUILD" "$RES/steps"
  cat "$RES/steps/table.txt" >>"$TABLE" 2>/dev/null
fi
if has lasting; then
  # What a capture leaves behind: per recorded piece, and after 3 captures against before, eager and graph.
  part lasting tests/gpu/lasting.sh "$BUILD" "$RES/lasting"
  cat "$RES/lasting/table.txt" >>"$TABLE" 2>/dev/null
fi
if has graphexec; then
  # What CUPTI's kernel recording leaves in a CUDA-graph exec, in a program of its own (no gapscope).
  part graphexec tests/gpu/probes/graph_exec.sh "$RES/graphexec"
  cat "$RES/graphexec/table.txt" >>"$TABLE" 2>/dev/null
fi
if has graphnodes; then
  # Graph-node attribution (asked for by name): NVTX ranges pushed while a CUDA graph is built, captured later.
  part graphnodes tests/gpu/graphnodes.sh "$BUILD" "$RES/graphnodes"
  cat "$RES/graphnodes/table.txt" >>"$TABLE" 2>/dev/null
  mkdir -p "$OUTROOT/graphnodes" && cp "$RES"/graphnodes/*.gapscope "$RES"/graphnodes/*.json.gz \
    "$RES"/graphnodes/idle_cost.txt "$OUTROOT/graphnodes/" 2>/dev/null
fi

cp "$TABLE" "$OUTROOT/table.txt"
tar -C "$(dirname "$RES")" -czf "$OUTROOT/results.tar.gz" results 2>/dev/null
echo
cat "$RES/parts.txt" 2>/dev/null
echo "total: $(( $(date +%s) - t_start )) s"
echo
column -t -s '|' "$TABLE" 2>/dev/null || cat "$TABLE"
