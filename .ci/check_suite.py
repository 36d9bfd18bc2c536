#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a finished `./dev.sh test` run: the viewer was built and every view test ran and passed.

The view tests are the tests/views/tst_*.cpp files; each is one ctest of the same name, labelled `views`.
Reads ctest's JUnit report (BUILD_DIR/ctest-junit.xml) and `ctest -N -L views`. Exit 1 with the reason when
the viewer binary is missing, a view test is not declared (configure left it out), or did not pass.
"""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET


def fail(msg):
    print(f"check_suite: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build/dev"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    viewer = os.path.join(build, "app", "gapscope")
    if not os.access(viewer, os.X_OK):
        fail(f"the viewer was not built ({viewer} missing)")

    expected = sorted(f[:-4] for f in os.listdir(os.path.join(root, "tests", "views"))
                      if f.startswith("tst_") and f.endswith(".cpp"))
    listed = subprocess.run(["ctest", "--test-dir", build, "-N", "-L", "views"], capture_output=True, text=True,
                            check=True).stdout
    declared = {line.split(":", 1)[1].strip() for line in listed.splitlines() if line.strip().startswith("Test")
                and ":" in line}
    absent = [t for t in expected if t not in declared]
    if absent:
        fail(f"view tests not in the suite: {', '.join(absent)}")

    junit = os.path.join(build, "ctest-junit.xml")
    if not os.path.exists(junit):
        fail(f"no ctest report at {junit}")
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    skipped = []
    for name, c in cases.items():
        if c.find("failure") is not None or c.get("status") == "fail":
            counts["failed"] += 1
        elif c.find("skipped") is not None or c.get("status") in ("notrun", "disabled"):
            counts["skipped"] += 1
            skipped.append(name)
        else:
            counts["passed"] += 1
    bad = [t for t in expected if t not in cases or cases[t].get("status") != "run"
           or cases[t].find("failure") is not None]
    if bad:
        fail(f"view tests that did not run and pass: {', '.join(bad)}")
    print(f"check_suite: viewer built; {len(expected)} of {len(expected)} view tests ran and passed; suite: "
          f"{len(cases)} tests, {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped"
          + (f" ({', '.join(sorted(skipped))})" if skipped else ""))
    return 0 if counts["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
