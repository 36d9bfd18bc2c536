#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# .json.gz against plain .json, side by side: tests/bench/bench_import_gz.sh BUILD_DIR
# Generates one kernels-only Kineto trace (gen_kineto.py --jitter, so it compresses about as well as a real
# trace: 13-14x; BENCH_GZ_EVENTS kernels, default 1.2M: about 950 MB) and its gzip (gzip -6, what `gzip`
# and most tools write) under BUILD_DIR/benchdata, then imports
# them in turns, BENCH_REPEAT rounds (default 5): plain .json, .json.gz with the build's inflater
# (ISA-L when it was found), .json.gz with zlib (GAPSCOPE_IMPORT_INFLATE=zlib), and the inflaters alone
# (bench_import --read-only). Prints the medians, the load average of each round and the ratio of .json.gz
# to plain .json wall time (the target is at most 1.25). Delete BUILD_DIR/benchdata afterwards.
set -euo pipefail
BUILD=$(cd "${1:?usage: bench_import_gz.sh BUILD_DIR}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
BIN="$BUILD/tests/bench/bench_import"
[ -x "$BIN" ] || { echo "bench_import not built: cmake --build $BUILD --target bench_import" >&2; exit 1; }
DATA="$BUILD/benchdata"
N=${BENCH_GZ_EVENTS:-1200000}
REPEAT=${BENCH_REPEAT:-5}
F="$DATA/kineto_jitter_$N.json"
mkdir -p "$DATA"
if [ ! -s "$F.meta" ]; then
  echo "generating $F ($N kernel events) and its gzip" >&2
  python3 "$HERE/gen_kineto.py" "$F" --events "$N" --kernels-only --jitter >"$F.meta"
  gzip -6 -c "$F" >"$F.gz"
fi
OUTS="$DATA/gz.runs"
: >"$OUTS"
echo "start: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores" >&2
for round in $(seq "$REPEAT"); do
  for mode in plain gz zlib read_gz read_zlib; do
    case $mode in
      plain) args=("$F"); env=() ;;
      gz) args=("$F.gz"); env=() ;;
      zlib) args=("$F.gz"); env=(GAPSCOPE_IMPORT_INFLATE=zlib) ;;
      read_gz) args=(--read-only "$F.gz"); env=() ;;
      read_zlib) args=(--read-only "$F.gz"); env=(GAPSCOPE_IMPORT_INFLATE=zlib) ;;
    esac
    load=$(cut -d' ' -f1 /proc/loadavg)
    env "${env[@]}" "$BIN" "${args[@]}" 2>/dev/null | sed "s/}\$/, \"mode\": \"$mode\", \"round\": $round, \"load\": $load}/" >>"$OUTS"
  done
done
echo "end: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 - "$OUTS" "$F" <<'PY'
import json, os, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
plain, gz = os.path.getsize(sys.argv[2]), os.path.getsize(sys.argv[2] + ".gz")
meta = json.load(open(sys.argv[2] + ".meta"))
def runs(m):
    return [r for r in rows if r["mode"] == m]
def med(m, k="seconds"):
    return statistics.median(r[k] for r in runs(m))
print("file: %d kernel events, %.0f MB plain, %.1f MB gzip -6" % (meta["kernels"], plain / 1e6, gz / 1e6))
print("| run | wall (median) | runs | CPU time | load avg |")
print("| --- | --- | --- | --- | --- |")
names = {"plain": "import .json", "gz": "import .json.gz (build's inflater)", "zlib": "import .json.gz (zlib)",
         "read_gz": "inflate only (build's inflater)", "read_zlib": "inflate only (zlib)"}
for m in ("plain", "gz", "zlib", "read_gz", "read_zlib"):
    r = runs(m)
    print("| %s | %.3f s | %s | %.3f s | %s |" % (names[m], med(m), ", ".join("%.2f" % x["seconds"] for x in r),
                                                 med(m, "cpu_seconds"), "/".join("%.1f" % x["load"] for x in r)))
ratio = [g["seconds"] / p["seconds"] for p, g in zip(runs("plain"), runs("gz"))]
print("json.gz / json wall time: %.2fx (median of the per-round ratios %s; zlib: %.2fx); target <= 1.25x" % (
    statistics.median(ratio), ", ".join("%.2f" % x for x in ratio), med("zlib") / med("plain")))
PY
