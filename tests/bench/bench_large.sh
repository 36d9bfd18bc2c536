#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Large files: 8-rank synth traces of 36M and 120M kernels (3,000 and 10,000 steps x 1,500 kernels;
# with 1b in SIZES also 1,000M: 83,334 steps, a 3.3 GB file that takes 5-10 minutes to write), made
# once with gapscope-cli synth under BUILD_DIR/bench-data. For each size, in one run:
#   CLI:    info through the OVERVIEW frame (--read overview), summary and analyze through it and
#           windows of whole steps, each against the full decode (--read full; the outputs compared),
#           and the same file cut at 70 % (no index: rebuilt by the overview's pass): wall time, max
#           RSS, events per second; with 36m and 120m, diff of the two, in windows against whole;
#   viewer: bench_large (overview + windows) for first paint, resident memory, paint medians at six
#           zooms and jump-to-step latency; at 36M also the same program decoding everything (full),
#           the baseline (FULL=1 adds it at every size: at 120M it needs ~15 GB and minutes);
#           the headless export of the whole trace (PNG), wall time and max RSS; the cut file (cut).
# CLI figures: the median wall time of REPEAT runs (default 3) and the largest max RSS among them.
# Usage: [SIZES="36m 120m 1b"] [FULL=1] [REPEAT=3] tests/bench/bench_large.sh BUILD_DIR
set -euo pipefail
BUILD=${1:?usage: bench_large.sh BUILD_DIR}
SIZES=${SIZES:-36m 120m}
DATA=$BUILD/bench-data
[ -x "$BUILD/app/gapscope-cli" ] || cmake --build "$BUILD" --target gapscope-cli
# The viewer's figures need the Qt build (bench_large, gapscope); without Qt only the CLI's are taken.
VIEWER=1
for t in tests/bench/bench_large app/gapscope; do
  [ -x "$BUILD/$t" ] || cmake --build "$BUILD" --target "$(basename "$t")" > /dev/null 2>&1 || VIEWER=0
done
CLI=$BUILD/app/gapscope-cli
mkdir -p "$DATA"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); $(nproc) cores; $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); load average: $(cut -d' ' -f1-3 /proc/loadavg)"

steps_of() { case $1 in 36m) echo 3000;; 120m) echo 10000;; 1b) echo 83334;; *) echo "unknown size $1" >&2; exit 2;; esac; }

