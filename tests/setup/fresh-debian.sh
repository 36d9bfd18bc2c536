#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Proves the README's two commands on a pristine system: builds a minimal Debian root with debootstrap (the
# machine's own apt mirror), clones the repository's committed HEAD into it, runs `./dev.sh test` there and
# checks that the viewer was built and every view test ran and passed (.ci/check_suite.py), that
# `./dev.sh run` starts the viewer on the bundled sample, and that with one Qt module's dev package removed
# (and apt-get off) `./dev.sh test` stops at configure naming that module and its package.
#
#   sudo tests/setup/fresh-debian.sh [REPO]      (REPO: default, this checkout)
# Environment: SUITE (a Debian suite debootstrap knows; default bookworm), MIRROR (default: the first URI of the
# machine's apt sources), ROOTFS (default /var/tmp/gapscope-fresh-SUITE), KEEP=1 keeps the root afterwards. Slow (about 20 minutes on 2 cores, most of it the build); not part of CI.
set -euo pipefail
REPO=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
SUITE=${SUITE:-bookworm}
ROOTFS=${ROOTFS:-/var/tmp/gapscope-fresh-$SUITE}
LOG=${LOG:-$ROOTFS.log}

log() { printf '[fresh-debian] %s\n' "$*" | tee -a "$LOG" >&2; }
die() { log "FAIL: $*"; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "fresh-debian.sh needs root (debootstrap, chroot, mounts)" >&2; exit 2; }

default_mirror() {
  local u
  u=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v security | head -n1)
  [ -n "$u" ] || u=$(grep -hs '^deb ' /etc/apt/sources.list | awk '{print $2}' | grep -v security | head -n1)
  echo "${u:-http://deb.debian.org/debian}"
}
MIRROR=${MIRROR:-$(default_mirror)}

mounts=(dev/shm dev/pts dev sys proc)
unmount_all() {
  local m
  for m in "${mounts[@]}"; do mountpoint -q "$ROOTFS/$m" 2>/dev/null && umount -l "$ROOTFS/$m"; done
  return 0
}
cleanup() {
  local p
  for p in /proc/[0-9]*; do # what still runs inside the root (an interrupted build) goes first
    [ "$(readlink "$p/root" 2>/dev/null)" = "$ROOTFS" ] && kill -9 "${p#/proc/}" 2>/dev/null
  done
  unmount_all
  [ "${KEEP:-0}" = 1 ] || rm -rf "$ROOTFS"
}
trap cleanup EXIT

in_root() { chroot "$ROOTFS" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin bash -c "$1"; }

phase_start=0
begin() { phase_start=$(date +%s); log "$1"; }
took() { echo $(($(date +%s) - phase_start)); }

: >"$LOG"
command -v debootstrap >/dev/null || { apt-get update -qq; apt-get install -y -qq debootstrap >/dev/null; }
unmount_all
rm -rf "$ROOTFS"

begin "debootstrap $SUITE from $MIRROR into $ROOTFS (minbase + git)"
debootstrap --variant=minbase --include=git,ca-certificates "$SUITE" "$ROOTFS" "$MIRROR" >>"$LOG" 2>&1 \
  || die "debootstrap failed (see $LOG)"
t_boot=$(took)
if [ "$SUITE" = bookworm ] && ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
  cp /etc/apt/sources.list.d/*.sources "$ROOTFS/etc/apt/sources.list.d/" # the machine's own mirror, updates too
  : >"$ROOTFS/etc/apt/sources.list"
fi
cp -L /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
mount -t proc proc "$ROOTFS/proc"
mount -t sysfs sys "$ROOTFS/sys"
mount --bind /dev "$ROOTFS/dev"
mount -t devpts devpts "$ROOTFS/dev/pts" 2>/dev/null || true
mount -t tmpfs shm "$ROOTFS/dev/shm"

git clone -q "$REPO" "$ROOTFS/root/gapscope"
head=$(git -C "$ROOTFS/root/gapscope" rev-parse --short HEAD)
log "cloned $REPO at $head; packages before: $(in_root 'dpkg-query -W | wc -l')"

begin "./dev.sh test (installs packages, builds, runs ctest)"
rc=0
in_root 'cd /root/gapscope && ./dev.sh test --output-junit ctest-junit.xml' >>"$LOG" 2>&1 || rc=$?
t_test=$(took)
summary=$(grep -E '^[0-9]+% tests passed' "$LOG" | tail -n1 || true)
log "./dev.sh test: exit $rc in ${t_test} s: ${summary:-no ctest summary}"
[ "$rc" -eq 0 ] || die "./dev.sh test failed on a fresh $SUITE (see $LOG)"
check=$(in_root 'cd /root/gapscope && .ci/check_suite.py build/dev' 2>&1) || die "$check"
log "$check"

begin "./dev.sh run (the viewer on the bundled sample, offscreen, 20 s)"
rc=0
in_root 'cd /root/gapscope && QT_QPA_PLATFORM=offscreen timeout 20 ./dev.sh run' >>"$LOG" 2>&1 || rc=$?
[ "$rc" -eq 124 ] || die "./dev.sh run exited with $rc before 20 s: the viewer did not stay up"
in_root 'cd /root/gapscope && s=$(ls resources/samples/*.gapscope | head -n1) &&
  QT_QPA_PLATFORM=offscreen build/dev/app/gapscope "$s" --export-png /tmp/first.png --size 1366x768 &&
  test -s /tmp/first.png' >>"$LOG" 2>&1 || die "the viewer's headless export of the sample failed"
log "./dev.sh run: the viewer was still running after 20 s; its export of the sample: $(stat -c %s "$ROOTFS/tmp/first.png") bytes"

for pkg in libqt6opengl6-dev qt6-charts-dev; do
  begin "without $pkg: ./dev.sh test must stop at configure naming it"
  in_root "dpkg -r --force-depends $pkg" >>"$LOG" 2>&1 || die "could not remove $pkg"
  rc=0
  out=$(in_root "cd /root/gapscope && GAPSCOPE_NO_APT=1 BUILD_DIR=build/no-$pkg ./dev.sh test" 2>&1) || rc=$?
  printf '%s\n' "$out" >>"$LOG"
  [ "$rc" -ne 0 ] || die "./dev.sh test passed without $pkg"
  printf '%s\n' "$out" | tr '\n' ' ' | grep -q "(package $pkg)" || die "configure did not name $pkg"
  log "without $pkg: exit $rc at configure: $(printf '%s\n' "$out" | tr -s ' \n' ' ' | grep -o 'missing: [^(]*(package [^)]*)' | head -n1)"
  in_root "cd /root/gapscope && ./dev.sh setup" >>"$LOG" 2>&1 || die "./dev.sh setup did not reinstall $pkg"
  in_root "dpkg-query -W -f='\${Status}' $pkg | grep -q 'install ok installed'" || die "$pkg not reinstalled"
done

log "PASS on a fresh $SUITE at $head: debootstrap ${t_boot} s, ./dev.sh test ${t_test} s; ${summary}"
