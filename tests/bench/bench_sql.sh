#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SQL over the 12M-kernel synth trace (8 ranks x 1000 steps x 1500 kernels, the analysis benchmarks' file):
#   1. `query FILE "select name, sum(dur) from kernels group by name"` against `summary --json FILE` (the
#      same kernel totals by name), end to end, runs alternated, medians (target: the query <= 2 s);
#   2. `export --sqlite` of the file: wall time, peak resident memory (target < 1 GB), database size;
#   3. 20 captures (synth, seeds 1-20, 8 ranks x 100 steps x 1500 kernels: 1.2M kernels each) appended
#      into one database, and a cross-capture query over it through `query DB`.
# Usage: tests/bench/bench_sql.sh BUILD_DIR [REPEATS]
set -euo pipefail
BUILD=${1:?usage: bench_sql.sh BUILD_DIR [repeats]}
REPEATS=${2:-5}
CLI="$BUILD/app/gapscope-cli"
[ -x "$CLI" ] || cmake --build "$BUILD" --target gapscope-cli
DATA="$BUILD/bench_data"
A="$DATA/analysis_8x1000x1500.gapscope" # the same file as bench_analysis.sh
mkdir -p "$DATA"
[ -s "$A" ] || "$CLI" synth --ranks 8 --steps 1000 --kernels-per-step 1500 --seed 1 -o "$A"
# One run: "WALL CPU MAXRSS_KB".
timed() { /usr/bin/time -f '%e %U %S %M' "$@" 2>&1 > /dev/null | tail -1 | awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }'; }
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
Q="select name, sum(dur) from kernels group by name"
sw=() sc=() qw=() qc=() qm=()
for ((i = 0; i < REPEATS; ++i)); do
  read -r w c m < <(timed "$CLI" summary --json "$A"); sw+=("$w"); sc+=("$c")
  read -r w c m < <(timed "$CLI" query "$A" "$Q"); qw+=("$w"); qc+=("$c"); qm+=("$m")
done
echo "summary --json, median of $REPEATS: wall $(median "${sw[@]}") s (runs ${sw[*]}), CPU $(median "${sc[@]}") s"
echo "query group by name, median of $REPEATS: wall $(median "${qw[@]}") s (runs ${qw[*]}), CPU $(median "${qc[@]}") s, peak $(( $(median "${qm[@]}") / 1024 )) MB (target <= 2 s)"
DB="$DATA/bench_sql.db"
rm -f "$DB"
read -r w c m < <(timed "$CLI" export --sqlite "$DB" "$A")
echo "export --sqlite: wall $w s, CPU $c s, peak $((m / 1024)) MB (target < 1024 MB), database $(( $(stat -c %s "$DB") / 1048576 )) MB"
rm -f "$DB"
FLEET="$DATA/bench_fleet.db"
rm -f "$FLEET"
fw=()
for seed in $(seq 1 20); do
  F="$DATA/fleet_seed$seed.gapscope"
  [ -s "$F" ] || "$CLI" synth --ranks 8 --steps 100 --kernels-per-step 1500 --seed "$seed" -o "$F" > /dev/null
  flag=$([ "$seed" -gt 1 ] && echo --append || true)
  read -r w c m < <(timed "$CLI" export --sqlite "$FLEET" $flag --label "seed=$seed" "$F"); fw+=("$w")
done
CQ="select c.capture, l.value as seed, count(*) as kernels, sum(k.dur) / 1e6 as kernel_ms from kernels k join captures c using (capture) join labels l on l.capture = c.capture and l.key = 'seed' group by c.capture"
rows=$("$CLI" query --csv "$FLEET" "$CQ" | tail -n +2 | wc -l)
read -r w c m < <(timed "$CLI" query "$FLEET" "$CQ")
echo "20 captures appended: export median $(median "${fw[@]}") s each, database $(( $(stat -c %s "$FLEET") / 1048576 )) MB; cross-capture query: $rows rows in $w s"
rm -f "$FLEET"