# timed NAME CMD...: runs CMD REPEAT times (default 3; the machine is noisy), keeps the median wall time
# in $WALL and the largest max RSS of the runs in $RSS_MB; the last run's output stays in $TMP/out.
REPEAT=${REPEAT:-3}
timed() {
  local name=$1 i walls="" rss=0 w r; shift
  for ((i = 0; i < REPEAT; i++)); do
    /usr/bin/time -f "%e %M" -o "$TMP/time" "$@" > "$TMP/out" 2> "$TMP/err" || { echo "$name failed:"; tail -5 "$TMP/err"; return 1; }
    read -r w r < "$TMP/time"
    walls="$walls $w"
    [ "$r" -gt "$rss" ] && rss=$r
  done
  WALL=$(printf '%s\n' $walls | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  RSS_MB=$((rss / 1024))
}

printf '\n%-6s %-34s | %9s | %9s | %12s\n' size what "wall s" "RSS MB" "Mevents/s"
for size in $SIZES; do
  steps=$(steps_of "$size")
  trace=$DATA/synth-8x${steps}x1500.gapscope
  if [ ! -f "$trace" ]; then
    echo "writing $trace ..." >&2
    "$CLI" synth --ranks 8 --steps "$steps" --kernels-per-step 1500 --seed 1 -o "$trace" > /dev/null
  fi
  events=$("$CLI" info "$trace" --json --read overview | python3 -c 'import json,sys; print(json.load(sys.stdin)["event_count"])')
  row() { printf '%-6s %-34s | %9s | %9s | %12s\n' "$size" "$1" "$WALL" "$RSS_MB" "$(python3 -c "print(f'{${2:-$events}/max($WALL,0.01)/1e6:.1f}')")"; }
  timed "info overview" "$CLI" info "$trace" --json --read overview && row "info --read overview"
  if [ "$size" != 1b ]; then
    timed "info full" "$CLI" info "$trace" --json --read full && row "info --read full"
    timed "summary full" "$CLI" summary "$trace" --json --read full && row "summary --json --read full"
    timed "summary overview" "$CLI" summary "$trace" --json --read overview && row "summary --json --read overview"
    timed "analyze full" "$CLI" analyze "$trace" --json --no-steps --read full && row "analyze --json --no-steps --read full"
    cp "$TMP/out" "$TMP/analyze-full"
    timed "analyze overview" "$CLI" analyze "$trace" --json --no-steps --read overview && row "analyze ... --read overview"
    cmp -s "$TMP/out" "$TMP/analyze-full" || echo "$size: analyze --read overview DIFFERS from --read full"
    # The file cut at 70 % (no index: the overview's pass rebuilds it) against reading the cut file whole.
    head -c $(( $(stat -L -c %s "$trace") * 7 / 10 )) "$trace" > "$TMP/cut.gapscope"
    cut_events=$("$CLI" info "$TMP/cut.gapscope" --json --read overview 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["event_count"])')
    timed "cut info" "$CLI" info "$TMP/cut.gapscope" --json && row "cut at 70%: info" "$cut_events"
    timed "cut info full" "$CLI" info "$TMP/cut.gapscope" --json --read full && row "cut at 70%: info --read full" "$cut_events"
    timed "cut summary" "$CLI" summary "$TMP/cut.gapscope" --json && row "cut at 70%: summary --json" "$cut_events"
    timed "cut analyze" "$CLI" analyze "$TMP/cut.gapscope" --json --no-steps && row "cut at 70%: analyze --json" "$cut_events"
  fi
  [ "$VIEWER" = 1 ] || continue
  timed "export" "$BUILD/app/gapscope" "$trace" --export-png "$TMP/whole.png" && row "viewer: headless export, whole"
  modes=large
  if [ "$size" = 36m ] || [ "${FULL:-0}" = 1 ]; then modes="large full"; fi
  [ -f "$TMP/cut.gapscope" ] && modes="$modes cut"
  for mode in $modes; do
    file=$trace; how=$mode
    [ "$mode" = cut ] && { file=$TMP/cut.gapscope; how=large; }
    QT_QPA_PLATFORM=offscreen "$BUILD/tests/bench/bench_large" "$file" "$how" 20 > "$TMP/viewer-$size-$mode" 2>/dev/null
    sed -n 's/^key \(.*\)/'"$size $mode"': \1/p' "$TMP/viewer-$size-$mode" | grep -v ': mode \|: events ' >> "$TMP/viewer"
    sed -n '/^check/,$p' "$TMP/viewer-$size-$mode" | sed "s/^/$size $mode: /" >> "$TMP/checks"
  done
  rm -f "$TMP/cut.gapscope"
done
# diff of the 36M file (A) against the 120M one (B), each side in windows of whole steps (auto) against
# both decoded whole, the same output. The steps in common (0-2999) end inside a window of B, which
# is read again for the host comparison.
if [[ " $SIZES " == *" 36m "* && " $SIZES " == *" 120m "* ]]; then
  a=$DATA/synth-8x3000x1500.gapscope b=$DATA/synth-8x10000x1500.gapscope size="36/120"
  events=0
  for f in "$a" "$b"; do
    events=$((events + $("$CLI" info "$f" --json --read overview | python3 -c 'import json,sys; print(json.load(sys.stdin)["event_count"])')))
  done
  timed "diff full" "$CLI" diff --json --read full "$a" "$b" && row "diff --json A B --read full"
  cp "$TMP/out" "$TMP/diff-full"
  timed "diff auto" "$CLI" diff --json "$a" "$b" && row "diff --json A B (windows)"
  cmp -s "$TMP/out" "$TMP/diff-full" || echo "diff in windows DIFFERS from --read full"
fi
[ "$VIEWER" = 1 ] || { echo "(viewer figures skipped: no Qt build)"; exit 0; }
echo
echo "viewer (bench_large; full = everything decoded, the baseline):"
cat "$TMP/viewer"
echo
cat "$TMP/checks"
