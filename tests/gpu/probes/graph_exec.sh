#!/usr/bin/env bash
# Builds graph_exec_probe.cpp with the box's CUDA and runs each variant in a process of its own,
# against the libcupti torch loads (the one a capture of a torch process uses). Rows under OUTDIR.
# Usage: graph_exec.sh OUTDIR [VARIANTS] [NODES]   (run_all.sh part `graphexec`: the defaults)
set -u
OUT_DIR=${1:?OUTDIR}; mkdir -p "$OUT_DIR"
VARIANTS=${2:-"attached finalize update_finalize setparams_finalize reinstantiate_finalize finalize_reattach_twice eager_finalize knobs ctx_finalize pre_attached pre_finalize gt_attached gt_eager_finalize"}
NODES=${3:-200}
HERE=$(cd "$(dirname "$0")" && pwd)
CUDA=${CUDA_HOME:-/usr/local/cuda}
CUPTI_DIR=$(python3 - <<'PY' 2>/dev/null
import glob, os, torch
lib = os.path.join(os.path.dirname(torch.__file__), "lib")
hits = glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "**", "libcupti.so*"), recursive=True)
print(os.path.dirname(os.path.realpath(hits[0])) if hits else "")
PY
)
g++ -O2 -std=c++17 "$HERE/graph_exec_probe.cpp" -I"$CUDA/include" -I"$CUDA/extras/CUPTI/include" \
    -L"$CUDA/lib64" -L"$CUDA/extras/CUPTI/lib64" -L"$CUDA/lib64/stubs" -lcupti -lcuda -o "$OUT_DIR/graph_exec_probe" || exit 1
# PROBE_CUPTI=toolkit runs against the toolkit's libcupti instead.
if [ "${PROBE_CUPTI:-torch}" = toolkit ]; then CUPTI_DIR=$CUDA/lib64; [ -e "$CUDA/extras/CUPTI/lib64/libcupti.so" ] && CUPTI_DIR=$CUDA/extras/CUPTI/lib64; fi
echo "libcupti: ${CUPTI_DIR:-the toolkit one}"
for v in $VARIANTS; do
  LD_LIBRARY_PATH=${CUPTI_DIR:+$CUPTI_DIR:}${LD_LIBRARY_PATH:-} timeout 60 "$OUT_DIR/graph_exec_probe" "$v" "$NODES" \
      > "$OUT_DIR/$v.log" 2>&1
  rc=$?
  line=$(grep -h 'variant=\|result=' "$OUT_DIR/$v.log" | tail -1)
  # A crash prints no row: name the variant and the last stage it reached (stderr's stage= lines).
  [ -n "$line" ] || line="variant=$v result=crash at=$(grep -h '^stage=' "$OUT_DIR/$v.log" | tail -1 | cut -d= -f2)"
  echo "rc=$rc $line" | tee -a "$OUT_DIR/rows.txt"
done
# Rows for run_all.sh's table (check | measured | target | verdict): what this CUPTI does, as INFO,
# and whether a finalize after a recording of eager kernels only still passes (what the library
# relies on when it detaches: PASS/FAIL).
python3 - "$OUT_DIR/rows.txt" > "$OUT_DIR/table.txt" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    kv = dict(f.split("=", 1) for f in line.split() if "=" in f)
    if "variant" in kv:
        rows[kv["variant"]] = kv
def host(kv, state):
    return "%s us per graph launch, step %s us" % (kv.get(state + "_graph_launch_us", "?"), kv.get(state + "_step_us", "?"))
if "finalize" in rows:
    kv = rows["finalize"]
    print("graphexec: cuptiFinalize after recording kernels of a replayed exec (no torch, no gapscope; CUPTI %s) | %s%s | - | INFO"
          % (kv.get("cupti_api", "?"), kv["result"], " at " + kv["at"] if "at" in kv else ""))
if "attached" in rows:
    kv = rows["attached"]
    print("graphexec: host cost while CUPTI stays attached (%s nodes) | before %s; attached %s | - | INFO"
          % (kv.get("nodes", "?"), host(kv, "before"), host(kv, "attached")))
RESULT_ONLY = ("update_finalize", "setparams_finalize", "reinstantiate_finalize", "finalize_reattach_twice")
for v in RESULT_ONLY:
    if v in rows:
        print("graphexec: %s | %s | - | INFO" % (v, rows[v]["result"]))
# Any other variant asked for (knobs, pre_/gt_/ctx_ prefixes): its result and host cost by state.
for v, kv in rows.items():
    if v in ("finalize", "attached", "eager_finalize") + RESULT_ONLY:
        continue
    states = [st for st in ("attached", "action", "detached", "second") if kv.get(st + "_step_us", "0.0") not in ("0.0", "-1.0")]
    if kv["result"] == "crash":
        print("graphexec: %s | crashed (rc %s) after stage %s | - | INFO" % (v, kv.get("rc", "?"), kv.get("at", "?")))
        continue
    print("graphexec: %s | %s; before %s; %s | - | INFO" % (v, kv["result"], host(kv, "before"),
          "; ".join("%s %s" % (st, host(kv, st)) for st in states)))
if "eager_finalize" in rows:
    kv = rows["eager_finalize"]
    ok = kv["result"] == "ok"
    print("graphexec: cuptiFinalize after recording eager kernels only | %s; detached %s | survives | %s"
          % (kv["result"], host(kv, "detached"), "PASS" if ok else "FAIL"))
PY
cat "$OUT_DIR/table.txt"
