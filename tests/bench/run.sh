#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs every area's benchmark driver (tests/bench/bench_<area>.sh BUILD_DIR [args]) in turn; a
# driver that exits 77 (GPU benchmarks without a GPU) counts as skipped.
# Usage: tests/bench/run.sh BUILD_DIR [ONLY_AREA]
set -euo pipefail
BUILD=${1:?usage: run.sh BUILD_DIR [area]}
HERE=$(cd "$(dirname "$0")" && pwd)
rc=0
for script in "$HERE"/bench_*.sh; do
  [ -e "$script" ] || continue
  area=$(basename "$script" .sh); area=${area#bench_}
  [ -n "${2:-}" ] && [ "$2" != "$area" ] && continue
  echo "== $area"
  r=0
  bash "$script" "$BUILD" || r=$?
  if [ $r = 77 ]; then echo "(skipped: needs a GPU)"; elif [ $r != 0 ]; then rc=1; fi
done
exit $rc
