#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Viewer benchmark on the 12M-event 8-rank synth trace (generated once with gapscope-cli synth):
# paint median at full zoom-out and at 1 us/pixel (1920x1080, offscreen), first paint after open and
# the longest event-loop stall while loading, with CPU time and the load average beside wall time.
# Usage: [REPEATS=3] tests/bench/bench_timeline.sh BUILD_DIR [TRACE]   (open figures: medians of REPEATS opens)
#        HOST=1 tests/bench/bench_timeline.sh BUILD_DIR   the same with host ranges: an eager 8-rank synth
#        trace with CPU operators and Python frames (100 steps x 1500 kernels), every CPU thread group open
set -euo pipefail
BUILD=${1:?usage: bench_timeline.sh BUILD_DIR [TRACE]}
if [ "${HOST:-0}" = 1 ]; then
  TRACE=${2:-$BUILD/bench-data/synth-8x100x1500-eager-host.gapscope}
  SYNTH=(--ranks 8 --steps 100 --kernels-per-step 1500 --seed 1 --mode eager --host-ops --inject-host-op-us 40)
  export OPEN_CPU_LANES=1
else
  TRACE=${2:-$BUILD/bench-data/synth-8x1000x1500.gapscope}
  SYNTH=(--ranks 8 --steps 1000 --kernels-per-step 1500 --seed 1)
fi
for t in bench_timeline gapscope-cli; do
  [ -x "$BUILD/tests/bench/$t" ] || [ -x "$BUILD/app/$t" ] || cmake --build "$BUILD" --target "$t"
done
if [ ! -f "$TRACE" ]; then
  mkdir -p "$(dirname "$TRACE")"
  "$BUILD/app/gapscope-cli" synth "${SYNTH[@]}" -o "$TRACE"
fi
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); $(nproc) cores; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
QT_QPA_PLATFORM=offscreen /usr/bin/time -f "bench_timeline: %e s wall, %U s user + %S s sys CPU, %M KiB max RSS" \
  "$BUILD/tests/bench/bench_timeline" "$TRACE" "${REPEATS:-3}"
