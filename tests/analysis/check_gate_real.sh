#!/bin/sh
# SPDX-License-Identifier: MIT
# `diff --gate` on two real captures of one unchanged process (H100, HF generate() with static cache and
# torch.compile, tests/gpu/gate.sh; captures 2 and 3): the step got 0.27 ms faster while idle time moved
# from the launch/host gaps (-0.45 ms) into the sync stalls (+0.42 ms). The gate must pass (exit 0) and
# report the sync stalls as waived; its JUnit report must validate (when xmllint is there).
# Usage: check_gate_real.sh CLI FIXTURES_DIR WORK_DIR XSD
set -eu
CLI=$1 DIR=$2 WORK=$3 XSD=$4
mkdir -p "$WORK"
rc=0
"$CLI" diff --gate --json --junit "$WORK/real.xml" "$DIR/graph_cap2.gapscope" "$DIR/graph_cap3.gapscope" >"$WORK/real.json" || rc=$?
[ "$rc" = 0 ] || { echo "FAIL: exit $rc (want 0)"; exit 1; }
python3 - "$WORK/real.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
g = d["gate"]
v = {x["name"]: x for x in d["verdicts"] if x["kind"] == "bar"}
print("gate:", g["result"], "regressions", g["regressions"], "waived", g["waived"])
print("measured step:", v["measured step"]["verdict"], "sync stalls:", v["sync stalls"]["verdict"],
      "launch/host gaps:", v["launch/host gaps"]["verdict"])
ok = (g["result"] == "pass" and g["waived"] == ["sync stalls"] and v["measured step"]["verdict"] == "improvement"
      and v["launch/host gaps"]["verdict"] == "improvement")
sys.exit(0 if ok else 1)
PY
if command -v xmllint >/dev/null; then xmllint --noout --schema "$XSD" "$WORK/real.xml"; fi
