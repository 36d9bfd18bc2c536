#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs every area's benchmark driver (tests/bench/bench_<area>.sh BUILD_DIR [args]) in turn.
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
  bash "$script" "$BUILD" || rc=1
done
exit $rc
