#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gapscope developer entry point.
#   ./dev.sh run [FILE]   install what is missing, build, open the viewer (on the bundled sample by default)
#   ./dev.sh test         install what is missing, build, run the whole suite through ctest
#   ./dev.sh build        install what is missing and build only
#   ./dev.sh bench        build and run the benchmarks in tests/bench (results for BENCHMARKS.md)
#   ./dev.sh setup        only install the packages
# Environment: BUILD_DIR (default build/dev), JOBS (default: number of cores), GAPSCOPE_NO_APT=1 to skip apt-get,
# GAPSCOPE_GUI (default ON here: configure stops, naming the missing Qt module and its package, when the
# viewer cannot be built; OFF builds the CLI, agent and injection library only), GAPSCOPE_WERROR=ON to make
# warnings errors (.ci/run does; unset, the build directory keeps what it had, OFF at first).
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(pwd)
BUILD_DIR=${BUILD_DIR:-build/dev}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

# Debian 12 / Ubuntu 24.04 package names. Optional ones may be missing on some releases. The Qt packages
# include those that the modules' CMake packages need but qt6-base-dev only recommends (Qt6Charts needs
# Qt6OpenGL: libqt6opengl6-dev); cmake/GapscopeQt.cmake names any that is still missing.
PACKAGES=(g++ cmake ninja-build pkg-config git python3
  qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libgl-dev
  libprotobuf-dev protobuf-compiler libzstd-dev zstd zlib1g-dev
  libsimdjson-dev libsqlite3-dev libbenchmark-dev libisal-dev libxml2-utils
  clang)
OPTIONAL_PACKAGES=(ccache libclang-rt-dev xvfb xauth chromium)

log() { printf '\033[1m[dev.sh]\033[0m %s\n' "$*" >&2; }

# A package counts as present when it is installed or an installed package provides it (Ubuntu 24.04's
# qt6-base-dev provides libqt6opengl6-dev).
missing_packages() {
  local p provided
  provided=$(dpkg-query -W -f='${db:Status-Abbrev}|${Provides}\n' 2>/dev/null | awk -F'|' '$1 ~ /^ii/ {print $2}' \
    | tr ',' '\n' | awk '{print $1}' | sort -u)
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' && continue
    printf '%s\n' "$provided" | grep -qx -- "$p" && continue
    echo "$p"
  done
}

setup() {
  [ "${GAPSCOPE_NO_APT:-0}" = 1 ] && return 0
  command -v apt-get >/dev/null || { log "apt-get not found: install the packages listed in dev.sh yourself"; return 0; }
  local need opt sudo=""
  need=$(missing_packages "${PACKAGES[@]}")
  opt=$(missing_packages "${OPTIONAL_PACKAGES[@]}")
  [ -z "$need$opt" ] && return 0
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  log "installing: $need $opt"
  $sudo apt-get update -qq || log "apt-get update failed; trying with the cached package lists"
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $need
  local p
  for p in $opt; do
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 \
      || log "optional package $p not available; continuing"
  done
}

configure() {
  local args=(-S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}
    -DGAPSCOPE_GUI=${GAPSCOPE_GUI:-ON} ${GAPSCOPE_WERROR:+-DGAPSCOPE_WERROR=$GAPSCOPE_WERROR})
  # clang gives us libFuzzer in the same build; g++ works too (fuzz targets then replay their seeds only).
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ] && command -v clang++ >/dev/null; then
    args+=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
  fi
  cmake "${args[@]}" "$@" >/dev/null || cmake "${args[@]}" "$@"
}

build() {
  configure "$@"
  cmake --build "$BUILD_DIR" -j "$JOBS"
}

sample_trace() {
  local s
  for s in resources/samples/*.gapscope; do [ -f "$s" ] && { echo "$s"; return; }; done
}

cmd=${1:-run}
shift || true
case "$cmd" in
  setup) setup ;;
  build) setup; build "$@" ;;
  run)
    setup; build
    file=${1:-$(sample_trace)}
    log "opening ${file:-the viewer}"
    if [ -x "$BUILD_DIR/app/gapscope" ]; then
      exec "$BUILD_DIR/app/gapscope" ${file:+"$file"}
    fi
    log "the viewer was not built (GAPSCOPE_GUI=${GAPSCOPE_GUI:-ON}); showing the trace with gapscope-cli"
    exec "$BUILD_DIR/app/gapscope-cli" info ${file:+"$file"} ;;
  test)
    setup; build
    export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
    cd "$BUILD_DIR"
    ctest --output-on-failure -j "${CTEST_JOBS:-2}" "$@" ;;
  bench)
    setup; BUILD_TYPE=Release BUILD_DIR=${BUILD_DIR/dev/bench} build
    exec "$ROOT/tests/bench/run.sh" "${BUILD_DIR/dev/bench}" "$@" ;;
  *) sed -n '2,9p' "$0"; exit 2 ;;
esac
