#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `diff --gate` on real captures: tests/gpu/gate.sh BUILD_DIR OUTDIR
# lasting.sh's `modes` part (one unmodified HF generate() process per mode, eager and graph, three
# captures each, LASTING_BLOCK calls apart), then each mode's captures compared as a CI gate would:
#   capture 2 against capture 3: the same process and workload, nothing changed: no bar may regress
#     (exit 0; 2 counts as a failure to compare);
#   capture 1 against capture 3: INFO (the first capture is taken before CUPTI was ever attached).
# Rows `check | measured | target | PASS/FAIL/INFO` go to OUTDIR/table.txt; the reports to OUTDIR/gate/.
set -uo pipefail
BUILD=${1:?usage: gate.sh BUILD_DIR OUTDIR}
OUTDIR=${2:?usage: gate.sh BUILD_DIR OUTDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
CLI=$BUILD/app/gapscope-cli
TABLE=$OUTDIR/table.txt
mkdir -p "$OUTDIR/gate"
touch "$TABLE"
row() { echo "$1 | $2 | $3 | $4" >>"$TABLE"; }
LASTING_PARTS=modes LASTING_MODES=${GATE_MODES:-eager,graph} bash "$HERE/lasting.sh" "$BUILD" "$OUTDIR"
for mode in ${GATE_MODES:-eager graph}; do
  mode=${mode//,/ }
  for pair in "2 3" "1 3"; do
    set -- $pair
    a=$OUTDIR/lasting/$mode.cap$1.gapscope b=$OUTDIR/lasting/$mode.cap$2.gapscope
    if [ ! -s "$a" ] || [ ! -s "$b" ]; then
      row "gate: $mode capture $1 vs $2" "no capture file" "two captures" FAIL
      continue
    fi
    base=$OUTDIR/gate/$mode.cap$1-cap$2
    "$CLI" diff --gate --json --junit "$base.xml" --markdown "$base.md" --html "$base.html" "$a" "$b" >"$base.json" 2>"$base.err"
    rc=$?
    what=$(python3 -c "
import json,sys
d=json.load(open(sys.argv[1])); g=d['gate']
steps=d['steps']
m=[v for v in d['verdicts'] if v['name']=='measured step'][0]
print(f\"exit {g['exit']} ({g['result']}), regressions {g['regressions']}, steps {steps['a']['count'] if isinstance(steps['a'],dict) else steps['a']}/{steps['b']['count'] if isinstance(steps['b'],dict) else steps['b']}, step {m['a_median_ms']:.3f} -> {m['b_median_ms']:.3f} ms ({m['verdict']})\")
" "$base.json" 2>>"$base.err" || echo "exit $rc (no JSON)")
    if [ "$1" = 2 ]; then
      row "gate: $mode capture 2 vs 3 (same process)" "$what" "exit 0" "$([ $rc = 0 ] && echo PASS || echo FAIL)"
    else
      row "gate: $mode capture 1 vs 3" "$what" "-" INFO
    fi
  done
done
