#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Importer fixtures from real torch.profiler runs: tests/gpu/fixtures.sh BUILD_DIR OUTDIR
# Generates Kineto traces (tests/gpu/workloads/make_kineto_fixtures.py) under OUTDIR/kineto and, when
# BUILD_DIR holds gapscope-cli, opens each one with it. Appends rows to OUTDIR/table.txt.
set -uo pipefail
BUILD=${1:-}
OUTDIR=${2:?usage: fixtures.sh BUILD_DIR OUTDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
mkdir -p "$OUTDIR/kineto"
TABLE="$OUTDIR/table.txt"

start=$(date +%s)
python3 "$HERE/workloads/make_kineto_fixtures.py" --out "$OUTDIR/kineto" --steps "${FIXTURE_STEPS:-6}" \
  2>&1 | tee "$OUTDIR/kineto/generate.log"
rc=${PIPESTATUS[0]}
n=$(ls "$OUTDIR"/kineto/*.json.gz 2>/dev/null | wc -l)
echo "importer fixtures generated | $n files, rc $rc, $(( $(date +%s) - start )) s | 4 files | $([ "$rc" = 0 ] && [ "$n" -ge 4 ] && echo PASS || echo FAIL)" >>"$TABLE"

CLI="$BUILD/app/gapscope-cli"
if [ -n "$BUILD" ] && [ -x "$CLI" ]; then
  for f in "$OUTDIR"/kineto/*.json.gz; do
    name=$(basename "$f" .json.gz)
    want=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['kernel_count'])" "${f%.json.gz}.totals.json")
    if "$CLI" info --json "$f" >"$OUTDIR/kineto/$name.info.json" 2>"$OUTDIR/kineto/$name.info.err"; then
      got=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d.get('events',{}).get('kernel', d.get('kernel_count','?')))" "$OUTDIR/kineto/$name.info.json" 2>/dev/null || echo '?')
      echo "import $name kernels | $got | $want | $([ "$got" = "$want" ] && echo PASS || echo FAIL)" >>"$TABLE"
    else
      echo "import $name | error (see $name.info.err) | opens | FAIL" >>"$TABLE"
    fi
  done
fi
cat "$TABLE"
