#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CI: clang-tidy (.clang-tidy at the root: bugprone-*, performance-*, warnings are errors) on what changed.
#   .ci/tidy.sh BUILD_DIR [BASE]     BASE: see base.sh (default $CI_BASE, else HEAD~20)
# Checks each .cpp changed between BASE and HEAD (beyond its #include lines), and the .cpp of each changed .h
# (one class per .h/.cpp pair), that BUILD_DIR/compile_commands.json compiles; findings in a changed header
# count, in other headers not.
# BUILD_DIR must be built (generated headers: trace.pb.h, moc). The files are read from the working tree.
# A file compiled twice (the fuzz targets' instrumented copies) is checked once, with its plain command.
# Exits 1 on any finding or when clang-tidy cannot parse a file. JOBS (default: number of cores) in parallel;
# a file takes 10-15 s on one core.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { sed -n '3,4p' "$0" >&2; exit 2; }
BUILD_DIR=$1
base=$(.ci/base.sh "${2:-}")
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
TIDY=${CLANG_TIDY:-$(command -v clang-tidy || command -v clang-tidy-14 || true)}
[ -n "$TIDY" ] || { echo "tidy: clang-tidy not found (package clang-tidy)" >&2; exit 2; }
[ -f "$BUILD_DIR/compile_commands.json" ] || { echo "tidy: no $BUILD_DIR/compile_commands.json" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A file whose change is only its #include lines (a move of files: the paths in them) is not checked: what
# clang-tidy reads in it did not change.
git diff -M -U0 --diff-filter=AMR "$base" HEAD -- '*.cpp' '*.h' | python3 -c '
import re, sys
changed, cur = {}, None
for line in sys.stdin:
    if line.startswith("diff --git"):
        cur = line.rstrip("\n").split(" b/", 1)[1]
        changed.setdefault(cur, False)
    elif line.startswith(("new file", "+++ /dev/null")) and cur:
        changed[cur] = True
    elif line.startswith(("+++", "---")) or not cur:
        continue
    elif line.startswith(("+", "-")) and not re.match(r"^[+-]\s*#\s*include\b", line) and line[1:].strip():
        changed[cur] = True
print("".join(f + "\n" for f, real in changed.items() if real), end="")
' >"$tmp/changed"

# A compilation database of the files to check, one entry each; prints them and the changed headers' regex.
python3 - "$BUILD_DIR/compile_commands.json" "$tmp" "$(pwd)" <<'EOF'
import json, os, re, shlex, sys
db_path, tmp, root = sys.argv[1:4]
changed = [l.strip() for l in open(os.path.join(tmp, "changed")) if l.strip()]
want = [c for c in changed if c.endswith(".cpp")]
want += [c[:-2] + ".cpp" for c in changed if c.endswith(".h") and c[:-2] + ".cpp" not in want]
entries = {}
for e in json.load(open(db_path)):
    f = os.path.relpath(os.path.join(e["directory"], e["file"]), root)
    args = shlex.split(e["command"]) if "command" in e else e["arguments"]
    plain = "fuzzer-no-link" not in " ".join(args)
    if f in want and (f not in entries or (plain and not entries[f][0])):
        entries[f] = (plain, e)
files = [f for f in want if f in entries]
json.dump([entries[f][1] for f in files], open(os.path.join(tmp, "compile_commands.json"), "w"), indent=1)
open(os.path.join(tmp, "files"), "w").write("".join(f + "\n" for f in files))
headers = [re.escape(h) for h in changed if h.endswith(".h")]
open(os.path.join(tmp, "header_filter"), "w").write("(" + "|".join(headers) + ")$" if headers else "^$")
EOF

mapfile -t files <"$tmp/files"
short=$(git rev-parse --short "$base")
if [ "${#files[@]}" -eq 0 ]; then
  echo "tidy: no .cpp changed since $short is compiled in $BUILD_DIR; nothing to check"
  exit 0
fi
echo "tidy: ${#files[@]} files changed since $short (or paired with a changed header), $JOBS at a time" >&2
start=$(date +%s)
export TIDY tmp
printf '%s\n' "${files[@]}" | nl -nln -w1 -s' ' | xargs -P "$JOBS" -L 1 sh -c '
  "$TIDY" -p "$tmp" --quiet --header-filter="$(cat "$tmp/header_filter")" "$1" >"$tmp/out.$0" 2>&1 \
    || echo "$1" >>"$tmp/failed"' || true
for i in $(seq 1 "${#files[@]}"); do
  # clang-tidy's own "N warnings generated" / "Suppressed" chatter is noise here.
  grep -v -E '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$|^Suppressed [0-9]+ warnings|^Use -header-filter|^Error while processing' \
    "$tmp/out.$i" || true
done
secs=$(($(date +%s) - start))
# A header's finding is reported once per file that includes it: count each place once.
mapfile -t findings < <(cat "$tmp"/out.* | grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error): ' | sort -u)
if [ -s "$tmp/failed" ]; then
  echo "tidy: FAIL: ${#findings[@]} findings in $(sort -u "$tmp/failed" | wc -l) of ${#files[@]} files (${secs} s):" >&2
  printf '  %s\n' "${findings[@]}" | sed "s|$(pwd)/||" >&2
  exit 1
fi
echo "tidy: ${#files[@]} files changed since $short: no findings (${secs} s)"
