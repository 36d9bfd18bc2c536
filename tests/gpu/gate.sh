#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `diff --gate` on real captures: tests/gpu/gate.sh BUILD_DIR OUTDIR
# lasting.sh's `modes` part (one unmodified HF generate() process per mode, eager and graph, GATE_CAPTURES
# captures each (default 12), LASTING_BLOCK calls apart), then each mode's captures compared as a CI gate would:
#   capture k against capture k+1, k >= 2: the same process and workload, nothing changed: no bar may regress
#     (exit 0; 2 counts as a failure to compare); with 12 captures, 10 pairs a mode, 20 in all;
#   capture 1 against capture 2: INFO (the first capture is taken before CUPTI was ever attached).
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
N=${GATE_CAPTURES:-12}
LASTING_PARTS=modes LASTING_MODES=${GATE_MODES:-eager,graph} LASTING_CAPTURES=$N bash "$HERE/lasting.sh" "$BUILD" "$OUTDIR"
for mode in ${GATE_MODES:-eager graph}; do
  mode=${mode//,/ }
  pass=0 pairs=0
  for k in $(seq 1 $((N - 1))); do
    pair="$k $((k + 1))"
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
print(f\"exit {g['exit']} ({g['result']}), regressions {g['regressions']}, waived {g.get('waived')}, steps {steps['a']['count'] if isinstance(steps['a'],dict) else steps['a']}/{steps['b']['count'] if isinstance(steps['b'],dict) else steps['b']}, step {m['a_median_ms']:.3f} -> {m['b_median_ms']:.3f} ms ({m['verdict']})\")
" "$base.json" 2>>"$base.err" || echo "exit $rc (no JSON)")
    if [ "$1" -ge 2 ]; then
      pairs=$((pairs + 1)); [ $rc = 0 ] && pass=$((pass + 1))
      row "gate: $mode capture $1 vs $2 (same process)" "$what" "exit 0" "$([ $rc = 0 ] && echo PASS || echo FAIL)"
    else
      row "gate: $mode capture $1 vs $2" "$what" "-" INFO
    fi
  done
  row "gate: $mode, consecutive captures 2..$N" "$pass of $pairs pairs pass" "all" "$([ $pass = $pairs ] && echo PASS || echo FAIL)"
done
