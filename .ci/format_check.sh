#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CI: the lines of *.cpp / *.h changed between BASE and HEAD must be as clang-format (.clang-format) writes them.
#   .ci/format_check.sh [BASE]     BASE: see base.sh (default $CI_BASE, else HEAD~20)
# Prints clang-format's diff and exits 1 when a changed line is not formatted. The committed HEAD versions are
# checked (copied to a temporary folder), so uncommitted edits in the working tree neither hide nor shift a
# finding. Needs clang-format and clang-format-diff (.ci/run installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
base=$(.ci/base.sh "${1:-}")
FORMAT_DIFF=${CLANG_FORMAT_DIFF:-$(command -v clang-format-diff || command -v clang-format-diff-14 || true)}
[ -n "$FORMAT_DIFF" ] || { echo "format_check: clang-format-diff not found (package clang-format)" >&2; exit 2; }
command -v clang-format >/dev/null || { echo "format_check: clang-format not found (package clang-format)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mapfile -t files < <(git diff --name-only --diff-filter=AMR "$base" HEAD -- '*.cpp' '*.h')
for f in "${files[@]}" $(git ls-tree -r --name-only HEAD | grep -E '(^|/)\.clang-format$'); do
  mkdir -p "$tmp/$(dirname "$f")"
  git show "HEAD:$f" >"$tmp/$f"
done
out=$(cd "$tmp" && git -C "$ROOT" diff -U0 --no-color --diff-filter=AMR "$base" HEAD -- '*.cpp' '*.h' \
  | "$FORMAT_DIFF" -p1)
if [ -n "$out" ]; then
  printf '%s\n' "$out"
  n=$(printf '%s\n' "$out" | grep -c '^+++ ' || true)
  echo "format_check: FAIL: $n of ${#files[@]} changed files since $(git rev-parse --short "$base") have lines that" \
    "clang-format writes differently (the diff above; fix with: git diff -U0 $(git rev-parse --short "$base") HEAD" \
    "| clang-format-diff -p1 -i)" >&2
  exit 1
fi
echo "format_check: ${#files[@]} changed .cpp/.h files since $(git rev-parse --short "$base"): changed lines formatted"
