#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Prints the build targets that the named ctest tests run, one a line, for `cmake --build --target`.

Usage: test_targets.py BUILD_DIR TEST...

A test's targets are its own name when that is a target (QtTest programs and fuzz replays are named after
their executable) and every file of the build tree that its command names and the build can make
(gapscope-cli behind a golden test, perfetto_dump, ...). Programs that a test starts itself are the test
target's dependencies (add_dependencies in tests/), so building the test builds them. Used by asan.sh to build
what the chosen tests need and nothing else (not the viewer).
"""
import os
import re
import subprocess
import sys


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    build = os.path.abspath(sys.argv[1])
    wanted = set(sys.argv[2:])
    listing = subprocess.run(["ninja", "-C", build, "-t", "targets", "all"], capture_output=True, text=True,
                             check=True).stdout
    known = {line.rsplit(": ", 1)[0] for line in listing.splitlines() if ": " in line}

    add_test = re.compile(r'^add_test\(\[=\[(.*?)\]=\]\s+(.*)\)\s*$')
    targets, found = [], set()

    def want(t):
        if t in known and t not in targets:
            targets.append(t)

    for root, _, files in os.walk(build):
        if "CTestTestfile.cmake" not in files:
            continue
        with open(os.path.join(root, "CTestTestfile.cmake"), encoding="utf-8") as f:
            for line in f:
                m = add_test.match(line.strip())
                if not m or m.group(1) not in wanted:
                    continue
                name = m.group(1)
                found.add(name)
                want(name)
                for arg in re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(2)):
                    for tok in re.split(r"[;=]", arg):
                        if tok.startswith(build + "/"):
                            want(os.path.relpath(tok, build))
    missing = sorted(wanted - found)
    if missing:
        print(f"test_targets: no add_test for: {', '.join(missing)}", file=sys.stderr)
        return 1
    print("\n".join(targets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
