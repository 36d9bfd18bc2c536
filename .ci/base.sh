#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Prints the commit that CI's diff-based checks (format_check.sh, tidy.sh) compare HEAD with: the argument if
# given, else $CI_BASE, else HEAD~20, else (a shorter or shallow history) the oldest commit reachable.
set -euo pipefail
base=${1:-${CI_BASE:-}}
if [ -n "$base" ]; then
  git rev-parse --verify --quiet "$base^{commit}" || { echo "base.sh: no such commit: $base" >&2; exit 2; }
elif git rev-parse --verify --quiet 'HEAD~20^{commit}'; then
  :
else
  git rev-list --max-parents=0 HEAD | tail -n 1
fi
