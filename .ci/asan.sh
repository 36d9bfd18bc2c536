#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CI: the `asan` preset (AddressSanitizer + UBSan, Debug, -Werror) and the tests that fit CI's budget under it:
# every ctest except the view tests (label `views`), the hostile-file tests (label `hostile`), the three
# large streaming-analysis checks and the diff gate's two bootstrap-heavy checks (the 20-pair rate and the real
# H100 pair: 5 s in the dev build, over 120 s here); see .ci/README.md for why. Exits non-zero when the build or
# a test fails, or when any process wrote a sanitizer report (UBSan is made fatal here, ASan always is).
#
# Qt stays on at configure: the unit tests are QtTest programs, which tests/CMakeLists.txt only declares when
# Qt is found (GAPSCOPE_GUI=OFF would leave out every unit test, not only the viewer's). Only the targets that
# the chosen tests run are built (test_targets.py), so the viewer and views/ are not compiled. CUDA is off,
# benchmarks are off, and the fuzz targets are built as seed replays (GAPSCOPE_FUZZ=OFF): the whole build is
# already sanitized, and the dev suite runs libFuzzer itself.
#
# Sanitizer reports go to files (BUILD_DIR/sanitizer/), not to stderr: a golden test compares stdout and ignores
# the exit status (a leak found at exit would pass), and a test that starts the agent does not show the agent's
# stderr. Every report is printed at the end, named after the program that wrote it.
#
# The tests that bound the agent's memory (ASAN_RSS_TESTS) run on their own with a 16 MB quarantine instead of
# ASan's 256 MB: that quarantine alone takes them past their RSS limits.
#
# Environment: ASAN_BUILD_DIR (default build/asan), JOBS (default: number of cores), CTEST_JOBS (default 2),
# GAPSCOPE_WERROR (default ON), ASAN_CTEST_ARGS (test selection, default below), ASAN_RSS_TESTS (a regex).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${ASAN_BUILD_DIR:-build/asan}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
RSS_TESTS=${ASAN_RSS_TESTS:-^tst_agentprocess\$}
LARGE='analysis_stream_synth_(eager|cut)|analysis_diff_stream_synth|analysis_diff_gate|analysis_diff_gate_real'
read -r -a SELECT <<<"${ASAN_CTEST_ARGS:--LE ^(views|hostile)\$ -E ^($LARGE)\$|$RSS_TESTS}"

log() { printf '\033[1m[asan.sh]\033[0m %s\n' "$*" >&2; }
t0=$(date +%s)

args=(--preset asan -B "$BUILD_DIR" -DGAPSCOPE_GUI=ON -DGAPSCOPE_CUDA=OFF -DGAPSCOPE_FUZZ=OFF
  -DGAPSCOPE_BUILD_BENCH=OFF -DGAPSCOPE_WERROR="${GAPSCOPE_WERROR:-ON}")
# The same compiler as the dev build (dev.sh picks clang when it is there); only on the first configure.
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ] && command -v clang++ >/dev/null; then
  args+=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
fi
cmake "${args[@]}" >/dev/null || cmake "${args[@]}"

list() { ctest --test-dir "$BUILD_DIR" -N "$@" | sed -n 's/^ *Test *#[0-9]*: //p'; }
mapfile -t tests < <(list "${SELECT[@]}")
mapfile -t rss_tests < <(list -R "$RSS_TESTS")
[ "${#tests[@]}" -gt 0 ] || { log "no tests selected by ${SELECT[*]}"; exit 1; }
mapfile -t targets < <(.ci/test_targets.py "$BUILD_DIR" "${tests[@]}" "${rss_tests[@]}")
log "building ${#targets[@]} targets for $((${#tests[@]} + ${#rss_tests[@]})) tests"
cmake --build "$BUILD_DIR" -j "$JOBS" --target "${targets[@]}"
t1=$(date +%s)

reports=$(cd "$BUILD_DIR" && pwd)/sanitizer
rm -rf "$reports"
mkdir -p "$reports"
# halt_on_error: UBSan only prints and carries on by default, which would let a test pass.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:log_path=$reports/report:log_exe_name=1}
ASAN_BASE=${ASAN_OPTIONS:-detect_leaks=1:check_initialization_order=1:log_path=$reports/report:log_exe_name=1}
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
rc=0
log "running ${#tests[@]} tests: ${SELECT[*]}"
ASAN_OPTIONS=$ASAN_BASE ctest --test-dir "$BUILD_DIR" --output-on-failure -j "${CTEST_JOBS:-2}" "${SELECT[@]}" \
  --output-junit ctest-junit.xml || rc=1
if [ "${#rss_tests[@]}" -gt 0 ]; then
  log "running ${#rss_tests[@]} memory-bound tests with a 16 MB quarantine: ${rss_tests[*]}"
  ASAN_OPTIONS=$ASAN_BASE:quarantine_size_mb=16 ctest --test-dir "$BUILD_DIR" --output-on-failure \
    -R "$RSS_TESTS" --output-junit ctest-junit-rss.xml || rc=1
fi
t2=$(date +%s)
log "build $((t1 - t0)) s, tests $((t2 - t1)) s"
found=$(find "$reports" -type f | sort)
if [ -n "$found" ]; then
  rc=1
  for f in $found; do
    printf '\n\033[1m[asan.sh] sanitizer report %s\033[0m\n' "${f#"$reports"/}" >&2
    cat "$f" >&2
  done
  log "FAIL: $(echo "$found" | wc -l) sanitizer reports (above; also in $reports)"
fi
[ "$rc" -eq 0 ] || log "FAIL: see the failed tests and reports above"
exit "$rc"
